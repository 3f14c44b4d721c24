"""MXNet 1.x's image layout operators of ``mx.nd.image`` / ``mx.sym.image``: ``to_tensor`` and the flips.

Images are ``(H, W, C)`` or a batch ``(N, H, W, C)``, channels last as decoded by ``mx.image``.

- ``_image_to_tensor`` moves the channels first and scales to ``[0, 1]``: ``(C, H, W)`` or
  ``(N, C, H, W)`` in float32, ``data / 255`` (no clipping: a float 300 gives 1.18, as MXNet).
- ``_image_flip_left_right`` / ``_image_flip_top_bottom`` reverse the width / height axis.
- ``_image_crop`` keeps the window of ``width`` x ``height`` pixels whose top left corner is (x, y).
- ``_image_random_flip_left_right`` / ``_image_random_flip_top_bottom`` do so with probability 0.5,
  one draw per call. They are augmentations: a draw is not kept for a backward pass, so they have
  no gradient rule (MXNet 1.9.1 passed the gradient through unflipped; ours says so instead).

MXNet 1.9.1 takes only ``(H, W, C)`` images with 1 or 3 channels in the flips; these take a batch
and any channel count too. Each kernel is written once over ``kctx.xp`` for NumPy and CuPy.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import OperatorError, ShapeError
from .params import Param, parse_int
from .registry import OpDef, register


def _image_shape(op: str, data: tuple | None) -> None:
    """Refuse a ``data`` shape that is neither ``(H, W, C)`` nor ``(N, H, W, C)``."""
    if data is not None and len(data) not in (3, 4):
        raise ShapeError(f"{op}: shape of 'data' is {tuple(data)}, expected (H, W, C) or (N, H, W, C)")


def _to_tensor_infer(attrs: dict, in_shapes: list, aux_shapes: list) -> tuple[list, list, list]:
    data = in_shapes[0]
    _image_shape("_image_to_tensor", data)
    if data is None:
        return in_shapes, [None], aux_shapes
    *batch, height, width, channels = data
    return in_shapes, [(*batch, channels, height, width)], aux_shapes


def _to_tensor_forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    outputs[0][...] = kctx.xp.moveaxis(inputs[0], -1, -3) / np.float32(255.0)


def _to_tensor_backward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    # d(out)/d(data) is 1/255, with the channel axis moved back last
    outputs[0][...] = kctx.xp.moveaxis(inputs[0], -3, -1) * (1.0 / 255.0)


def _to_tensor_backward_infer(attrs: dict, in_shapes: list, aux_shapes: list) -> tuple[list, list, list]:
    head = in_shapes[0]
    if head is None:
        return in_shapes, [None], aux_shapes
    *batch, channels, height, width = head
    return in_shapes, [(*batch, height, width, channels)], aux_shapes


register(
    OpDef(
        "_image_to_tensor",
        _to_tensor_forward,
        infer_shape=_to_tensor_infer,
        infer_type=lambda attrs, in_types, aux_types: (in_types, ["float32"], aux_types),
        gradient=lambda F, attrs, inputs, outputs, out_grads: [F._backward_image_to_tensor(out_grads[0])],
        takes_bool=False,
        doc="(H, W, C) or (N, H, W, C) images to float32 (C, H, W) or (N, C, H, W) tensors in [0, 1].",
    )
)
register(
    OpDef(
        "_backward_image_to_tensor",
        _to_tensor_backward,
        inputs=("out_grad",),
        infer_shape=_to_tensor_backward_infer,
        doc="Gradient of _image_to_tensor: the head over 255, channels moved back last.",
    )
)


def _same_image_infer(op: str) -> Any:
    def infer(attrs: dict, in_shapes: list, aux_shapes: list) -> tuple[list, list, list]:
        _image_shape(op, in_shapes[0])
        return in_shapes, [in_shapes[0]], aux_shapes

    return infer


def _axis_from_last(name: str) -> int:
    """The image axis a flip reverses, counted from the end: width is -2, height -3."""
    return -2 if name.endswith("left_right") else -3


def _register_flip(name: str) -> None:
    op, axis = f"_image_flip_{name}", _axis_from_last(name)

    def forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
        outputs[0][...] = kctx.xp.flip(inputs[0], axis=axis)

    def gradient(F: Any, attrs: dict, inputs: list, outputs: list, out_grads: list) -> list:
        return [getattr(F, op)(out_grads[0])]  # a flip is its own inverse

    register(
        OpDef(
            op,
            forward,
            infer_shape=_same_image_infer(op),
            gradient=gradient,
            doc=f"Reverses the {'width' if axis == -2 else 'height'} axis of (H, W, C) or (N, H, W, C) images.",
        )
    )


def _register_random_flip(name: str) -> None:
    op, axis = f"_image_random_flip_{name}", _axis_from_last(name)

    def forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
        xp, x = kctx.xp, inputs[0]
        coin = kctx.rng.uniform(0.0, 1.0, (1,))  # an array: on a GPU the choice stays on the device
        outputs[0][...] = xp.where(coin < 0.5, xp.flip(x, axis=axis), x)

    register(
        OpDef(
            op,
            forward,
            infer_shape=_same_image_infer(op),
            needs_random=True,
            doc=f"Reverses the {'width' if axis == -2 else 'height'} axis with probability 0.5 (no gradient).",
        )
    )


for _name in ("left_right", "top_bottom"):
    _register_flip(_name)
    _register_random_flip(_name)


def _crop_window(attrs: dict) -> tuple[slice, slice]:
    """The (rows, columns) the crop keeps."""
    return slice(attrs["y"], attrs["y"] + attrs["height"]), slice(attrs["x"], attrs["x"] + attrs["width"])


def _crop_infer(attrs: dict, in_shapes: list, aux_shapes: list) -> tuple[list, list, list]:
    if attrs["width"] <= 0 or attrs["height"] <= 0:
        raise OperatorError(f"_image_crop: width and height must be positive, got {attrs['width']} x {attrs['height']}")
    if attrs["x"] < 0 or attrs["y"] < 0:
        raise OperatorError(f"_image_crop: x and y must be >= 0, got ({attrs['x']}, {attrs['y']})")
    data = in_shapes[0]
    _image_shape("_image_crop", data)
    if data is None:
        return in_shapes, [None], aux_shapes
    *batch, height, width, channels = data
    if attrs["x"] + attrs["width"] > width or attrs["y"] + attrs["height"] > height:
        raise ShapeError(
            f"_image_crop: window {attrs['width']} x {attrs['height']} at ({attrs['x']}, {attrs['y']}) "
            f"leaves the image of width {width} and height {height}"
        )
    return in_shapes, [(*batch, attrs["height"], attrs["width"], channels)], aux_shapes


def _crop_forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    rows, columns = _crop_window(attrs)
    outputs[0][...] = inputs[0][..., rows, columns, :]


def _crop_backward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    rows, columns = _crop_window(attrs)
    grad = outputs[0]
    grad[...] = 0
    grad[..., rows, columns, :] = inputs[0]


_CROP_PARAMS = {
    "x": Param(parse_int, doc="left column of the window"),
    "y": Param(parse_int, doc="top row of the window"),
    "width": Param(parse_int, doc="width of the window"),
    "height": Param(parse_int, doc="height of the window"),
}

register(
    OpDef(
        "_image_crop",
        _crop_forward,
        params=dict(_CROP_PARAMS),
        infer_shape=_crop_infer,
        gradient=lambda F, attrs, inputs, outputs, out_grads: [
            F._backward_image_crop(out_grads[0], inputs[0], **attrs)
        ],
        doc="The width x height window at (x, y) of (H, W, C) or (N, H, W, C) images.",
    )
)
register(
    OpDef(
        "_backward_image_crop",
        _crop_backward,
        inputs=("out_grad", "data"),
        params=dict(_CROP_PARAMS),
        infer_shape=lambda attrs, in_shapes, aux_shapes: (in_shapes, [in_shapes[1]], aux_shapes),
        doc="Gradient of _image_crop: the head inside the window, zero outside.",
    )
)
