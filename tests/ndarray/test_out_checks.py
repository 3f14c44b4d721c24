"""``out=`` of an imperative call is checked against what the operator produces: the number of
arrays (all outputs or the visible ones, as MXNet 1.9.1 allows), and each one's dtype."""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx


@pytest.mark.parametrize(
    ("name", "make_inputs", "params"),
    [
        ("_linalg_gelqf", lambda: [mx.nd.array([[4.0, 2.0], [2.0, 3.0]])], {}),
        ("_linalg_syevd", lambda: [mx.nd.array([[4.0, 2.0], [2.0, 3.0]])], {}),
        ("amp_multicast", lambda: [mx.nd.ones((2, 2)), mx.nd.ones((2, 2), dtype="float16")], {"num_outputs": 2}),
        ("SliceChannel", lambda: [mx.nd.ones((2, 4))], {"num_outputs": 2, "axis": 1}),
    ],
)
def test_one_out_array_for_an_operator_of_several_outputs_is_refused(name, make_inputs, params):
    inputs = make_inputs()
    before = inputs[0].asnumpy().copy()
    with pytest.raises(mx.LazyNDError, match=rf"{name}: 1 out array\(s\) given, expected 2"):
        getattr(mx.nd, name)(*inputs, out=inputs[0], **params)
    np.testing.assert_array_equal(inputs[0].asnumpy(), before)  # nothing was written into it


def test_a_multi_parameter_update_with_one_out_array_is_refused():
    w1, g1, w2, g2 = (mx.nd.ones((3,)) for _ in range(4))
    with pytest.raises(mx.LazyNDError, match="multi_sgd_update: 1 out array"):
        mx.nd.multi_sgd_update(w1, g1, w2, g2, lrs=(0.1, 0.1), wds=(0.0, 0.0), num_weights=2, out=w1)


def test_the_visible_outputs_alone_may_be_given():
    x = mx.nd.array(np.arange(8, dtype=np.float32).reshape(2, 4))
    gamma, beta = mx.nd.ones((4,)), mx.nd.zeros((4,))
    mean, var = mx.nd.zeros((4,)), mx.nd.ones((4,))
    out = mx.nd.zeros((2, 4))
    got = mx.nd.BatchNorm(x, gamma, beta, mean, var, use_global_stats=True, fix_gamma=False, out=out)
    assert got is out
    np.testing.assert_allclose(out.asnumpy(), x.asnumpy() / np.sqrt(1 + 1e-3), rtol=1e-5)


@pytest.mark.parametrize("dtype", ["float64", "float16", "int32", "uint8"])
def test_an_out_array_of_another_dtype_is_refused(dtype):
    x = mx.nd.array([[1.5, -2.0], [3.0, 4.0]])
    out = mx.nd.zeros((2, 2), dtype=dtype)
    with pytest.raises(mx.LazyNDError, match=f"relu: out\\[0\\] has dtype {dtype}, expected float32"):
        mx.nd.relu(x, out=out)
    with pytest.raises(mx.LazyNDError, match=f"_plus: out\\[0\\] has dtype {dtype}, expected float32"):
        mx.nd.elemwise_add(x, x, out=out)


def test_an_out_array_of_the_right_dtype_is_written():
    x = mx.nd.array([[1, -2], [3, 4]], dtype="int32")
    out = mx.nd.zeros((2, 2), dtype="int32")
    assert mx.nd.relu(x, out=out) is out
    np.testing.assert_array_equal(out.asnumpy(), [[1, 0], [3, 4]])


def test_an_update_into_its_own_weight_writes_it_in_order_and_returns_it():
    # the commonest out= call (one output, the whole array, of the planned shape and dtype)
    w, g = mx.nd.ones((3, 4)), mx.nd.ones((3, 4))
    for _ in range(3):
        result = mx.nd.sgd_update(w, g * 2, lr=0.25, out=w)
        assert result is w
    np.testing.assert_array_equal(w.asnumpy(), np.full((3, 4), -0.5, np.float32))


def test_out_of_another_dtype_or_shape_after_matching_calls_is_refused():
    w, g = mx.nd.ones((3,)), mx.nd.ones((3,))
    mx.nd.sgd_update(w, g, lr=0.5, out=w)
    w16, longer = mx.nd.ones((3,), dtype="float16"), mx.nd.ones((4,))
    with pytest.raises(mx.LazyNDError, match=r"sgd_update: out\[0\] has dtype float16, expected float32"):
        mx.nd.sgd_update(w, g, lr=0.5, out=w16)
    with pytest.raises(mx.LazyNDError, match=r"sgd_update: out\[0\] has shape \(4,\), expected \(3,\)"):
        mx.nd.sgd_update(w, g, lr=0.5, out=longer)
    np.testing.assert_array_equal(w16.asnumpy(), np.ones(3, np.float16))
    np.testing.assert_array_equal(w.asnumpy(), np.full(3, 0.5, np.float32))


def test_out_a_row_of_an_array_writes_that_row_alone():
    # a view of part of an array, of the planned signature: written through the general path, the
    # rest of the storage kept
    z = mx.nd.zeros((2, 3))
    result = mx.nd.elemwise_add(mx.nd.ones((3,)), mx.nd.ones((3,)), out=z[1])
    np.testing.assert_array_equal(result.asnumpy(), [2.0, 2.0, 2.0])
    np.testing.assert_array_equal(z.asnumpy(), [[0.0, 0.0, 0.0], [2.0, 2.0, 2.0]])


def _weights_and_gradients(count: int) -> tuple[list, list]:
    weights = [mx.nd.ones((2, 3)) for _ in range(count)]
    grads = [mx.nd.full((2, 3), k + 1.0) for k in range(count)]
    return weights, grads


def _interleaved(weights: list, grads: list) -> list:
    return [a for pair in zip(weights, grads, strict=True) for a in pair]


@pytest.mark.parametrize("as_tuple", [False, True])
def test_a_multi_parameter_update_into_its_weights_is_pushed_at_once(monkeypatch, as_tuple):
    # every output given, whole and of its planned signature: pushed from invoke, as one output is,
    # without the general path's lists and checks (dispatch.call_parts)
    from lazynd.ndarray import dispatch

    weights, grads = _weights_and_gradients(3)
    out = tuple(weights) if as_tuple else weights
    kwargs = {"lrs": (0.5, 0.25, 0.125), "wds": (0.0, 0.0, 0.0), "num_weights": 3}
    mx.nd.multi_sgd_update(*_interleaved(weights, grads), out=out, **kwargs)  # planned, signatures known

    def general_path(*args, **kwargs):
        raise AssertionError("the general path ran")

    monkeypatch.setattr(dispatch, "call_parts", general_path)
    for _ in range(2):
        assert mx.nd.multi_sgd_update(*_interleaved(weights, grads), out=out, **kwargs) is out
    for k, (w, lr) in enumerate(zip(weights, kwargs["lrs"], strict=True)):
        np.testing.assert_array_equal(w.asnumpy(), np.full((2, 3), 1.0 - 3 * lr * (k + 1), np.float32))


def test_a_multi_parameter_update_into_a_row_of_an_array_writes_that_row_alone():
    # one out array is part of another's storage: the general path, which keeps the rest of it
    weights, grads = _weights_and_gradients(2)
    big = mx.nd.zeros((2, 2, 3))
    out = [weights[0], big[1]]
    mx.nd.multi_sgd_update(*_interleaved(weights, grads), out=out, lrs=(0.5, 0.5), wds=(0.0, 0.0), num_weights=2)
    np.testing.assert_array_equal(weights[0].asnumpy(), np.full((2, 3), 0.5, np.float32))
    np.testing.assert_array_equal(big.asnumpy()[0], np.zeros((2, 3), np.float32))
    np.testing.assert_array_equal(big.asnumpy()[1], np.zeros((2, 3), np.float32))  # 1 - 0.5 * 2


def test_a_multi_parameter_update_with_an_out_array_of_another_dtype_is_refused_after_matching_calls():
    weights, grads = _weights_and_gradients(2)
    kwargs = {"lrs": (0.5, 0.5), "wds": (0.0, 0.0), "num_weights": 2}
    mx.nd.multi_sgd_update(*_interleaved(weights, grads), out=weights, **kwargs)
    wrong = [weights[0], mx.nd.ones((2, 3), dtype="float16")]
    with pytest.raises(mx.LazyNDError, match=r"multi_sgd_update: out\[1\] has dtype float16, expected float32"):
        mx.nd.multi_sgd_update(*_interleaved(weights, grads), out=wrong, **kwargs)
    np.testing.assert_array_equal(weights[0].asnumpy(), np.full((2, 3), 0.5, np.float32))  # not written again
