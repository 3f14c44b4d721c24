"""Operators that copy elements to new places, reversed, repeated, around a border or on a diagonal:
flip, tile, repeat, Pad and diag (MXNet semantics and defaults), with their backward operators.

The kernels are written once against ``kctx.xp``, so NumPy and CuPy run the same code.
"""

from __future__ import annotations

import math
from typing import Any

from ..errors import OperatorError, ShapeError
from ..util import is_np_shape
from .params import REQUIRED, Param, enum, optional, parse_axis, parse_float, parse_int, parse_shape
from .registry import OpDef, merge_shape, register
from .shape import as_axes, copy_into, normalize_axis, unary_infer


# -- flip, tile, repeat ------------------------------------------------------------------------------
def _flip_axes(attrs: dict, ndim: int) -> tuple[int, ...]:
    """The axes to reverse: ``axis=()`` (parsed as None) reverses none, as in MXNet."""
    return () if attrs["axis"] is None else as_axes("flip", attrs["axis"], ndim)


def _flip_forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    x = inputs[0]
    outputs[0][...] = kctx.xp.flip(x, axis=_flip_axes(attrs, x.ndim))


def _flip_shape(attrs: dict, s: tuple) -> tuple:
    _flip_axes(attrs, len(s))
    return s


register(
    OpDef(
        "flip",
        _flip_forward,
        params={"axis": Param(parse_axis, REQUIRED, "the axis or axes to reverse")},
        infer_shape=unary_infer(_flip_shape, _flip_shape),
        gradient=lambda F, attrs, inputs, outputs, og: [F.flip(og[0], axis=attrs["axis"])],
        aliases=("reverse",),
        doc="Reverse the order of elements along ``axis``.",
    )
)


def _tile_layout(reps: tuple[int, ...], shape: tuple[int, ...]) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Reps and input shape padded on the left to the same length, as numpy.tile does."""
    if any(r < 0 for r in reps):
        raise OperatorError(f"tile: reps={reps} must not be negative")
    n = max(len(reps), len(shape))
    return (1,) * (n - len(reps)) + tuple(reps), (1,) * (n - len(shape)) + tuple(shape)


def _tile_shape(attrs: dict, s: tuple) -> tuple:
    reps, shape = _tile_layout(attrs["reps"], s)
    return tuple(r * d for r, d in zip(reps, shape, strict=True))


def _tile_forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    # the output seen as (r0, d0, r1, d1, ...) is the input broadcast over the r axes: one copy, no temporary
    x, out = inputs[0], outputs[0]
    reps, shape = _tile_layout(attrs["reps"], x.shape)
    interleaved = [v for pair in zip(reps, shape, strict=True) for v in pair]
    spread = [v for d in shape for v in (1, d)]
    if out.flags.c_contiguous:
        out.reshape(interleaved)[...] = x.reshape(spread)
    else:
        copy_into(out, kctx.xp.tile(x, attrs["reps"]))


def _backward_tile_forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    og, out = inputs[0], outputs[0]
    reps, shape = _tile_layout(attrs["reps"], out.shape)
    interleaved = [v for pair in zip(reps, shape, strict=True) for v in pair]
    summed = og.reshape(interleaved).sum(axis=tuple(range(0, 2 * len(reps), 2)))
    out[...] = summed.reshape(out.shape)


register(
    OpDef(
        "tile",
        _tile_forward,
        params={"reps": Param(parse_shape, REQUIRED, "repetitions per axis (numpy.tile rules)")},
        infer_shape=unary_infer(_tile_shape),
        gradient=lambda F, attrs, inputs, outputs, og: [F._backward_tile(og[0], inputs[0], reps=attrs["reps"])],
        doc="Repeat the whole array ``reps`` times along each axis.",
    )
)
register(
    OpDef(
        "_backward_tile",
        _backward_tile_forward,
        inputs=("out_grad", "like"),
        shape_only_inputs=(1,),
        params={"reps": Param(parse_shape, REQUIRED, "repetitions of the forward tile")},
        infer_shape=lambda attrs, s, a: (s, [s[1]], a),
        infer_type=lambda attrs, t, a: (t, [t[0]], a),
        doc="Gradient of ``tile``: sum over the tiles.",
    )
)


def _repeat_shape(attrs: dict, s: tuple) -> tuple:
    if attrs["repeats"] < 0:
        raise OperatorError(f"repeat: repeats={attrs['repeats']} must not be negative")
    if attrs["axis"] is None:
        return (math.prod(s) * attrs["repeats"],)
    axis = normalize_axis("repeat", attrs["axis"], len(s))
    return s[:axis] + (s[axis] * attrs["repeats"],) + s[axis + 1 :]


def _backward_repeat_forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    og, out, r = inputs[0], outputs[0], attrs["repeats"]
    if attrs["axis"] is None:
        out[...] = og.reshape(-1, r).sum(axis=1).reshape(out.shape)
        return
    axis = normalize_axis("repeat", attrs["axis"], out.ndim)
    split = out.shape[:axis] + (out.shape[axis], r) + out.shape[axis + 1 :]
    out[...] = og.reshape(split).sum(axis=axis + 1)


_REPEAT_PARAMS = {
    "repeats": Param(parse_int, REQUIRED, "how often each element repeats"),
    "axis": Param(optional(parse_int), None, "the axis; None repeats the flattened array"),
}
register(
    OpDef(
        "repeat",
        lambda kctx, attrs, inputs, outputs, aux: copy_into(
            outputs[0], kctx.xp.repeat(inputs[0], attrs["repeats"], axis=attrs["axis"])
        ),
        params=dict(_REPEAT_PARAMS),
        infer_shape=unary_infer(_repeat_shape),
        gradient=lambda F, attrs, inputs, outputs, og: [F._backward_repeat(og[0], inputs[0], **attrs)],
        doc="Repeat each element ``repeats`` times along ``axis``.",
    )
)
register(
    OpDef(
        "_backward_repeat",
        _backward_repeat_forward,
        inputs=("out_grad", "like"),
        shape_only_inputs=(1,),
        params=dict(_REPEAT_PARAMS),
        infer_shape=lambda attrs, s, a: (s, [s[1]], a),
        infer_type=lambda attrs, t, a: (t, [t[0]], a),
        doc="Gradient of ``repeat``: sum over the repeats.",
    )
)


# -- Pad -------------------------------------------------------------------------------------------
def _pad_pairs(attrs: dict, shape: tuple, sizes_known: bool = True) -> list[tuple[int, int]]:
    """The (before, after) pairs, checked; ``sizes_known`` False when a 0 in ``shape`` may be an
    unknown dimension (symbolic inference) rather than an empty axis."""
    width = attrs["pad_width"]
    if len(width) != 2 * len(shape) or any(w < 0 for w in width):
        raise ShapeError(
            f"Pad: pad_width={tuple(width)} must hold 2 non-negative values per axis of the "
            f"{len(shape)}-D input {tuple(shape)} ({2 * len(shape)} values)"
        )
    pairs = [(width[2 * i], width[2 * i + 1]) for i in range(len(shape))]
    if attrs["mode"] != "constant" and sizes_known:
        for axis, ((before, after), n) in enumerate(zip(pairs, shape, strict=True)):
            if n == 0 and before + after:
                # NumPy's pad fails inside the kernel here (MXNet 1.9.1 dies of SIGFPE)
                raise ShapeError(
                    f"Pad: mode={attrs['mode']!r} copies input values into the padding, but axis {axis} "
                    f"of the input {tuple(shape)} is empty (padding {(before, after)}); use mode='constant'"
                )
    if attrs["mode"] == "reflect":
        for axis, ((before, after), n) in enumerate(zip(pairs, shape, strict=True)):
            if n and max(before, after) >= n:
                raise ShapeError(
                    f"Pad: reflect padding {(before, after)} on axis {axis} must be smaller than its size {n}"
                )
    return pairs


def _pad_forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    x = inputs[0]
    pairs = _pad_pairs(attrs, x.shape)
    if attrs["mode"] == "constant":
        padded = kctx.xp.pad(x, pairs, mode="constant", constant_values=attrs["constant_value"])
    else:
        padded = kctx.xp.pad(x, pairs, mode=attrs["mode"])
    outputs[0][...] = padded


def _source_index(xp: Any, mode: str, n: int, before: int, after: int) -> tuple[Any, Any]:
    """For each padded position along one axis, the input index it copies and whether it copies one."""
    idx = xp.arange(-before, n + after)
    if mode == "constant":
        return xp.clip(idx, 0, n - 1), (idx >= 0) & (idx < n)
    if mode == "edge":
        return xp.clip(idx, 0, n - 1), xp.ones(idx.shape, dtype=bool)
    period = max(2 * (n - 1), 1)
    folded = xp.abs(idx) % period
    return xp.where(folded >= n, period - folded, folded), xp.ones(idx.shape, dtype=bool)


def _backward_pad_forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    xp = kctx.xp
    grad, out = inputs[0], outputs[0]
    pairs = _pad_pairs(attrs, out.shape)
    for axis, (n, (before, after)) in enumerate(zip(out.shape, pairs, strict=True)):
        src, valid = _source_index(xp, attrs["mode"], n, before, after)
        # the adjoint of a gather along one axis: a 0/1 matrix (padded -> source) applied to that axis
        adjoint = xp.zeros((n + before + after, n), dtype=grad.dtype)
        adjoint[xp.arange(n + before + after), src] = valid.astype(grad.dtype)
        grad = xp.moveaxis(xp.moveaxis(grad, axis, -1) @ adjoint, -1, axis)
    out[...] = grad


def _pad_shape(attrs: dict, s: tuple) -> tuple:
    pairs = _pad_pairs(attrs, s, sizes_known=is_np_shape())
    return tuple(d + before + after for d, (before, after) in zip(s, pairs, strict=True))


_PAD_PARAMS = {
    "mode": Param(enum("constant", "edge", "reflect"), "constant", "how to fill the border"),
    "pad_width": Param(parse_shape, REQUIRED, "(before, after) for every axis, flattened"),
    "constant_value": Param(parse_float, 0.0, "fill value in constant mode"),
}
register(
    OpDef(
        "Pad",
        _pad_forward,
        params=dict(_PAD_PARAMS),
        infer_shape=unary_infer(_pad_shape),
        gradient=lambda F, attrs, inputs, outputs, og: [F._backward_Pad(og[0], inputs[0], **attrs)],
        aliases=("pad",),
        doc="Pad every axis with a constant, the edge value or a reflection.",
    )
)


def _backward_pad_infer(attrs: dict, in_shapes: list, aux_shapes: list) -> tuple[list, list, list]:
    grad, like = in_shapes
    if like is not None:
        grad = merge_shape("_backward_Pad", "out_grad", grad, _pad_shape(attrs, tuple(like)))
    return [grad, like], [like], aux_shapes


register(
    OpDef(
        "_backward_Pad",
        _backward_pad_forward,
        inputs=("out_grad", "like"),
        shape_only_inputs=(1,),
        params=dict(_PAD_PARAMS),
        infer_shape=_backward_pad_infer,
        infer_type=lambda attrs, t, a: (t, [t[0]], a),
        doc="Gradient of ``Pad``: every padded value flows back to the input element it copies.",
    )
)


# -- diag ----------------------------------------------------------------------------------------------
_DIAG_PARAMS = {
    "k": Param(parse_int, 0, "the diagonal: 0 the main one, > 0 above it, < 0 below"),
    "axis1": Param(parse_int, 0, "the first axis of the 2-D sub-arrays whose diagonals are taken (N-D input)"),
    "axis2": Param(parse_int, 1, "their second axis (N-D input)"),
}


def _diag_axes(attrs: dict, ndim: int) -> tuple[int, int]:
    axis1 = normalize_axis("diag", attrs["axis1"], ndim, "axis1")
    axis2 = normalize_axis("diag", attrs["axis2"], ndim, "axis2")
    if axis1 == axis2:
        raise OperatorError(f"diag: axis1={attrs['axis1']} and axis2={attrs['axis2']} name the same axis, expected two")
    return axis1, axis2


def _diag_length(rows: int, cols: int, k: int) -> int:
    return max(0, min(rows + min(k, 0), cols - max(k, 0)))


def _diag_shape(attrs: dict, s: tuple) -> tuple:
    k = attrs["k"]
    if len(s) == 0:
        raise ShapeError("diag: the input is 0-D, expected 1-D (to build a matrix) or more (to take a diagonal)")
    if len(s) == 1:
        return (s[0] + abs(k),) * 2
    axis1, axis2 = _diag_axes(attrs, len(s))
    # as MXNet, the diagonals just past the corners (k = columns, k = -rows) are empty, further is an error
    if k > s[axis2] or -k > s[axis1]:
        raise ShapeError(f"diag: the input {tuple(s)} has no diagonal k={k} on axes ({axis1}, {axis2})")
    return tuple(d for i, d in enumerate(s) if i not in (axis1, axis2)) + (_diag_length(s[axis1], s[axis2], k),)


def _diag_positions(xp: Any, length: int, k: int) -> tuple[Any, Any]:
    """Row and column indices of the ``length`` elements of diagonal ``k``."""
    steps = xp.arange(length)
    return steps + max(-k, 0), steps + max(k, 0)


def _diag_scatter(xp: Any, values: Any, out: Any, k: int, axis1: int, axis2: int) -> None:
    """``out`` zero but for diagonal ``k`` of its axes ``(axis1, axis2)``, which takes ``values``
    (the diagonal on their last axis)."""
    out[...] = 0
    plane = xp.moveaxis(out, (axis1, axis2), (-2, -1))  # a view: writes land in ``out``
    rows, cols = _diag_positions(xp, values.shape[-1], k)
    plane[..., rows, cols] = values


def _diag_forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    x, out, k = inputs[0], outputs[0], attrs["k"]
    if x.ndim == 1:
        _diag_scatter(kctx.xp, x, out, k, 0, 1)
        return
    axis1, axis2 = _diag_axes(attrs, x.ndim)
    out[...] = kctx.xp.diagonal(x, k, axis1, axis2)


def _backward_diag_forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    # the gradient of building a matrix is its diagonal; of taking a diagonal, a zero array holding it
    grad, out, k = inputs[0], outputs[0], attrs["k"]
    if out.ndim == 1:
        out[...] = kctx.xp.diagonal(grad, k)
        return
    axis1, axis2 = _diag_axes(attrs, out.ndim)
    _diag_scatter(kctx.xp, grad, out, k, axis1, axis2)


register(
    OpDef(
        "diag",
        _diag_forward,
        params=dict(_DIAG_PARAMS),
        infer_shape=unary_infer(_diag_shape),
        gradient=lambda F, attrs, inputs, outputs, og: [F._backward_diag(og[0], inputs[0], **attrs)],
        doc="A 1-D input: the square matrix with it on diagonal ``k``; N-D: diagonal ``k`` of the "
        "sub-arrays on ``axis1`` and ``axis2``, on a new last axis (as numpy.diagonal).",
    )
)


def _backward_diag_infer(attrs: dict, in_shapes: list, aux_shapes: list) -> tuple[list, list, list]:
    grad, like = in_shapes
    if like is not None:
        grad = merge_shape("_backward_diag", "out_grad", grad, _diag_shape(attrs, tuple(like)))
    return [grad, like], [like], aux_shapes


register(
    OpDef(
        "_backward_diag",
        _backward_diag_forward,
        inputs=("out_grad", "data"),
        shape_only_inputs=(1,),
        params=dict(_DIAG_PARAMS),
        infer_shape=_backward_diag_infer,
        infer_type=lambda attrs, t, a: (t, [t[0]], a),
        doc="Gradient of ``diag``.",
    )
)
