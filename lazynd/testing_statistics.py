"""Statistical checks of random generators, as MXNet 1.x's tests run them (``mx.test_utils``).

A generator is a function ``generator(n)`` returning ``n`` i.i.d. samples.  :func:`mean_check` and
:func:`var_check` test the first two moments at three standard errors; :func:`chi_square_check`
runs Pearson's chi-square test of the samples against bucket probabilities (continuous buckets
``(low, high)`` or discrete values) and :func:`verify_generator` repeats it.  The p-value comes from
the chi-square distribution's survival function computed here (no SciPy needed).

Examples
--------
>>> import numpy as np
>>> from lazynd.testing_statistics import gen_buckets_probs_with_ppf, verify_generator
>>> buckets, probs = gen_buckets_probs_with_ppf(lambda q: q, 5)  # the uniform distribution's quantiles
>>> p_values = verify_generator(lambda n: np.random.uniform(size=n), buckets, probs, nsamples=10000)
>>> len(p_values)
5
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .errors import LazyNDError

Generator = Callable[[int], Any]


def gen_buckets_probs_with_ppf(ppf: Callable[[float], float], nbuckets: int) -> tuple[list[tuple], list[float]]:
    """``nbuckets`` buckets of equal probability: ``(ppf(i / n), ppf((i + 1) / n))`` from the
    quantile function ``ppf`` (the inverse of the CDF), each of probability ``1 / n``."""
    if isinstance(nbuckets, bool) or not isinstance(nbuckets, int) or nbuckets < 1:
        raise LazyNDError(f"gen_buckets_probs_with_ppf: nbuckets must be a positive int, got {nbuckets!r}")
    buckets = [(ppf(i / float(nbuckets)), ppf((i + 1) / float(nbuckets))) for i in range(nbuckets)]
    return buckets, [1.0 / nbuckets] * nbuckets


def mean_check(generator: Generator, mu: float, sigma: float, nsamples: int = 1000000) -> bool:
    """Whether the mean of ``nsamples`` samples lies within ``mu +- 3 sigma / sqrt(nsamples)``."""
    mean = np.asarray(generator(nsamples)).mean()
    bound = 3 * sigma / np.sqrt(nsamples)
    return bool(mu - bound < mean < mu + bound)


def var_check(generator: Generator, sigma: float, nsamples: int = 1000000) -> bool:
    """Whether the sample variance of ``nsamples`` samples lies within
    ``sigma^2 +- 3 sqrt(2 sigma^4 / (nsamples - 1))``."""
    variance = np.asarray(generator(nsamples)).var(ddof=1)
    bound = 3 * np.sqrt(2 * sigma**4 / (nsamples - 1))
    return bool(sigma**2 - bound < variance < sigma**2 + bound)


def chi_square_survival(statistic: float, dof: int) -> float:
    """``P(X >= statistic)`` for X chi-square with ``dof`` degrees of freedom: the regularised upper
    incomplete gamma function ``Q(dof / 2, statistic / 2)`` (a power series below ``a + 1``, a
    continued fraction above)."""
    if dof < 1:
        raise LazyNDError(f"chi_square_survival: dof must be at least 1, got {dof}")
    a, x = dof / 2.0, statistic / 2.0
    if x <= 0:
        return 1.0
    log_prefactor = a * math.log(x) - x - math.lgamma(a)
    if x < a + 1:
        term = total = 1.0 / a
        denominator = a
        while abs(term) > abs(total) * 1e-15:
            denominator += 1
            term *= x / denominator
            total += term
        return max(0.0, 1.0 - total * math.exp(log_prefactor))
    # the continued fraction of Q(a, x), evaluated by the modified Lentz method
    tiny = 1e-300
    b = x + 1 - a
    c, d = 1.0 / tiny, 1.0 / b
    fraction = d
    for i in range(1, 10000):
        numerator = -i * (i - a)
        b += 2
        d = numerator * d + b
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = b + numerator / c
        c = c if abs(c) > tiny else tiny
        fraction *= d * c
        if abs(d * c - 1) < 1e-15:
            break
    return math.exp(log_prefactor) * fraction


def _bucket_edges(buckets: Sequence[Sequence[float]]) -> np.ndarray:
    """The continuous buckets' edges, interleaved ``low0, high0, low1...``, checked to be in order."""
    edges = np.zeros(2 * len(buckets), dtype=np.float32)
    for i, bucket in enumerate(buckets):
        low, high = bucket
        following = buckets[i + 1][0] if i + 1 < len(buckets) else high
        if not low <= high <= following:
            raise LazyNDError(
                f"chi_square_check: bucket {i} {tuple(bucket)} must have low <= high and end before the next one starts"
            )
        edges[2 * i : 2 * i + 2] = (low, high)
    return edges


def chi_square_check(
    generator: Generator, buckets: list, probs: Sequence[float], nsamples: int = 1000000
) -> tuple[float, np.ndarray, np.ndarray]:
    """Pearson's chi-square test of ``nsamples`` samples against ``probs``: ``(p, observed, expected)``.

    ``buckets`` is a list of ``(low, high)`` ranges, in order and not overlapping (a continuous
    distribution: a sample in a gap counts for the next bucket, as in MXNet), or a list of values
    (a discrete one).  Expected counts are ``int(nsamples * prob)``; a p-value above the usual
    0.05 says the samples fit.
    """
    if not isinstance(buckets, list) or not buckets:
        raise LazyNDError(f"chi_square_check: buckets must be a non-empty list, got {type(buckets).__name__}")
    if len(probs) != len(buckets):
        raise LazyNDError(f"chi_square_check: {len(probs)} probs for {len(buckets)} buckets; expected one per bucket")
    samples = np.asarray(generator(nsamples))
    expected = (nsamples * np.array(probs, dtype=np.float32)).astype(np.int32)
    if isinstance(buckets[0], (list, tuple)):
        ids = np.searchsorted(_bucket_edges(buckets), samples, side="right") // 2
        observed = np.array([np.count_nonzero(ids == i) for i in range(len(buckets))], dtype=np.int64)
    else:
        observed = np.array([np.count_nonzero(samples == value) for value in buckets], dtype=np.int64)
    if np.any(expected <= 0):
        raise LazyNDError(f"chi_square_check: every bucket needs an expected count above 0, got {expected.tolist()}")
    statistic = float(np.sum((observed - expected) ** 2 / expected))
    return chi_square_survival(statistic, len(buckets) - 1) if len(buckets) > 1 else 1.0, observed, expected


def verify_generator(
    generator: Generator,
    buckets: list,
    probs: Sequence[float],
    nsamples: int = 1000000,
    nrepeat: int = 5,
    success_rate: float = 0.2,
    alpha: float = 0.05,
) -> list[float]:
    """Run :func:`chi_square_check` ``nrepeat`` times; raise ``AssertionError`` (with the p-values and
    counts) unless at least ``success_rate`` of the runs have p above ``alpha``.  Returns the p-values."""
    runs = [chi_square_check(generator, buckets, probs, nsamples) for _ in range(nrepeat)]
    p_values = [run[0] for run in runs]
    if sum(p > alpha for p in p_values) < nrepeat * success_rate:
        raise AssertionError(
            f"verify_generator: the chi-square test fails, p={p_values} (alpha {alpha}, success_rate "
            f"{success_rate}); observed {[run[1].tolist() for run in runs]}, expected {runs[0][2].tolist()}; "
            f"buckets={buckets}, probs={list(probs)}"
        )
    return p_values


__all__ = [
    "chi_square_check",
    "chi_square_survival",
    "gen_buckets_probs_with_ppf",
    "mean_check",
    "var_check",
    "verify_generator",
]
