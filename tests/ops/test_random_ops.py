"""Random samplers: parameters MXNet refuses are refused at the call."""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx
from lazynd.errors import LazyNDError, OperatorError, ShapeError


@pytest.mark.parametrize(
    "call,message",
    [
        (lambda: mx.nd.uniform(low=2, high=1, shape=(2,)), r"uniform: high \(1.0\) must be >= low \(2.0\)"),
        (lambda: mx.nd.normal(loc=0, scale=-1, shape=(2,)), "normal: scale must be > 0, got -1.0"),
        (lambda: mx.nd.random_randint(low=3, high=3, shape=(2,)), r"randint: high \(3\) must be > low \(3\)"),
        # a NaN passed the checks: NumPy's bare OverflowError in the engine, or NaN draws; MXNet refuses both
        (lambda: mx.nd.uniform(low=float("nan"), high=1, shape=(2,)), r"uniform: high \(1.0\) must be >= low \(nan\)"),
        (lambda: mx.nd.normal(loc=0, scale=float("nan"), shape=(2,)), "normal: scale must be > 0, got nan"),
        # an infinite range was NumPy's bare OverflowError in the engine
        (
            lambda: mx.nd.uniform(low=0, high=float("inf"), shape=(2,)),
            r"uniform: low \(0.0\) and high \(inf\) must be finite",
        ),
    ],
    ids=["uniform", "normal", "randint", "uniform-nan", "normal-nan", "uniform-inf"],
)
def test_bad_sampler_parameters_fail_at_the_call(call, message):
    # MXNet refuses these too; lazynd raised them only at the next wait, as an EngineError
    with pytest.raises(OperatorError, match=message):
        call()


def test_sampler_shapes_and_dtypes_follow_their_parameters():
    assert mx.nd.uniform(shape=(2, 3), dtype="float64").dtype == np.float64
    assert mx.nd.normal(shape=5).shape == (5,)
    assert mx.nd.random_randint(low=0, high=5, shape=(2,)).dtype == np.int32


@pytest.mark.parametrize(
    "call,message",
    [
        (lambda: mx.nd.random.uniform(shape=(3,), dtype="int32"), "_random_uniform: invalid value 'int32'"),
        (lambda: mx.nd.random.normal(shape=(3,), dtype="uint8"), "_random_normal: invalid value 'uint8'"),
        (lambda: mx.nd.random.poisson(2.0, shape=(3,), dtype="int64"), "_random_poisson: invalid value 'int64'"),
        (lambda: mx.nd.random.randint(0, 5, shape=(3,), dtype="float32"), "_random_randint: invalid value 'float32'"),
    ],
    ids=["uniform-int32", "normal-uint8", "poisson-int64", "randint-float32"],
)
def test_sampler_dtypes_are_mxnets(call, message):
    # MXNet 1.9.1 draws floats as float16/32/64 only and randint as int32/int64 only: an integer
    # uniform was silently all zeros here
    with pytest.raises(OperatorError, match=message):
        call()
    assert mx.nd.random.randint(0, 5, shape=(3,), dtype="int64").dtype == np.int64


# -- MXNet 1.x's further samplers ------------------------------------------------------------------
N = 20000  # draws per statistic: the means below sit within 5 standard errors


@pytest.mark.parametrize(
    "name,params,mean,var",
    [
        ("random_exponential", {"lam": 2.0}, 0.5, 0.25),
        ("random_gamma", {"alpha": 2.0, "beta": 3.0}, 6.0, 18.0),
        ("random_poisson", {"lam": 4.0}, 4.0, 4.0),
        ("random_negative_binomial", {"k": 3, "p": 0.4}, 4.5, 11.25),
        ("random_generalized_negative_binomial", {"mu": 2.0, "alpha": 0.5}, 2.0, 4.0),
        ("random_generalized_negative_binomial", {"mu": 2.0, "alpha": 0.0}, 2.0, 2.0),
    ],
)
def test_distribution_moments(name, params, mean, var):
    mx.random.seed(11)
    x = getattr(mx.nd, name)(shape=(N,), **params).asnumpy().astype(np.float64)
    assert abs(x.mean() - mean) < 5 * np.sqrt(var / N)
    assert abs(x.var() / var - 1) < 0.1


def test_samplers_follow_the_seed_dtype_and_shape():
    mx.random.seed(3)
    a = mx.nd.random_gamma(alpha=2, shape=(2, 3), dtype="float64")
    mx.random.seed(3)
    b = mx.nd.random_gamma(alpha=2, shape=(2, 3), dtype="float64")
    assert a.dtype == np.float64 and a.shape == (2, 3)
    np.testing.assert_array_equal(a.asnumpy(), b.asnumpy())
    counts = mx.nd.random_poisson(lam=3, shape=(50,)).asnumpy()
    assert counts.dtype == np.float32 and np.array_equal(counts, np.round(counts))  # MXNet: counts as floats


@pytest.mark.parametrize(
    "call,message",
    [
        (lambda: mx.nd.random_exponential(lam=0, shape=(2,)), r"random_exponential: lam must be > 0, got 0.0"),
        (lambda: mx.nd.random_gamma(beta=-1, shape=(2,)), r"random_gamma: beta must be > 0, got -1.0"),
        (lambda: mx.nd.random_poisson(lam=-1, shape=(2,)), r"random_poisson: lam must be >= 0"),
        (lambda: mx.nd.random_negative_binomial(k=-1, p=0.5, shape=(2,)), r"k must be >= 0"),
        (lambda: mx.nd.random_negative_binomial(k=2, p=0, shape=(2,)), r"p must be in \(0, 1\], got 0.0"),
        (lambda: mx.nd.random_generalized_negative_binomial(mu=-1, shape=(2,)), r"mu must be >= 0"),
    ],
    ids=["exp-lam", "gamma-beta", "poisson-lam", "nb-k", "nb-p", "gnb-mu"],
)
def test_bad_distribution_parameters_fail_at_the_call(call, message):
    with pytest.raises(OperatorError, match=message):
        call()


def test_per_row_samplers_draw_shape_samples_per_parameter_in_float32():
    mx.random.seed(5)
    mu = mx.nd.array([[0, 10], [20, 30]], dtype="float64")
    x = mx.nd.sample_normal(mu, mx.nd.ones((2, 2), dtype="float64"), shape=4000)
    assert x.shape == (2, 2, 4000) and x.dtype == np.float32  # MXNet's dtype=None is float32
    np.testing.assert_allclose(x.asnumpy().mean(-1), [[0, 10], [20, 30]], atol=0.1)
    lam = mx.nd.array([2.0, 40.0])
    counts = mx.nd.sample_poisson(lam, shape=(4000,), dtype="float64")
    assert counts.dtype == np.float64
    np.testing.assert_allclose(counts.asnumpy().mean(-1), [2.0, 40.0], rtol=0.05)
    # a row with high < low draws from (high, low], as MXNet does
    u = mx.nd.sample_uniform(mx.nd.array([1.0]), mx.nd.array([0.0]), shape=100).asnumpy()
    assert u.min() >= 0 and u.max() <= 1


def test_per_row_parameters_must_share_one_shape():
    with pytest.raises(ShapeError, match=r"_sample_normal: shape of 'sigma' is \(3,\), expected \(2,\)"):
        mx.nd.sample_normal(mx.nd.array([0, 1]), mx.nd.array([1, 1, 1]))


def test_sample_multinomial_frequencies_shapes_and_mxnets_log_probability_gradient():
    mx.random.seed(2)
    picks = mx.nd.sample_multinomial(mx.nd.array([0.1, 0.2, 0.7]), shape=N)
    assert picks.dtype == np.int32 and picks.shape == (N,)
    np.testing.assert_allclose(np.bincount(picks.asnumpy(), minlength=3) / N, [0.1, 0.2, 0.7], atol=0.015)
    assert mx.nd.sample_multinomial(mx.nd.array([0.1, 0.9])).shape == (1,)
    p = mx.nd.array([0.2, 0.8])
    p.attach_grad()
    with mx.autograd.record():
        sample, logp = mx.nd.sample_multinomial(p, shape=4, get_prob=True)
    logp.backward()
    chosen = sample.asnumpy()
    np.testing.assert_allclose(logp.asnumpy(), np.log([0.2, 0.8])[chosen], rtol=1e-6)
    # MXNet: each sample adds head / p[its category] (4 picks of 1 from [0.2, 0.8] give [0, 5])
    want = np.bincount(chosen, minlength=2) / np.array([0.2, 0.8])
    np.testing.assert_allclose(p.grad.asnumpy(), want, rtol=1e-6)


def test_shuffle_permutes_the_first_axis_keeping_the_dtype():
    mx.random.seed(4)
    rows = mx.nd.shuffle(mx.nd.arange(12).reshape((4, 3))).asnumpy()
    assert sorted(map(tuple, rows.tolist())) == [tuple(r) for r in np.arange(12.0).reshape(4, 3).tolist()]
    assert mx.nd.shuffle(mx.nd.arange(4, dtype="int32")).dtype == np.int32


def test_shuffle_refuses_a_gradient_as_mxnet():
    # MXNet registers no gradient for _shuffle; here a zero gradient came back, silently wrong
    x = mx.nd.arange(6)
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.random.shuffle(x)
        z = (y * mx.nd.arange(6)).sum()
    with pytest.raises(LazyNDError, match="operator '_shuffle' has no gradient rule"):
        z.backward()
    with pytest.raises(OperatorError, match="operator _shuffle .* has no gradient rule"):
        mx.sym.random.shuffle(mx.sym.Variable("x")).simple_bind(mx.cpu(), x=(4,))


def test_per_row_samplers_take_a_numpy_dtype():
    # MXNet takes dtype=np.float64; here only the dtype's name was
    x = mx.nd.sample_normal(mx.nd.zeros((2,)), mx.nd.ones((2,)), shape=(3,), dtype=np.float64)
    assert x.dtype == np.float64 and x.shape == (2, 3)
    with pytest.raises(OperatorError, match="_sample_normal: invalid value .*int32.* for parameter 'dtype'"):
        mx.nd.sample_normal(mx.nd.zeros((2,)), mx.nd.ones((2,)), dtype=np.int32)


def test_sample_normal_names_a_negative_sigma():
    # NumPy's refusal, "scale < 0", named neither the parameter nor the value
    with pytest.raises(LazyNDError, match="_sample_normal: sigma must be >= 0, got -1.0"):
        mx.nd.sample_normal(mx.nd.array([0.0, 1.0]), mx.nd.array([1.0, -1.0]), shape=(3,)).asnumpy()


def test_like_samplers_take_shape_and_dtype_from_data_and_refuse_integers():
    mx.random.seed(6)
    x = mx.nd._random_uniform_like(mx.nd.ones((2, 3), dtype="float64"), low=2, high=3)
    assert x.shape == (2, 3) and x.dtype == np.float64
    assert ((x.asnumpy() >= 2) & (x.asnumpy() < 3)).all()
    g = mx.nd._random_gamma_like(mx.nd.zeros((N,)), alpha=2.0, beta=3.0).asnumpy()
    assert abs(g.mean() - 6.0) < 5 * np.sqrt(18.0 / N)
    with pytest.raises(OperatorError, match="_random_poisson_like: input 'data' has dtype int32"):
        mx.nd._random_poisson_like(mx.nd.ones((2,), dtype="int32"), lam=3)
    with pytest.raises(OperatorError, match="random_exponential: lam must be > 0, got -1.0"):
        mx.nd._random_exponential_like(mx.nd.ones((2,)), lam=-1)


@pytest.mark.parametrize(
    ("op", "params", "message"),
    [
        ("sample_gamma", ([1.0, -2.0], [1.0, 2.0]), "_sample_gamma: alpha must be >= 0, got -2.0"),
        ("sample_gamma", ([1.0, 2.0], [1.0, -0.5]), "_sample_gamma: beta must be >= 0, got -0.5"),
        (
            "sample_negative_binomial",
            ([1, 2], [0.5, 1.5]),
            r"_sample_negative_binomial: p must be in \(0, 1\], got 1.5",
        ),
        ("sample_poisson", ([1.0, -3.0],), "_sample_poisson: lam must be >= 0, got -3.0"),
        (
            "sample_generalized_negative_binomial",
            ([1.0, 2.0], [0.0, -1.0]),
            "_sample_generalized_negative_binomial: alpha must be >= 0, got -1.0",
        ),
    ],
)
def test_per_row_samplers_refuse_a_bad_row_naming_the_parameter(op, params, message):
    # the scalar samplers' limits, per row; it was NumPy's 'shape < 0' or 'scale < 0' (p > 1)
    with pytest.raises(LazyNDError, match=message):
        getattr(mx.nd, op)(*(mx.nd.array(p) for p in params), shape=2).asnumpy()


def test_a_per_row_gamma_with_alpha_or_beta_zero_draws_zeros():
    # MXNet 1.9.1's sample_gamma draws the degenerate limit for such a row; lazynd refused the 0
    # (CPU only: the CUDA emulator's RandomState has no gamma)
    alpha = mx.nd.array([[0.0, 2.5], [9.0, 4.0]])
    beta = mx.nd.array([[1.0, 0.5], [0.0, 2.0]])
    samples = mx.nd.sample_gamma(alpha, beta, shape=2000).asnumpy()
    assert samples.shape == (2, 2, 2000)
    np.testing.assert_array_equal(samples[0, 0], 0)
    np.testing.assert_array_equal(samples[1, 0], 0)
    assert samples[0, 1].min() > 0 and abs(samples[0, 1].mean() - 2.5 * 0.5) < 0.1
    assert samples[1, 1].min() > 0 and abs(samples[1, 1].mean() - 4.0 * 2.0) < 0.5


@pytest.mark.parametrize(
    "low, high, dtype",
    [(-(2**40), 2**40, "int32"), (0, 2**31 + 1, "int32")],
    ids=["past int32", "one past int32"],
)
def test_randint_bounds_the_dtype_cannot_hold_are_refused_by_name(low, high, dtype):
    # the draws wrapped around before: int32 values never asked for, silently
    with pytest.raises(OperatorError, match=rf"randint: \[low, high\) = \[{low}, {high}\) does not fit dtype {dtype}"):
        mx.nd.random.randint(low, high, shape=(4,), dtype=dtype)


@pytest.mark.parametrize(
    "low, high, name", [(0, 2**63, "high"), (-(2**63) - 1, 0, "low")], ids=["past int64", "below int64"]
)
def test_randint_bounds_past_int64_are_refused_as_mxnet_refuses_a_long(low, high, name):
    # MXNet's low and high are int64 parameters: its parser refuses one past that range
    with pytest.raises(
        OperatorError, match=rf"randint: invalid value {low if name == 'low' else high} for parameter '{name}'"
    ):
        mx.nd.random.randint(low, high, shape=(4,), dtype="int64")


def test_randint_bounds_at_the_dtypes_ends_are_taken():
    assert mx.nd.random.randint(-(2**31), 2**31, shape=(4,)).dtype == np.int32
    assert mx.nd.random.randint(0, 2**40, shape=(4,), dtype="int64").asnumpy().max() < 2**40


RATE = 2.0**64  # past NumPy's largest Poisson rate, and a float32 exactly (sample_poisson's rates)


@pytest.mark.parametrize(
    "call",
    [
        lambda: mx.nd.random.poisson(lam=RATE, shape=(2000,), dtype="float64"),
        lambda: mx.nd.sample_poisson(mx.nd.array([RATE]), shape=(2000,), dtype="float64")[0],
        lambda: mx.nd.random.generalized_negative_binomial(mu=RATE, alpha=0.0, shape=(2000,), dtype="float64"),
    ],
    ids=["poisson", "sample_poisson", "generalized_negative_binomial"],
)
def test_a_poisson_rate_past_numpys_range_draws_its_normal_approximation(call) -> None:
    # NumPy refuses a rate past ~9.2e18 ("lam value too large", inside the engine); MXNet 1.9.1 gives
    # -2**31 there.  Draws of mean RATE and spread sqrt(RATE):
    samples = call().asnumpy()
    assert abs(samples.mean() - RATE) < 5 * np.sqrt(RATE) / np.sqrt(2000)
    assert 0.9 < samples.std() / np.sqrt(RATE) < 1.1


def test_a_negative_binomial_of_a_tiny_p_draws_its_huge_counts() -> None:
    # the gamma-drawn Poisson rates (about k (1 - p) / p = 5e25) were refused inside the engine
    samples = mx.nd.random.negative_binomial(k=5, p=1e-25, shape=(200,)).asnumpy()
    assert np.isfinite(samples).all() and 1e25 < samples.mean() < 1e26


def test_an_infinite_poisson_rate_draws_infinity() -> None:
    assert np.isposinf(mx.nd.random.poisson(lam=float("inf"), shape=(3,)).asnumpy()).all()


_NARROW = 1.0 + 2.0**-20  # eight float32 values from 1.0 up: a float64 draw rounds onto the top one 1 time in 16


@pytest.mark.parametrize(
    "call",
    [
        lambda: mx.nd.random.uniform(1.0, _NARROW, shape=20000),
        lambda: mx.nd.random.uniform_like(mx.nd.zeros(20000), low=1.0, high=_NARROW),
        lambda: mx.nd.random.uniform(
            mx.nd.array([1.0], dtype="float64"), mx.nd.array([_NARROW], dtype="float64"), shape=20000
        ),
    ],
    ids=["random_uniform", "uniform_like", "sample_uniform"],
)
def test_uniform_never_draws_high_once_rounded_to_the_output_dtype(call):
    # [low, high) as documented: rounding the draws to float32 reached high in about 6% of them here
    # (once in 2**25 over an ordinary range), in MXNet 1.9.1 too
    mx.random.seed(3)
    values = call().asnumpy().ravel()
    high = np.float32(_NARROW)
    assert values.min() >= 1.0 and values.max() < high
    assert np.unique(values).size == 8  # every float32 value of [1, high) is drawn, and none past it


def test_a_reversed_uniform_row_never_draws_its_high_end():
    # a per-row uniform whose high is below its low draws from (high, low], as MXNet's
    mx.random.seed(3)
    values = mx.nd.sample_uniform(mx.nd.array([_NARROW]), mx.nd.array([1.0]), shape=20000).asnumpy()
    assert values.min() > 1.0 and values.max() <= np.float32(_NARROW)
