"""MXNet 1.x's ``mx.nd.image.normalize`` / ``mx.sym.image.normalize`` (operator ``_image_normalize``).

The data is one image ``(C, H, W)`` or a batch ``(N, C, H, W)``; each channel ``c`` becomes
``(data - mean[c]) / std[c]``.  ``mean`` and ``std`` hold one value for every channel, or a value
per channel (MXNet's defaults hold four, of which an image uses the first ``C``).  The gradient is
the output gradient divided by ``std``, written with this operator itself (a mean of zero).
The kernel is written once over ``kctx.xp``, so NumPy and CuPy share it.
"""

from __future__ import annotations

from typing import Any

from ..errors import ShapeError
from .params import Param, parse_float_tuple
from .registry import OpDef, register

_OP = "_image_normalize"


def _per_channel(name: str, values: tuple[float, ...], channels: int) -> tuple[float, ...]:
    """``values`` for each of ``channels`` channels: one value for all, or the first ``channels``."""
    if len(values) == 1:
        return values * channels
    if len(values) < channels:
        raise ShapeError(f"{_OP}: {name} has {len(values)} values, expected 1 or one per channel ({channels})")
    return values[:channels]


def _normalize_infer(attrs: dict, in_shapes: list, aux_shapes: list) -> tuple[list, list, list]:
    data = in_shapes[0]
    if data is None:
        return in_shapes, [None], aux_shapes
    if len(data) not in (3, 4):
        raise ShapeError(f"{_OP}: shape of 'data' is {tuple(data)}, expected (C, H, W) or (N, C, H, W)")
    channels = data[-3]
    if channels:
        _per_channel("mean", attrs["mean"], channels)
        _per_channel("std", attrs["std"], channels)
    return in_shapes, [tuple(data)], aux_shapes


def _normalize_forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    x, out = inputs[0], outputs[0]
    channels = x.shape[-3]
    column = (channels,) + (1, 1)  # broadcasts over (H, W) and, for a batch, over N
    if x.dtype.kind != "f":  # integer images: computed in float32, truncated into their dtype (as MXNet)
        out[...] = _normalized(kctx, x.astype("float32"), attrs, column)
        return
    out[...] = _normalized(kctx, x, attrs, column)


def _normalized(kctx: Any, x: Any, attrs: dict, column: tuple) -> Any:
    """``(x - mean[c]) / std[c]`` in the float dtype of ``x``; ``column`` broadcasts a channel's value.
    The per-channel values are the backend's constants: made once, not copied to a device per call."""
    channels = column[0]
    mean = kctx.backend.constant(
        ("image_normalize mean", attrs["mean"], channels),
        lambda: _per_channel("mean", attrs["mean"], channels),
        x.dtype,
    )
    std = kctx.backend.constant(
        ("image_normalize std", attrs["std"], channels), lambda: _per_channel("std", attrs["std"], channels), x.dtype
    )
    return (x - mean.reshape(column)) / std.reshape(column)


def _normalize_gradient(F: Any, attrs: dict, inputs: list, outputs: list, out_grads: list) -> list:
    return [F._image_normalize(out_grads[0], mean=(0.0,), std=attrs["std"])]


register(
    OpDef(
        _OP,
        _normalize_forward,
        params={
            "mean": Param(parse_float_tuple, (0.0, 0.0, 0.0, 0.0), "per-channel mean (one value: every channel)"),
            "std": Param(parse_float_tuple, (1.0, 1.0, 1.0, 1.0), "per-channel standard deviation"),
        },
        infer_shape=_normalize_infer,
        gradient=_normalize_gradient,
        inplace=((0, 0),),
        takes_bool=False,
        doc="``(data - mean[c]) / std[c]`` for each channel ``c`` of (C, H, W) or (N, C, H, W) images.",
    )
)
