"""Cropping: MXNet 0.9's spatial ``Crop`` (to a size or to a second input's size) and the
slice assignments ``_crop_assign`` / ``_crop_assign_scalar`` (``x[begin:end] = y``), with
their backward operators.
"""

from __future__ import annotations

from typing import Any

from ..errors import OperatorError, ShapeError
from .params import Param, parse_bool, parse_float, parse_int, parse_shape
from .registry import OpDef, merge_shape, register
from .slicing import _SLICE_PARAMS, _slice_index, _slice_shape

# -- Crop ----------------------------------------------------------------------------------------------
_CROP_PARAMS = {
    # as MXNet's key_var_num_args: left out, it is the number of input arrays or symbols given by position
    "num_args": Param(
        parse_int, None, "1 (crop to h_w) or 2 (crop to the size of crop_like); default: the inputs given"
    ),
    "offset": Param(parse_shape, (0, 0), "(y, x) of the crop's top-left corner"),
    "h_w": Param(parse_shape, (0, 0), "(height, width) of the crop when num_args is 1"),
    "center_crop": Param(parse_bool, False, "centre the crop (offset is then ignored)"),
}


def _crop_inputs(attrs: dict) -> tuple[str, ...]:
    if attrs["num_args"] not in (None, 1, 2):
        raise OperatorError(f"Crop: num_args must be 1 or 2, got {attrs['num_args']}")
    return ("data", "crop_like") if attrs["num_args"] == 2 else ("data",)


def _crop_window(attrs: dict, data: tuple, like: tuple | None) -> tuple[int, int, int, int]:
    """(top, left, height, width) of the crop in an (N, C, H, W) ``data``."""
    if attrs["num_args"] not in (1, 2):
        raise OperatorError(f"Crop: num_args must be 1 or 2, got {attrs['num_args']}")
    if len(data) != 4:
        raise ShapeError(f"Crop: data must be 4-D (N, C, H, W), got {tuple(data)}")
    if attrs["num_args"] == 2:
        if like is None:
            raise ShapeError("Crop: num_args is 2 but the shape of crop_like is not known")
        if len(like) != 4:
            raise ShapeError(f"Crop: crop_like must be 4-D (N, C, H, W), got {tuple(like)}")
        height, width = like[2], like[3]
    else:
        if len(attrs["h_w"]) != 2:
            raise OperatorError(f"Crop: h_w must be (height, width), got {attrs['h_w']}")
        height, width = attrs["h_w"]
    if center_crop := attrs["center_crop"]:
        top, left = (data[2] - height) // 2, (data[3] - width) // 2
    else:
        if len(attrs["offset"]) != 2:
            raise OperatorError(f"Crop: offset must be (y, x), got {attrs['offset']}")
        top, left = attrs["offset"]
    if height <= 0 or width <= 0 or top < 0 or left < 0 or top + height > data[2] or left + width > data[3]:
        where = "centred" if center_crop else f"at offset ({top}, {left})"
        raise ShapeError(f"Crop: a {height}x{width} crop {where} does not fit in data of shape {tuple(data)}")
    return top, left, height, width


def _crop_region(attrs: dict, data: tuple, like: tuple | None) -> tuple[slice, ...]:
    top, left, height, width = _crop_window(attrs, data, like)
    return (slice(None), slice(None), slice(top, top + height), slice(left, left + width))


def _like_shape(attrs: dict, inputs: list) -> tuple | None:
    return tuple(inputs[1].shape) if attrs["num_args"] == 2 else None


def _crop_forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    outputs[0][...] = inputs[0][_crop_region(attrs, inputs[0].shape, _like_shape(attrs, inputs))]


def _crop_backward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    grad = outputs[0]
    grad[...] = 0
    grad[_crop_region(attrs, grad.shape, _like_shape(attrs, inputs[1:]))] = inputs[0]


def _crop_infer(attrs: dict, in_shapes: list, aux_shapes: list) -> tuple[list, list, list]:
    data = in_shapes[0]
    like = in_shapes[1] if attrs["num_args"] == 2 else None
    if data is None or (attrs["num_args"] == 2 and like is None):
        return in_shapes, [None], aux_shapes
    _, _, height, width = _crop_window(attrs, tuple(data), like)
    return in_shapes, [(data[0], data[1], height, width)], aux_shapes


register(
    OpDef(
        "Crop",
        _crop_forward,
        inputs=_crop_inputs,
        params=dict(_CROP_PARAMS),
        variadic=True,
        infer_shape=_crop_infer,
        gradient=lambda F, attrs, inputs, outputs, og: (
            [F._backward_Crop(og[0], *inputs, **attrs)] + [None] * (len(inputs) - 1)
        ),
        doc="Crop the spatial axes of (N, C, H, W) ``data`` to ``h_w`` or to ``crop_like``'s size, "
        "at ``offset`` or centred.",
    )
)
register(
    OpDef(
        "_backward_Crop",
        _crop_backward,
        inputs=lambda attrs: ("out_grad",) + _crop_inputs(attrs),
        shape_only_inputs=(1, 2),  # data and crop_like: their shapes place the gradient
        params=dict(_CROP_PARAMS),
        infer_shape=lambda attrs, s, a: (s, [s[1]], a),
        infer_type=lambda attrs, t, a: (t, [t[0]], a),
        doc="Gradient of Crop: the output gradient placed in a zero array of the data's shape.",
    )
)


# -- _crop_assign, _crop_assign_scalar -----------------------------------------------------------------
def _region(op: str, attrs: dict, shape: tuple) -> tuple[slice, ...]:
    try:
        return _slice_index(attrs, shape)
    except (ShapeError, OperatorError) as err:
        raise type(err)(f"{op}: {err}") from None


def _assign_forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    lhs, out = inputs[0], outputs[0]
    if out is not lhs:
        out[...] = lhs
    out[_region("_crop_assign", attrs, lhs.shape)] = inputs[1]


def _assign_infer(attrs: dict, in_shapes: list, aux_shapes: list) -> tuple[list, list, list]:
    lhs, rhs = in_shapes
    if lhs is not None:
        _region("_crop_assign", attrs, tuple(lhs))
        rhs = merge_shape("_crop_assign", "rhs", rhs, _slice_shape(attrs, tuple(lhs)))
    return [lhs, rhs], [lhs], aux_shapes


def _assign_gradient(F: Any, attrs: dict, inputs: list, outputs: list, out_grads: list) -> list:
    return [F._crop_assign_scalar(out_grads[0], scalar=0.0, **attrs), F.slice(out_grads[0], **attrs)]


register(
    OpDef(
        "_crop_assign",
        _assign_forward,
        inputs=("lhs", "rhs"),
        params=dict(_SLICE_PARAMS),
        infer_shape=_assign_infer,
        gradient=_assign_gradient,
        inplace=((0, 0),),
        aliases=("_slice_assign",),
        doc="A copy of ``lhs`` with ``lhs[begin:end:step] = rhs``.",
    )
)


def _assign_scalar_forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    data, out = inputs[0], outputs[0]
    if out is not data:
        out[...] = data
    out[_region("_crop_assign_scalar", attrs, data.shape)] = attrs["scalar"]


def _assign_scalar_infer(attrs: dict, in_shapes: list, aux_shapes: list) -> tuple[list, list, list]:
    if in_shapes[0] is not None:
        _region("_crop_assign_scalar", attrs, tuple(in_shapes[0]))
    return in_shapes, [in_shapes[0]], aux_shapes


register(
    OpDef(
        "_crop_assign_scalar",
        _assign_scalar_forward,
        # MXNet's order (its generated functions read them positionally): the scalar first
        params={"scalar": Param(parse_float, 0.0, "the value written into the region"), **_SLICE_PARAMS},
        infer_shape=_assign_scalar_infer,
        gradient=lambda F, attrs, inputs, outputs, og: [F._crop_assign_scalar(og[0], **{**attrs, "scalar": 0.0})],
        inplace=((0, 0),),
        aliases=("_slice_assign_scalar",),
        doc="A copy of ``data`` with ``data[begin:end:step] = scalar``.",
    )
)
