"""Vectorised special functions (gamma, log-gamma, digamma for the CPU kernels; erf and its inverse
for NumPy and CuPy alike) without SciPy.

Gamma uses the Lanczos approximation (g = 7, nine coefficients; relative error
about 1e-15 in float64) with the reflection formula below 0.5.  Digamma shifts
its argument above 6 by the recurrence psi(x) = psi(x + 1) - 1/x and then sums
the asymptotic series; negative arguments use the reflection formula.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

_LANCZOS_G = 7.0
_LANCZOS_COEFFICIENTS = np.array(
    [
        0.99999999999980993,
        676.5203681218851,
        -1259.1392167224028,
        771.32342877765313,
        -176.61502916214059,
        12.507343278686905,
        -0.13857109526572012,
        9.9843695780195716e-6,
        1.5056327351493116e-7,
    ]
)
_HALF_LOG_TWO_PI = 0.5 * np.log(2.0 * np.pi)
_FACTORIALS = np.array([float(math.factorial(n)) for n in range(171)])  # 0! .. 170!, the last finite in float64


def _lanczos_log_gamma(z: np.ndarray) -> np.ndarray:
    """log Gamma(z) for z >= 0.5."""
    z = z - 1.0
    series = np.full_like(z, _LANCZOS_COEFFICIENTS[0])
    for k in range(1, len(_LANCZOS_COEFFICIENTS)):
        series += _LANCZOS_COEFFICIENTS[k] / (z + k)
    t = z + _LANCZOS_G + 0.5
    return _HALF_LOG_TWO_PI + (z + 0.5) * np.log(t) - t + np.log(series)


def gammaln(x: np.ndarray) -> np.ndarray:
    """log|Gamma(x)| elementwise, in float64; +inf at the poles (0, -1, -2, ...)."""
    x = np.asarray(x, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        reflect = x < 0.5
        direct = _lanczos_log_gamma(np.where(reflect, 1.0 - x, x))
        # Gamma(x) Gamma(1 - x) = pi / sin(pi x)
        reflected = np.log(np.pi / np.abs(np.sin(np.pi * x))) - direct
        out = np.where(reflect, reflected, direct)
        out[(x <= 0) & (x == np.floor(x))] = np.inf
        out[x == np.inf] = np.inf  # the series gives inf - inf there
    return out


def gamma(x: np.ndarray) -> np.ndarray:
    """Gamma(x) elementwise, in float64; nan at the poles (0, -1, -2, ...) as C's ``tgamma`` gives +-inf/nan."""
    x = np.asarray(x, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        reflect = x < 0.5
        direct = np.exp(_lanczos_log_gamma(np.where(reflect, 1.0 - x, x)))
        out = np.where(reflect, np.pi / (np.sin(np.pi * x) * direct), direct)
        out[(x <= 0) & (x == np.floor(x))] = np.nan
        out[x == 0] = np.copysign(np.inf, x[x == 0])
        # Gamma(n) = (n - 1)! exactly, as C's tgamma gives: the approximation's last-bit error
        # would truncate gamma(5) = 23.999... to 23 in an integer array
        whole = (x >= 1) & (x < len(_FACTORIALS) + 1) & (x == np.floor(x))
        out[whole] = _FACTORIALS[x[whole].astype(np.int64) - 1]
        out[x == np.inf] = np.inf  # the series gives inf - inf there
    return out


def digamma(x: np.ndarray) -> np.ndarray:
    """The digamma function psi(x) = d/dx log Gamma(x), in float64."""
    x = np.asarray(x, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        reflect = x < 0.5
        z = np.where(reflect, 1.0 - x, x)
        result = np.zeros_like(z)
        for _ in range(6):
            small = z < 6.0
            result -= np.where(small, 1.0 / z, 0.0)
            z = np.where(small, z + 1.0, z)
        inv2 = 1.0 / (z * z)
        series = inv2 * (1.0 / 12 - inv2 * (1.0 / 120 - inv2 * (1.0 / 252 - inv2 * (1.0 / 240 - inv2 / 132))))
        result += np.log(z) - 0.5 / z - series
        # psi(1 - x) - psi(x) = pi / tan(pi x)
        result = np.where(reflect, result - np.pi / np.tan(np.pi * x), result)
        result[(x <= 0) & (x == np.floor(x))] = np.nan
    return result


# Gamma for the CUDA kernels: CUDA's ``tgamma`` is a few ulps off at whole numbers (an H200 gave
# gamma(4) = 5.999..., truncated to 5 in an integer array), so whole arguments up to 171 take the
# factorial's product, exact up to 22! (every integer array's range) as the CPU's table is.
GAMMA_C = (
    "[](double v) -> double {"
    " if (v >= 1.0 && v <= 171.0 && v == floor(v)) {"
    "  double p = 1.0;"
    "  for (double k = 2.0; k < v; k += 1.0) p *= k;"
    "  return p;"
    " }"
    " return tgamma(v);"
    " }((double)x)"
)


# The same digamma for the CUDA kernels, as an immediately invoked lambda (the
# generated elementwise kernels take one C expression in ``x``).
DIGAMMA_C = (
    "[](double v) -> double {"
    " const double pi = 3.14159265358979323846;"
    ' if (v <= 0.0 && v == floor(v)) return nan("");'
    " double shift = 0.0;"
    " bool reflect = v < 0.5;"
    " double z = reflect ? 1.0 - v : v;"
    " while (z < 6.0) { shift -= 1.0 / z; z += 1.0; }"
    " double i2 = 1.0 / (z * z);"
    " double r = shift + log(z) - 0.5 / z"
    "  - i2 * (1.0 / 12 - i2 * (1.0 / 120 - i2 * (1.0 / 252 - i2 * (1.0 / 240 - i2 / 132))));"
    " return reflect ? r - pi / tan(pi * v) : r;"
    " }((double)x)"
)


_ERF_SERIES_TERMS = 64  # the series below _ERF_SPLIT: its terms shrink below 1e-17 of the sum by then
_ERF_FRACTION_DEPTH = 60  # the continued fraction above it: converged to about 1e-15 from 2.5 on
_ERF_SPLIT = 2.5


def erf(xp: Any, x: Any) -> Any:
    """The error function elementwise, in float64, with the array module ``xp`` (NumPy or CuPy).

    Below |x| = 2.5 the series erf(a) = 2/sqrt(pi) a exp(-a^2) sum_n (2a^2)^n / (1*3*...*(2n+1))
    (positive terms: no cancellation); above, erfc(a) from its continued fraction
    exp(-a^2) / sqrt(pi) / (a + (1/2) / (a + 1 / (a + (3/2) / (a + ...)))), evaluated from the tail.
    """
    x = xp.asarray(x, dtype=xp.float64)
    a = xp.abs(x)
    small = xp.minimum(a, _ERF_SPLIT)
    two_a2 = 2.0 * small * small
    term = xp.ones_like(small)
    total = xp.ones_like(small)
    for n in range(1, _ERF_SERIES_TERMS):
        term = term * two_a2 / (2 * n + 1)
        total = total + term
    series = (2.0 / math.sqrt(math.pi)) * small * xp.exp(-small * small) * total
    large = xp.maximum(a, _ERF_SPLIT)
    tail = large
    for k in range(_ERF_FRACTION_DEPTH, 0, -1):
        tail = large + (k / 2.0) / tail
    fraction = 1.0 - xp.exp(-large * large) / (math.sqrt(math.pi) * tail)
    return xp.sign(x) * xp.where(a < _ERF_SPLIT, series, fraction)


# erfinv: Winitzki's closed-form approximation (relative error about 2e-3) as a first guess, then
# Halley steps on erf(y) = x, each cubing the error: three reach float64's precision
_WINITZKI_A = 0.147
_ERFINV_STEPS = 3


def erfinv(xp: Any, x: Any) -> Any:
    """The inverse error function elementwise, in float64, with the array module ``xp``:
    +-inf at +-1, nan outside [-1, 1] (as MXNet and C give)."""
    x = xp.asarray(x, dtype=xp.float64)
    inside = xp.abs(x) < 1
    z = xp.where(inside, x, 0.0)
    log_term = xp.log1p(-z * z)
    first = 2.0 / (math.pi * _WINITZKI_A) + 0.5 * log_term
    y = xp.sign(z) * xp.sqrt(xp.sqrt(first * first - log_term / _WINITZKI_A) - first)
    for _ in range(_ERFINV_STEPS):
        step = (erf(xp, y) - z) / ((2.0 / math.sqrt(math.pi)) * xp.exp(-y * y))
        y = y - step / (1.0 + y * step)
    edge = xp.where(xp.abs(x) == 1, xp.copysign(xp.inf, x), xp.nan)
    return xp.where(inside, y, edge)


# The same for the CUDA kernels (C's erf on the device), as an immediately invoked lambda
ERFINV_C = (
    "[](double v) -> double {"
    ' if (!(v > -1.0 && v < 1.0)) return (v == 1.0 || v == -1.0) ? v / 0.0 : nan("");'
    f" const double a = {_WINITZKI_A};"
    " const double pi = 3.14159265358979323846;"
    " double l = log1p(-v * v);"
    " double f = 2.0 / (pi * a) + 0.5 * l;"
    " double y = copysign(sqrt(sqrt(f * f - l / a) - f), v);"
    f" for (int i = 0; i < {_ERFINV_STEPS}; ++i) {{"
    "  double s = (erf(y) - v) / (2.0 / sqrt(pi) * exp(-y * y));"
    "  y -= s / (1.0 + y * s); }"
    " return y;"
    " }((double)x)"
)
