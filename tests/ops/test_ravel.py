"""ravel_multi_index / unravel_index: MXNet 1.9.1's layout (one row per dimension), indices checked."""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx
import lazynd_sym as sym
from lazynd.errors import LazyNDError, OperatorError, ShapeError
from lazynd.testing import assert_almost_equal

MULTI = [[3, 6, 6], [4, 5, 1]]
FLAT = [22, 41, 37]  # MXNet 1.9.1's ravel_multi_index(MULTI, shape=(7, 6))


def test_ravel_multi_index_matches_mxnet(ctx):
    flat = mx.nd.ravel_multi_index(mx.nd.array(MULTI, ctx=ctx), shape=(7, 6))
    assert flat.dtype == np.float32 and flat.asnumpy().tolist() == FLAT


def test_unravel_index_inverts_it(ctx):
    multi = mx.nd.unravel_index(mx.nd.array(FLAT, ctx=ctx, dtype="int64"), shape=(7, 6))
    assert multi.dtype == np.int64 and multi.asnumpy().tolist() == MULTI


def test_both_agree_with_numpy_in_three_dimensions(ctx):
    shape = (3, 4, 5)
    flat = np.random.default_rng(0).integers(0, 60, size=9)
    multi = mx.nd.unravel_index(mx.nd.array(flat, ctx=ctx, dtype="int32"), shape=shape)
    assert multi.asnumpy().tolist() == np.array(np.unravel_index(flat, shape)).tolist()
    assert mx.nd.ravel_multi_index(multi, shape=shape).asnumpy().tolist() == flat.tolist()


def test_fractional_indices_are_truncated_as_in_mxnet():
    assert mx.nd.unravel_index(mx.nd.array([2.7]), shape=(2, 3)).asnumpy().tolist() == [[0.0], [2.0]]
    assert mx.nd.ravel_multi_index(mx.nd.array([[1.6], [0.2]]), shape=(2, 3)).asnumpy().tolist() == [3.0]


def test_in_a_bound_executor_with_a_zero_gradient():
    net = sym.unravel_index(sym.ravel_multi_index(sym.Variable("data"), shape=(7, 6)), shape=(7, 6))
    _, out_shapes, _ = net.infer_shape(data=(2, 3))
    assert out_shapes == [(2, 3)]
    grad = mx.nd.ones((2, 3))
    exe = net.bind(mx.cpu(), args={"data": mx.nd.array(MULTI)}, args_grad={"data": grad})
    exe.forward(is_train=True)
    assert exe.outputs[0].asnumpy().tolist() == MULTI
    exe.backward(mx.nd.ones((2, 3)))
    assert_almost_equal(grad.asnumpy(), np.zeros((2, 3)))


def test_an_index_outside_the_shape_is_refused_naming_the_op():
    # on the host; a GPU computes MXNet's number instead (tests/ops/test_graph_capture.py)
    with pytest.raises(LazyNDError, match=r"ravel_multi_index: data holds an index outside shape=\(7, 6\)"):
        mx.nd.ravel_multi_index(mx.nd.array([[7], [0]]), shape=(7, 6)).asnumpy()
    with pytest.raises(LazyNDError, match=r"unravel_index: data holds a flat index outside \[0, 42\)"):
        mx.nd.unravel_index(mx.nd.array([42, -1]), shape=(7, 6)).asnumpy()


def test_data_not_one_row_per_dimension_is_refused():
    with pytest.raises(ShapeError, match=r"ravel_multi_index: shape of 'data' is \(3, 1\), expected \(2, N\)"):
        mx.nd.ravel_multi_index(mx.nd.ones((3, 1)), shape=(2, 3))
    with pytest.raises(ShapeError, match=r"unravel_index: shape of 'data' is \(2, 2\), expected \(N,\)"):
        mx.nd.unravel_index(mx.nd.ones((2, 2)), shape=(2, 3))


def test_an_empty_shape_is_refused():
    with pytest.raises(OperatorError, match="ravel_multi_index.*shape"):
        mx.nd.ravel_multi_index(mx.nd.ones((2, 1)), shape=())
    with pytest.raises(OperatorError, match="unravel_index.*shape"):
        mx.nd.unravel_index(mx.nd.ones((2,)))


def test_a_leading_minus_one_leaves_the_first_dimension_unbounded(ctx):
    multi = [[3, 1, 40], [2, 0, 4]]
    flat = mx.nd.ravel_multi_index(mx.nd.array(multi, ctx=ctx), shape=(-1, 5))
    assert flat.asnumpy().tolist() == [17, 5, 204]
    back = mx.nd.unravel_index(flat, shape=(-1, 5))
    assert back.asnumpy().tolist() == multi


def test_minus_one_only_first_and_flat_indices_still_non_negative(ctx):
    for bad in [(-2, 5), (0, 5), (5, -1)]:
        with pytest.raises(OperatorError, match=r"ravel_multi_index: .*'shape'.*the first may be -1"):
            mx.nd.ravel_multi_index(mx.nd.array(MULTI, ctx=ctx), shape=bad)
    with pytest.raises(LazyNDError, match=r"unravel_index: .*outside \[0, inf\)"):
        mx.nd.unravel_index(mx.nd.array([-1]), shape=(-1, 5)).asnumpy()  # on the host (see above)
