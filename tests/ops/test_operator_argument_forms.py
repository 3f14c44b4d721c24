"""Argument forms the operator tests never tried: one int where a tuple of axes goes (MXNet reads it
as a tuple of one), a parameter of the wrong type, and data of too few dims, each refused at the
call with a :class:`lazynd.LazyNDError` naming the operator, never Python's TypeError or IndexError."""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx

X = np.arange(12, dtype=np.float32).reshape(3, 4)


@pytest.mark.parametrize(("axes", "expected"), [(1, (3, 2)), (-1, (3, 2)), (0, (2, 4)), ((0, 1), (2, 2))])
def test_slice_like_takes_one_int_as_one_axis_as_mxnet(axes, expected):
    got = mx.nd.slice_like(mx.nd.array(X), mx.nd.zeros((2, 2)), axes=axes)
    np.testing.assert_array_equal(got.asnumpy(), X[: expected[0], : expected[1]])


def test_slice_like_refuses_an_axis_out_of_range():
    with pytest.raises(mx.LazyNDError, match="slice_like: axes=-5 is out of range"):
        mx.nd.slice_like(mx.nd.array(X), mx.nd.zeros((2, 2)), axes=-5)


@pytest.mark.parametrize("axis", ["abc", None, (0, 1), 1.5])
def test_boolean_mask_names_an_axis_that_is_not_an_int(axis):
    with pytest.raises(mx.LazyNDError, match="_contrib_boolean_mask: invalid value .* for parameter 'axis'"):
        mx.nd.contrib.boolean_mask(mx.nd.array(X), mx.nd.array([0, 1, 1]), axis=axis)


def test_boolean_mask_still_takes_axis_zero_as_a_string():
    got = mx.nd.contrib.boolean_mask(mx.nd.array(X), mx.nd.array([0, 1, 1]), axis="0")
    np.testing.assert_array_equal(got.asnumpy(), X[1:])


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: mx.nd.SoftmaxOutput(mx.nd.ones(()), mx.nd.ones(())), "SoftmaxOutput: data is 0-d"),
        (lambda: mx.nd.LRN(mx.nd.ones(()), nsize=3), r"LRN: data of shape \(\) has no channel axis"),
        (lambda: mx.nd.LRN(mx.nd.ones((3,)), nsize=3), r"LRN: data of shape \(3,\) has no channel axis"),
    ],
    ids=["SoftmaxOutput-0d", "LRN-0d", "LRN-1d"],
)
def test_data_of_too_few_dims_is_refused_at_the_call(call, message):
    with pytest.raises(mx.LazyNDError, match=message):
        call()  # no wait: the shape rule raises
