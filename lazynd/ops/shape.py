"""Operators that rearrange elements without arithmetic: Reshape, Flatten, transpose, SwapAxis,
expand_dims, reshape_like, flip, tile, repeat and Pad (MXNet semantics and defaults).

The kernels are written once against ``kctx.xp``, so NumPy and CuPy run the same code.
"""

from __future__ import annotations

import math
from typing import Any

from ..errors import OperatorError, ShapeError
from .params import REQUIRED, Param, enum, optional, parse_axis, parse_bool, parse_float, parse_int, parse_shape
from .registry import OpDef, merge_shape, register


# -- helpers shared by the shape, indexing and sorting families -----------------------------------
def normalize_axis(op: str, axis: int, ndim: int, param: str = "axis", extra: int = 0) -> int:
    """``axis`` in ``[0, ndim + extra)``, counting negatives from the end; ShapeError otherwise."""
    size = ndim + extra
    if not -size <= axis < size:
        raise ShapeError(f"{op}: {param}={axis} is out of range for a {ndim}-D input (allowed {-size}..{size - 1})")
    return axis + size if axis < 0 else axis


def as_axes(op: str, axis: Any, ndim: int) -> tuple[int, ...]:
    axes = axis if isinstance(axis, tuple) else (axis,)
    result = tuple(normalize_axis(op, a, ndim) for a in axes)
    if len(set(result)) != len(result):
        raise OperatorError(f"{op}: axis {axis} repeats an axis")
    return result


def copy_into(out: Any, value: Any) -> None:
    out[...] = value.reshape(out.shape) if value.shape != out.shape else value


def _unary_infer(rule: Any) -> Any:
    """An ``infer_shape`` for one-input ops whose output shape is ``rule(attrs, data_shape)``."""

    def infer(attrs: dict, in_shapes: list, aux_shapes: list) -> tuple[list, list, list]:
        data = in_shapes[0]
        return in_shapes, [None if data is None else tuple(rule(attrs, tuple(data)))], aux_shapes

    return infer


def _like_gradient(F: Any, attrs: dict, inputs: list, outputs: list, out_grads: list) -> list:
    return [F.reshape_like(out_grads[0], inputs[0])]


# -- Reshape -------------------------------------------------------------------------------------
def reshape_shape(spec: tuple[int, ...], dshape: tuple[int, ...], reverse: bool = False) -> tuple[int, ...]:
    """The output shape of ``Reshape(shape=spec)`` for input shape ``dshape`` (0 in dshape = unknown).

    Codes: 0 copies an input dim, -1 infers one dim, -2 copies the remaining dims, -3 merges two
    input dims, -4 splits one input dim into the next two values (one may be -1).

    Examples
    --------
    >>> reshape_shape((0, -1), (2, 3, 4))
    (2, 12)
    >>> reshape_shape((-4, 1, -1, -2), (6, 5))
    (1, 6, 5)
    """
    dims = list(reversed(dshape)) if reverse else list(dshape)
    codes = list(reversed(spec)) if reverse else list(spec)
    given = f"shape={tuple(spec)} on input {tuple(dshape)}"
    out: list[int] = []
    src, infer_at, i = 0, -1, 0

    def take_dim(code: int) -> int:
        if src >= len(dims):
            raise ShapeError(f"Reshape: code {code} needs an input dim that {given} does not have")
        return dims[src]

    while i < len(codes):
        code = codes[i]
        if code == 0:
            out.append(take_dim(0))
            src += 1
        elif code == -1:
            if infer_at >= 0:
                raise ShapeError(f"Reshape: only one -1 is allowed, {given}")
            infer_at = len(out)
            out.append(1)
            src += 1
        elif code == -2:
            out.extend(dims[src:])
            src = len(dims)
        elif code == -3:
            first = take_dim(-3)
            src += 1
            out.append(first * take_dim(-3))
            src += 1
        elif code == -4:
            if i + 2 >= len(codes):
                raise ShapeError(f"Reshape: -4 must be followed by two values, {given}")
            whole = take_dim(-4)
            src += 1
            a, b = codes[i + 1], codes[i + 2]
            i += 2
            if a == -1 and b == -1 or a < -1 or b < -1 or a == 0 or b == 0:
                raise ShapeError(f"Reshape: -4 must split into two positive values (one may be -1), {given}")
            if whole:
                a = whole // b if a == -1 else a
                b = whole // a if b == -1 else b
                if a * b != whole:
                    raise ShapeError(f"Reshape: -4 cannot split dim {whole} into ({a}, {b}), {given}")
            else:
                a, b = max(a, 0), max(b, 0)
            out.extend((a, b))
        elif code > 0:
            out.append(code)
            src += 1
        else:
            raise ShapeError(f"Reshape: invalid code {code} (allowed: positive, 0, -1, -2, -3, -4), {given}")
        i += 1
    known = all(d > 0 for d in dshape)
    total = math.prod(dshape)
    if infer_at >= 0:
        rest = math.prod(out[:infer_at] + out[infer_at + 1 :])
        if not known or rest == 0:
            out[infer_at] = 0
        elif total % rest:
            raise ShapeError(f"Reshape: cannot infer -1, {total} elements do not divide by {rest}, {given}")
        else:
            out[infer_at] = total // rest
    if reverse:
        out.reverse()
    if known and math.prod(out) != total:
        raise ShapeError(f"Reshape: {given} gives {tuple(out)} with {math.prod(out)} elements, expected {total}")
    return tuple(out)


def _reshape_forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    outputs[0][...] = inputs[0].reshape(outputs[0].shape)


register(
    OpDef(
        "Reshape",
        _reshape_forward,
        params={
            "shape": Param(parse_shape, REQUIRED, "target shape with codes 0, -1, -2, -3, -4"),
            "reverse": Param(parse_bool, False, "apply the codes from the right"),
        },
        infer_shape=_unary_infer(lambda attrs, s: reshape_shape(attrs["shape"], s, attrs["reverse"])),
        gradient=_like_gradient,
        aliases=("reshape",),
        doc="Reshape with MXNet's special codes (0 copy, -1 infer, -2 rest, -3 merge, -4 split).",
    )
)


def _reshape_like_infer(attrs: dict, in_shapes: list, aux_shapes: list) -> tuple[list, list, list]:
    lhs, rhs = in_shapes
    if lhs is not None and rhs is not None and all(lhs) and all(rhs) and math.prod(lhs) != math.prod(rhs):
        raise ShapeError(
            f"reshape_like: lhs {tuple(lhs)} has {math.prod(lhs)} elements, rhs {tuple(rhs)} has {math.prod(rhs)}"
        )
    return in_shapes, [None if rhs is None else tuple(rhs)], aux_shapes


register(
    OpDef(
        "reshape_like",
        _reshape_forward,
        inputs=("lhs", "rhs"),
        infer_shape=_reshape_like_infer,
        infer_type=lambda attrs, t, a: (t, [t[0]], a),
        gradient=lambda F, attrs, inputs, outputs, og: [F.reshape_like(og[0], inputs[0]), None],
        doc="Reshape ``lhs`` to the shape of ``rhs`` (same number of elements).",
    )
)


def _flatten_shape(attrs: dict, s: tuple) -> tuple:
    if not s:
        raise ShapeError("Flatten: input must have at least 1 dim, got shape ()")
    return (s[0], math.prod(s[1:]))


register(
    OpDef(
        "Flatten",
        _reshape_forward,
        infer_shape=_unary_infer(_flatten_shape),
        gradient=_like_gradient,
        aliases=("flatten",),
        doc="Collapse all axes but the first: (d0, d1*...*dk).",
    )
)


# -- transpose, SwapAxis, expand_dims ---------------------------------------------------------------
def _transpose_axes(attrs: dict, ndim: int) -> tuple[int, ...]:
    axes = attrs["axes"]
    if not axes:
        return tuple(reversed(range(ndim)))
    norm = tuple(normalize_axis("transpose", a, ndim, "axes") for a in axes)
    if len(axes) != ndim or sorted(norm) != list(range(ndim)):
        raise ShapeError(f"transpose: axes={tuple(axes)} is not a permutation of the {ndim} axes of the input")
    return norm


def _transpose_forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    outputs[0][...] = inputs[0].transpose(_transpose_axes(attrs, inputs[0].ndim))


def _transpose_gradient(F: Any, attrs: dict, inputs: list, outputs: list, out_grads: list) -> list:
    axes = attrs["axes"]
    if not axes:
        return [F.transpose(out_grads[0])]
    inverse = [0] * len(axes)
    for i, a in enumerate(axes):
        inverse[a % len(axes)] = i
    return [F.transpose(out_grads[0], axes=tuple(inverse))]


register(
    OpDef(
        "transpose",
        _transpose_forward,
        params={"axes": Param(parse_shape, (), "the permutation; empty reverses the axes")},
        infer_shape=_unary_infer(lambda attrs, s: tuple(s[a] for a in _transpose_axes(attrs, len(s)))),
        gradient=_transpose_gradient,
        doc="Permute the axes (reverse them when ``axes`` is empty).",
    )
)


def _swap_axes(attrs: dict, ndim: int) -> list[int]:
    d1 = normalize_axis("SwapAxis", attrs["dim1"], ndim, "dim1")
    d2 = normalize_axis("SwapAxis", attrs["dim2"], ndim, "dim2")
    order = list(range(ndim))
    order[d1], order[d2] = order[d2], order[d1]
    return order


register(
    OpDef(
        "SwapAxis",
        lambda kctx, attrs, inputs, outputs, aux: copy_into(
            outputs[0], inputs[0].transpose(_swap_axes(attrs, inputs[0].ndim))
        ),
        params={"dim1": Param(parse_int, 0, "first axis"), "dim2": Param(parse_int, 0, "second axis")},
        infer_shape=_unary_infer(lambda attrs, s: tuple(s[a] for a in _swap_axes(attrs, len(s)))),
        gradient=lambda F, attrs, inputs, outputs, og: [F.SwapAxis(og[0], dim1=attrs["dim1"], dim2=attrs["dim2"])],
        aliases=("swapaxes",),
        doc="Swap two axes.",
    )
)


def _expand_dims_shape(attrs: dict, s: tuple) -> tuple:
    axis = normalize_axis("expand_dims", attrs["axis"], len(s), extra=1)
    return s[:axis] + (1,) + s[axis:]


register(
    OpDef(
        "expand_dims",
        _reshape_forward,
        params={"axis": Param(parse_int, REQUIRED, "where the new axis goes (-ndim-1..ndim)")},
        infer_shape=_unary_infer(_expand_dims_shape),
        gradient=_like_gradient,
        doc="Insert an axis of length 1 at ``axis``.",
    )
)


# -- flip, tile, repeat ------------------------------------------------------------------------------
def _flip_forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    x = inputs[0]
    outputs[0][...] = kctx.xp.flip(x, axis=as_axes("flip", attrs["axis"], x.ndim))


def _flip_shape(attrs: dict, s: tuple) -> tuple:
    as_axes("flip", attrs["axis"], len(s))
    return s


register(
    OpDef(
        "flip",
        _flip_forward,
        params={"axis": Param(parse_axis, REQUIRED, "the axis or axes to reverse")},
        infer_shape=_unary_infer(_flip_shape),
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
        infer_shape=_unary_infer(_tile_shape),
        gradient=lambda F, attrs, inputs, outputs, og: [F._backward_tile(og[0], inputs[0], reps=attrs["reps"])],
        doc="Repeat the whole array ``reps`` times along each axis.",
    )
)
register(
    OpDef(
        "_backward_tile",
        _backward_tile_forward,
        inputs=("out_grad", "like"),
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
        infer_shape=_unary_infer(_repeat_shape),
        gradient=lambda F, attrs, inputs, outputs, og: [F._backward_repeat(og[0], inputs[0], **attrs)],
        doc="Repeat each element ``repeats`` times along ``axis``.",
    )
)
register(
    OpDef(
        "_backward_repeat",
        _backward_repeat_forward,
        inputs=("out_grad", "like"),
        params=dict(_REPEAT_PARAMS),
        infer_shape=lambda attrs, s, a: (s, [s[1]], a),
        infer_type=lambda attrs, t, a: (t, [t[0]], a),
        doc="Gradient of ``repeat``: sum over the repeats.",
    )
)


# -- Pad -------------------------------------------------------------------------------------------
def _pad_pairs(attrs: dict, shape: tuple) -> list[tuple[int, int]]:
    width = attrs["pad_width"]
    if len(width) != 2 * len(shape) or any(w < 0 for w in width):
        raise ShapeError(
            f"Pad: pad_width={tuple(width)} must hold 2 non-negative values per axis of the "
            f"{len(shape)}-D input {tuple(shape)} ({2 * len(shape)} values)"
        )
    pairs = [(width[2 * i], width[2 * i + 1]) for i in range(len(shape))]
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
    return tuple(d + before + after for d, (before, after) in zip(s, _pad_pairs(attrs, s), strict=True))


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
        infer_shape=_unary_infer(_pad_shape),
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
        params=dict(_PAD_PARAMS),
        infer_shape=_backward_pad_infer,
        infer_type=lambda attrs, t, a: (t, [t[0]], a),
        doc="Gradient of ``Pad``: every padded value flows back to the input element it copies.",
    )
)
