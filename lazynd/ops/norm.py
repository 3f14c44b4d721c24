"""BatchNorm: batch normalisation with moving statistics.

BatchNorm views its data as (outer, C, inner) around ``axis``; its outputs are
(output, mean, var) with only the first visible, so the backward op reuses the
statistics the forward pass used.  As in MXNet, the ``var`` output holds the
inverse standard deviation ``1 / sqrt(variance + eps)`` the data was normalised
with (of the batch in training, of the moving variance otherwise).  With ``fix_gamma`` (the
default) the data is scaled by 1 and, as MXNet's kernels do, 1 is written into gamma at each
forward pass (an input the kernel fills, ``fills``; also under ``autograd.record``): after a forward
pass gamma holds the scale that was used, whatever weight decay did to it.  One difference: an
MXNet 1.9.1 executor bound without any gradient (every ``grad_req`` 'null', a predicting Module)
leaves gamma as it was, where lazynd writes the 1 there too; the outputs are the same.  On the GPU
it runs ``kernels/norm.cu``.

The moving statistics move in the training-mode forward pass, on both devices (and so in
BatchNorm_v1, SyncBatchNorm and BatchNormWithReLU).  MXNet 1.9.1 has no single answer to copy:
on the GPU with cuDNN (its default, ``cudnn_off=False``) it also updates them in the forward pass,
but its CPU kernels (MKL-DNN on or off) and its own GPU kernels (``cudnn_off=True``) update them in
the backward pass, from the statistics the last forward pass saved.  There a training-mode forward
pass with no backward (MC dropout) leaves them, two forward passes and one backward move them once
(with the second batch), and a backward run twice moves them twice.  After one forward and one
backward pass lazynd holds the values MXNet's CPU kernels give.
The normalisations within each sample (InstanceNorm, L2Normalization, LRN) are in
:mod:`~lazynd.ops.sample_norm`.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..backend.cuda.elementwise import unaliased
from ..backend.cuda.sources import dtype_name, launch_config, load_file
from ..errors import OperatorError, ShapeError
from .norm_cpu import batch_moments, batch_norm_backward, scale_shift
from .params import Param, optional, parse_bool, parse_float, parse_int
from .registry import OpDef, merge_shape, register

BN_PARAMS = {
    "eps": Param(parse_float, 1e-3, "added to the variance"),
    "momentum": Param(parse_float, 0.9, "decay of the moving statistics"),
    "fix_gamma": Param(parse_bool, True, "use gamma = 1 (and give it no gradient)"),
    "use_global_stats": Param(parse_bool, False, "normalise with the moving statistics, also in training"),
    "output_mean_var": Param(parse_bool, False, "also return the mean and the inverse std used"),
    "axis": Param(parse_int, 1, "the channel axis"),
    "cudnn_off": Param(parse_bool, False, "accepted for MXNet compatibility"),
    # MXNet's quantisation calibration writes these into the BatchNorm nodes of the symbols it saves
    "min_calib_range": Param(optional(parse_float), None, "quantisation calibration; accepted, unused"),
    "max_calib_range": Param(optional(parse_float), None, "quantisation calibration; accepted, unused"),
}
# the inputs, outputs and auxiliary states of BatchNorm and of the operators that are BatchNorm
# under other names (lazynd/ops/norm_variants.py)
BN_STRUCTURE: dict[str, Any] = {
    "gpu_float16_as_float32": True,
    "inputs": ("data", "gamma", "beta"),
    "outputs": ("output", "mean", "var"),
    "aux": ("moving_mean", "moving_var"),
    "num_visible_outputs": lambda attrs: 3 if attrs["output_mean_var"] else 1,
    "float_data": True,
    "fills": lambda attrs: (1,) if attrs["fix_gamma"] else (),  # 1 is written into gamma
    # as MXNet's, the moving statistics' variables carry their initialisers (written in the JSON)
    "input_attrs": lambda attrs: {
        "moving_mean": {"__init__": '["zero", {}]'},
        "moving_var": {"__init__": '["one", {}]'},
    },
}
_SOURCE = load_file("norm.cu")


def _split(shape: tuple, axis: int, op: str = "BatchNorm") -> tuple[int, int, int]:
    if not -len(shape) <= axis < len(shape):
        raise ShapeError(f"{op}: axis {axis} is out of range for data of shape {tuple(shape)}")
    axis %= len(shape)
    return math.prod(shape[:axis]), shape[axis], math.prod(shape[axis + 1 :])


def _bn_forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    xp = kctx.xp
    data, gamma, beta = inputs
    out, mean, var = outputs
    moving_mean, moving_var = aux
    outer, channels, inner = _split(data.shape, attrs["axis"])
    x = xp.ascontiguousarray(data).reshape(outer, channels, inner)
    if attrs["fix_gamma"]:
        gamma[...] = 1  # as MXNet's kernels: gamma holds the scale that was used
    batch_stats = kctx.is_train and not attrs["use_global_stats"]
    gpu = xp is not np
    if not batch_stats:
        mean[...] = moving_mean
        var[...] = moving_var
    elif gpu:
        # the kernels index every per-channel vector by its channel: contiguous ones (a view of a
        # larger parameter, e.g. every other element, is copied), written back where needed
        batch_mean, batch_var = _dense(xp, mean), _dense(xp, var)
        _kernel(kctx, "stats", x.dtype)(
            (channels,), (256,), (x, batch_mean, batch_var, np.int64(outer), np.int32(channels), np.int64(inner))
        )
        _write_back(batch_mean, mean)
        _write_back(batch_var, var)
    else:
        batch_moments(x, mean, var)
    if batch_stats:
        # moving statistics follow the biased batch variance, as MXNet's do
        m = attrs["momentum"]
        moving_mean *= m
        moving_mean += (1 - m) * mean
        moving_var *= m
        moving_var += (1 - m) * var
    # from here on ``var`` holds the inverse std, MXNet's saved statistic, which the backward reads
    var[...] = 1.0 / xp.sqrt(var + var.dtype.type(attrs["eps"]))
    if gpu:
        y = out if out.flags.c_contiguous else xp.empty(out.shape, out.dtype)
        x = unaliased(x, y)  # out= a view of the data: read from a copy
        grid, block = launch_config(x.size)
        vectors = [_dense(xp, v) for v in (mean, var, gamma, beta)]
        args = (x, y, *vectors, np.int32(attrs["fix_gamma"]))
        _kernel(kctx, "fwd", x.dtype)(grid, block, (*args, np.int64(x.size), np.int32(channels), np.int64(inner)))
        if y is not out:
            out[...] = y
        return
    scale = var
    if not attrs["fix_gamma"]:
        scale = scale * gamma
    # float16 output: one rounding of the float32 result (rounding x * scale first pulls it back
    # towards x's own grid, a bias of the normalised mean)
    scale_shift(x, scale, beta - mean * scale, out)


def _dense(xp: Any, vector: Any) -> Any:
    """``vector``, or a contiguous copy of it for a kernel that indexes it by channel."""
    return vector if vector.flags.c_contiguous else xp.ascontiguousarray(vector)


def _write_back(result: Any, target: Any) -> None:
    if result is not target:
        target[...] = result


def _kernel(kctx: Any, which: str, dtype: Any) -> Any:
    name = dtype_name(dtype)
    if name not in ("float32", "float64"):
        raise OperatorError(f"BatchNorm on the GPU supports float32 and float64, got {name}")
    return _SOURCE.function(kctx.device_id, f"lazynd_bn_{which}_{name}")


def _bn_backward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    xp = kctx.xp
    out_grad, data, gamma, mean, invstd = inputs
    dx, dgamma, dbeta = outputs
    outer, channels, inner = _split(data.shape, attrs["axis"])
    x = xp.ascontiguousarray(data).reshape(outer, channels, inner)
    dy = xp.ascontiguousarray(out_grad).reshape(outer, channels, inner)
    m = outer * inner
    # outside training (backward(train_mode=False), as MXNet's kernel reads it) the statistics are
    # constants: the moving ones the forward normalised with in prediction mode
    global_stats = attrs["use_global_stats"] or not kctx.is_train
    if xp is not np:
        mean, invstd, gamma = (_dense(xp, v) for v in (mean, invstd, gamma))
        sum_dy, sum_dy_xhat = xp.empty_like(mean), xp.empty_like(mean)
        reduce_args = (dy, x, mean, invstd, sum_dy, sum_dy_xhat)
        _kernel(kctx, "bwd_reduce", x.dtype)(
            (channels,), (256,), (*reduce_args, np.int64(outer), np.int32(channels), np.int64(inner))
        )
        result = xp.empty(x.shape, x.dtype)
        grid, block = launch_config(x.size)
        args: tuple[Any, ...] = (
            dy,
            x,
            mean,
            invstd,
            gamma,
            sum_dy,
            sum_dy_xhat,
            result,
            np.int32(attrs["fix_gamma"]),
        )
        args += (
            np.int32(global_stats),
            np.int64(m),
            np.int64(x.size),
            np.int32(channels),
            np.int64(inner),
        )
        _kernel(kctx, "bwd", x.dtype)(grid, block, args)
        dx[...] = result.reshape(dx.shape)
    else:
        # sums over the batch are taken in float32 at least: float16 ones overflow past 65504 (MXNet
        # accumulates them in float32 too)
        g = np.ones_like(gamma) if attrs["fix_gamma"] else gamma
        sum_dy, sum_dy_xhat = batch_norm_backward(dy, x, mean, invstd, g * invstd, global_stats, dx)
    dbeta[...] = sum_dy
    dgamma[...] = 0 if attrs["fix_gamma"] else sum_dy_xhat


def _bn_infer(attrs: dict, in_shapes: list, aux_shapes: list, op: str = "BatchNorm") -> tuple[list, list, list]:
    """The shape rule of BatchNorm and of its variants (``op``: the name errors give)."""
    data = in_shapes[0]
    if data is None:
        return in_shapes, [None, None, None], aux_shapes
    _, channels, _ = _split(tuple(data), attrs["axis"], op)
    # (channels,) is read from the data: under NumPy shape semantics its 0 is a size, so a (0,)
    # gamma against 3 channels (or 3 against none) is refused here, not in the kernel
    names = ("gamma", "beta")
    for i, name in enumerate(names, 1):
        in_shapes[i] = merge_shape(op, name, in_shapes[i], (channels,), complete=True)
    for i, name in enumerate(("moving_mean", "moving_var")):
        aux_shapes[i] = merge_shape(op, name, aux_shapes[i], (channels,), complete=True)
    return in_shapes, [tuple(data), (channels,), (channels,)], aux_shapes


def _bn_types(attrs: dict, in_types: list, aux_types: list, op: str = "BatchNorm") -> tuple[list, list, list]:
    """float16 data keeps its parameters and statistics in float32 by default, as MXNet (whose
    float16 checkpoints hold float32 BatchNorm parameters); float16 ones are taken too.  ``op``:
    the name errors give."""
    data = in_types[0]
    if data is None:
        return in_types, [None, None, None], aux_types
    allowed = ("float32", "float16") if data == "float16" else (data,)
    names = ("gamma", "beta", "moving_mean", "moving_var")
    given = [*in_types[1:], *aux_types]
    for name, dtype in zip(names, given, strict=True):
        if dtype is not None and dtype not in allowed:
            raise OperatorError(f"{op}: {name} has dtype {dtype}, expected {' or '.join(allowed)} for {data} data")
    param = in_types[1] or in_types[2] or allowed[0]
    stats = [t or allowed[0] for t in aux_types]
    return [data, in_types[1] or param, in_types[2] or param], [data, param, param], stats


def _bn_gradient(F: Any, attrs: dict, inputs: list, outputs: list, out_grads: list) -> list:
    return list(F._backward_BatchNorm(out_grads[0], inputs[0], inputs[1], outputs[1], outputs[2], **attrs))


register(
    OpDef(
        "BatchNorm",
        _bn_forward,
        **BN_STRUCTURE,
        params=dict(BN_PARAMS),
        infer_shape=_bn_infer,
        infer_type=_bn_types,
        gradient=_bn_gradient,
        doc="Batch normalisation over ``axis``; moving statistics are updated in training.",
    )
)
register(
    OpDef(
        "_backward_BatchNorm",
        _bn_backward,
        gpu_float16_as_float32=True,
        inputs=("out_grad", "data", "gamma", "mean", "invstd"),
        outputs=("data_grad", "gamma_grad", "beta_grad"),
        params=dict(BN_PARAMS),
        infer_shape=lambda attrs, s, a: (s, [s[1], s[2], s[2]], a),
        infer_type=lambda attrs, t, a: (t, [t[1] or t[0], t[2] or t[1], t[2] or t[1]], a),
        doc="Gradients of BatchNorm with respect to data, gamma and beta.",
    )
)
