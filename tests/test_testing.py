"""The testing helpers themselves: they must pass good operators and catch bad ones."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

import lazynd as mx
from lazynd import test_utils
from lazynd.ops.registry import OpDef
from lazynd.testing import (
    almost_equal,
    assert_almost_equal,
    check_consistency,
    check_forward,
    check_gradient,
    default_context,
    np_reduce,
    rand_ndarray,
    rand_shape_2d,
    rand_shape_nd,
    reldiff,
    same,
    set_default_context,
)


def _square_forward(kctx, attrs, inputs, outputs, aux):
    kctx.xp.multiply(inputs[0], inputs[0], out=outputs[0])


def _square_op(grad_scale: float) -> OpDef:
    def gradient(F, attrs, inputs, outputs, out_grads):
        return [F._mul_scalar(F._mul(out_grads[0], inputs[0]), scalar=grad_scale)]

    return OpDef("_test_square", _square_forward, gradient=gradient)


def test_assert_almost_equal_names_the_worst_element():
    with pytest.raises(AssertionError, match=r"index \(1,\)"):
        assert_almost_equal(np.array([1.0, 2.0, 3.0]), np.array([1.0, 2.5, 3.0]))


def test_assert_almost_equal_rejects_shape_mismatch():
    with pytest.raises(AssertionError, match="shape"):
        assert_almost_equal(np.zeros(2), np.zeros(3))


def test_assert_almost_equal_broadcasts_like_mxnet():
    # MXNet compares with broadcasting by default: an array against a scalar or a row
    assert_almost_equal(mx.nd.zeros((3, 4)), 0)
    assert_almost_equal(np.ones((3, 4)), np.ones((1, 4)))
    assert almost_equal(np.full((2, 2), 5.0), 5)
    with pytest.raises(AssertionError, match=r"index \(1, 0\)"):
        assert_almost_equal(np.array([[0.0, 0.0], [7.0, 0.0]]), 0)


def test_assert_almost_equal_without_broadcast_requires_equal_shapes():
    with pytest.raises(AssertionError, match="shape"):
        assert_almost_equal(np.zeros((3, 4)), 0, use_broadcast=False)
    assert not almost_equal(np.zeros((3, 4)), np.zeros((1, 4)), use_broadcast=False)


def test_assert_almost_equal_accepts_ndarrays_within_tolerance():
    assert_almost_equal(mx.nd.ones((2, 2)), np.ones((2, 2)) + 1e-7)


def test_almost_equal_defaults_to_float64_tolerances_whatever_the_dtype():
    # MXNet 1.9.1's almost_equal takes rtol=1e-5, atol=1e-20 when none are given; only
    # assert_almost_equal picks its tolerances by dtype
    assert not almost_equal(np.float16([1.0]), np.float16([1.004]))
    assert not almost_equal(np.float32([1.0]), np.float32([1.00002]))
    assert not almost_equal(np.float32([0.0]), np.float32([5e-4]))
    assert almost_equal(np.float32([1.0]), np.float32([1.000001]))
    assert not almost_equal(np.float64([1.0]), np.float64([1.004]))
    assert_almost_equal(np.float32([1.0]), np.float32([1.00002]))


def test_almost_equal_takes_given_tolerances():
    assert almost_equal(np.float32([1.0]), np.float32([1.1]), rtol=0.2)
    assert almost_equal(np.float32([0.0]), np.float32([5e-4]), atol=1e-3)
    assert almost_equal(np.float32([1.0]), np.float32([1.1]), rtol={np.dtype(np.float32): 0.2})


def test_same_and_reldiff():
    assert same(mx.nd.array([1, 2]), np.array([1, 2], dtype=np.float32))
    assert not same(np.array([1, 2]), np.array([1, 3]))
    assert reldiff(np.array([1.0, 1.0]), np.array([1.0, 3.0])) == pytest.approx(2.0 / 6.0)
    assert reldiff(np.zeros(3), np.zeros(3)) == 0.0


def test_np_reduce_matches_numpy_over_tuples_of_axes():
    x = np.random.rand(2, 3, 4)
    np.testing.assert_allclose(np_reduce(x, (0, 2), False, np.sum), x.sum(axis=(0, 2)))
    assert np_reduce(x, (0, 2), True, np.max).shape == (1, 3, 1)
    np.testing.assert_allclose(np_reduce(x, None, False, np.sum), x.sum())
    np.testing.assert_allclose(np_reduce(x, -1, False, np.prod), x.prod(axis=-1))


def test_random_shapes_are_in_range():
    for _ in range(20):
        a, b = rand_shape_2d(3, 4)
        assert 1 <= a <= 3 and 1 <= b <= 4
        shape = rand_shape_nd(3, 2)
        assert len(shape) == 3 and all(1 <= d <= 2 for d in shape)


def test_rand_ndarray_shape_dtype_and_range():
    x = rand_ndarray((3, 4), dtype=np.float64)
    assert x.shape == (3, 4) and x.dtype == np.float64


def test_rand_ndarray_draws_mxnets_standard_normal_values():
    # MXNet 1.9.1 under np.random.seed(5): float32 randn, then the dtype (its sparse-only keywords ignored)
    np.random.seed(5)
    x = rand_ndarray((2, 3), dtype="float64", distribution="uniform")
    np.testing.assert_allclose(x.asnumpy(), [[0.4412, -0.3309, 2.4308], [-0.2521, 0.1096, 1.5825]], atol=1e-4)
    np.random.seed(5)
    assert rand_ndarray((2, 3), dtype="int32").asnumpy().tolist() == [[0, 0, 2], [0, 0, 1]]


def test_rand_ndarray_rejects_sparse_storage():
    with pytest.raises(mx.OperatorError, match="csr"):
        rand_ndarray((2, 2), stype="csr")


def test_default_context_can_be_set_and_restored():
    before = default_context()
    try:
        set_default_context(mx.cpu(1))
        assert default_context() == mx.cpu(1)
    finally:
        set_default_context(before)
    with pytest.raises(TypeError):
        set_default_context("cpu")


def test_check_forward_catches_a_wrong_reference():
    x = np.random.rand(3, 2).astype(np.float32)
    check_forward(_square_op(2.0), [x], {}, lambda a: a * a)
    with pytest.raises(AssertionError, match="_test_square output 0"):
        check_forward(_square_op(2.0), [x], {}, lambda a: a * a + 0.1)


def test_check_gradient_passes_a_correct_rule():
    grads = check_gradient(_square_op(2.0), [np.random.rand(2, 3)])
    assert grads[0].shape == (2, 3)


def test_check_gradient_catches_a_wrong_rule():
    with pytest.raises(AssertionError, match="numeric"):
        check_gradient(_square_op(3.0), [np.random.rand(2, 3) + 0.5])


def test_check_gradient_handles_several_inputs_and_broadcasting():
    grads = check_gradient("broadcast_mul", [np.random.rand(2, 3), np.random.rand(1, 3)])
    assert grads[1].shape == (1, 3)


def test_check_consistency_compares_every_context(ctx):
    results = check_consistency("_mul", [np.random.rand(2, 2), np.random.rand(2, 2)], ctx_list=[mx.cpu(0), ctx])
    assert len(results) == 2
    # outputs then one gradient per input
    assert len(results[0]) == 3


def test_test_utils_reexports_testing():
    assert test_utils.assert_almost_equal is assert_almost_equal
    assert test_utils.np_reduce is np_reduce


def _symbolic_ready() -> bool:
    """Whether lazynd_sym imports and has what the symbolic checks use (it is written in parallel)."""
    if importlib.util.find_spec("lazynd_sym") is None:
        return False
    try:
        import lazynd_sym as sym
    except Exception:
        return False
    return hasattr(sym, "Variable") and hasattr(sym, "exp") and hasattr(getattr(sym, "Symbol", None), "bind")


requires_sym = pytest.mark.skipif(not _symbolic_ready(), reason="lazynd_sym has no Variable/Symbol.bind yet")


@requires_sym
def test_check_symbolic_forward_and_backward_on_exp():
    import lazynd_sym as sym

    x = np.random.rand(2, 3)
    s = sym.exp(sym.Variable("x"))
    test_utils.check_symbolic_forward(s, [x], [np.exp(x)], rtol=1e-4)
    head = np.random.rand(2, 3)
    test_utils.check_symbolic_backward(s, [x], [head], [head * np.exp(x)], rtol=1e-4)
    with pytest.raises(AssertionError):
        test_utils.check_symbolic_forward(s, [x], [np.exp(x) + 1])


@requires_sym
def test_check_numeric_gradient_on_a_product():
    import lazynd_sym as sym

    a, b = sym.Variable("a"), sym.Variable("b")
    test_utils.check_numeric_gradient(a * b, {"a": np.random.rand(2, 2), "b": np.random.rand(2, 2)})


@requires_sym
def test_check_numeric_gradient_takes_grad_req_by_argument_as_mxnet():
    import lazynd_sym as sym

    # 'null' leaves b's gradient alone (BlockGrad gives it none, its numeric gradient is a);
    # 'add' is checked on what backward added to the initial gradient
    a, b = sym.Variable("a"), sym.Variable("b")
    net = a * sym.BlockGrad(b)
    location = {"a": np.random.rand(2, 2) + 1, "b": np.random.rand(2, 2) + 1}
    test_utils.check_numeric_gradient(net, location, grad_nodes={"a": "write", "b": "null"})
    test_utils.check_numeric_gradient(net, location, grad_nodes={"a": "add", "b": "null"})
    with pytest.raises(AssertionError, match="gradient of b"):
        test_utils.check_numeric_gradient(net, location, grad_nodes={"a": "write", "b": "write"})
    with pytest.raises(ValueError, match="grad_req 'sum' for argument 'a'"):
        test_utils.check_numeric_gradient(net, location, grad_nodes={"a": "sum"})


@requires_sym
def test_symbolic_checks_take_mxnets_asnumpy_dtype_to_keep_each_arrays_own():
    import lazynd_sym as sym

    # 2**24 + 1 is exact in int32, not in float32
    x = np.array([2**24 + 1, 7], dtype=np.int32)
    net = sym.identity(sym.Variable("x"))
    test_utils.check_symbolic_forward(net, [x], [x], rtol=0, atol=0, dtype="asnumpy")
    test_utils.check_symbolic_backward(net, [x], [x], [x], rtol=0, atol=0, dtype="asnumpy")


def test_check_gradient_hands_the_rule_hidden_outputs():
    # BatchNorm's rule reads its hidden batch mean and variance outputs
    rng = np.random.default_rng(0)
    x, gamma, beta = rng.standard_normal((3, 2, 4)), rng.standard_normal(2) + 2, rng.standard_normal(2)
    check_gradient(
        "BatchNorm",
        [x, gamma, beta],
        {"fix_gamma": False},
        aux=[np.zeros(2), np.ones(2)],
        is_train=True,
        rtol=1e-4,
        atol=1e-6,
    )


@pytest.mark.parametrize(
    "make",
    [
        lambda a: a.T,  # Fortran-ordered
        lambda a: a[:, ::2],  # strided
        lambda a: mx.nd.array(a).T,  # a transposed NDArray
        lambda a: mx.nd.array(a)[1:3],  # a sliced NDArray (a view)
    ],
    ids=["numpy-transposed", "numpy-strided", "ndarray-transposed", "ndarray-sliced"],
)
def test_check_gradient_on_non_contiguous_inputs(make):
    x = make(np.random.rand(4, 6) + 0.5)
    # a correct rule passes (the numeric gradient was all zeros for a transposed input)...
    grads = check_gradient(_square_op(2.0), [x])
    assert grads[0].shape == np.asarray(x).shape
    # ...and a wrong one is still caught
    with pytest.raises(AssertionError, match="numeric"):
        check_gradient(_square_op(3.0), [x])


@requires_sym
@pytest.mark.parametrize(
    "make",
    [lambda a: a.T, lambda a: a[:, ::2], lambda a: mx.nd.array(a).T, lambda a: mx.nd.array(a)[1:3]],
    ids=["numpy-transposed", "numpy-strided", "ndarray-transposed", "ndarray-sliced"],
)
def test_check_numeric_gradient_on_non_contiguous_locations(make):
    import lazynd_sym as sym

    x = make(np.random.rand(4, 6) + 0.5)
    test_utils.check_numeric_gradient(sym.exp(sym.Variable("x")) * 2, [x])
    with pytest.raises(AssertionError):
        test_utils.check_numeric_gradient(sym.BlockGrad(sym.Variable("x")) * 2, [x])
