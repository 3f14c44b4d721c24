"""Operators that change an array's shape or the order of its axes, each element kept once: Reshape,
reshape_like, Flatten, transpose, SwapAxis, expand_dims and squeeze (MXNet semantics and defaults); the
shape as data (shape_array, size_array); plus the axis helpers the other families share.

The kernels are written once against ``kctx.xp``, so NumPy and CuPy run the same code.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..errors import OperatorError, ShapeError
from .params import REQUIRED, Param, optional, parse_axis, parse_bool, parse_int, parse_shape
from .registry import OpDef, dim_is_known, register
from .reshape_codes import legacy_target_shape, reshape_shape


# -- helpers shared by the shape, rearrange, join_split, indexing and sorting families -------------
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


def unary_infer(rule: Any, inverse: Any = None) -> Any:
    """An ``infer_shape`` for one-input ops whose output shape is ``rule(attrs, data_shape)``.

    ``inverse(attrs, out_shape)``, where given, is the input shape a known output shape implies: the
    unknown (0) input dims are taken from it, as MXNet's rules infer backwards (``flip``, ``expand_dims``).
    """

    def infer(attrs: dict, in_shapes: list, aux_shapes: list) -> tuple[list, list, list]:
        data = in_shapes[0]
        return in_shapes, [None if data is None else tuple(rule(attrs, tuple(data)))], aux_shapes

    if inverse is None:
        return infer

    def infer_both_ways(attrs: dict, in_shapes: list, aux_shapes: list, out_shapes: list | None = None) -> tuple:
        data, out = in_shapes[0], out_shapes[0] if out_shapes else None
        if out is not None:
            implied = tuple(inverse(attrs, tuple(out)))
            if data is None or len(data) != len(implied):
                data = implied if data is None else data
            else:
                data = tuple(d or i for d, i in zip(data, implied, strict=True))
        return infer(attrs, [data], aux_shapes)

    return infer_both_ways


def _like_gradient(F: Any, attrs: dict, inputs: list, outputs: list, out_grads: list) -> list:
    return [F.reshape_like(out_grads[0], inputs[0])]


# -- Reshape -------------------------------------------------------------------------------------
def _reshape_rule(attrs: dict, dshape: tuple[int, ...]) -> tuple[int, ...]:
    if attrs["shape"]:
        return reshape_shape(attrs["shape"], dshape, attrs["reverse"])
    if attrs["target_shape"]:
        return legacy_target_shape(attrs["target_shape"], dshape, attrs["keep_highest"])
    raise OperatorError("Reshape: give shape (or the older target_shape), got neither")


def _reshape_infer(attrs: dict, in_shapes: list, aux_shapes: list, out_shapes: list | None = None) -> tuple:
    """Forward by the codes; backward, as MXNet does, one unknown input dim is found from a known output."""
    data = in_shapes[0]
    if data is None:
        return in_shapes, [None], aux_shapes
    data = tuple(data)
    out = tuple(_reshape_rule(attrs, data))
    known_out = next((tuple(s) for s in (out_shapes or []) if s is not None and all(d > 0 for d in s)), None)
    unknown = [axis for axis, d in enumerate(data) if d == 0]
    if known_out is not None and len(unknown) == 1:
        rest = math.prod(d for d in data if d)
        if math.prod(known_out) % rest:
            raise ShapeError(
                f"Reshape: output {known_out} has {math.prod(known_out)} elements, "
                f"which input {data} (0 = unknown) cannot hold"
            )
        filled = list(data)
        filled[unknown[0]] = math.prod(known_out) // rest
        return [tuple(filled)], [tuple(_reshape_rule(attrs, tuple(filled)))], aux_shapes
    return [data], [out], aux_shapes


# the same elements in the same order: an executor's plan may give the output its input's block, as
# MXNet's does, and then the copy below is NumPy's no-op (same data, same strides) or, on a device,
# an element-for-element copy onto itself
RESHAPED_IN_PLACE = ((0, 0),)


def _reshape_forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    outputs[0][...] = inputs[0].reshape(outputs[0].shape)


register(
    OpDef(
        "Reshape",
        _reshape_forward,
        inplace=RESHAPED_IN_PLACE,
        params={
            "shape": Param(parse_shape, (), "target shape with codes 0, -1, -2, -3, -4"),
            "reverse": Param(parse_bool, False, "apply the codes from the right"),
            "target_shape": Param(parse_shape, (), "(older form) the target shape; one 0 is inferred"),
            "keep_highest": Param(parse_bool, False, "(older form) keep dim 0 of the input, target_shape[0] ignored"),
        },
        infer_shape=_reshape_infer,
        gradient=_like_gradient,
        aliases=("reshape",),
        doc="Reshape with MXNet's special codes (0 copy, -1 infer, -2 rest, -3 merge, -4 split).",
    )
)


def _axis_range(attrs: dict, side: str, shape: tuple) -> tuple[int, int]:
    """``[begin, end)`` of the axes of ``shape`` that ``{side}_begin``/``{side}_end`` name (MXNet's rule:
    None is the start or the end, a negative value counts from the end, the range must not be empty)."""
    ndim = len(shape)
    begin, end = attrs[f"{side}_begin"], attrs[f"{side}_end"]
    first = 0 if begin is None else begin + ndim if begin < 0 else begin
    last = ndim if end is None else end + ndim if end < 0 else end
    if not 0 <= first < last <= ndim:
        raise ShapeError(
            f"reshape_like: {side}_begin={begin}, {side}_end={end} name no axes of the {side} {shape} "
            f"(expected 0 <= begin < end <= {ndim} once negative values count from the end)"
        )
    return first, last


def _reshape_like_infer(attrs: dict, in_shapes: list, aux_shapes: list) -> tuple[list, list, list]:
    lhs, rhs = in_shapes
    if lhs is None or rhs is None:
        return in_shapes, [None], aux_shapes
    lhs, rhs = tuple(lhs), tuple(rhs)
    lhs_first, lhs_last = _axis_range(attrs, "lhs", lhs)
    rhs_first, rhs_last = _axis_range(attrs, "rhs", rhs)
    out = lhs[:lhs_first] + rhs[rhs_first:rhs_last] + lhs[lhs_last:]
    if all(dim_is_known(d) for d in (*lhs, *out)) and math.prod(lhs) != math.prod(out):
        taken = "" if out == rhs else f" with the axes it takes ({out})"
        raise ShapeError(
            f"reshape_like: lhs {lhs} has {math.prod(lhs)} elements, rhs {rhs} has {math.prod(out)}{taken}"
        )
    return in_shapes, [out], aux_shapes


register(
    OpDef(
        "reshape_like",
        _reshape_forward,
        inplace=RESHAPED_IN_PLACE,
        inputs=("lhs", "rhs"),
        shape_only_inputs=(1,),
        params={
            name: Param(optional(parse_int), None, what)
            for name, what in (
                ("lhs_begin", "first axis of lhs to replace (None: 0)"),
                ("lhs_end", "end of the axes of lhs to replace (None: its ndim)"),
                ("rhs_begin", "first axis of rhs whose sizes are taken (None: 0)"),
                ("rhs_end", "end of the axes of rhs whose sizes are taken (None: its ndim)"),
            )
        },
        infer_shape=_reshape_like_infer,
        infer_type=lambda attrs, t, a: (t, [t[0]], a),
        gradient=lambda F, attrs, inputs, outputs, og: [F.reshape_like(og[0], inputs[0]), None],
        doc="Reshape ``lhs`` to the shape of ``rhs`` (same number of elements), or replace the axes\n"
        "``lhs_begin:lhs_end`` of ``lhs`` by the axes ``rhs_begin:rhs_end`` of ``rhs``, as MXNet 1.x.",
    )
)


def _flatten_infer(attrs: dict, in_shapes: list, aux_shapes: list) -> tuple[list, list, list]:
    data = in_shapes[0]
    if data is not None and not data:
        raise ShapeError("Flatten: input must have at least 1 dim, got shape ()")
    if data is None or not all(dim_is_known(d) for d in data):
        # as MXNet 1.9.1's rule: nothing of the output until every input dim is known, so no weight
        # behind it is inferred from half a shape ((0, 12) for an unknown batch)
        return in_shapes, [None], aux_shapes
    return in_shapes, [(data[0], math.prod(data[1:]))], aux_shapes


register(
    OpDef(
        "Flatten",
        _reshape_forward,
        inplace=RESHAPED_IN_PLACE,
        infer_shape=_flatten_infer,
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


def _transpose_infer(attrs: dict, in_shapes: list, aux_shapes: list, out_shapes: list | None = None) -> tuple:
    """Forward by the permutation; backward, as MXNet 1.9.1 does, the input's dims from a known output's."""
    data = in_shapes[0]
    out = out_shapes[0] if out_shapes else None
    if data is None:
        if out is None:
            return in_shapes, [None], aux_shapes
        ndim = len(out)
    else:
        ndim = len(data)
    if data is not None and out is not None and len(out) != ndim:
        raise ShapeError(f"transpose: the output has {len(out)} axes, the input {tuple(data)} has {ndim}")
    axes = _transpose_axes(attrs, ndim)
    if out is not None:
        from_out = [0] * ndim
        for i, a in enumerate(axes):
            from_out[a] = out[i]
        data = tuple(from_out) if data is None else tuple(d or o for d, o in zip(data, from_out, strict=True))
    return [data], [tuple(data[a] for a in axes)], aux_shapes


register(
    OpDef(
        "transpose",
        _transpose_forward,
        params={"axes": Param(parse_shape, (), "the permutation; empty reverses the axes")},
        infer_shape=_transpose_infer,
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
        infer_shape=unary_infer(lambda attrs, s: tuple(s[a] for a in _swap_axes(attrs, len(s)))),
        gradient=lambda F, attrs, inputs, outputs, og: [F.SwapAxis(og[0], dim1=attrs["dim1"], dim2=attrs["dim2"])],
        aliases=("swapaxes",),
        doc="Swap two axes.",
    )
)


def _expand_dims_inverse(attrs: dict, out: tuple[int, ...]) -> tuple[int, ...]:
    """The input shape of a known output: the inserted axis taken out again."""
    axis = normalize_axis("expand_dims", attrs["axis"], len(out) - 1, extra=1)
    return out[:axis] + out[axis + 1 :]


def _expand_dims_shape(attrs: dict, s: tuple) -> tuple:
    axis = normalize_axis("expand_dims", attrs["axis"], len(s), extra=1)
    return s[:axis] + (1,) + s[axis:]


register(
    OpDef(
        "expand_dims",
        _reshape_forward,
        inplace=RESHAPED_IN_PLACE,
        params={"axis": Param(parse_int, REQUIRED, "where the new axis goes (-ndim-1..ndim)")},
        infer_shape=unary_infer(_expand_dims_shape, _expand_dims_inverse),
        gradient=_like_gradient,
        doc="Insert an axis of length 1 at ``axis``.",
    )
)


def _parse_squeeze_axis(value: Any) -> int | tuple[int, ...] | None:
    """As :func:`parse_axis`, except that an empty tuple names no axis: MXNet's ``squeeze(axis=())``
    returns the input's shape (where a reduction's ``axis=()`` means every axis)."""
    if isinstance(value, str):
        empty = value.replace(" ", "") in ("()", "[]")
    else:
        empty = isinstance(value, (tuple, list)) and len(value) == 0
    return () if empty else parse_axis(value)


def _squeeze_shape(attrs: dict, s: tuple) -> tuple:
    axis = attrs["axis"]
    if axis is None:
        drop = {i for i, n in enumerate(s) if n == 1}
    else:
        drop = set(as_axes("squeeze", axis, len(s)))
        for i in sorted(drop):
            if s[i] != 1:
                raise ShapeError(f"squeeze: axis {i} of the input {tuple(s)} has size {s[i]}, expected 1")
    kept = tuple(n for i, n in enumerate(s) if i not in drop)
    return kept or (1,)  # as MXNet: squeezing every axis leaves one of length 1


register(
    OpDef(
        "squeeze",
        _reshape_forward,
        inplace=RESHAPED_IN_PLACE,
        params={"axis": Param(_parse_squeeze_axis, None, "the axes of length 1 to remove (None: all of them)")},
        infer_shape=unary_infer(_squeeze_shape),
        gradient=_like_gradient,
        doc="Remove axes of length 1 (MXNet 1.x); removing all of them leaves shape (1,).",
    )
)


# -- the shape as data: int64 arrays, no gradient (as MXNet) -----------------------------------------
def _shape_array_forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    # a constant of the device: an upload at every call could not be captured into a CUDA graph
    shape = tuple(inputs[0].shape)
    outputs[0][...] = kctx.backend.constant(("shape_array", shape), lambda: np.array(shape), outputs[0].dtype)


def _size_array_forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    outputs[0][...] = inputs[0].size


for _name, _forward, _out_shape, _what in (
    ("shape_array", _shape_array_forward, lambda s: (len(s),), "the shape of ``data``"),
    ("size_array", _size_array_forward, lambda s: (1,), "the number of elements of ``data``"),
):
    register(
        OpDef(
            _name,
            _forward,
            infer_shape=lambda attrs, s, a, _out_shape=_out_shape: (s, [None if s[0] is None else _out_shape(s[0])], a),
            infer_type=lambda attrs, t, a: (t, ["int64"], a),
            gradient=lambda F, attrs, inputs, outputs, og: [None],
            doc=f"A 1-D int64 array holding {_what}.",
        )
    )
