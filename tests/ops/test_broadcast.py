"""broadcast_to, broadcast_axis and ElementWiseSum: values, gradients, shape errors."""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx
from lazynd.errors import OperatorError, ShapeError
from lazynd.testing import assert_almost_equal, check_consistency, check_forward, check_gradient


def _data(shape, seed=0):
    return np.random.default_rng(seed).normal(size=shape)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32"])
def test_broadcast_to_matches_numpy(dtype, ctx):
    x = (_data((1, 3, 1)) * 10).astype(dtype)
    check_forward("broadcast_to", [x], {"shape": (2, 3, 4)}, lambda v: np.broadcast_to(v, (2, 3, 4)), ctx=ctx)


def test_broadcast_to_zero_keeps_the_input_size():
    out = mx.nd.broadcast_to(mx.nd.ones((1, 3)), shape=(4, 0))
    assert out.shape == (4, 3)


def test_broadcast_to_rejects_growing_a_non_unit_axis():
    with pytest.raises(mx.ShapeError, match="cannot broadcast axis 1 of size 3 to 5"):
        mx.nd.broadcast_to(mx.nd.ones((1, 3)), shape=(2, 5))


def test_broadcast_to_rejects_a_different_rank():
    with pytest.raises(mx.ShapeError, match="has 3 dims"):
        mx.nd.broadcast_to(mx.nd.ones((1, 3)), shape=(2, 2, 3))


def test_the_broadcast_to_method_adds_leading_axes():
    # MXNet 1.x's NDArray.broadcast_to (the operator keeps refusing a different rank)
    x = np.arange(3, dtype=np.float32).reshape(3, 1)
    np.testing.assert_array_equal(mx.nd.array(x).broadcast_to((2, 3, 4)).asnumpy(), np.broadcast_to(x, (2, 3, 4)))


def test_broadcast_to_gradient_sums_over_broadcast_axes(ctx):
    check_gradient("broadcast_to", [_data((1, 3, 1))], {"shape": (2, 3, 4)}, ctx=ctx)


@pytest.mark.parametrize("name", ["broadcast_axis", "broadcast_axes"])
def test_broadcast_axis_matches_numpy(name, ctx):
    x = _data((1, 3, 1)).astype(np.float32)
    check_forward(name, [x], {"axis": (0, 2), "size": (2, 4)}, lambda v: np.broadcast_to(v, (2, 3, 4)), ctx=ctx)


def test_broadcast_axis_with_an_int_axis_and_string_params():
    out = mx.nd.broadcast_axis(mx.nd.ones((2, 1)), axis="1", size="(5,)")
    assert out.shape == (2, 5)


def test_broadcast_axis_gradient(ctx):
    check_gradient("broadcast_axis", [_data((2, 1, 3))], {"axis": 1, "size": 4}, ctx=ctx)


def test_broadcast_axis_needs_one_size_per_axis():
    with pytest.raises(mx.OperatorError, match="expected one size per axis"):
        mx.nd.broadcast_axis(mx.nd.ones((1, 1)), axis=(0, 1), size=(3,))


def test_broadcast_axis_rejects_a_non_unit_axis():
    with pytest.raises(mx.ShapeError, match="axis 0 of the input \\(2, 1\\) has size 2, expected 1"):
        mx.nd.broadcast_axis(mx.nd.ones((2, 1)), axis=0, size=3)


@pytest.mark.parametrize("count", [1, 2, 5])
def test_add_n_sums_every_input(count, ctx):
    arrays = [_data((3, 4), seed=i).astype(np.float32) for i in range(count)]
    check_forward("add_n", arrays, {}, lambda *v: np.sum(v, axis=0), ctx=ctx, rtol=1e-5)


def test_elementwise_sum_accepts_a_list():
    a, b = mx.nd.ones((2, 2)), mx.nd.full((2, 2), 3.0)
    assert_almost_equal(mx.nd.ElementWiseSum([a, b]), np.full((2, 2), 4.0, dtype=np.float32))


def test_elementwise_sum_gradient_reaches_every_input(ctx):
    grads = check_gradient("ElementWiseSum", [_data((2, 3), seed=i) for i in range(3)], ctx=ctx)
    assert len(grads) == 3


def test_elementwise_sum_rejects_mismatched_shapes():
    with pytest.raises(mx.ShapeError, match="ElementWiseSum"):
        mx.nd.add_n(mx.nd.ones((2, 2)), mx.nd.ones((2, 3)))


def test_elementwise_sum_writes_into_out():
    a = mx.nd.ones((2, 2))
    out = mx.nd.add_n(a, a, a, out=a)
    assert out is a
    assert_almost_equal(a, np.full((2, 2), 3.0, dtype=np.float32))


def test_broadcast_cpu_and_gpu_agree():
    check_consistency("broadcast_to", [_data((1, 3)).astype(np.float32)], {"shape": (4, 3)})
    check_consistency("add_n", [_data((3, 3), seed=i).astype(np.float32) for i in range(3)])


def test_broadcast_to_accepts_a_numpy_shape_array():
    out = mx.nd.broadcast_to(mx.nd.ones((1, 3)), shape=np.array([2, 3]))
    assert out.shape == (2, 3)


def test_broadcast_like_takes_mxnet_lhs_axes_and_rhs_axes():
    lhs = mx.nd.array(np.array([1.0, 2.0]).reshape(2, 1, 1))
    # shapes from MXNet 1.9.1; lhs_axes/rhs_axes were an 'unknown parameter'
    out = mx.nd.broadcast_like(lhs, mx.nd.ones((5, 6)), lhs_axes=(1, 2), rhs_axes=(1, 0))
    np.testing.assert_array_equal(out.asnumpy(), np.broadcast_to(lhs.asnumpy(), (2, 6, 5)))
    out = mx.nd.broadcast_like(mx.nd.ones((2, 1, 4)), mx.nd.ones((2, 3, 4)), lhs_axes=(-2,), rhs_axes=(0,))
    assert out.shape == (2, 2, 4)
    with pytest.raises(ShapeError, match="axis 1 of lhs \\(2, 3, 4\\) has size 3, expected 1"):
        mx.nd.broadcast_like(mx.nd.ones((2, 3, 4)), mx.nd.ones((2, 5, 4)), lhs_axes=(1,), rhs_axes=(1,))


def test_broadcast_like_refuses_shapes_that_do_not_broadcast_at_the_call():
    # MXNet refuses it too; lazynd failed inside the kernel with NumPy's ValueError at the next wait
    with pytest.raises(ShapeError, match=r"broadcast_like: lhs \(2, 3\) cannot be broadcast to rhs \(4, 5\)"):
        mx.nd.broadcast_like(mx.nd.ones((2, 3)), mx.nd.ones((4, 5)))


@pytest.mark.parametrize("rhs_axes", [(), (0,)])
def test_broadcast_like_refuses_empty_lhs_axes(rhs_axes):
    # MXNet 1.9.1 refuses it ('Empty axes tuple is not allowed'); lazynd returned lhs unchanged
    with pytest.raises(OperatorError, match=r"broadcast_like: lhs_axes=\(\) is empty"):
        mx.nd.broadcast_like(mx.nd.ones((1, 2)), mx.nd.ones((3, 2)), lhs_axes=(), rhs_axes=rhs_axes)


def test_a_bias_adds_gradient_passes_the_data_its_own_without_a_copy():
    # the data of broadcast_add(x, b) has the output's shape: its gradient is the output's, not a
    # _reduce_to_like copy of it; the bias's is summed over the rows
    from lazynd.runtime.capture import PushCapture

    x, b = mx.nd.ones((4, 3)), mx.nd.array([1.0, 2.0, 3.0])
    x.attach_grad()
    b.attach_grad()
    with mx.autograd.record():
        y = mx.nd.broadcast_add(x, b) * 2
    with PushCapture() as seen:
        y.backward()
    reduces = [args[2] for _, _, args, _, _, name in seen.pushes if name == "_reduce_to_like"]
    assert len(reduces) == 1 and reduces[0][1].shape == (3,)  # the bias's sum alone
    np.testing.assert_array_equal(x.grad.asnumpy(), np.full((4, 3), 2.0))
    np.testing.assert_array_equal(b.grad.asnumpy(), np.full(3, 8.0))
