"""NDArray dtype rules checked against MXNet 1.9.1 (its answers are written in the tests)."""

from __future__ import annotations

import re

import numpy as np
import pytest

import lazynd as mx


def test_astype_none_is_float32():
    # MXNet's astype reads None as mx_real_t (np.dtype(None) would be float64)
    x = mx.nd.array([1, 2], dtype="int32")
    assert x.astype(None).dtype == np.float32
    assert x.astype(None, copy=False).dtype == np.float32
    y = mx.nd.ones((2,))
    assert y.astype(None, copy=False) is y


def test_array_of_a_list_converts_floats_to_integers_as_mxnet():
    # MXNet 1.9.1 converts a list's floats with int(): toward zero, then wrapped to the dtype's width
    # (the C cast of NumPy's float64 array gave INT_MIN for 1e10 in int32)
    np.testing.assert_array_equal(mx.nd.array([1e10, 1.5, -2.7], dtype="int32").asnumpy(), [1410065408, 1, -2])
    np.testing.assert_array_equal(mx.nd.array([300.0, -1.0], dtype="uint8").asnumpy(), [44, 255])
    assert int(mx.nd.array(7.9, dtype="int64").asnumpy()) == 7


@pytest.mark.parametrize("value", [float("nan"), float("inf"), -1e20])
def test_array_of_a_list_refuses_a_float_no_integer_holds(value):
    # MXNet 1.9.1 raises (TypeError); NumPy's cast gave INT_MIN silently
    with pytest.raises(
        mx.OperatorError, match=re.escape(f"array: the value {value!r} has no value in an array of int32")
    ):
        mx.nd.array([1.0, value], dtype="int32")


def test_assigning_a_list_converts_and_refuses_floats_as_array_does():
    x = mx.nd.zeros((2, 3), dtype="int32")
    x[0] = [1e10, 1.5, -2.7]
    np.testing.assert_array_equal(x.asnumpy(), [[1410065408, 1, -2], [0, 0, 0]])
    with pytest.raises(mx.OperatorError, match="__setitem__: the value nan has no value in an array of int32"):
        x[1] = [float("nan"), 1, 2]
    np.testing.assert_array_equal(x.asnumpy()[1], [0, 0, 0])
