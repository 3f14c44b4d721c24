"""mx.random's MXNet 1.x samplers: scalar parameters draw ``_random_*``, NDArray parameters draw
``_sample_*`` per element, as MXNet's ``mx.random`` functions do."""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx
from lazynd.errors import OperatorError


def test_exponential_takes_mxnets_scale_not_the_rate():
    mx.random.seed(0)
    assert abs(mx.random.exponential(2.0, shape=(20000,)).asnumpy().mean() - 2.0) < 0.1


def test_ndarray_parameters_draw_shape_samples_per_element():
    mx.random.seed(1)
    x = mx.random.exponential(mx.nd.array([1.0, 10.0]), shape=4000)
    assert x.shape == (2, 4000)
    np.testing.assert_allclose(x.asnumpy().mean(-1), [1.0, 10.0], rtol=0.1)
    assert mx.random.negative_binomial(mx.nd.array([3.0]), mx.nd.array([0.4]), shape=(2,)).shape == (1, 2)


def test_scalar_samplers_shapes_seeds_and_the_rest():
    mx.random.seed(2)
    a = mx.random.gamma(2, 3, shape=(3,), dtype="float64").asnumpy()
    mx.random.seed(2)
    np.testing.assert_array_equal(a, mx.random.gamma(2, 3, shape=(3,), dtype="float64").asnumpy())
    assert mx.random.poisson(3, shape=2).shape == (2,)
    assert mx.random.generalized_negative_binomial(2.0, 0.0, shape=(4,)).shape == (4,)
    assert mx.random.multinomial(mx.nd.array([0.5, 0.5]), shape=3).dtype == np.int32
    assert sorted(mx.random.shuffle(mx.nd.arange(5)).asnumpy().tolist()) == [0, 1, 2, 3, 4]


def test_mixed_scalar_and_array_parameters_are_refused():
    with pytest.raises(OperatorError, match="random.gamma: parameters alpha, beta must be all NDArrays or all numbers"):
        mx.random.gamma(mx.nd.array([1.0]), 2.0)
