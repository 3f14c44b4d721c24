"""Correlation (FlowNet): compare patches of two feature maps at a grid of displacements.

For each output position and each displacement ``(dy, dx) * stride2`` within
``max_displacement``, a ``kernel_size`` patch of ``data1`` and the displaced patch of
``data2`` (both zero-padded by ``pad_size``) are multiplied (``is_multiply``) or
subtracted in absolute value, summed over the patch and the channels, and divided by
``kernel_size**2 * channels``.  Output channel ``(dy + r) * (2r + 1) + (dx + r)`` holds
displacement ``(dy, dx)``, ``r = max_displacement // stride2``.

The kernel loops over displacements and patch offsets and works on whole strided slices
with ``kctx.xp``; the backward operator adds each term's gradient into the same slices.
"""

from __future__ import annotations

import math
from typing import Any

from ..errors import OperatorError, ShapeError
from .params import Param, parse_bool, parse_int
from .registry import OpDef, merge_shape, register

_PARAMS = {
    "kernel_size": Param(parse_int, 1, "side of the compared patches (odd)"),
    "max_displacement": Param(parse_int, 1, "largest displacement compared"),
    "stride1": Param(parse_int, 1, "stride of the output positions in data1"),
    "stride2": Param(parse_int, 1, "stride of the displacements in data2"),
    "pad_size": Param(parse_int, 0, "zero padding of both inputs"),
    "is_multiply": Param(parse_bool, True, "multiply the patches (else sum absolute differences)"),
}


def _geometry(attrs: dict, height: int, width: int) -> tuple[int, int, int]:
    """(output height, output width, displacement radius r) of a (H, W) input."""
    kernel, displacement = attrs["kernel_size"], attrs["max_displacement"]
    stride1, stride2, pad = attrs["stride1"], attrs["stride2"], attrs["pad_size"]
    if kernel < 1 or kernel % 2 == 0:
        raise OperatorError(f"Correlation: kernel_size must be a positive odd number, got {kernel}")
    if stride1 < 1 or stride2 < 1 or displacement < 0 or pad < 0:
        raise OperatorError(
            f"Correlation: strides must be positive and max_displacement, pad_size non-negative, got "
            f"stride1={stride1}, stride2={stride2}, max_displacement={displacement}, pad_size={pad}"
        )
    border = displacement + (kernel - 1) // 2
    out_h = math.ceil((height + 2 * pad - 2 * border) / stride1)
    out_w = math.ceil((width + 2 * pad - 2 * border) / stride1)
    if out_h < 1 or out_w < 1:
        raise ShapeError(
            f"Correlation: a {height}x{width} input padded by {pad} is too small for kernel_size={kernel} "
            f"and max_displacement={displacement}"
        )
    return out_h, out_w, displacement // stride2


def _terms(attrs: dict, shape: tuple) -> Any:
    """Per (output channel, patch offset): the slices of padded data1 and data2 it compares."""
    out_h, out_w, radius = _geometry(attrs, shape[2], shape[3])
    kernel, stride1, stride2 = attrs["kernel_size"], attrs["stride1"], attrs["stride2"]
    top = attrs["max_displacement"]
    side = 2 * radius + 1
    for channel in range(side * side):
        dy, dx = (channel // side - radius) * stride2, (channel % side - radius) * stride2
        for ky in range(kernel):
            for kx in range(kernel):
                y, x = top + ky, top + kx
                first = (
                    slice(y, y + stride1 * (out_h - 1) + 1, stride1),
                    slice(x, x + stride1 * (out_w - 1) + 1, stride1),
                )
                second = (
                    slice(y + dy, y + dy + stride1 * (out_h - 1) + 1, stride1),
                    slice(x + dx, x + dx + stride1 * (out_w - 1) + 1, stride1),
                )
                yield channel, (Ellipsis, *first), (Ellipsis, *second)


def _padded(xp: Any, x: Any, pad: int) -> Any:
    return xp.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad))) if pad else x


def _forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    xp = kctx.xp
    first, second = (_padded(xp, x, attrs["pad_size"]) for x in inputs)
    out = outputs[0]
    out[...] = 0
    for channel, a, b in _terms(attrs, inputs[0].shape):
        if attrs["is_multiply"]:
            out[:, channel] += (first[a] * second[b]).sum(axis=1)
        else:
            out[:, channel] += xp.abs(first[a] - second[b]).sum(axis=1)
    out /= attrs["kernel_size"] ** 2 * inputs[0].shape[1]


def _backward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    xp = kctx.xp
    out_grad, data1, data2 = inputs
    pad = attrs["pad_size"]
    first, second = _padded(xp, data1, pad), _padded(xp, data2, pad)
    grad1, grad2 = xp.zeros(first.shape, first.dtype), xp.zeros(second.shape, second.dtype)
    scale = 1.0 / (attrs["kernel_size"] ** 2 * data1.shape[1])
    for channel, a, b in _terms(attrs, data1.shape):
        dy = out_grad[:, channel : channel + 1] * scale
        if attrs["is_multiply"]:
            grad1[a] += dy * second[b]
            grad2[b] += dy * first[a]
        else:
            # MXNet's sign: +1 where the values tie (the gradient of |x - y| at x == y)
            signed = dy * xp.where(first[a] >= second[b], 1, -1).astype(dy.dtype)
            grad1[a] += signed
            grad2[b] -= signed
    height, width = data1.shape[2], data1.shape[3]
    outputs[0][...] = grad1[:, :, pad : pad + height, pad : pad + width]
    outputs[1][...] = grad2[:, :, pad : pad + height, pad : pad + width]


def _infer(attrs: dict, in_shapes: list, aux_shapes: list) -> tuple[list, list, list]:
    data = in_shapes[0] if in_shapes[0] is not None else in_shapes[1]
    if data is None:
        return in_shapes, [None], aux_shapes
    if len(data) != 4:
        raise ShapeError(f"Correlation: data1 and data2 must be 4-D (N, C, H, W), got {tuple(data)}")
    data1 = merge_shape("Correlation", "data1", in_shapes[0], data)
    data2 = merge_shape("Correlation", "data2", in_shapes[1], data1)
    # data is data1's own shape when that is known, so data1 merged with it has data's dims
    out_h, out_w, radius = _geometry(attrs, data[2], data[3])
    return [data1, data2], [(data[0], (2 * radius + 1) ** 2, out_h, out_w)], aux_shapes


register(
    OpDef(
        "Correlation",
        _forward,
        inputs=("data1", "data2"),
        params=dict(_PARAMS),
        infer_shape=_infer,
        gradient=lambda F, attrs, inputs, outputs, og: list(F._backward_Correlation(og[0], *inputs, **attrs)),
        float_data=True,  # MXNet: "only support floating point types"
        doc="FlowNet's correlation of two (N, C, H, W) feature maps over a grid of displacements.",
    )
)
register(
    OpDef(
        "_backward_Correlation",
        _backward,
        inputs=("out_grad", "data1", "data2"),
        outputs=("data1_grad", "data2_grad"),
        params=dict(_PARAMS),
        infer_shape=lambda attrs, s, a: (s, [s[1], s[2]], a),
        infer_type=lambda attrs, t, a: (t, [t[1], t[1]], a),
        doc="Gradients of Correlation with respect to both inputs.",
    )
)
