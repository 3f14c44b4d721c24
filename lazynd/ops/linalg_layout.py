"""MXNet 1.x's batched moves between matrices and their diagonals or triangles:
``linalg_extractdiag`` / ``linalg_makediag`` and ``linalg_extracttrian`` / ``linalg_maketrian``.

Each pair is adjoint, so each one's gradient is the other.  A triangle is flattened in MXNet's
order: a lower one (``offset < 0``, or ``offset == 0`` with ``lower``) row by row, an upper one as
the lower triangle of the transpose, row by row (column by column of the matrix).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..errors import ShapeError
from ._linalg_batch import check_matrices, register_linalg
from .params import Param, parse_bool, parse_int

_OFFSET = {"offset": Param(parse_int, 0, "which diagonal: > 0 above the main one, < 0 below")}
_TRIANGLE = {**_OFFSET, "lower": Param(parse_bool, True, "with offset 0: the lower (else upper) triangle")}


def _inner_size(op: str, attrs: dict, n: int) -> int:
    """The side of the triangle (or the length of the diagonal) of an n x n matrix."""
    size = n - abs(attrs["offset"])
    if n and size <= 0:
        raise ShapeError(f"{op}: offset={attrs['offset']} leaves nothing of a {n} x {n} matrix")
    return size


def _is_upper(attrs: dict) -> bool:
    return attrs["offset"] > 0 or (attrs["offset"] == 0 and not attrs["lower"])


def _triangle_indices(kctx: Any, attrs: dict, n: int) -> Any:
    """Row and column indices (a (2, k) array), in MXNet's order, of the triangle of an n x n matrix:
    a constant of ``kctx``'s device, made once (an upload at every call could not be captured into a
    CUDA graph, lazynd/backend/cuda/graphs.py)."""
    upper, offset = _is_upper(attrs), attrs["offset"]

    def make() -> np.ndarray:
        if upper:
            cols, rows = np.tril_indices(n, -offset)
        else:
            rows, cols = np.tril_indices(n, offset)
        return np.stack([rows, cols])

    return kctx.backend.constant(("linalg triangle", upper, offset, n), make, np.int64)


# -- extractdiag, makediag --------------------------------------------------------------------------
def _extractdiag(xp: Any, attrs: dict, ins: list) -> list:
    return [xp.diagonal(ins[0], offset=attrs["offset"], axis1=-2, axis2=-1)]


def _makediag(xp: Any, attrs: dict, ins: list) -> list:
    v, offset = ins[0], attrs["offset"]
    n = v.shape[-1] + abs(offset)
    out = xp.zeros(v.shape[:-1] + (n, n), dtype=v.dtype)
    i = xp.arange(v.shape[-1])
    rows, cols = (i, i + offset) if offset >= 0 else (i - offset, i)
    out[..., rows, cols] = v
    return [out]


def _extractdiag_infer(attrs: dict, in_shapes: list, aux_shapes: list) -> tuple[list, list, list]:
    a = in_shapes[0]
    check_matrices("linalg_extractdiag", "A", a, square=True)
    if a is None:
        return in_shapes, [None], aux_shapes
    return in_shapes, [tuple(a[:-2]) + (_inner_size("linalg_extractdiag", attrs, a[-1]),)], aux_shapes


def _makediag_infer(attrs: dict, in_shapes: list, aux_shapes: list) -> tuple[list, list, list]:
    v = in_shapes[0]
    if v is None:
        return in_shapes, [None], aux_shapes
    if not v:
        raise ShapeError("linalg_makediag: input 'A' must have at least 1 dim, got shape ()")
    n = v[-1] + abs(attrs["offset"])
    return in_shapes, [tuple(v[:-1]) + (n, n)], aux_shapes


register_linalg(
    "extractdiag",
    _extractdiag,
    params=dict(_OFFSET),
    infer_shape=_extractdiag_infer,
    gradient=lambda F, attrs, ins, outs, og: [F.linalg_makediag(og[0], **attrs)],
    gradient_is_rule=True,
    doc="The ``offset`` diagonal of each square matrix.",
)
register_linalg(
    "makediag",
    _makediag,
    params=dict(_OFFSET),
    infer_shape=_makediag_infer,
    gradient=lambda F, attrs, ins, outs, og: [F.linalg_extractdiag(og[0], **attrs)],
    gradient_is_rule=True,
    doc="Square matrices with the last axis of A on their ``offset`` diagonal, zeros elsewhere.",
)


# -- extracttrian, maketrian ------------------------------------------------------------------------
def _extracttrian(kctx: Any, attrs: dict, ins: list) -> list:
    a = ins[0]
    rows, cols = _triangle_indices(kctx, attrs, a.shape[-1])
    return [a[..., rows, cols]]


def _maketrian(kctx: Any, attrs: dict, ins: list) -> list:
    v = ins[0]
    side = (math.isqrt(8 * v.shape[-1] + 1) - 1) // 2
    n = side + abs(attrs["offset"])
    out = kctx.xp.zeros(v.shape[:-1] + (n, n), dtype=v.dtype)
    rows, cols = _triangle_indices(kctx, attrs, n)
    out[..., rows, cols] = v
    return [out]


def _extracttrian_infer(attrs: dict, in_shapes: list, aux_shapes: list) -> tuple[list, list, list]:
    a = in_shapes[0]
    check_matrices("linalg_extracttrian", "A", a, square=True)
    if a is None:
        return in_shapes, [None], aux_shapes
    side = _inner_size("linalg_extracttrian", attrs, a[-1])
    return in_shapes, [tuple(a[:-2]) + (side * (side + 1) // 2,)], aux_shapes


def _maketrian_infer(attrs: dict, in_shapes: list, aux_shapes: list) -> tuple[list, list, list]:
    v = in_shapes[0]
    if v is None:
        return in_shapes, [None], aux_shapes
    if not v:
        raise ShapeError("linalg_maketrian: input 'A' must have at least 1 dim, got shape ()")
    side = (math.isqrt(8 * v[-1] + 1) - 1) // 2
    if side * (side + 1) // 2 != v[-1]:
        raise ShapeError(
            f"linalg_maketrian: the last axis of A has {v[-1]} entries, not a triangle's m(m+1)/2 for any m"
        )
    n = side + abs(attrs["offset"])
    return in_shapes, [tuple(v[:-1]) + (n, n)], aux_shapes


register_linalg(
    "extracttrian",
    _extracttrian,
    params=dict(_TRIANGLE),
    infer_shape=_extracttrian_infer,
    gradient=lambda F, attrs, ins, outs, og: [F.linalg_maketrian(og[0], **attrs)],
    gradient_is_rule=True,
    kernel_context=True,
    doc="The entries of a triangle of each square matrix, flattened in MXNet's order.",
)
register_linalg(
    "maketrian",
    _maketrian,
    params=dict(_TRIANGLE),
    infer_shape=_maketrian_infer,
    gradient=lambda F, attrs, ins, outs, og: [F.linalg_extracttrian(og[0], **attrs)],
    gradient_is_rule=True,
    kernel_context=True,
    doc="Square matrices with the last axis of A laid out in a triangle (the inverse of extracttrian).",
)
