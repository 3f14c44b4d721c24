"""MXNet's arithmetic on the CPU where NumPy's differs: integer division truncates toward zero,
an integer power takes a negative exponent, an integer ``hypot`` rounds a float result, and a
modulo by zero gives 0 (for floats too).  The binary and scalar kernels of
:mod:`lazynd.ops.elemwise_binary` call :func:`cpu_apply` for the ufuncs in :data:`OWN_RULES`;
every other ufunc is one NumPy call on any dtype.  The GPU kernels (``lazynd_divide``,
``lazynd_pow``, ``lazynd_mod``) compute the same values.

A scalar or a list operand meets an array's dtype as MXNet's ``static_cast`` casts it, on both
devices (:func:`scalar_as`, :func:`values_as`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import OperatorError


def cpu_apply(ufunc: np.ufunc, a: Any, b: Any, out: np.ndarray) -> None:
    """``out = ufunc(a, b)``; called by kernels that run under :data:`quietly` (MXNet is silent on 1/0).

    ``out`` may be ``a`` or ``b`` (``y %= y``, ``out=`` an input): whatever is read of the inputs
    is read before ``out`` is written."""
    if out.dtype.kind in "iub":
        if ufunc is np.divide:
            _integer_divide(a, b, out)
            return
        if ufunc is np.hypot:
            np.hypot(a, b, out=out, dtype=np.float64, casting="unsafe")
            return
        if ufunc is np.power:
            _integer_power(a, b, out)
            return
        ufunc(a, b, out=out, casting="unsafe")
        return
    if ufunc is not np.mod:
        ufunc(a, b, out=out)
        return
    zero_divisor = np.equal(b, 0)
    ufunc(a, b, out=out)
    np.copyto(out, 0, where=zero_divisor)  # MXNet's float modulo by zero is 0, as its integer one


def _integer_divide(a: Any, b: Any, out: np.ndarray) -> None:
    """``out = a / b`` on integers with C's truncation toward zero, as MXNet and the GPU kernel
    (``lazynd_divide``) give, exactly (int64 too), and where C leaves it undefined: a zero divisor
    gives 0 (NumPy's rule for integer ``//`` and ``%``), ``MIN / -1`` wraps to ``MIN``."""
    quotient = np.floor_divide(a, b)  # NumPy gives 0 for a zero divisor and wraps MIN // -1
    inexact = np.not_equal(np.remainder(a, b), 0)
    # floor and truncation differ by one where the quotient is negative and not exact
    quotient += inexact & (np.less(a, 0) != np.less(b, 0))
    np.copyto(out, quotient, casting="unsafe")


def _integer_power(a: Any, b: Any, out: np.ndarray) -> None:
    """``out = a ** b`` on integers, where NumPy refuses a negative exponent: ``1 / a ** -b``
    truncated toward zero, as the GPU kernel and MXNet give (1 for a = 1, +-1 for a = -1, else 0)."""
    negative = np.less(b, 0)
    if not negative.any():
        np.power(a, b, out=out, casting="unsafe")
        return
    truncated = np.where(np.abs(a) == 1, np.where(np.remainder(b, 2) == 1, a, 1), 0)
    np.power(a, np.where(negative, 0, b), out=out, casting="unsafe")  # out may be a or b: read them first
    np.copyto(out, truncated, where=negative, casting="unsafe")


# the ufuncs whose integer results (and float modulo by zero) follow MXNet's rules, not NumPy's
OWN_RULES = (np.divide, np.hypot, np.power, np.mod)


def scalar_as(dtype: Any, scalar: float) -> Any:
    """``scalar`` cast to the array's dtype, as MXNet's ``static_cast<DType>`` does on both devices:
    toward zero for an integer dtype, then wrapped to its width (300 -> 44 for uint8); true for bool
    where it is not zero (0.5 too)."""
    dtype = np.dtype(dtype)
    if dtype.kind in "iub":
        if not fits_int64(scalar):
            raise OperatorError(
                f"the scalar {scalar} has no value in an array of {dtype.name} (expected a finite number "
                "within int64's range)"
            )
        if dtype.kind == "b":
            return np.bool_(scalar != 0)
        return np.array(int(scalar), dtype=np.int64).astype(dtype)[()]
    with np.errstate(over="ignore"):  # past float16's range: inf, as MXNet's cast gives
        return dtype.type(scalar)


def values_as(dtype: Any, values: np.ndarray) -> np.ndarray:
    """An array operand given as NumPy values (``x + [1.5, 2]``) converted by :func:`scalar_as`'s rule,
    ready to cast to ``dtype``: float values for an integer dtype truncated toward zero into int64,
    whose cast wraps them to the dtype's width (for bool: whether they are not zero); a value :func:`scalar_as` refuses (NaN, an infinity,
    past int64; a complex number for any dtype) raises ``ValueError`` naming it."""
    dtype = np.dtype(dtype)
    if values.dtype.kind == "c":
        raise ValueError(f"complex values have no value in an array of {dtype.name} (expected real numbers)")
    if dtype.kind not in "iub" or values.dtype.kind != "f":
        return values
    inside = np.isfinite(values) & (values >= -(2.0**63)) & (values < 2.0**63)
    if not inside.all():
        raise ValueError(
            f"the value {values[~inside].flat[0]} has no value in an array of {dtype.name} (expected finite "
            "numbers within int64's range, or cast the array to a float dtype first)"
        )
    return values != 0 if dtype.kind == "b" else values.astype(np.int64)


def fits_int64(scalar: float) -> bool:
    """Whether ``scalar`` truncated toward zero is an int64 (NaN, the infinities, 1e20 are not)."""
    return bool(np.isfinite(scalar)) and -(2**63) <= int(scalar) < 2**63
