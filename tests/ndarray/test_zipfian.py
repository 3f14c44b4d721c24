"""mx.nd.contrib.rand_zipfian / mx.sym.contrib.rand_zipfian: MXNet 1.9.1's shapes, dtypes and
expected counts (values pasted from MXNet 1.9.1); the samples themselves are random."""

from __future__ import annotations

import math

import numpy as np
import pytest

import lazynd as mx
import lazynd_sym as sym
from lazynd.errors import LazyNDError


def zipf_probability(c: np.ndarray, range_max: int) -> np.ndarray:
    return np.log((c + 2.0) / (c + 1.0)) / math.log(range_max + 1)


def test_samples_and_expected_counts_have_mxnets_shapes_and_dtypes(ctx):
    samples, count_true, count_sampled = mx.nd.contrib.rand_zipfian(mx.nd.array([3, 0], dtype="int32"), 4, 5, ctx=ctx)
    assert (samples.shape, samples.dtype) == ((4,), np.int64)
    assert (count_true.dtype, count_sampled.dtype, count_sampled.shape) == (np.float64, np.float64, (4,))
    assert samples.context == ctx
    # MXNet 1.9.1: rand_zipfian([3, 0], 4, 5)[1] = [0.49815515, 1.54741123]
    np.testing.assert_allclose(count_true.asnumpy(), [0.49815515, 1.54741123], rtol=1e-7)
    drawn = samples.asnumpy()
    assert ((drawn >= 0) & (drawn < 5)).all()
    np.testing.assert_allclose(count_sampled.asnumpy(), 4 * zipf_probability(drawn, 5))


def test_samples_follow_the_log_uniform_distribution():
    mx.random.seed(3)
    samples = mx.nd.contrib.rand_zipfian(mx.nd.array([0]), 20000, 6)[0].asnumpy()
    frequencies = np.bincount(samples, minlength=6) / samples.size
    np.testing.assert_allclose(frequencies, zipf_probability(np.arange(6), 6), atol=0.02)


def test_symbol_gives_three_outputs_of_mxnets_shapes_and_types():
    outputs = sym.contrib.rand_zipfian(sym.Variable("t"), 4, 5)
    net = sym.Group(list(outputs))
    # MXNet 1.9.1: ([(3,)], [(4,), (3,), (4,)], []), types int64, float64, float64
    assert net.infer_shape(t=(3,))[1] == [(4,), (3,), (4,)]
    assert net.infer_type(t="float32")[1] == [np.int64, np.float64, np.float64]
    ex = net.simple_bind(mx.cpu(), t=(2,))
    ex.arg_dict["t"][:] = np.array([3, 0])
    samples, count_true, count_sampled = (o.asnumpy() for o in ex.forward())
    np.testing.assert_allclose(count_true, [0.49815515, 1.54741123], rtol=1e-7)
    np.testing.assert_allclose(count_sampled, 4 * zipf_probability(samples, 5))


def test_bad_counts_are_refused_by_name():
    with pytest.raises(LazyNDError, match="rand_zipfian: range_max must be a positive integer, got 0"):
        mx.nd.contrib.rand_zipfian(mx.nd.array([1]), 4, 0)
    with pytest.raises(LazyNDError, match="rand_zipfian: num_sampled"):
        sym.contrib.rand_zipfian(sym.Variable("t"), 2.5, 5)
