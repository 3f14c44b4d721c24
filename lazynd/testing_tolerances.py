"""MXNet 1.x's tolerance tables and the comparisons built on them (``mx.test_utils``).

MXNet's tests pick their tolerances by dtype: :func:`default_rtols`, :func:`default_atols` and
:func:`default_numeric_eps` are its tables, :func:`get_tolerance` looks one up for an array (a number
given by the caller wins), :func:`assert_almost_equal_with_err` lets a fraction ``etol`` of the
elements miss, and :func:`compare_optimizer` runs two optimizers over the same weights and gradients.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from numbers import Number
from typing import Any

import numpy as np

from .comparisons import DEFAULT_TOLERANCES, _as_numpy, assert_almost_equal
from .errors import LazyNDError

_INTEGER_DTYPES = (np.bool_, np.int8, np.uint8, np.int32, np.uint32, np.int64, np.uint64)


def default_rtols() -> dict[np.dtype, float]:
    """MXNet's relative tolerance per dtype (0 for booleans and integers).

    Examples
    --------
    >>> import numpy as np
    >>> from lazynd.testing_tolerances import default_rtols
    >>> default_rtols()[np.dtype(np.float32)]
    0.0001
    """
    floats: dict[np.dtype, float] = {dtype: rtol for dtype, (rtol, _) in DEFAULT_TOLERANCES.items()}
    return {**floats, **{np.dtype(t): 0 for t in _INTEGER_DTYPES}}


def default_atols() -> dict[np.dtype, float]:
    """MXNet's absolute tolerance per dtype (0 for booleans and integers)."""
    floats: dict[np.dtype, float] = {dtype: atol for dtype, (_, atol) in DEFAULT_TOLERANCES.items()}
    return {**floats, **{np.dtype(t): 0 for t in _INTEGER_DTYPES}}


def default_numeric_eps() -> dict[np.dtype, float]:
    """MXNet's finite-difference step per floating dtype (powers of two, exact as input deltas)."""
    return {np.dtype(np.float16): 2.0**-6, np.dtype(np.float32): 2.0**-9, np.dtype(np.float64): 2.0**-14}


def _uses_tf32(ctx: Any) -> bool:
    """Whether float32 products on ``ctx`` run in TF32: a GPU of compute capability 8.0 or more
    with CuPy told to (``CUPY_TF32=1``; lazynd's GEMMs go to cuBLAS through CuPy)."""
    if ctx is None or getattr(ctx, "device_type", None) != "gpu" or os.environ.get("CUPY_TF32") != "1":
        return False
    from .testing_environment import get_cuda_compute_capability

    try:
        return get_cuda_compute_capability(ctx) >= 80
    except LazyNDError:
        return False


def effective_dtype(dat: Any) -> np.dtype:
    """The dtype whose tolerances suit ``dat``: its own, except float32 computed in TF32 on a GPU,
    which is as precise as float16 (MXNet's rule; lazynd's GPU products use TF32 only with ``CUPY_TF32=1``).

    Examples
    --------
    >>> import numpy as np
    >>> from lazynd.testing_tolerances import effective_dtype
    >>> effective_dtype(np.zeros(2, dtype=np.float32))
    dtype('float32')
    """
    dtype = np.dtype(dat.dtype) if hasattr(dat, "dtype") else np.asarray(dat).dtype
    if dtype == np.float32 and _uses_tf32(getattr(dat, "context", None)):
        return np.dtype(np.float16)
    return dtype


def get_tolerance(dat: Any, tol: Any, default_tol: Mapping[Any, float]) -> float:
    """``tol`` if it is a number; else the entry for ``dat``'s effective dtype in the dict ``tol``
    (None: none), falling back to ``default_tol``."""
    if isinstance(tol, Number):
        return tol  # type: ignore[return-value]
    dtype = effective_dtype(dat)
    table = {} if tol is None else tol
    if dtype in table:
        return table[dtype]
    if dtype not in default_tol:
        raise LazyNDError(
            f"get_tolerance: no tolerance for dtype {dtype}; expected one of {sorted(map(str, default_tol))}"
        )
    return default_tol[dtype]


def get_tols(x: Any, y: Any, rtol: Any, atol: Any) -> tuple[float, float]:
    """``(rtol, atol)`` for comparing ``x`` and ``y``: the larger of each one's (numbers count as NumPy scalars)."""
    x = np.array(x) if isinstance(x, Number) else x
    y = np.array(y) if isinstance(y, Number) else y
    rtols, atols = default_rtols(), default_atols()
    return (
        max(get_tolerance(x, rtol, rtols), get_tolerance(y, rtol, rtols)),
        max(get_tolerance(x, atol, atols), get_tolerance(y, atol, atols)),
    )


def get_atol(atol: float | None = None, dtype: Any = np.dtype(np.float64)) -> float:
    """``atol``, or MXNet's default absolute tolerance for ``dtype`` (float64's: 1e-20)."""
    return default_atols()[np.dtype(dtype)] if atol is None else atol


def get_rtol(rtol: float | None = None, dtype: Any = np.dtype(np.float64)) -> float:
    """``rtol``, or MXNet's default relative tolerance for ``dtype`` (float64's: 1e-5)."""
    return default_rtols()[np.dtype(dtype)] if rtol is None else rtol


def get_etol(etol: float | None = None) -> float:
    """``etol``, or 0 (no element may miss)."""
    return 0 if etol is None else etol


def assert_almost_equal_with_err(
    a: Any,
    b: Any,
    rtol: Any = None,
    atol: Any = None,
    etol: float | None = None,
    names: tuple[str, str] = ("a", "b"),
    equal_nan: bool = False,
    mismatches: tuple[int, int] = (10, 10),
) -> None:
    """:func:`~lazynd.testing.assert_almost_equal`, except that with ``etol`` > 0 up to that fraction
    of the elements may differ beyond ``rtol``/``atol`` (MXNet's dtype tables when None).

    Examples
    --------
    >>> from lazynd.testing_tolerances import assert_almost_equal_with_err
    >>> assert_almost_equal_with_err([1.0, 2.0, 3.0, 4.0], [1.0, 2.0, 3.0, 5.0], etol=0.25)
    """
    etol = get_etol(etol)
    if etol <= 0:
        assert_almost_equal(a, b, rtol=rtol, atol=atol, names=names, equal_nan=equal_nan, mismatches=mismatches)
        return
    rtol, atol = get_tols(a, b, rtol, atol)
    a, b = _as_numpy(a), _as_numpy(b)
    if a.shape != b.shape:
        raise AssertionError(f"shape of {names[0]} is {a.shape}, shape of {names[1]} is {b.shape}")
    close = np.isclose(a.astype(np.float64), b.astype(np.float64), rtol=rtol, atol=atol, equal_nan=equal_nan)
    error_rate = 1 - np.count_nonzero(close) / max(close.size, 1)
    if error_rate <= etol:
        return
    differing = [tuple(int(i) for i in index) for index in np.argwhere(~close)[: mismatches[0]]]
    raise AssertionError(
        f"{names[0]} and {names[1]} differ (rtol={rtol}, atol={atol}) in {error_rate:.2%} of the elements, "
        f"more than etol={etol:.2%}; first differing indices: {differing}"
    )


def compare_ndarray_tuple(t1: Any, t2: Any, rtol: Any = None, atol: Any = None) -> None:
    """Assert two optimizer states (arrays, or nested tuples of them) almost equal; None matches anything."""
    if t1 is None or t2 is None:
        return
    if isinstance(t1, tuple):
        if not isinstance(t2, tuple) or len(t1) != len(t2):
            raise AssertionError(f"compare_ndarray_tuple: a tuple of {len(t1)} against {t2!r}")
        for s1, s2 in zip(t1, t2, strict=True):
            compare_ndarray_tuple(s1, s2, rtol, atol)
        return
    assert_almost_equal(t1, t2, rtol=rtol, atol=atol)


def compare_optimizer(
    opt1: Any,
    opt2: Any,
    shape: Any,
    dtype: Any,
    w_stype: str = "default",
    g_stype: str = "default",
    rtol: float = 1e-4,
    atol: float = 1e-5,
    compare_states: bool = True,
    ntensors: int = 1,
) -> None:
    """Apply one update of ``opt1`` and of ``opt2`` to the same random weights and gradients (uniform
    in [0, 1), ``dtype``, on the default context) and assert the weights (and states) agree.

    ``shape`` may be a list of ``ntensors`` shapes: each optimizer then updates every tensor by its
    index (lazynd's optimizers update one tensor per call; MXNet's ``opt2`` takes the list at once).
    Only dense storage exists in lazynd: ``w_stype``/``g_stype`` other than ``'default'`` are refused.
    """
    from .ndarray import NDArray
    from .random import uniform
    from .testing import default_context

    for name, stype in (("w_stype", w_stype), ("g_stype", g_stype)):
        if stype != "default":
            raise LazyNDError(f"compare_optimizer: {name} {stype!r}: lazynd has dense storage only ('default')")
    ctx = default_context()
    shapes = shape if isinstance(shape, list) else [shape]
    if not isinstance(shape, list) and ntensors != 1:
        raise LazyNDError(f"compare_optimizer: ntensors {ntensors} needs a list of {ntensors} shapes, got {shape!r}")
    if isinstance(shape, list) and len(shape) != ntensors:
        raise LazyNDError(f"compare_optimizer: {len(shape)} shapes for ntensors {ntensors}; expected one per tensor")

    def draw(s: Any) -> NDArray:
        return uniform(shape=s, ctx=ctx, dtype=dtype)

    for index, s in enumerate(shapes):
        w2, g2 = draw(s), draw(s)
        w1, g1 = w2.copy(), g2.copy()
        state1 = opt1.create_state_multi_precision(index, w1)
        state2 = opt2.create_state_multi_precision(index, w2)
        if compare_states:
            compare_ndarray_tuple(state1, state2)
        opt1.update_multi_precision(index, w1, g1, state1)
        opt2.update_multi_precision(index, w2, g2, state2)
        if compare_states:
            compare_ndarray_tuple(state1, state2, rtol=rtol, atol=atol)
        assert_almost_equal(w1, w2, rtol=rtol, atol=atol)


__all__ = [
    "assert_almost_equal_with_err",
    "compare_ndarray_tuple",
    "compare_optimizer",
    "default_atols",
    "default_numeric_eps",
    "default_rtols",
    "effective_dtype",
    "get_atol",
    "get_etol",
    "get_rtol",
    "get_tolerance",
    "get_tols",
]
