"""Comparing arrays: exact equality, relative difference and closeness within dtype-aware tolerances.

Each function takes NDArrays, NumPy arrays or anything ``numpy.asarray``
accepts; tolerances left as None come from :data:`DEFAULT_TOLERANCES`, as in
MXNet 1.x's ``mxnet.test_utils``: by the inputs' floating dtypes in
:func:`assert_almost_equal`, float64's in :func:`almost_equal`.  :mod:`lazynd.testing`
hands all of them on.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

__all__ = ["DEFAULT_TOLERANCES", "almost_equal", "assert_almost_equal", "reldiff", "same"]

# (rtol, atol) by dtype: MXNet 1.x's default_rtols/default_atols (integers and booleans compare exactly)
DEFAULT_TOLERANCES: dict[np.dtype, tuple[float, float]] = {
    np.dtype(np.float16): (1e-2, 1e-1),
    np.dtype(np.float32): (1e-4, 1e-3),
    np.dtype(np.float64): (1e-5, 1e-20),
}


def _as_numpy(a: Any) -> np.ndarray:
    if hasattr(a, "asnumpy"):
        return a.asnumpy()
    return np.asarray(a)


def _comparable(a: Any, b: Any, use_broadcast: bool, names: tuple[str, str]) -> tuple[np.ndarray, np.ndarray]:
    """``a`` and ``b`` as NumPy arrays of one shape, as MXNet compares them.

    With ``use_broadcast`` (MXNet's default) the shapes need only broadcast together
    (a scalar ``()`` against ``(1,)``, a row against a matrix); without it they must match.

    Raises
    ------
    AssertionError
        Naming both shapes when they cannot be compared.
    """
    a, b = _as_numpy(a), _as_numpy(b)
    if a.shape == b.shape:
        return a, b
    if use_broadcast:
        try:
            return tuple(np.broadcast_arrays(a, b))  # type: ignore[return-value]
        except ValueError:
            pass
    how = "do not broadcast together" if use_broadcast else "differ (use_broadcast=False)"
    raise AssertionError(f"shape of {names[0]} is {a.shape}, shape of {names[1]} is {b.shape}: the shapes {how}")


def _side_tolerance(dtype: np.dtype, tol: Any, which: int) -> float:
    """One array's tolerance: ``tol`` if a number, else its entry for ``dtype`` in the dict ``tol``,
    else the table's (0 for integers and booleans, float64's for other floating dtypes)."""
    if tol is not None and not isinstance(tol, Mapping):
        return float(tol)
    if isinstance(tol, Mapping) and dtype in tol:
        return float(tol[dtype])
    if dtype.kind != "f":
        return 0.0
    return DEFAULT_TOLERANCES.get(dtype, DEFAULT_TOLERANCES[np.dtype(np.float64)])[which]


def _tolerances(a: Any, b: Any, rtol: Any, atol: Any) -> tuple[float, float]:
    """``(rtol, atol)`` for comparing ``a`` and ``b``, each the larger of the two arrays' own
    (MXNet's ``get_tols``): a number wins, a dict maps dtypes to tolerances, None uses the table.
    Float32 computed in TF32 on a GPU takes float16's (see ``testing_tolerances.effective_dtype``)."""
    from .testing_tolerances import effective_dtype  # it imports this module

    dtypes = [effective_dtype(x) for x in (a, b)]
    return (
        max(_side_tolerance(d, rtol, 0) for d in dtypes),
        max(_side_tolerance(d, atol, 1) for d in dtypes),
    )


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

    Tolerances left as None are float64's (``rtol=1e-5``, ``atol=1e-20``) whatever the dtypes, as
    MXNet 1.x's ``almost_equal`` (only :func:`assert_almost_equal` picks them by dtype): float32 values
    1e-5 apart are not almost equal, so a test asserting they differ says what it says under MXNet.
    A dict from dtype to tolerance is looked up by the arrays' dtypes.

    With ``use_broadcast`` (the default, as in MXNet) shapes that broadcast together are
    compared element by element after broadcasting; otherwise, and for shapes that do
    not broadcast, different shapes are never equal.

    Examples
    --------
    >>> import numpy as np
    >>> from lazynd.testing import almost_equal
    >>> almost_equal([1.0], [1.0 + 1e-9]), almost_equal([1.0], [1.1])
    (True, False)
    >>> almost_equal(np.float32([1.0]), np.float32([1.00002]))
    False
    """
    try:
        a, b = _comparable(a, b, use_broadcast, ("a", "b"))
    except AssertionError:
        return False
    float64_rtol, float64_atol = DEFAULT_TOLERANCES[np.dtype(np.float64)]
    rtol, atol = _tolerances(a, b, float64_rtol if rtol is None else rtol, float64_atol if atol is None else atol)
    return bool(np.allclose(a.astype(np.float64), b.astype(np.float64), rtol=rtol, atol=atol, equal_nan=equal_nan))


def assert_almost_equal(
    a: Any,
    b: Any,
    rtol: Any = None,
    atol: Any = None,
    names: tuple[str, str] = ("a", "b"),
    equal_nan: bool = False,
    use_broadcast: bool = True,
    mismatches: tuple[int, int] = (10, 10),
) -> None:
    """Raise ``AssertionError`` naming the worst element when ``a`` and ``b`` differ beyond tolerance.

    ``rtol``/``atol`` are numbers, dicts from dtype to tolerance, or None (MXNet's tables by dtype).
    The message also lists the first ``mismatches[0]`` differing indices (MXNet's keyword).
    Shapes that broadcast together are compared after broadcasting unless ``use_broadcast``
    is False, as in :func:`almost_equal`.

    Examples
    --------
    >>> import lazynd as mx
    >>> from lazynd.testing import assert_almost_equal
    >>> assert_almost_equal(mx.nd.ones((2,)), [1.0, 1.0])
    """
    rtol, atol = _tolerances(a, b, rtol, atol)
    a, b = _comparable(a, b, use_broadcast, names)
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
