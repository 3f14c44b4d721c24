"""Arrays laid out as users hand them to operators: views that share a larger array's storage.

Basic slicing gives views (``lazynd/ndarray/indexing.py``), so a kernel meets rows of a parent
(``x[1:5]``, contiguous but offset), columns of one (``x[:, 2:7]``, strided), every other row
(``x[::2]``) and the reshape of an offset slice.  Each helper here builds such a view holding
given values, inside a parent whose other elements hold a sentinel, so a test can also check that
nothing outside the view was written.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

import lazynd as mx

SENTINEL = 7

# layout name -> (parent shape for a view of ``shape``, the key that selects the view)
LAYOUTS: dict[str, Callable[[tuple[int, ...]], tuple[tuple[int, ...], Any]]] = {
    "rows": lambda shape: ((shape[0] + 3, *shape[1:]), slice(1, shape[0] + 1)),
    "columns": lambda shape: (
        (*shape[:-1], shape[-1] + 3),
        (slice(None),) * (len(shape) - 1) + (slice(1, shape[-1] + 1),),
    ),
    "every other row": lambda shape: ((2 * shape[0], *shape[1:]), slice(None, None, 2)),
}
VIEW_LAYOUTS = (*LAYOUTS, "reshaped slice")


def layout_applies(layout: str, shape: tuple[int, ...]) -> bool:
    """Whether ``layout`` can hold an array of ``shape`` (columns need two axes, all need one)."""
    if layout == "columns":
        return len(shape) >= 2
    return len(shape) >= 1


def parent_and_view(values: np.ndarray, layout: str, ctx: mx.Context) -> tuple[mx.nd.NDArray, mx.nd.NDArray]:
    """(parent, view): ``view`` holds ``values`` in ``layout``; the rest of ``parent`` is SENTINEL."""
    values = np.asarray(values)
    if layout == "reshaped slice":  # a flat slice, offset by two elements, reshaped to the shape
        flat = np.full(values.size + 5, SENTINEL, values.dtype)
        flat[2 : 2 + values.size] = values.ravel()
        parent = mx.nd.array(flat, ctx=ctx, dtype=values.dtype)
        return parent, parent[2 : 2 + values.size].reshape(values.shape)
    parent_shape, key = LAYOUTS[layout](values.shape)
    host = np.full(parent_shape, SENTINEL, values.dtype)
    host[key] = values
    parent = mx.nd.array(host, ctx=ctx, dtype=values.dtype)
    return parent, parent[key]


def expected_parent(values: np.ndarray, layout: str) -> np.ndarray:
    """What a parent built by :func:`parent_and_view` holds once ``values`` are written into its view."""
    values = np.asarray(values)
    if layout == "reshaped slice":
        flat = np.full(values.size + 5, SENTINEL, values.dtype)
        flat[2 : 2 + values.size] = values.ravel()
        return flat
    parent_shape, key = LAYOUTS[layout](values.shape)
    host = np.full(parent_shape, SENTINEL, values.dtype)
    host[key] = values
    return host


def as_list(result: Any) -> list[np.ndarray]:
    """An operator's result (one NDArray or several) as host arrays."""
    if isinstance(result, (list, tuple)):
        return [r.asnumpy() for r in result]
    return [result.asnumpy()]


def assert_results_equal(got: Sequence[np.ndarray], expected: Sequence[np.ndarray], tol: float) -> None:
    """Same count, shapes, dtypes, and values within ``tol`` (NaN where NaN)."""
    assert len(got) == len(expected)
    for g, e in zip(got, expected, strict=True):
        assert (g.shape, g.dtype) == (e.shape, e.dtype)
        np.testing.assert_allclose(g.astype(np.float64), e.astype(np.float64), rtol=tol, atol=tol)
