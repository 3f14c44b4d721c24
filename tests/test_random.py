"""mx.random's MXNet 1.x samplers: scalar parameters draw ``_random_*``, NDArray parameters draw
``_sample_*`` per element, as MXNet's ``mx.random`` functions do."""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx
from lazynd.errors import LazyNDError, OperatorError, ShapeError


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


def test_uniform_and_normal_take_ndarray_parameters_as_mxnet():
    # MXNet 1.x draws shape samples per element (_sample_uniform/_sample_normal); they were refused
    # ("expected a number")
    mx.random.seed(3)
    x = mx.random.uniform(mx.nd.array([0.0, 10.0]), mx.nd.array([1.0, 12.0]), shape=4000, dtype="float64")
    assert x.shape == (2, 4000) and x.dtype == np.float64
    np.testing.assert_allclose(x.asnumpy().mean(-1), [0.5, 11.0], rtol=0.05)
    y = mx.nd.random.normal(mx.nd.array([0.0, 10.0]), mx.nd.array([1.0, 2.0]), shape=(4000,))
    assert y.shape == (2, 4000)
    np.testing.assert_allclose(y.asnumpy().std(-1), [1.0, 2.0], rtol=0.1)


@pytest.mark.parametrize(
    ("name", "params", "mean"),
    [
        ("uniform_like", {"low": 1.0, "high": 3.0}, 2.0),
        ("normal_like", {"loc": 5.0}, 5.0),
        ("exponential_like", {"lam": 4.0}, 0.25),
        ("gamma_like", {"alpha": 2.0, "beta": 3.0}, 6.0),
        ("poisson_like", {"lam": 3.0}, 3.0),
        ("negative_binomial_like", {"k": 3, "p": 0.5}, 3.0),
        ("generalized_negative_binomial_like", {"mu": 2.0, "alpha": 0.5}, 2.0),
    ],
)
def test_like_samplers_take_the_shape_and_dtype_of_their_data(name, params, mean):
    # mx.nd.random.<name> of MXNet 1.x (it was an AttributeError)
    mx.random.seed(4)
    got = getattr(mx.nd.random, name)(mx.nd.zeros((2, 10000), dtype="float64"), **params)
    assert got.shape == (2, 10000) and got.dtype == np.float64
    assert abs(got.asnumpy().mean() - mean) < 0.05 * mean + 0.02


@pytest.mark.parametrize(
    "call,error,message",
    [
        (lambda o: mx.nd.random.uniform(shape=(3,), out=o), ShapeError, r"shape \(3,\) differs from that of 'out'"),
        (lambda o: mx.nd.random.normal(0, 1, shape=6, out=o), ShapeError, r"shape \(6,\) differs"),
        (lambda o: mx.nd.random.uniform(dtype="float64", out=o), OperatorError, "dtype float64 differs"),
    ],
    ids=["shape", "int-shape", "dtype"],
)
def test_a_shape_or_dtype_given_with_out_must_be_outs(call, error, message):
    # MXNet 1.9.1 refuses them ("Shape inconsistent"); lazynd drew in out's shape and dtype, silently
    out = mx.nd.zeros((2, 3))
    with pytest.raises(error, match=message):
        call(out)
    mx.nd.random.uniform(shape=(2, 3), dtype="float32", out=out)  # agreeing ones are fine
    assert mx.nd.random.randint(0, 4, out=mx.nd.zeros((2, 3), dtype="int64")).dtype == np.int64


def test_rnd_is_mxnets_short_name_for_random():
    # neural-style programs draw their starting image with mx.rnd.uniform
    assert mx.rnd is mx.random
    sample = mx.rnd.uniform(-0.1, 0.1, (2, 3))
    assert sample.shape == (2, 3) and float(sample.abs().max().asscalar()) <= 0.1


@pytest.mark.parametrize(
    "draw",
    [
        lambda: mx.random.normal(0, 1, (2,), "float64", mx.cpu()),  # MXNet 1.x: (shape, dtype, ctx)
        lambda: mx.random.normal(0, 1, (2,), mx.cpu(), "float64"),  # MXNet 0.9: (shape, ctx, dtype)
        lambda: mx.nd.random.uniform(0, 1, (2,), "float64"),
        lambda: mx.random.randint(0, 5, (2,), "int64", "cpu(0)"),
        lambda: mx.random.exponential(1.0, (2,), "float64"),
    ],
)
def test_the_slot_after_shape_takes_a_dtype_or_a_context(draw):
    # bayesian-methods passes the context fourth (0.9's order); 1.x programs pass the dtype there
    sample = draw()
    assert sample.shape == (2,) and sample.context == mx.cpu()
    assert sample.dtype in (np.float64, np.int64)


@pytest.mark.parametrize("seed", [-1, -(2**40), 2**64 + 5])
def test_any_int_seeds_reproducibly_as_in_mxnet(seed):
    # MXNet takes a negative seed; here the engine raised NumPy's "expected non-negative integer"
    mx.random.seed(seed)
    a = mx.random.uniform(shape=(4,)).asnumpy()
    mx.random.seed(seed)
    np.testing.assert_array_equal(a, mx.random.uniform(shape=(4,)).asnumpy())


def test_seed_takes_a_context_by_name_and_seeds_that_context_only():
    # MXNet's seed(s, ctx='cpu') works; here it raised AttributeError ('str' has no device_type)
    mx.random.seed(5, ctx="cpu")
    a = mx.random.uniform(shape=(4,)).asnumpy()
    other = mx.random.uniform(shape=(4,), ctx=mx.cpu(1)).asnumpy()
    mx.random.seed(5, ctx="cpu(0)")
    np.testing.assert_array_equal(a, mx.random.uniform(shape=(4,)).asnumpy())
    # cpu(1) was not reset: each cpu(n) has its own generator here (MXNet's CPUs share one)
    assert not (other == mx.random.uniform(shape=(4,), ctx=mx.cpu(1)).asnumpy()).all()


def test_seed_refuses_a_bad_context_clearly():
    with pytest.raises(LazyNDError, match="random.seed: ctx is 'foo'; expected a Context"):
        mx.random.seed(3, ctx="foo")


@pytest.mark.parametrize("scale", [0, 0.0, -2.0])
def test_exponential_refuses_a_scale_that_is_not_positive(scale):
    # MXNet refuses it; a scale of 0 was a bare ZeroDivisionError here, a negative one named 'lam'
    with pytest.raises(OperatorError, match=f"random.exponential: scale must be > 0, got {scale}"):
        mx.random.exponential(scale, shape=(2,))


def test_ndarray_parameters_draw_in_the_dtype_of_out():
    # MXNet's _sample_* with no dtype writes out's float dtype; here a float64 out was refused
    out = mx.nd.zeros((2, 3), dtype="float64")
    mx.random.uniform(mx.nd.array([0.0, 10.0]), mx.nd.array([1.0, 11.0]), shape=3, out=out)
    values = out.asnumpy()
    assert ((values[0] >= 0) & (values[0] < 1)).all() and ((values[1] >= 10) & (values[1] < 11)).all()
    with pytest.raises(OperatorError, match="_sample_normal: invalid value 'int32' for parameter 'dtype'"):
        mx.random.normal(mx.nd.array([0.0]), mx.nd.array([1.0]), shape=2, out=mx.nd.zeros((1, 2), dtype="int32"))


def test_a_bad_context_is_named_as_the_context():
    # the value in the ctx slot was taken for a dtype (MXNet 0.9's order) and reported as a bad dtype
    with pytest.raises(LazyNDError, match="ctx is 'foo'; expected a Context"):
        mx.random.uniform(shape=(2,), ctx="foo")
    assert mx.random.uniform(0, 1, (2,), "float64", mx.cpu()).dtype == np.float64
    assert mx.random.normal(0, 1, (2,), mx.cpu(), "float64").dtype == np.float64
