"""gather_nd / scatter_nd: MXNet 1.9.1's values (literals from it) for the cases the sweep does not try."""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx
from lazynd.errors import LazyNDError, ShapeError

DATA = np.arange(12, dtype=np.float32).reshape(3, 4)


def test_gather_nd_wraps_negative_and_truncates_fractional_indices():
    d = mx.nd.array(DATA)
    got = mx.nd.gather_nd(d, mx.nd.array([[0, -1, 2], [1, 3, -4]])).asnumpy()
    np.testing.assert_array_equal(got, [1.0, 11.0, 8.0])
    got = mx.nd.gather_nd(d, mx.nd.array([[0.7, 1.9], [1.2, 2.6]])).asnumpy()
    np.testing.assert_array_equal(got, [1.0, 6.0])


def test_gather_nd_wraps_a_negative_fractional_index_before_truncating_it():
    # MXNet 1.9.1: gather_nd(arange(12).reshape(3, 4), [[1.7, 1, 0], [-0.5, -1.5, -3.5]]) -> [7, 6, 0],
    # and [[-0.1], [0]] -> [8]; [[2.9], [0]] and [[-3.5], [0]] are out of bounds
    d = mx.nd.array(DATA)
    got = mx.nd.gather_nd(d, mx.nd.array([[1.7, 1, 0, -0.1], [-0.5, -1.5, -3.5, 0]])).asnumpy()
    np.testing.assert_array_equal(got, [7.0, 6.0, 0.0, 8.0])
    for bad in ([[2.9], [0]], [[-3.5], [0]]):
        with pytest.raises(LazyNDError, match="out of bounds for axis 0 with size 3"):
            mx.nd.gather_nd(d, mx.nd.array(bad)).asnumpy()


def test_gather_nd_gradient_lands_where_a_negative_fractional_index_read():
    x = mx.nd.zeros((3, 4))
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.gather_nd(x, mx.nd.array([[-0.1], [-0.5]]))
    y.backward(mx.nd.array([5.0]))
    expected = np.zeros((3, 4), np.float32)
    expected[2, 3] = 5.0
    np.testing.assert_array_equal(x.grad.asnumpy(), expected)


def test_gather_nd_of_fewer_indices_than_axes_takes_whole_rows_in_the_indices_shape():
    got = mx.nd.gather_nd(mx.nd.array(DATA), mx.nd.array([[[0, 1], [1, 2]]]))
    np.testing.assert_array_equal(got.asnumpy(), DATA[[[0, 1], [1, 2]]])
    assert got.shape == (2, 2, 4)


def test_gather_nd_keeps_the_data_dtype_whatever_the_indices_dtype():
    indices = mx.nd.array([[0, 2], [1, 3]], dtype="int32")
    assert mx.nd.gather_nd(mx.nd.array(DATA), indices).dtype == np.float32
    assert mx.nd.gather_nd(mx.nd.array(DATA, dtype="int32"), indices).dtype == np.int32


def test_gather_nd_gradient_sums_repeated_positions():
    x = mx.nd.ones((2, 3))
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.gather_nd(x, mx.nd.array([[0, 0, 1], [1, 1, 2]]))
    y.backward(mx.nd.array([1, 2, 3]))
    np.testing.assert_array_equal(x.grad.asnumpy(), [[0, 3, 0], [0, 0, 3]])


def test_backward_gather_nd_takes_the_shape_parameter_as_mxnet():
    got = mx.nd._backward_gather_nd(mx.nd.array([1, 2]), mx.nd.array([[0, 0], [1, 1]]), shape=(3, 4))
    np.testing.assert_array_equal(got.asnumpy(), [[0, 3, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]])


def test_scatter_nd_rows_dtype_and_gradient():
    got = mx.nd.scatter_nd(mx.nd.array([[1, 2, 3, 4]]), mx.nd.array([[0]]), shape=(3, 4)).asnumpy()
    np.testing.assert_array_equal(got, [[1, 2, 3, 4], [0, 0, 0, 0], [0, 0, 0, 0]])
    assert mx.nd.scatter_nd(mx.nd.array([1, 2], dtype="int32"), mx.nd.array([[0, 1]]), shape=(3,)).dtype == np.int32
    x = mx.nd.array([1.0, 2.0])
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.scatter_nd(x, mx.nd.array([[0, 1]]), shape=(3,))
    y.backward(mx.nd.array([5, 6, 7]))
    np.testing.assert_array_equal(x.grad.asnumpy(), [5, 6])


@pytest.mark.parametrize(
    "call,message",
    [
        (lambda d: mx.nd.gather_nd(d, mx.nd.array([[0], [1], [2]])), "gather_nd: 'indices' addresses 3 axes"),
        (lambda d: mx.nd.gather_nd(d, mx.nd.array([1, 2])), "gather_nd: 'indices' must have at least 2 dims"),
        (
            lambda d: mx.nd.scatter_nd(mx.nd.array([1, 2]), mx.nd.array([[0, 1]]), shape=(3, 4)),
            r"scatter_nd: shape of 'data' is \(2,\), expected \(2, 4\)",
        ),
    ],
    ids=["too-many-axes", "1-D-indices", "data-shape"],
)
def test_bad_shapes_fail_at_the_call_naming_the_operator(call, message):
    with pytest.raises(ShapeError, match=message):
        call(mx.nd.array(DATA))


@pytest.mark.parametrize(
    "call",
    [
        lambda d: mx.nd.gather_nd(d, mx.nd.array([[0, 2], [1, 4]])),
        lambda d: mx.nd.gather_nd(d, mx.nd.array([[0, -4], [1, 3]])),
        lambda d: mx.nd.scatter_nd(mx.nd.array([1, 2]), mx.nd.array([[0, 5], [1, 1]]), shape=(3, 4)),
    ],
    ids=["gather-high", "gather-negative", "scatter"],
)
def test_an_index_out_of_range_fails_naming_the_operator_and_axis(call):
    # MXNet raises an IndexError at the wait (and crashes in scatter_nd)
    with pytest.raises(LazyNDError, match=r"index -?\d+ is out of bounds for axis \d with size \d"):
        call(mx.nd.array(DATA)).asnumpy()


def test_scatter_set_nd_assigns_into_lhs_as_mxnet():
    # MXNet 1.9.1's x[index arrays] = v: out=lhs, a repeated position keeps the last value
    lhs = mx.nd.array(DATA)
    got = mx.nd._internal._scatter_set_nd(
        lhs, mx.nd.array([70, 80, 90]), mx.nd.array([[0, 2, 0], [1, 3, 1]]), shape=(3, 4), out=lhs
    )
    assert got is lhs
    want = DATA.copy()
    want[0, 1], want[2, 3] = 90, 80
    np.testing.assert_array_equal(lhs.asnumpy(), want)
    # without out=, lhs is left alone (MXNet 1.9.1 refuses the call)
    fresh = mx.nd.array(DATA)
    rows = mx.nd._internal._scatter_set_nd(fresh, mx.nd.array([[7, 7, 7, 7]]), mx.nd.array([[-1]]), shape=(3, 4))
    np.testing.assert_array_equal(rows.asnumpy()[2], [7, 7, 7, 7])
    np.testing.assert_array_equal(fresh.asnumpy(), DATA)


def test_scatter_set_nd_gradient_and_shapes():
    lhs, rhs = mx.nd.array(DATA), mx.nd.array([[70, 80, 90, 100]])
    lhs.attach_grad()
    rhs.attach_grad()
    with mx.autograd.record():
        out = mx.nd._internal._scatter_set_nd(lhs, rhs, mx.nd.array([[1]]), shape=(3, 4))
    out.backward(mx.nd.array(DATA + 1))
    np.testing.assert_array_equal(lhs.grad.asnumpy(), np.where(np.arange(3)[:, None] == 1, 0, DATA + 1))
    np.testing.assert_array_equal(rhs.grad.asnumpy(), [[5, 6, 7, 8]])
    node = mx.sym._internal._scatter_set_nd(mx.sym.var("a"), mx.sym.var("b"), mx.sym.var("c"), shape=(3, 4))
    assert node.infer_shape(a=(3, 4), c=(1, 1)) == ([(3, 4), (1, 4), (1, 1)], [(3, 4)], [])
    with pytest.raises(LazyNDError, match="_scatter_set_nd: index 5 is out of bounds for axis 0 with size 3"):
        mx.nd._internal._scatter_set_nd(lhs, rhs, mx.nd.array([[5]]), shape=(3, 4)).asnumpy()
