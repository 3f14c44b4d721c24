"""Assignments in MXNet 0.9's form: an integer-indexed axis kept with length 1 in the value."""

import numpy as np
import pytest

import lazynd as mx
from lazynd.errors import ShapeError


def test_a_value_keeping_the_integer_indexed_axis_is_assigned(ctx):
    x = mx.nd.zeros((3, 4, 2), ctx=ctx)
    x[:, 1:3, 1] = mx.nd.ones((3, 2, 1), ctx=ctx)
    expected = np.zeros((3, 4, 2))
    expected[:, 1:3, 1] = 1
    np.testing.assert_array_equal(x.asnumpy(), expected)


def test_a_host_value_in_mxnet_form_is_assigned_too(ctx):
    x = mx.nd.zeros((3, 4), ctx=ctx)
    x[1, 1:3] = np.array([[5, 6]])
    np.testing.assert_array_equal(x.asnumpy()[1], [0, 5, 6, 0])


def test_the_numpy_form_still_works(ctx):
    x = mx.nd.zeros((3, 4, 2), ctx=ctx)
    x[:, 1:3, 1] = mx.nd.ones((3, 2), ctx=ctx)
    assert x.asnumpy()[:, 1:3, 1].sum() == 6


def test_a_kept_axis_longer_than_one_is_refused(ctx):
    x = mx.nd.zeros((3, 4, 2), ctx=ctx)
    with pytest.raises(ShapeError, match=r"value of shape \(3, 2, 2\) to a target of shape \(3, 2\)"):
        x[:, 1:3, 1] = mx.nd.ones((3, 2, 2), ctx=ctx)


@pytest.mark.parametrize("value", [mx.nd.array([5.0]), np.array([5.0]), [[5.0]]], ids=["ndarray", "numpy", "list"])
def test_a_one_element_value_is_assigned_to_a_single_element(value, ctx):
    # ``x[0, 1] = x[2, 3]``: the value read by integers has shape (1,) in MXNet; NumPy refuses a
    # sequence for one element (an EngineError with NumPy's ValueError before)
    x = mx.nd.zeros((2, 3, 4), ctx=ctx)
    x[1, 2, 3] = value
    expected = np.zeros((2, 3, 4))
    expected[1, 2, 3] = 5
    np.testing.assert_array_equal(x.asnumpy(), expected)
