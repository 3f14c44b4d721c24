"""NDArray dtype rules checked against MXNet 1.9.1 (its answers are written in the tests)."""

from __future__ import annotations

import numpy as np

import lazynd as mx


def test_astype_none_is_float32():
    # MXNet's astype reads None as mx_real_t (np.dtype(None) would be float64)
    x = mx.nd.array([1, 2], dtype="int32")
    assert x.astype(None).dtype == np.float32
    assert x.astype(None, copy=False).dtype == np.float32
    y = mx.nd.ones((2,))
    assert y.astype(None, copy=False) is y
