"""``mx.nd.random``: MXNet 1.x's namespace of samplers, the same module as ``mx.random``."""

from __future__ import annotations

import numpy as np

import lazynd as mx


def test_nd_random_is_the_random_module() -> None:
    # MXNet 1.9.1: mx.nd.random.uniform is mx.random.uniform -> True
    assert mx.nd.random.uniform is mx.random.uniform
    assert mx.nd.random.normal is mx.random.normal


def test_nd_random_uniform_and_normal_take_mxnets_arguments() -> None:
    mx.random.seed(7)
    a = mx.nd.random.uniform(-1, 1, shape=(2, 3))
    b = mx.nd.random.normal(loc=0, scale=1, shape=(4,), dtype="float64")
    assert a.shape == (2, 3) and a.dtype == np.float32
    assert b.shape == (4,) and b.dtype == np.float64
    assert (a.asnumpy() >= -1).all() and (a.asnumpy() < 1).all()


def test_randn_takes_its_shape_by_position() -> None:
    # MXNet 1.9.1: mx.nd.random.randn(2, 3, loc=1, scale=2).shape -> (2, 3), dtype float32
    mx.random.seed(3)
    x = mx.nd.random.randn(200, 50, loc=1.0, scale=2.0)
    assert x.shape == (200, 50) and x.dtype == np.float32
    values = x.asnumpy()
    assert abs(values.mean() - 1.0) < 0.1 and abs(values.std() - 2.0) < 0.1
    mx.random.seed(3)
    np.testing.assert_array_equal(mx.random.randn(200, 50, loc=1.0, scale=2.0).asnumpy(), values)
