"""mx.nd.contrib.index_copy and mx.nd.contrib.boolean_mask against MXNet 1.9.1 (they were missing)."""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx
import lazynd_sym as sym
from lazynd.errors import LazyNDError
from lazynd.testing import check_gradient

NEW = np.array([[1.0, 2.0], [3.0, 4.0]])


def test_index_copy_replaces_rows_and_its_gradient_matches_mxnet(ctx):
    old, new = mx.nd.zeros((4, 2), ctx=ctx), mx.nd.array(NEW, ctx=ctx)
    old.attach_grad()
    new.attach_grad()
    with mx.autograd.record():
        y = mx.nd.contrib.index_copy(old, mx.nd.array([2, 0], ctx=ctx), new)
    y.backward(mx.nd.array(np.arange(8).reshape(4, 2), ctx=ctx))
    np.testing.assert_array_equal(y.asnumpy(), [[3, 4], [0, 0], [1, 2], [0, 0]])
    # MXNet 1.9.1: the replaced rows give old_tensor nothing, new_tensor gets them
    np.testing.assert_array_equal(old.grad.asnumpy(), [[0, 0], [2, 3], [0, 0], [6, 7]])
    np.testing.assert_array_equal(new.grad.asnumpy(), [[4, 5], [0, 1]])


def test_index_copy_numerical_gradient():
    rng = np.random.default_rng(1)
    check_gradient(
        "_contrib_index_copy", [rng.normal(size=(5, 3)), np.array([4.0, 1.0]), rng.normal(size=(2, 3))], wrt=[0, 2]
    )


def test_index_copy_symbol_infers_shapes_and_runs():
    net = sym.contrib.index_copy(sym.Variable("old"), sym.Variable("index"), sym.Variable("new"))
    arg_shapes, out_shapes, _ = net.infer_shape(old=(3, 2), index=(1,))
    assert arg_shapes == [(3, 2), (1,), (1, 2)] and out_shapes == [(3, 2)]
    ex = net.simple_bind(mx.cpu(), old=(3, 2), index=(1,))
    ex.arg_dict["index"][:] = 1
    ex.arg_dict["new"][:] = 7
    ex.forward()
    np.testing.assert_array_equal(ex.outputs[0].asnumpy(), [[0, 0], [7, 7], [0, 0]])


def test_index_copy_refuses_positions_outside_the_rows():
    # MXNet 1.9.1 skips them silently
    with pytest.raises(LazyNDError, match="index_copy.*index_vector.*\\[0, 3\\]"):
        mx.nd.contrib.index_copy(mx.nd.zeros((4, 2)), mx.nd.array([5, 0]), mx.nd.array(NEW)).asnumpy()


def test_index_copy_refuses_mismatched_shapes():
    with pytest.raises(LazyNDError, match="index_copy.*new_tensor"):
        mx.nd.contrib.index_copy(mx.nd.zeros((4, 2)), mx.nd.array([1, 0]), mx.nd.zeros((2, 3)))
    with pytest.raises(LazyNDError, match="index_copy.*index_vector"):
        mx.nd.contrib.index_copy(mx.nd.zeros((4, 2)), mx.nd.zeros((2, 1)), mx.nd.zeros((2, 2)))


def test_boolean_mask_keeps_the_rows_where_the_index_is_nonzero(ctx):
    x = mx.nd.array(np.arange(6).reshape(3, 2), ctx=ctx)
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.contrib.boolean_mask(x, mx.nd.array([1, 0, 1], ctx=ctx))
    y.backward(mx.nd.array(NEW, ctx=ctx))
    assert y.context == ctx
    np.testing.assert_array_equal(y.asnumpy(), [[0, 1], [4, 5]])
    np.testing.assert_array_equal(x.grad.asnumpy(), [[1, 2], [0, 0], [3, 4]])


def test_boolean_mask_of_no_rows_is_empty():
    y = mx.nd.contrib.boolean_mask(mx.nd.zeros((3, 2)), mx.nd.array([0, 0, 0]))
    assert y.shape == (0, 2)


def test_boolean_mask_refuses_other_axes_and_a_wrong_length():
    x = mx.nd.zeros((3, 2))
    with pytest.raises(LazyNDError, match="boolean_mask.*axis 1"):
        mx.nd.contrib.boolean_mask(x, mx.nd.array([0, 1]), axis=1)
    with pytest.raises(LazyNDError, match="boolean_mask.*'index'.*length 3"):
        mx.nd.contrib.boolean_mask(x, mx.nd.array([0, 1]))


def test_boolean_mask_symbol_is_refused_at_shape_inference():
    net = sym.contrib.boolean_mask(sym.Variable("a"), sym.Variable("b"))
    with pytest.raises(LazyNDError, match="boolean_mask.*imperatively"):
        net.infer_shape(a=(3, 2), b=(3,))
