"""NDArray.slice_assign, slice_assign_scalar, as_nd_ndarray and as_np_ndarray of MXNet 1.9.1's
Python class (they were missing: AttributeError); the values are MXNet 1.9.1's."""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx
from lazynd.errors import LazyNDError, UnsupportedError


def test_slice_assign_writes_the_region_in_place_and_returns_self(ctx):
    x = mx.nd.arange(12, ctx=ctx).reshape((3, 4))
    assert x.slice_assign(-mx.nd.ones((2, 2), ctx=ctx), (0, 1), (2, 3), (None, None)) is x
    np.testing.assert_array_equal(x.asnumpy(), [[0, -1, -1, 3], [4, -1, -1, 7], [8, 9, 10, 11]])


def test_slice_assign_takes_none_entries_and_negative_steps(ctx):
    x = mx.nd.arange(24, ctx=ctx).reshape((2, 3, 4))
    rhs = -mx.nd.arange(4, ctx=ctx).reshape((2, 1, 2))
    x.slice_assign(rhs, (None, -1, 3), (None, None, None), (None, None, -2))
    expected = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    expected[:, 2, [3, 1]] = [[0, -1], [-2, -3]]
    np.testing.assert_array_equal(x.asnumpy(), expected)


def test_slice_assign_scalar_casts_to_the_dtype_and_walks_backwards(ctx):
    x = mx.nd.arange(24, ctx=ctx).reshape((2, 3, 4))
    assert x.slice_assign_scalar(-1, (1, None), (None, 0), (-1, -2)) is x
    expected = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    expected[:, 2, :] = -1
    np.testing.assert_array_equal(x.asnumpy(), expected)
    ints = mx.nd.arange(4, dtype="int32", ctx=ctx)
    np.testing.assert_array_equal(ints.slice_assign_scalar(2.7, (0,), (2,), ()).asnumpy(), [2, 2, 2, 3])


def test_slice_assign_scalar_with_fewer_axes_than_the_array_fills_the_rest(ctx):
    x = mx.nd.arange(12, ctx=ctx).reshape((3, 4))
    x.slice_assign_scalar(9, (1,), (2,), ())
    np.testing.assert_array_equal(x.asnumpy()[1], [9, 9, 9, 9])


def test_slice_assign_is_ordered_after_earlier_reads_of_the_array(ctx):
    x = mx.nd.ones((2, 2), ctx=ctx)
    doubled = x * 2  # pushed before the write: it must read the ones
    x.slice_assign_scalar(5, (0,), (1,), ())
    np.testing.assert_array_equal(doubled.asnumpy(), [[2, 2], [2, 2]])
    np.testing.assert_array_equal(x.asnumpy(), [[5, 5], [1, 1]])


def test_slice_assign_refuses_a_right_hand_side_of_another_shape():
    with pytest.raises(LazyNDError, match=r"shape of 'rhs' is \(2, 3\), expected \(2, 2\)"):
        mx.nd.zeros((3, 4)).slice_assign(mx.nd.ones((2, 3)), (0, 0), (2, 2), ())


def test_as_nd_ndarray_is_the_array_itself():
    x = mx.nd.ones(2)
    assert x.as_nd_ndarray() is x


def test_as_np_ndarray_is_refused_naming_mx_np():
    with pytest.raises(UnsupportedError, match=r"NDArray.as_np_ndarray: .*\(mx.np\) are not part of lazynd"):
        mx.nd.ones(2).as_np_ndarray()
