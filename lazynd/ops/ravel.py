"""Flat indices and multi-indices: MXNet 1.x's ``ravel_multi_index`` and ``unravel_index``.

``ravel_multi_index(data, shape=s)`` takes a ``(len(s), N)`` array, one row per dimension, and
gives the ``N`` flat (C-order) indices; ``unravel_index(data, shape=s)`` takes ``N`` flat indices
and gives the ``(len(s), N)`` array back.  Indices are stored in the data's dtype (floats, as
MXNet's ``nd.array`` makes them, truncated to integers first).  An index outside ``shape`` is an
error naming the operator (MXNet computes a number from it regardless): on the host at once; on a
GPU, where reading the indices back would make the host wait for the device at every call, a
device check raises it at the next wait (the number is computed meanwhile).  As in MXNet, the first
dimension of ``shape`` may be ``-1``: unbounded (``unravel_index`` then puts the whole quotient
there).  The gradient is zero.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import OperatorError, ShapeError
from .params import REQUIRED, Param, parse_shape
from .registry import OpDef, register


def _shape_param(value: Any) -> tuple[int, ...]:
    shape = parse_shape(value)
    if not shape or shape[0] < -1 or shape[0] == 0 or any(d < 1 for d in shape[1:]):
        raise ValueError("expected a non-empty shape of positive dimensions (the first may be -1)")
    return shape


_INT64_MAX = (1 << 63) - 1


def _bounds(shape: tuple[int, ...]) -> np.ndarray:
    """Each dimension's size as a column, an unbounded first one (-1) as the largest int64."""
    sizes = [_INT64_MAX if d == -1 else d for d in shape]
    return np.asarray(sizes, dtype=np.int64).reshape(-1, 1)


_PARAMS = {"shape": Param(_shape_param, REQUIRED, "shape of the array the indices refer to")}


def _zero_gradient(F: Any, attrs: dict, inputs: list, outputs: list, out_grads: list) -> list:
    return [F.zeros_like(inputs[0])]


def _refuse_out_of_range(bad: Any, message: str) -> None:
    """Raise ``message`` where a host array ``bad`` has a True (the host's check: see the module docstring)."""
    if bool(np.any(bad)):
        raise OperatorError(message)


# -- ravel_multi_index -----------------------------------------------------------------------------
def _ravel_shape(attrs: dict, in_shapes: list, aux_shapes: list) -> tuple[list, list, list]:
    shape, data = attrs["shape"], in_shapes[0]
    if data is None:
        return in_shapes, [None], aux_shapes
    if len(data) != 2 or (data[0] and data[0] != len(shape)):
        raise ShapeError(
            f"ravel_multi_index: shape of 'data' is {tuple(data)}, expected ({len(shape)}, N): one row per "
            f"dimension of shape={shape}"
        )
    return [(len(shape), data[1])], [(data[1],)], aux_shapes


def _ravel_forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    xp, shape = kctx.xp, attrs["shape"]
    index = inputs[0].astype(xp.int64)  # truncates, as MXNet's cast does
    if xp is np:
        limits = _bounds(shape)
        _refuse_out_of_range(
            (index < 0) | (index >= limits), f"ravel_multi_index: data holds an index outside shape={shape}"
        )
    else:
        for row, size in enumerate(shape):
            if size != -1:
                kctx.backend.check_range("ravel_multi_index", f"index of dimension {row}", index[row], 0, size)
    flat = xp.zeros(index.shape[1], dtype=xp.int64)
    for row, size in enumerate(shape):
        flat *= size
        flat += index[row]
    outputs[0][...] = flat


register(
    OpDef(
        "ravel_multi_index",
        _ravel_forward,
        params=dict(_PARAMS),
        infer_shape=_ravel_shape,
        gradient=_zero_gradient,
        aliases=("_ravel_multi_index",),
        doc="Flat C-order indices of the columns of data (one row per dimension of shape).",
    )
)


# -- unravel_index ---------------------------------------------------------------------------------
def _unravel_shape(attrs: dict, in_shapes: list, aux_shapes: list) -> tuple[list, list, list]:
    shape, data = attrs["shape"], in_shapes[0]
    if data is None:
        return in_shapes, [None], aux_shapes
    if len(data) != 1:
        raise ShapeError(f"unravel_index: shape of 'data' is {tuple(data)}, expected (N,): one flat index each")
    return in_shapes, [(len(shape), data[0])], aux_shapes


def _unravel_forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    xp, shape = kctx.xp, attrs["shape"]
    flat = inputs[0].astype(xp.int64)
    size = 1
    for d in shape:
        size *= d
    if xp is np:
        outside = (flat < 0) if size < 0 else (flat < 0) | (flat >= size)
        bound = "[0, inf)" if size < 0 else f"[0, {size})"
        _refuse_out_of_range(outside, f"unravel_index: data holds a flat index outside {bound} of shape={shape}")
    else:
        kctx.backend.check_range("unravel_index", "flat index", flat, 0, float("inf") if size < 0 else size)
    out = outputs[0]
    for row in range(len(shape) - 1, 0, -1):
        out[row] = flat % shape[row]
        flat = flat // shape[row]
    out[0] = flat if shape[0] == -1 else flat % shape[0]


register(
    OpDef(
        "unravel_index",
        _unravel_forward,
        params=dict(_PARAMS),
        infer_shape=_unravel_shape,
        gradient=_zero_gradient,
        aliases=("_unravel_index",),
        doc="The multi-indices (one row per dimension of shape) of the flat C-order indices in data.",
    )
)
