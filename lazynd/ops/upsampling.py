"""UpSampling: nearest (one or more NCHW inputs repeated to a common size) and bilinear.

Bilinear UpSampling is a Deconvolution with a learned weight, one filter per channel, and
runs Deconvolution's kernels (forward and gradients) on both devices.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from ..errors import OperatorError, ShapeError
from .params import Param, enum, parse_int, parse_workspace
from .registry import OpDef, get, merge_shape, register, variadic_input_names

# -- UpSampling (nearest) ------------------------------------------------------------------------
UPSAMPLING_PARAMS = {
    "scale": Param(parse_int, doc="upsampling factor of the first input"),
    "sample_type": Param(enum("nearest", "bilinear"), "nearest", "interpolation"),
    "num_filter": Param(parse_int, 0, "bilinear: the data's channel count (nearest: unused)"),
    "multi_input_mode": Param(enum("concat", "sum"), "concat", "how several inputs are combined"),
    "workspace": Param(parse_workspace, 512, "accepted for MXNet compatibility"),
}


def _factors(attrs: dict, shapes: list) -> list[int]:
    if attrs["scale"] < 1:
        raise OperatorError(f"UpSampling: scale must be a positive integer, got {attrs['scale']}")
    for shape in shapes:
        if len(shape) != 4 or 0 in shape[2:]:
            raise ShapeError(
                f"UpSampling: inputs must be 4-D (batch, channel, height, width) with a height and a width, "
                f"got shape {tuple(shape)}"
            )
    target = shapes[0][2] * attrs["scale"]
    target_width = shapes[0][3] * attrs["scale"]
    factors = []
    for index, shape in enumerate(shapes):
        if target % shape[2] or (target // shape[2]) * shape[3] != target_width:
            # MXNet 1.9.1 passes such an input at shape inference and fails in its kernel
            raise ShapeError(
                f"UpSampling: input {index} of shape {tuple(shape)} cannot be scaled by one integer factor on "
                f"both axes to {target}x{target_width} (input 0's height and width times scale={attrs['scale']})"
            )
        factors.append(target // shape[2])
    return factors


def _upsample_forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    xp = kctx.xp
    factors = _factors(attrs, [x.shape for x in inputs])
    out = outputs[0]
    if attrs["multi_input_mode"] == "sum":
        out[...] = 0
    begin = 0
    for x, f in zip(inputs, factors, strict=True):
        big = xp.repeat(xp.repeat(x, f, axis=2), f, axis=3)
        if attrs["multi_input_mode"] == "sum":
            out += big
        else:
            out[:, begin : begin + x.shape[1]] = big
            begin += x.shape[1]


def _upsample_infer(attrs: dict, in_shapes: list, aux_shapes: list) -> tuple[list, list, list]:
    if any(s is None for s in in_shapes) or not in_shapes:
        return in_shapes, [None], aux_shapes
    _factors(attrs, in_shapes)
    # concat stacks the inputs' channels, sum adds them: both need one batch size, sum one channel count
    kept = 2 if attrs["multi_input_mode"] == "sum" else 1
    if any(tuple(x[:kept]) != tuple(in_shapes[0][:kept]) for x in in_shapes):
        raise ShapeError(
            f"UpSampling: multi_input_mode={attrs['multi_input_mode']!r} needs inputs of one "
            f"{'batch size and channel count' if kept == 2 else 'batch size'}, got shapes {[tuple(x) for x in in_shapes]}"
        )
    n, _, h, w = in_shapes[0]
    s = attrs["scale"]
    channels = in_shapes[0][1] if attrs["multi_input_mode"] == "sum" else sum(x[1] for x in in_shapes)
    return in_shapes, [(n, channels, h * s, w * s)], aux_shapes


def _upsample_gradient(F: Any, attrs: dict, inputs: list, outputs: list, out_grads: list) -> list:
    # input k's channels start after those of the inputs before it (concat), known only when shapes are
    mode = attrs["multi_input_mode"]
    return [
        F._backward_UpSampling(out_grads[0], *inputs, index=k, multi_input_mode=mode, num_args=len(inputs) + 1)
        for k in range(len(inputs))
    ]


def _upsample_backward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    dy, likes = inputs[0], inputs[1:]
    index = attrs["index"]
    n, c, h, w = likes[index].shape
    begin = 0 if attrs["multi_input_mode"] == "sum" else sum(x.shape[1] for x in likes[:index])
    f = dy.shape[2] // h
    part = dy[:, begin : begin + c]
    outputs[0][...] = part.reshape(n, c, h, f, w, f).sum(axis=(3, 5))


def _upsample_backward_infer(attrs: dict, in_shapes: list, aux_shapes: list) -> tuple[list, list, list]:
    return in_shapes, [in_shapes[1 + attrs["index"]]], aux_shapes


# -- UpSampling (bilinear) -----------------------------------------------------------------------
BILINEAR_WEIGHT_INIT = '["bilinear", {}]'  # the weight's __init__ attribute, as MXNet sets it


def _is_bilinear(attrs: dict) -> bool:
    return attrs["sample_type"] == "bilinear"


@functools.lru_cache(maxsize=64)
def _deconvolution_of(scale: int, channels: int) -> dict[str, Any]:
    """Deconvolution's parameters for bilinear UpSampling by ``scale`` of ``channels`` channels: one
    filter per channel, kernel ``2 * scale - scale % 2``, stride ``scale``, pad ``ceil((scale - 1) / 2)``,
    no bias, so each side grows ``scale`` times.  Cached and shared: callers must not change it."""
    kernel, pad = 2 * scale - scale % 2, scale // 2
    given = {"kernel": (kernel, kernel), "stride": (scale, scale), "pad": (pad, pad)}
    return get("Deconvolution").parse({**given, "num_filter": channels, "num_group": channels, "no_bias": True})


def _bilinear_deconvolution(attrs: dict) -> dict[str, Any]:
    if attrs["scale"] < 1:
        raise OperatorError(f"UpSampling: scale must be a positive integer, got {attrs['scale']}")
    if attrs["num_filter"] < 1:
        raise OperatorError(
            f"UpSampling: sample_type='bilinear' needs num_filter, the data's channel count, got {attrs['num_filter']}"
        )
    return _deconvolution_of(attrs["scale"], attrs["num_filter"])


def _device_kernel(kctx: Any, op_name: str) -> Any:
    """The kernel of the registered operator ``op_name`` for the device ``kctx`` runs on."""
    op = get(op_name)
    return op.forward if kctx.xp is np or op.forward_gpu is None else op.forward_gpu


def _bilinear_infer(attrs: dict, in_shapes: list, aux_shapes: list) -> tuple[list, list, list]:
    deconvolution = _bilinear_deconvolution(attrs)
    channels, data = attrs["num_filter"], in_shapes[0]
    if data is not None:
        _factors(attrs, [data])
        if data[1] and data[1] != channels:
            raise ShapeError(
                f"UpSampling: sample_type='bilinear' with num_filter={channels} needs data of {channels} channels, "
                f"got shape {tuple(data)}"
            )
    in_shapes[1] = merge_shape("UpSampling", "weight", in_shapes[1], (channels, 1, *deconvolution["kernel"]))
    if data is None:
        return in_shapes, [None], aux_shapes
    n, _, h, w = data
    return in_shapes, [(n, channels, h * attrs["scale"], w * attrs["scale"])], aux_shapes


def _upsample_inputs(attrs: dict) -> list[str]:
    return ["data", "weight"] if _is_bilinear(attrs) else variadic_input_names(attrs)


def _upsample(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    if _is_bilinear(attrs):
        _device_kernel(kctx, "Deconvolution")(kctx, _bilinear_deconvolution(attrs), inputs, outputs, aux)
    else:
        _upsample_forward(kctx, attrs, inputs, outputs, aux)


def _upsample_shapes(attrs: dict, in_shapes: list, aux_shapes: list) -> tuple[list, list, list]:
    return (_bilinear_infer if _is_bilinear(attrs) else _upsample_infer)(attrs, in_shapes, aux_shapes)


def _upsample_gradients(F: Any, attrs: dict, inputs: list, outputs: list, out_grads: list) -> list:
    if _is_bilinear(attrs):  # the data's and the weight's gradients
        return list(F._backward_Deconvolution(out_grads[0], inputs[0], inputs[1], **_bilinear_deconvolution(attrs)))
    return _upsample_gradient(F, attrs, inputs, outputs, out_grads)


register(
    OpDef(
        "UpSampling",
        _upsample,
        variadic=True,
        inputs=_upsample_inputs,
        input_attrs=lambda attrs: {"weight": {"__init__": BILINEAR_WEIGHT_INIT}} if _is_bilinear(attrs) else {},
        params=dict(UPSAMPLING_PARAMS),
        infer_shape=_upsample_shapes,
        gradient=_upsample_gradients,
        # MXNet refuses integers for both; nearest copies elements, so lazynd keeps them there (as max pooling)
        float_data=_is_bilinear,
        doc="Upsampling of NCHW inputs: nearest-neighbour, of one or more inputs to a common size "
        "(inputs arg0, arg1...), or bilinear, a Deconvolution of one learned filter per channel "
        "(inputs data and weight, of shape (num_filter, 1, 2 * scale - scale % 2, same)).",
    )
)
register(
    OpDef(
        "_backward_UpSampling",
        _upsample_backward,
        variadic=True,
        params={
            "index": Param(parse_int, 0, "which of UpSampling's inputs (after out_grad) this is the gradient of"),
            "multi_input_mode": UPSAMPLING_PARAMS["multi_input_mode"],
        },
        infer_shape=_upsample_backward_infer,
        infer_type=lambda attrs, t, a: (t, [t[0]], a),
        doc="Gradient of nearest UpSampling for one of its inputs.",
    )
)
