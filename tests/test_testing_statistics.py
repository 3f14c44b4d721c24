"""mx.test_utils' checks of random generators.

The p-values were computed with MXNet 1.9.1's ``chi_square_check`` (SciPy's ``chisquare``) on the
same fixed samples, and pasted here.
"""

from __future__ import annotations

import numpy as np
import pytest

from lazynd import test_utils
from lazynd.errors import LazyNDError
from lazynd.testing_statistics import chi_square_survival


def test_discrete_chi_square_matches_mxnet():
    samples = np.repeat(np.arange(4), [240, 260, 250, 250])
    p, observed, expected = test_utils.chi_square_check(lambda n: samples, [0, 1, 2, 3], [0.25] * 4, nsamples=1000)
    assert observed.tolist() == [240, 260, 250, 250] and expected.tolist() == [250] * 4
    assert p == pytest.approx(0.8494670333918255, rel=1e-12)


def test_continuous_chi_square_counts_a_gap_for_the_next_bucket_as_mxnet():
    samples = np.concatenate([np.full(29, 0.1), [-1.0], np.full(29, 0.3), [0.55], np.full(40, 0.8)])
    buckets = [(0.0, 0.25), (0.25, 0.5), (0.6, 1.0)]
    p, observed, expected = test_utils.chi_square_check(lambda n: samples, buckets, [0.3, 0.3, 0.4], nsamples=100)
    assert observed.tolist() == [30, 29, 41] and expected.tolist() == [30, 30, 40]
    assert p == pytest.approx(0.9712545752136729, rel=1e-12)


def test_survival_function_at_known_points():
    assert chi_square_survival(2.0, 2) == pytest.approx(np.exp(-1.0), rel=1e-14)  # 2 dof: exp(-x / 2)
    assert chi_square_survival(0.0, 3) == 1.0
    assert chi_square_survival(100.0, 99) == pytest.approx(0.4529585113209314, rel=1e-12)  # SciPy's chi2.sf


def test_verify_generator_passes_a_good_generator_and_fails_a_bad_one():
    np.random.seed(0)
    buckets, probs = test_utils.gen_buckets_probs_with_ppf(lambda q: q, 5)
    assert buckets[1] == pytest.approx((0.2, 0.4)) and probs == [0.2] * 5
    p_values = test_utils.verify_generator(lambda n: np.random.uniform(size=n), buckets, probs, nsamples=20000)
    assert len(p_values) == 5
    with pytest.raises(AssertionError, match="the chi-square test fails"):
        test_utils.verify_generator(lambda n: np.random.uniform(size=n) ** 2, buckets, probs, nsamples=20000)


def test_mean_and_variance_checks():
    assert test_utils.mean_check(lambda n: np.full(n, 0.001), 0.0, 1.0, nsamples=10000)
    assert not test_utils.mean_check(lambda n: np.full(n, 0.05), 0.0, 1.0, nsamples=10000)
    alternating = lambda n: np.tile([-1.0, 1.0], n // 2)  # noqa: E731 - variance 1 (n / (n - 1))
    assert test_utils.var_check(alternating, 1.0, nsamples=10000)
    assert not test_utils.var_check(alternating, 1.2, nsamples=10000)


@pytest.mark.parametrize(
    ("buckets", "probs", "message"),
    [
        ((0, 1), [0.5, 0.5], "buckets must be a non-empty list"),
        ([0, 1], [1.0], "1 probs for 2 buckets"),
        ([(0.5, 0.0)], [1.0], r"bucket 0 \(0.5, 0.0\) must have low <= high"),
    ],
)
def test_bad_buckets_are_named(buckets, probs, message):
    with pytest.raises(LazyNDError, match=message):
        test_utils.chi_square_check(lambda n: np.zeros(n), buckets, probs, nsamples=10)
