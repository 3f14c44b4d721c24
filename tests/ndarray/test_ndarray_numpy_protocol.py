"""NumPy functions on NDArrays: the matching lazynd operator (a lazy NDArray), or NumPy after a
wait (a NumPy result), never a crash or a silently lost write."""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx
from lazynd.ndarray.numpy_protocol import BINARY_UFUNCS, FUNCTIONS, UNARY_UFUNCS

X = np.array([[0.25, 1.5, 2.5], [-0.5, 3.0, 4.75]], dtype=np.float32)


def _a(ctx: mx.Context) -> mx.nd.NDArray:
    return mx.nd.array(X, ctx=ctx)


@pytest.mark.parametrize("ufunc", sorted(UNARY_UFUNCS, key=lambda u: u.__name__), ids=lambda u: u.__name__)
def test_every_tabled_unary_ufunc_runs_its_operator_lazily(ctx: mx.Context, ufunc: np.ufunc) -> None:
    inverse_trig = ufunc.__name__ in ("arcsin", "arccos", "arctanh")
    values = np.abs(X) / 6 + 0.1 if inverse_trig else np.abs(X) + 1  # inside every function's domain
    result = ufunc(mx.nd.array(values, ctx=ctx))
    assert isinstance(result, mx.nd.NDArray) and result.context == ctx
    np.testing.assert_allclose(result.asnumpy(), ufunc(values), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("ufunc", sorted(BINARY_UFUNCS, key=lambda u: u.__name__), ids=lambda u: u.__name__)
def test_every_tabled_binary_ufunc_runs_lazily_with_numpy_or_scalar_operands_on_either_side(ufunc: np.ufunc) -> None:
    x = np.abs(X)  # (a negative base to a fractional power is nan)
    a, other = mx.nd.array(x), np.full((2, 3), 2.0, dtype=np.float32)
    expected = ufunc(x, other).astype(np.float32)  # comparisons give 0/1 in the input dtype
    for result, want in (
        (ufunc(a, other), expected),
        (ufunc(other, a), ufunc(other, x)),
        (ufunc(a, np.float32(2)), expected),
        (ufunc(np.float32(2), a), ufunc(np.float32(2), x)),
        (ufunc(a, a), ufunc(x, x)),
    ):
        assert isinstance(result, mx.nd.NDArray)
        np.testing.assert_allclose(result.asnumpy(), np.asarray(want, dtype=np.float32), rtol=1e-6)


def test_numpy_operands_on_the_left_of_python_operators_give_ndarrays() -> None:
    a = mx.nd.array(X)
    for result in (np.ones((2, 3)) + a, np.float64(2) * a, np.ones(3) - a, np.float32(1) > a):
        assert isinstance(result, mx.nd.NDArray)
    np.testing.assert_allclose((np.ones(3) - a).asnumpy(), 1 - X)


def test_a_ufunc_writes_into_an_ndarray_out_through_the_operator() -> None:
    a, target = mx.nd.array(X), mx.nd.zeros((2, 3))
    assert np.exp(a, out=target) is target
    np.testing.assert_allclose(target.asnumpy(), np.exp(X), rtol=1e-6)
    np.add(a, 1, out=(target,))
    np.testing.assert_allclose(target.asnumpy(), X + 1)


@pytest.mark.parametrize(
    "call",
    [
        lambda np_, a: np_.sum(a),
        lambda np_, a: np_.sum(a, axis=1),
        lambda np_, a: np_.sum(a, 0, keepdims=True),
        lambda np_, a: np_.mean(a),
        lambda np_, a: np_.mean(a, axis=(0, 1), keepdims=True),
        lambda np_, a: np_.prod(a, axis=0),
        lambda np_, a: np_.max(a, axis=1),
        lambda np_, a: np_.amin(a),
        lambda np_, a: np_.argmax(a, axis=1),  # MXNet's metric code calls np.argmax(pred, axis=1).asnumpy()
        lambda np_, a: np_.argmin(a, 0),
        lambda np_, a: np_.reshape(a, (3, 2)),
        lambda np_, a: np_.reshape(a, -1),
        lambda np_, a: np_.transpose(a),
        lambda np_, a: np_.transpose(a, (1, 0)),
        lambda np_, a: np_.swapaxes(a, 0, 1),
        lambda np_, a: np_.clip(a, 0, 2),
        lambda np_, a: np_.dot(a, np_.transpose(a)),
        lambda np_, a: np_.concatenate([a, a]),
        lambda np_, a: np_.concatenate((a, a), axis=1),
        lambda np_, a: np_.stack([a, a], axis=1),
    ],
)
def test_tabled_functions_run_their_operator_lazily(ctx: mx.Context, call) -> None:
    result = call(np, _a(ctx))
    assert isinstance(result, mx.nd.NDArray) and result.context == ctx
    expected = np.asarray(call(np, X))
    # lazynd's rules: a full reduction has shape (1,), as in MXNet
    np.testing.assert_allclose(result.asnumpy().reshape(expected.shape), expected, rtol=1e-6)
    assert result.shape == (expected.shape or (1,))


def test_argmax_of_the_flattened_array_is_an_ndarray_of_one_index() -> None:
    # cpu only: the CUDA emulator's argmax(axis=None) gives a host scalar where CuPy gives a device array
    result = np.argmax(mx.nd.array(X))
    assert isinstance(result, mx.nd.NDArray) and result.shape == (1,)
    assert result.asnumpy().tolist() == [float(np.argmax(X))]


def test_the_tables_name_only_registered_operators_and_real_numpy_callables() -> None:
    from lazynd.ops import registry

    for ufunc, name in UNARY_UFUNCS.items():
        assert isinstance(ufunc, np.ufunc) and registry.exists(name)
    assert all(isinstance(u, np.ufunc) for u in BINARY_UFUNCS)
    assert all(callable(f) for f in FUNCTIONS)


@pytest.mark.parametrize(
    "call",
    [
        lambda np_, a: np_.sum(a, dtype=np_.float64),  # a parameter the operator lacks
        lambda np_, a: np_.sum(a, where=X > 1),
        lambda np_, a: np_.round(a, 1),
        lambda np_, a: np_.round(a),  # NumPy rounds halves to even, MXNet's rint and round do not
        lambda np_, a: np_.rint(a),
        lambda np_, a: np_.reshape(a, (3, 2), order="F"),
        lambda np_, a: np_.clip(a, None, 2),
        lambda np_, a: np_.concatenate([a, a], axis=None),
        lambda np_, a: np_.concatenate([a, np_.ones((1, 3), np_.float32)]),  # a NumPy array among them
        lambda np_, a: np_.median(a),  # no table row
        lambda np_, a: np_.cumsum(a, axis=1),
        lambda np_, a: np_.allclose(a, a),
        lambda np_, a: np_.maximum(a, 1),  # a ufunc with no table row
        lambda np_, a: np_.exp(a, dtype=np_.float64),
        lambda np_, a: np_.add.reduce(a, axis=0),
        lambda np_, a: np_.add.outer(a[0], a[0]),
        lambda np_, a: np_.linalg.norm(a),
    ],
)
def test_other_calls_wait_and_give_numpys_result(call) -> None:
    result = call(np, mx.nd.array(X))
    assert not isinstance(result, mx.nd.NDArray)
    expected = call(np, X)
    np.testing.assert_allclose(np.asarray(result), np.asarray(expected), rtol=1e-6)
    assert type(result) is type(expected)


def test_numpy_results_wait_for_pending_writes_and_raise_their_errors() -> None:
    from lazynd.engine import get_engine

    a = mx.nd.zeros((2, 3))
    a[:] = 3
    assert float(np.median(a)) == 3.0

    def explode() -> None:
        raise ValueError("boom")

    get_engine().push(explode, (), [], [a.handle], "exploding_op")
    with pytest.raises(mx.EngineError, match="exploding_op"):
        np.median(a)


@pytest.mark.parametrize(
    "write",
    [
        lambda a: np.copyto(a, 1.0),
        lambda a: np.put(a, [0], [5.0]),
        lambda a: np.fill_diagonal(a, 0),
        lambda a: np.add.at(a, [0], 1),
        lambda a: np.cumsum(a, out=a),
        lambda a: np.maximum(a, 1, out=a),
        lambda a: np.divmod(a, 2, out=(a, a)),
    ],
    ids=["copyto", "put", "fill_diagonal", "ufunc-at", "function-out", "ufunc-out", "two-outs"],
)
def test_a_numpy_write_into_an_ndarray_is_refused_not_lost(write) -> None:
    a = mx.nd.array(X)
    with pytest.raises(mx.LazyNDError, match="NDArray"):
        write(a)
    np.testing.assert_array_equal(a.asnumpy(), X)


def test_asarray_without_a_copy_is_refused_as_numpy_2_asks_not_silently_copied() -> None:
    # NumPy 2: copy=False means never copy, and __array__ raises where it cannot; a write into the
    # copy lazynd returned was lost
    a = mx.nd.zeros((2,))
    for convert in (lambda: np.asarray(a, copy=False), lambda: np.array(a, copy=False)):
        with pytest.raises(ValueError, match=r"copy=False\) of an NDArray of shape \(2,\): .*only as a copy"):
            convert()
    assert isinstance(pytest.raises(mx.LazyNDError, np.asarray, a, copy=False).value, mx.OperatorError)
    np.testing.assert_array_equal(np.asarray(a, copy=True), [0, 0])


def test_numpy_can_write_into_its_own_array_from_an_ndarray() -> None:
    host = np.zeros((2, 3), np.float32)
    host += mx.nd.array(X)
    np.copyto(host, mx.nd.array(X) * 2)
    np.testing.assert_array_equal(host, X * 2)


def test_format_of_a_one_element_array_formats_its_value() -> None:
    assert format(mx.nd.array([1.5]), ".2f") == "1.50"
    assert f"{mx.nd.array([[7]], dtype='int32'):>4d}" == "   7"
    assert format(mx.nd.ones((2,)), "") == str(mx.nd.ones((2,)))
    with pytest.raises(mx.LazyNDError, match=r"one-element.*\(2,\)"):
        format(mx.nd.ones((2,)), ".2f")
