"""``MultiBoxPrior`` (``mx.nd.contrib.MultiBoxPrior``, SSD's anchor boxes), as in MXNet 1.9.1.

For a feature map 'data' (batch, channels, height, width) it gives, at every cell (row-major),
``len(sizes) + len(ratios) - 1`` corner boxes, as fractions of the image: one per size with the
first ratio, then one per further ratio with the first size.  A box of size ``s`` and ratio
``r`` is ``s * height / width * sqrt(r)`` wide and ``s / sqrt(r)`` high, centred at
``((col + offsets[1]) * steps[1], (row + offsets[0]) * steps[0])``; steps of -1 (any value
<= 0) are one cell (``1 / width``, ``1 / height``), and the two are given together or not at
all.  Output (1, height * width * boxes, 4), clipped to [0, 1] with ``clip``.  The values are computed in float32 in MXNet's order of operations; only the data's
shape is read, and the gradient is zero.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import OperatorError, ShapeError
from .params import Param, parse_bool, parse_float_tuple
from .registry import OpDef, register, zero_gradient

NAME = "_contrib_MultiBoxPrior"


def _pair(attrs: dict, name: str) -> tuple[float, float]:
    values = attrs[name]
    if len(values) != 2:
        raise ShapeError(f"{NAME}: '{name}' must hold 2 values (y, x), got {values}")
    return values[0], values[1]


def _steps(attrs: dict) -> tuple[float, float]:
    """The (y, x) steps, both given (> 0) or both left to the map's size (<= 0)."""
    step_y, step_x = _pair(attrs, "steps")
    if (step_y > 0) != (step_x > 0):  # MXNet 1.9.1: "Must specify both step_y and step_x"
        raise OperatorError(
            f"{NAME}: 'steps' must give both steps (y, x) or neither (a value <= 0), got {attrs['steps']}"
        )
    return step_y, step_x


def _boxes_per_cell(attrs: dict) -> int:
    for name in ("sizes", "ratios"):
        if not attrs[name]:
            raise ShapeError(f"{NAME}: '{name}' must hold at least one value, got {attrs[name]}")
        if any(v <= 0 for v in attrs[name]):
            raise ShapeError(f"{NAME}: '{name}' must be positive, got {attrs[name]}")
    return len(attrs["sizes"]) + len(attrs["ratios"]) - 1


def _infer_shape(attrs: dict, in_shapes: list, aux_shapes: list) -> tuple[list, list, list]:
    data = in_shapes[0]
    per_cell = _boxes_per_cell(attrs)
    _steps(attrs), _pair(attrs, "offsets")
    if data is None:
        return list(in_shapes), [None], list(aux_shapes)
    if len(data) != 4:
        raise ShapeError(f"{NAME}: 'data' must be 4-D (batch, channels, height, width), got shape {tuple(data)}")
    height, width = data[2], data[3]
    out = (1, height * width * per_cell, 4) if height and width else None
    return list(in_shapes), [out], list(aux_shapes)


def prior_boxes(attrs: dict, height: int, width: int) -> np.ndarray:
    """The anchors (height * width * boxes, 4) of a feature map of ``height`` x ``width``, float32."""
    f = np.float32
    given_y, given_x = _steps(attrs)
    offset_y, offset_x = _pair(attrs, "offsets")
    step_y, step_x = (f(given_y), f(given_x)) if given_y > 0 else (f(1) / f(height), f(1) / f(width))
    center_y = (np.arange(height, dtype=f) + f(offset_y)) * step_y
    center_x = (np.arange(width, dtype=f) + f(offset_x)) * step_x
    sizes, ratios = attrs["sizes"], attrs["ratios"]
    shapes = [(size, ratios[0]) for size in sizes] + [(sizes[0], ratio) for ratio in ratios[1:]]
    halves = []
    for size, ratio in shapes:
        root = np.sqrt(f(ratio))
        halves.append((f(size) * f(height) / f(width) * root / f(2), f(size) / root / f(2)))
    half = np.array(halves, dtype=f)  # (boxes, 2): half width, half height
    cy = np.broadcast_to(center_y[:, None, None], (height, width, len(shapes)))
    cx = np.broadcast_to(center_x[None, :, None], (height, width, len(shapes)))
    boxes = np.stack([cx - half[:, 0], cy - half[:, 1], cx + half[:, 0], cy + half[:, 1]], axis=-1)
    if attrs["clip"]:
        boxes = np.clip(boxes, f(0), f(1))
    return boxes.reshape(-1, 4)


def _forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    height, width = inputs[0].shape[2:]
    boxes = prior_boxes(attrs, height, width).reshape(outputs[0].shape)
    outputs[0][...] = boxes if kctx.xp is np else kctx.xp.asarray(boxes)


register(
    OpDef(
        NAME,
        _forward,
        params={
            "sizes": Param(parse_float_tuple, (1.0,), "box sizes, fractions of the image"),
            "ratios": Param(parse_float_tuple, (1.0,), "box width / height ratios"),
            "clip": Param(parse_bool, False, "clip the boxes to [0, 1]"),
            "steps": Param(parse_float_tuple, (-1.0, -1.0), "the distance between cell centres (y, x); -1: one cell"),
            "offsets": Param(parse_float_tuple, (0.5, 0.5), "the centre's offset in a cell (y, x), in steps"),
        },
        infer_shape=_infer_shape,
        infer_type=lambda attrs, in_types, aux_types: (list(in_types), [in_types[0] or "float32"], list(aux_types)),
        gradient=zero_gradient,
        float_data=True,  # the anchors are fractions of the image: integer ones would all be 0 (MXNet refuses them)
        shape_only_inputs=(0,),
        doc=__doc__ or "",
    )
)
