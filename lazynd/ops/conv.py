"""Convolution (1-D, 2-D, 3-D; NCHW-style or channel-last layouts) by im2col + one GEMM.

The columns come from :mod:`~lazynd.ops.conv_columns`; the GEMM is one batched
``matmul`` over (batch, group), written straight into the output when the
layout allows.  On the GPU the same code runs with CuPy, GEMMs going to cuBLAS.
On the CPU, batches of 8 or more may take the batch-last layout instead (see
:func:`~lazynd.ops.conv_columns.uses_batch_last`): one plain GEMM per product,
for the whole backward and for forwards with few output positions
(:mod:`~lazynd.ops.conv_batch_last`); the CPU backward of a depthwise convolution takes
:mod:`~lazynd.ops.conv_depthwise` (stride 1, or large strided images) or :mod:`~lazynd.ops.conv_direct`.
CPU kernels run inside :func:`~lazynd.backend.blas.blas_section`.
The parameters, shape checks and helpers here are shared with Deconvolution
(:mod:`~lazynd.ops.deconv`).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from ..backend.blas import blas_section
from ..backend.cuda.gemm import channel_sum
from ..errors import OperatorError, ShapeError
from .conv_batch_last import conv_backward_batch_last, conv_forward_batch_last
from .conv_columns import (
    Geometry,
    col2im,
    geometry,
    im2col_blocks,
    uses_batch_last,
    uses_batch_last_backward,
    zero_gradients_of_an_empty_output,
)
from .conv_depthwise import (
    conv_backward_depthwise,
    conv_forward_depthwise,
    uses_depthwise_backward,
    uses_depthwise_forward,
)
from .conv_direct import conv_backward_direct, uses_direct_backward
from .host_reduce import column_sum_into
from .params import Param, enum, optional, parse_bool, parse_int, parse_positive_int, parse_shape, parse_workspace
from .products import product
from .registry import BackwardOpGradient, OpDef, merge_shape, register

LAYOUTS = ("NCW", "NWC", "NCHW", "NHWC", "NCDHW", "NDHWC")


def _common_params(no_bias_default: bool) -> dict[str, Param]:
    return {
        "kernel": Param(parse_shape, doc="window size, e.g. (3, 3)"),
        "stride": Param(parse_shape, (), "stride per spatial axis (default 1)"),
        "dilate": Param(parse_shape, (), "dilation per spatial axis (default 1)"),
        "pad": Param(parse_shape, (), "zero padding per spatial axis (default 0)"),
        "num_filter": Param(parse_positive_int, doc="number of output channels"),
        "num_group": Param(parse_int, 1, "number of groups"),
        "workspace": Param(parse_workspace, 1024, "accepted for MXNet compatibility"),
        "no_bias": Param(parse_bool, no_bias_default, "leave out the bias"),
        "cudnn_tune": Param(
            optional(enum("fastest", "limited_workspace", "off")), None, "accepted for MXNet compatibility"
        ),
        "cudnn_off": Param(parse_bool, False, "accepted for MXNet compatibility"),
        "layout": Param(optional(enum(*LAYOUTS)), None, "data layout (default channels second)"),
    }


def _host_empty(kctx: Any) -> Any:
    """The backend's pooled ``empty``: a fresh buffer of tens of megabytes is mapped, faulted
    in and zeroed by the kernel on every call (measured: 3 ms of a 13 ms backward)."""
    return kctx.backend.empty if kctx.backend is not None else np.empty


def _in_blas_section(kernel: Callable[..., None]) -> Callable[..., None]:
    """Run a kernel's CPU calls inside :func:`~lazynd.backend.blas.blas_section`: two GEMM-heavy
    kernels on the engine's workers at once only slow each other down under a threaded BLAS."""

    @functools.wraps(kernel)
    def run(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
        with blas_section(kctx.xp is np):
            kernel(kctx, attrs, inputs, outputs, aux)

    return run


def _bias_shape(g: Geometry) -> tuple:
    return (1, -1) + (1,) * g.nd


# -- Convolution ---------------------------------------------------------------------------------
def _conv_inputs(attrs: dict) -> tuple[str, ...]:
    return ("data", "weight") if attrs["no_bias"] else ("data", "weight", "bias")


def _conv_forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    xp = kctx.xp
    data, weight = inputs[0], inputs[1]
    g = geometry(attrs, "Convolution", data.ndim)
    x = g.to_nc(data)
    w = g.to_nc(weight)
    groups, n, filters = attrs["num_group"], x.shape[0], w.shape[0]
    bias = None if attrs["no_bias"] else inputs[2]
    positions = math.prod(g.out_size("Convolution", tuple(x.shape[2:])))
    # the CPU's routes, first match: a depthwise layer (multiplier up to 2) by shifted flat columns
    # (1.2-2.3x faster than im2col's or batch-last's in float32, 5-6x in float16; batch-last keeps
    # small images of 8 samples or more; stride 2 by phases from 56x56 outputs, or 28x28 at 8 samples;
    # figures in conv_depthwise), long columns batch-last,
    # the rest im2col's below
    if uses_depthwise_forward(xp, x.shape[1], filters, groups, g.stride, n, positions, x.dtype):
        conv_forward_depthwise(x, w, bias, g.to_nc(outputs[0]), g)
        return
    if uses_batch_last(xp, n, positions):
        conv_forward_batch_last(_host_empty(kctx), kctx.backend.matmul, g, groups, x, w, bias, g.to_nc(outputs[0]))
        return
    per_group = x.shape[1] // groups * math.prod(g.kernel)  # rows of a group's columns
    wm = w.reshape(groups, filters // groups, -1)
    out = outputs[0]
    target = g.to_nc(out)
    direct = not g.channel_last and out.flags.c_contiguous
    for block, col in im2col_blocks(kctx, x, g, _host_empty(kctx)):
        col = col.reshape(col.shape[0], groups, per_group, positions)
        if direct:
            kctx.backend.matmul(wm, col, out[block].reshape(col.shape[0], groups, filters // groups, positions))
        else:
            target[block] = product(kctx, wm, col).reshape(target[block].shape)
    if bias is not None:
        target += bias.reshape(_bias_shape(g))


def _checked_geometry(op: str, attrs: dict, data: Any) -> tuple[Geometry, tuple[int, ...] | None, int]:
    """The geometry of a (de)convolution, the data shape in NC order (None if unknown) and its channels.

    Checks what both operators require: ``num_filter`` a positive multiple of ``num_group``,
    data of ``nd + 2`` axes for an ``nd``-D kernel, channels a multiple of ``num_group``.
    """
    g = Geometry(op, attrs)
    filters, groups = attrs["num_filter"], attrs["num_group"]
    if filters <= 0 or groups <= 0 or filters % groups:
        raise OperatorError(f"{op}: num_filter {filters} must be a positive multiple of num_group {groups}")
    if data is not None and len(data) != g.nd + 2:
        raise ShapeError(f"{op}: data must be {g.nd + 2}-D for kernel {g.kernel}, got shape {tuple(data)}")
    nc = g.to_nc_shape(tuple(data)) if data is not None else None
    channels = nc[1] if nc is not None else 0
    if channels and channels % groups:
        raise ShapeError(f"{op}: data has {channels} channels, not a multiple of num_group {groups}")
    return g, nc, channels


def _data_from_output(g: Geometry, nc: tuple[int, ...], out: tuple[int, ...]) -> tuple[int, ...]:
    """Unknown (0) dims of a convolution's NC-ordered data shape filled from its output, as MXNet's
    rule: the batch always (a convolutional RNN cell's begin state is zeros of batch 0), a spatial
    size where its stride is 1 (``in = out + dilate * (kernel - 1) - 2 * pad``)."""
    out_nc = g.to_nc_shape(tuple(out))
    filled = [nc[0] or out_nc[0], nc[1]]
    for size, out_size, k, stride, dilate, pad in zip(
        nc[2:], out_nc[2:], g.kernel, g.stride, g.dilate, g.pad, strict=True
    ):
        if not size and out_size and stride == 1:
            size = out_size + dilate * (k - 1) - 2 * pad
        filled.append(size)
    return tuple(filled)


def _conv_infer(
    attrs: dict, in_shapes: list, aux_shapes: list, out_shapes: list | None = None
) -> tuple[list, list, list]:
    out_known = out_shapes[0] if out_shapes else None
    g, nc, channels = _checked_geometry("Convolution", attrs, in_shapes[0])
    if nc is not None and out_known is not None and 0 in nc:
        nc = _data_from_output(g, nc, out_known)
        in_shapes[0] = g.from_nc_shape(nc)
    filters, groups = attrs["num_filter"], attrs["num_group"]
    wshape = g.from_nc_shape((filters, channels // groups if channels else 0, *g.kernel))
    in_shapes[1] = merge_shape("Convolution", "weight", in_shapes[1], wshape, complete=True)
    if not attrs["no_bias"]:
        in_shapes[2] = merge_shape("Convolution", "bias", in_shapes[2], (filters,))
    if nc is None:
        return in_shapes, [None], aux_shapes
    out = g.from_nc_shape((nc[0], filters, *g.out_size("Convolution", nc[2:])))
    return in_shapes, [out], aux_shapes


def _conv_backward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    # an executor passes None for a gradient nobody reads (the data gradient of a first layer):
    # the data gradient is half the work (a GEMM as large as the weight gradient's, and col2im)
    xp = kctx.xp
    out_grad, data, weight = inputs
    if zero_gradients_of_an_empty_output(out_grad, outputs):
        return
    g = geometry(attrs, "Convolution", data.ndim)
    x, w, dy = g.to_nc(data), g.to_nc(weight), g.to_nc(out_grad)
    # the CPU's routes, first match: a depthwise layer (multiplier up to 2) by shifted flat columns,
    # strided ones by phases from 28x28 outputs (2-3x faster than the others at stride 1, 1.3-2.9x at
    # stride 2; figures in conv_depthwise), other depthwise layers by the groups-last loop (conv_direct), long columns batch-last, the rest im2col's below
    positions = math.prod(dy.shape[2:])
    if uses_depthwise_backward(xp, x.shape[1], w.shape[0], attrs["num_group"], g.stride, positions, x.dtype):
        grads = [None if o is None else g.to_nc(o) for o in outputs[:2]] + outputs[2:]
        conv_backward_depthwise(x, w, dy, g, grads)
        return
    if uses_direct_backward(xp, x.shape[1], w.shape[0], attrs["num_group"]):
        grads = [None if o is None else g.to_nc(o) for o in outputs[:2]] + outputs[2:]
        conv_backward_direct(x, w, dy, g, attrs["num_group"], grads)
        return
    if uses_batch_last_backward(xp, x.shape[0], w[0].size):
        grads = [None if o is None else g.to_nc(o) for o in outputs[:2]] + outputs[2:]
        conv_backward_batch_last(_host_empty(kctx), kctx.backend.matmul, g, attrs["num_group"], x, w, dy, grads)
        return
    groups, n, filters = attrs["num_group"], x.shape[0], w.shape[0]
    dym = xp.ascontiguousarray(dy).reshape(n, groups, filters // groups, positions)
    col_shape = (n, x.shape[1], *g.kernel, *dy.shape[2:])  # im2col's (N, C, *kernel, *out)
    per_group = math.prod(col_shape[1:]) // positions // groups  # rows of a group's columns
    matmul = kctx.backend.matmul
    if outputs[1] is not None:
        # per-sample GEMMs then a sum over the batch: cheaper than transposing dy and col into (K, N*P)
        per_sample = xp.empty((n, groups, filters // groups, per_group), x.dtype)
        for block, col in im2col_blocks(kctx, x, g, _host_empty(kctx)):
            col = col.reshape(col.shape[0], groups, per_group, positions)
            matmul(dym[block], col.transpose(0, 1, 3, 2), per_sample[block])
        # the sum over the batch (a GEMM with ones on the GPU), straight into the gradient when it
        # is laid out as the weight's (N, C) view
        dw_nc = g.to_nc(outputs[1])
        direct = dw_nc.flags.c_contiguous
        dw = dw_nc.reshape(-1) if direct else xp.empty(per_sample[0].size, x.dtype)
        column_sum_into(per_sample.reshape(n, -1), dw)
        if not direct:
            dw_nc[...] = dw.reshape(w.shape)
    if outputs[0] is not None:
        wm = w.reshape(groups, filters // groups, -1)
        dcol = xp.empty((n, groups, per_group, positions), x.dtype)
        matmul(wm.transpose(0, 2, 1), dym, dcol)
        dx = g.to_nc(outputs[0])
        summed = col2im(kctx, dcol.reshape(col_shape), tuple(x.shape[2:]), g, out=dx)
        if summed is not dx:
            dx[...] = summed
    if not attrs["no_bias"] and outputs[2] is not None:
        if xp is np:
            outputs[2][...] = dym.reshape(n, filters, positions).sum(axis=(0, 2))
        else:  # two small GEMMs with ones on the GPU: cuBLAS, where a reduction over two axes was slow
            channel_sum(dym.reshape(n, filters, positions), outputs[2])


def _backward_infer(attrs: dict, in_shapes: list, aux_shapes: list) -> tuple[list, list, list]:
    outs = [in_shapes[1], in_shapes[2]]
    if not attrs["no_bias"]:
        outs.append((attrs["num_filter"],))
    return in_shapes, outs, aux_shapes


def _grad_outputs(attrs: dict) -> tuple[str, ...]:
    return ("data_grad", "weight_grad") if attrs["no_bias"] else ("data_grad", "weight_grad", "bias_grad")


register(
    OpDef(
        "Convolution",
        _in_blas_section(_conv_forward),
        gpu_float16_as_float32=True,
        blas_heavy=True,
        inputs=_conv_inputs,
        params=_common_params(False),
        infer_shape=_conv_infer,
        gradient=BackwardOpGradient("_backward_Convolution", 2),
        doc="N-D convolution (1-D to 3-D) with groups, stride, dilation and padding.",
    )
)
register(
    OpDef(
        "_backward_Convolution",
        _in_blas_section(_conv_backward),
        gpu_float16_as_float32=True,
        blas_heavy=True,
        inputs=("out_grad", "data", "weight"),
        outputs=_grad_outputs,
        optional_outputs=True,
        params=_common_params(False),
        infer_shape=_backward_infer,
        doc="Gradients of Convolution with respect to data, weight and bias.",
    )
)
