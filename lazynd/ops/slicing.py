"""Slicing: ``slice`` (alias ``crop``), ``slice_axis`` and ``slice_like`` (MXNet semantics and
defaults), with their backward operators, which place the output gradient in a zero array of the
input's shape.

A region that selects nothing on an axis is a :class:`~lazynd.errors.ShapeError` naming the
operator.  ``Crop`` and ``_crop_assign`` (:mod:`lazynd.ops.crop`) reuse ``slice``'s parameters
and index rule.
"""

from __future__ import annotations

from typing import Any

from ..errors import OperatorError, ShapeError
from .params import REQUIRED, Param, describes, optional, parse_int, parse_shape
from .registry import OpDef, dim_is_known, register
from .shape import normalize_axis


# -- slice, slice_axis ---------------------------------------------------------------------------------
@describes("Shape(tuple)")
def _parse_optional_ints(value: Any) -> tuple:
    from .params import _literal

    value = _literal(value)
    if value is None:
        return ()
    if not isinstance(value, (list, tuple)):
        value = (value,)
    return tuple(None if v is None else parse_int(v) for v in value)


def _slice_index(attrs: dict, shape: tuple) -> tuple[slice, ...]:
    begin, end, step = attrs["begin"], attrs["end"], attrs["step"] or (None,) * len(attrs["begin"])
    if len(begin) != len(end) or len(step) != len(begin) or len(begin) > len(shape):
        raise ShapeError(
            f"slice: begin={begin}, end={end}, step={attrs['step']} must have one entry per sliced axis "
            f"(at most {len(shape)} for input {tuple(shape)})"
        )
    index = []
    for axis, (b, e, s) in enumerate(zip(begin, end, step, strict=True)):
        if s == 0:
            raise OperatorError(f"slice: step on axis {axis} must not be 0")
        piece = slice(b, e, s)
        if shape[axis] and len(range(*piece.indices(shape[axis]))) == 0:
            raise ShapeError(
                f"slice: begin={b}, end={e}, step={s} selects nothing on axis {axis} of size {shape[axis]}"
            )
        index.append(piece)
    return tuple(index)


def _slice_shape(attrs: dict, shape: tuple) -> tuple:
    index = _slice_index(attrs, shape)
    sliced = tuple(len(range(*p.indices(n))) if n else 0 for p, n in zip(index, shape, strict=False))
    return sliced + tuple(shape[len(index) :])


def _slice_axis_index(attrs: dict, shape: tuple) -> tuple[slice, ...]:
    axis = normalize_axis("slice_axis", attrs["axis"], len(shape))
    piece = slice(attrs["begin"], attrs["end"])
    if shape[axis] and len(range(*piece.indices(shape[axis]))) == 0:
        raise ShapeError(
            f"slice_axis: begin={attrs['begin']}, end={attrs['end']} selects nothing on axis {axis} of size {shape[axis]}"
        )
    return (slice(None),) * axis + (piece,)


def _slice_axis_shape(attrs: dict, shape: tuple) -> tuple:
    axis = normalize_axis("slice_axis", attrs["axis"], len(shape))
    _slice_axis_index(attrs, shape)
    size = len(range(*slice(attrs["begin"], attrs["end"]).indices(shape[axis]))) if shape[axis] else 0
    return shape[:axis] + (size,) + shape[axis + 1 :]


_SLICE_PARAMS = {
    "begin": Param(_parse_optional_ints, REQUIRED, "start per axis (None = from the start)"),
    "end": Param(_parse_optional_ints, REQUIRED, "stop per axis (None = to the end)"),
    "step": Param(_parse_optional_ints, (), "step per axis (empty = 1)"),
}
_SLICE_AXIS_PARAMS = {
    "axis": Param(parse_int, REQUIRED, "the axis to slice"),
    "begin": Param(parse_int, REQUIRED, "start (negative counts from the end)"),
    "end": Param(optional(parse_int), REQUIRED, "stop (None = to the end)"),
}


def _register_slice(name: str, index_of: Any, shape_of: Any, params: dict, aliases: tuple) -> None:
    def forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
        outputs[0][...] = inputs[0][index_of(attrs, inputs[0].shape)]

    def backward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
        out = outputs[0]
        out[...] = 0
        out[index_of(attrs, out.shape)] = inputs[0]

    def infer(attrs: dict, in_shapes: list, aux_shapes: list) -> tuple[list, list, list]:
        data = in_shapes[0]
        return in_shapes, [None if data is None else shape_of(attrs, tuple(data))], aux_shapes

    register(
        OpDef(
            name,
            forward,
            params=dict(params),
            infer_shape=infer,
            gradient=lambda F, attrs, inputs, outputs, og: [getattr(F, f"_backward_{name}")(og[0], inputs[0], **attrs)],
            aliases=aliases,
            doc=f"Take a contiguous or strided region ({name}).",
        )
    )
    register(
        OpDef(
            f"_backward_{name}",
            backward,
            inputs=("out_grad", "like"),
            shape_only_inputs=(1,),
            params=dict(params),
            infer_shape=lambda attrs, s, a: (s, [s[1]], a),
            infer_type=lambda attrs, t, a: (t, [t[0]], a),
            doc=f"Gradient of ``{name}``: the output gradient placed in a zero array of the input's shape.",
        )
    )


_register_slice("slice", _slice_index, _slice_shape, _SLICE_PARAMS, ("crop",))
_register_slice("slice_axis", _slice_axis_index, _slice_axis_shape, _SLICE_AXIS_PARAMS, ())


# -- slice_like: the leading corner of data as large as shape_like on the given axes -------------------
def _slice_like_shape(attrs: dict, data: tuple, like: tuple) -> tuple:
    axes = attrs["axes"]
    if not axes:  # every axis: the two inputs must have as many
        if len(like) != len(data):
            raise ShapeError(
                f"slice_like: with no axes every axis is sliced, so shape_like {tuple(like)} needs "
                f"as many dims as data {tuple(data)}"
            )
        axes = range(len(data))
    sliced = list(data)
    for axis in axes:
        i = normalize_axis("slice_like", axis, len(data), "axes")
        if i >= len(like):
            raise ShapeError(f"slice_like: axis {axis} is out of range for shape_like {tuple(like)}")
        if dim_is_known(data[i]) and like[i] > data[i]:
            raise ShapeError(
                f"slice_like: axis {i} of shape_like {tuple(like)} has size {like[i]}, more than data's "
                f"{data[i]} ({tuple(data)})"
            )
        sliced[i] = like[i]
    return tuple(sliced)


def _corner(shape: tuple) -> tuple[slice, ...]:
    return tuple(slice(0, n) for n in shape)


def _slice_like_forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    outputs[0][...] = inputs[0][_corner(outputs[0].shape)]


def _slice_like_infer(attrs: dict, in_shapes: list, aux_shapes: list) -> tuple[list, list, list]:
    data, like = in_shapes
    if data is None or like is None:
        return in_shapes, [None], aux_shapes
    return in_shapes, [_slice_like_shape(attrs, tuple(data), tuple(like))], aux_shapes


def _backward_slice_like_forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    grad, out = inputs[0], outputs[0]
    out[...] = 0
    out[_corner(grad.shape)] = grad


register(
    OpDef(
        "slice_like",
        _slice_like_forward,
        inputs=("data", "shape_like"),
        shape_only_inputs=(1,),
        params={"axes": Param(parse_shape, (), "the axes to slice (empty: all of them; one int: that axis)")},
        infer_shape=_slice_like_infer,
        infer_type=lambda attrs, t, a: (t, [t[0]], a),
        # shape_like gives only its shape: no gradient reaches it
        gradient=lambda F, attrs, inputs, outputs, og: [F._backward_slice_like(og[0], inputs[0]), None],
        doc="The leading part of ``data`` as large as ``shape_like`` on ``axes`` (all axes when empty).",
    )
)
register(
    OpDef(
        "_backward_slice_like",
        _backward_slice_like_forward,
        inputs=("out_grad", "like"),
        shape_only_inputs=(1,),
        infer_shape=lambda attrs, s, a: (s, [s[1]], a),
        infer_type=lambda attrs, t, a: (t, [t[0]], a),
        doc="Gradient of ``slice_like``: the output gradient in the leading corner of a zero array of data's shape.",
    )
)
