"""Comparing arrays: exact equality, relative difference and closeness within dtype-aware tolerances.

Each function takes NDArrays, NumPy arrays or anything ``numpy.asarray``
accepts; tolerances left as None come from :data:`DEFAULT_TOLERANCES` by the
inputs' floating dtypes.  :mod:`lazynd.testing` hands all of them on.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["DEFAULT_TOLERANCES", "almost_equal", "assert_almost_equal", "reldiff", "same"]

# (rtol, atol) by dtype, loose enough for float16 arithmetic and the GPU's fast math
DEFAULT_TOLERANCES = {
    np.dtype(np.float16): (1e-2, 1e-2),
    np.dtype(np.float32): (1e-4, 1e-5),
    np.dtype(np.float64): (1e-7, 1e-9),
}


def _as_numpy(a: Any) -> np.ndarray:
    if hasattr(a, "asnumpy"):
        return a.asnumpy()
    return np.asarray(a)


def _tolerances(a: np.ndarray, b: np.ndarray, rtol: float | None, atol: float | None) -> tuple[float, float]:
    kinds = [x.dtype for x in (a, b) if x.dtype.kind == "f"]
    default = max((DEFAULT_TOLERANCES.get(d, (1e-7, 1e-9)) for d in kinds), default=(0.0, 0.0))
    return (default[0] if rtol is None else rtol), (default[1] if atol is None else atol)


def _comparable_shapes(a: np.ndarray, b: np.ndarray, use_broadcast: bool) -> bool:
    """Whether ``a`` and ``b`` may be compared: equal shapes, or (``use_broadcast``, MXNet's default) broadcastable."""
    if a.shape == b.shape:
        return True
    if not use_broadcast:
        return False
    try:
        np.broadcast_shapes(a.shape, b.shape)
    except ValueError:
        return False
    return True


def reldiff(a: Any, b: Any) -> float:
    """``sum|a - b| / (sum|a| + sum|b|)``, 0 when both are zero.

    Examples
    --------
    >>> from lazynd.testing import reldiff
    >>> reldiff([1.0, 2.0], [1.0, 2.0])
    0.0
    """
    a, b = _as_numpy(a).astype(np.float64), _as_numpy(b).astype(np.float64)
    diff = float(np.sum(np.abs(a - b)))
    norm = float(np.sum(np.abs(a)) + np.sum(np.abs(b)))
    return 0.0 if norm == 0 else diff / norm


def same(a: Any, b: Any) -> bool:
    """Whether ``a`` and ``b`` (NDArrays or NumPy arrays) hold exactly the same values.

    Examples
    --------
    >>> from lazynd.testing import same
    >>> same([1, 2], [1, 2]), same([1, 2], [1, 3])
    (True, False)
    """
    return bool(np.array_equal(_as_numpy(a), _as_numpy(b)))


def almost_equal(
    a: Any,
    b: Any,
    rtol: float | None = None,
    atol: float | None = None,
    equal_nan: bool = False,
    use_broadcast: bool = True,
) -> bool:
    """Whether ``|a - b| <= atol + rtol * |b|`` everywhere.

    As in MXNet, ``a`` and ``b`` are broadcast against each other (so ``b`` may be a scalar);
    with ``use_broadcast=False`` their shapes must be equal.

    Examples
    --------
    >>> from lazynd.testing import almost_equal
    >>> almost_equal([1.0], [1.0 + 1e-9]), almost_equal([1.0], [1.1])
    (True, False)
    """
    a, b = _as_numpy(a), _as_numpy(b)
    if not _comparable_shapes(a, b, use_broadcast):
        return False
    rtol, atol = _tolerances(a, b, rtol, atol)
    return bool(np.allclose(a.astype(np.float64), b.astype(np.float64), rtol=rtol, atol=atol, equal_nan=equal_nan))


def assert_almost_equal(
    a: Any,
    b: Any,
    rtol: float | None = None,
    atol: float | None = None,
    names: tuple[str, str] = ("a", "b"),
    equal_nan: bool = False,
    use_broadcast: bool = True,
    mismatches: tuple[int, int] = (10, 10),
) -> None:
    """Raise ``AssertionError`` naming the worst element when ``a`` and ``b`` differ beyond tolerance.

    The message also lists the first ``mismatches[0]`` differing indices (MXNet's keyword);
    shapes are broadcast unless ``use_broadcast=False``, as in :func:`almost_equal`.

    Examples
    --------
    >>> import lazynd as mx
    >>> from lazynd.testing import assert_almost_equal
    >>> assert_almost_equal(mx.nd.ones((2,)), [1.0, 1.0])
    """
    a, b = _as_numpy(a), _as_numpy(b)
    if not _comparable_shapes(a, b, use_broadcast):
        raise AssertionError(f"shape of {names[0]} is {a.shape}, shape of {names[1]} is {b.shape}")
    rtol, atol = _tolerances(a, b, rtol, atol)
    a, b = np.broadcast_arrays(a, b)
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    close = np.isclose(a64, b64, rtol=rtol, atol=atol, equal_nan=equal_nan)
    if close.all():
        return
    with np.errstate(invalid="ignore"):
        excess = np.abs(a64 - b64) - (atol + rtol * np.abs(b64))
    excess = np.where(close, -np.inf, np.nan_to_num(excess, nan=np.inf))
    where = np.unravel_index(int(np.argmax(excess)), a.shape) if a.ndim else ()
    raise AssertionError(
        f"{names[0]} and {names[1]} differ (rtol={rtol}, atol={atol}): {int((~close).sum())} of {a.size} elements; "
        f"worst at index {tuple(int(i) for i in where)}: {names[0]}={a64[where]!r}, {names[1]}={b64[where]!r}; "
        f"first differing indices: {[tuple(int(i) for i in index) for index in np.argwhere(~close)[: mismatches[0]]]}"
    )
