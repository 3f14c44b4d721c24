"""diag (lazynd/ops/rearrange.py): MXNet 1.9.1's values, gradients and errors; flip, tile, repeat and
Pad are in test_shape.py and the operator sweep."""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx
import lazynd_sym as sym
from lazynd.errors import OperatorError, ShapeError
from lazynd.testing import assert_almost_equal, check_gradient


@pytest.mark.parametrize(
    ("k", "expected"),
    [
        (0, [[1, 0, 0], [0, 2, 0], [0, 0, 3]]),
        (1, [[0, 1, 0, 0], [0, 0, 2, 0], [0, 0, 0, 3], [0, 0, 0, 0]]),
        (-1, [[0, 0, 0, 0], [1, 0, 0, 0], [0, 2, 0, 0], [0, 0, 3, 0]]),
    ],
)
def test_diag_of_a_vector_is_a_matrix_with_it_on_diagonal_k(k, expected, ctx):
    out = mx.nd.diag(mx.nd.array([1, 2, 3], ctx=ctx), k=k)
    assert_almost_equal(out.asnumpy(), np.array(expected, dtype=np.float32))


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        ({}, [0, 5, 10]),
        ({"k": 1}, [1, 6, 11]),
        ({"k": -1}, [4, 9]),
        ({"k": 3}, [3]),
    ],
)
def test_diag_of_a_matrix_gives_mxnets_diagonals(params, expected, ctx):
    out = mx.nd.diag(mx.nd.arange(12, ctx=ctx).reshape((3, 4)), **params)
    assert_almost_equal(out.asnumpy(), np.array(expected, dtype=np.float32))


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        ({"axis1": 1, "axis2": 2, "k": 1}, [[1, 6, 11], [13, 18, 23]]),
        ({"axis1": -1, "axis2": 0}, [[0, 13], [4, 17], [8, 21]]),
        ({"axis1": 2, "axis2": 1}, [[0, 5, 10], [12, 17, 22]]),
    ],
)
def test_diag_of_a_3d_array_takes_the_diagonal_of_axis1_and_axis2_last(params, expected, ctx):
    out = mx.nd.diag(mx.nd.arange(24, ctx=ctx).reshape((2, 3, 4)), **params)
    assert_almost_equal(out.asnumpy(), np.array(expected, dtype=np.float32))


def test_diag_gradients_are_mxnets():
    m = mx.nd.arange(12).reshape((3, 4))
    m.attach_grad()
    with mx.autograd.record():
        y = mx.nd.diag(m, k=1)
    y.backward(mx.nd.array([1, 2, 3]))
    assert_almost_equal(m.grad.asnumpy(), np.array([[0, 1, 0, 0], [0, 0, 2, 0], [0, 0, 0, 3]], dtype=np.float32))
    v = mx.nd.array([1, 2, 3])
    v.attach_grad()
    with mx.autograd.record():
        y = mx.nd.diag(v, k=-1)
    y.backward(mx.nd.arange(16).reshape((4, 4)))
    assert_almost_equal(v.grad.asnumpy(), np.array([4, 9, 14], dtype=np.float32))


def test_diag_of_a_vector_has_the_numerical_gradient():
    check_gradient("diag", [np.random.default_rng(0).uniform(size=3)], {"k": 2})


def test_diag_keeps_integer_dtypes():
    out = mx.nd.diag(mx.nd.array([1, 2], dtype="int32"))
    assert out.dtype == np.int32
    assert out.asnumpy().tolist() == [[1, 0], [0, 2]]


def test_diag_infers_shapes_in_a_graph():
    net = sym.diag(sym.var("x"), k=-1)
    assert net.infer_shape(x=(3,))[1] == [(4, 4)]
    assert net.infer_shape(x=(3, 4))[1] == [(2,)]


def test_diag_just_past_a_corner_is_empty_as_in_mxnet():
    # MXNet 1.9.1: diag of a 3 x 4 matrix with k=4 or k=-3 has shape (0,), of (2, 3, 4) on axes
    # (1, 2) with k=-3 shape (2, 0); k=5 and k=-4 are "Diagonal does not exist"
    x = mx.nd.array(np.arange(12.0).reshape(3, 4))
    assert mx.nd.diag(x, k=4).shape == (0,)
    assert mx.nd.diag(x, k=-3).shape == (0,)
    assert mx.nd.diag(mx.nd.zeros((2, 3, 4)), k=-3, axis1=1, axis2=2).shape == (2, 0)
    for k in (5, -4):
        with pytest.raises(ShapeError, match=f"has no diagonal k={k}"):
            mx.nd.diag(x, k=k)


@pytest.mark.parametrize(
    ("shape", "params", "error", "message"),
    [
        ((2, 3, 4), {"axis1": 1, "axis2": 1}, OperatorError, "diag: axis1=1 and axis2=1 name the same axis"),
        ((2, 3, 4), {"axis1": 3}, ShapeError, "diag: axis1=3 is out of range"),
        ((2, 3, 4), {"k": 4}, ShapeError, r"diag: the input \(2, 3, 4\) has no diagonal k=4"),
        ((), {}, ShapeError, "diag: the input is 0-D"),
    ],
)
def test_diag_refuses_bad_axes_and_missing_diagonals_at_the_call(shape, params, error, message):
    with pytest.raises(error, match=message):
        mx.nd.diag(mx.nd.array(np.zeros(shape)), **params)
