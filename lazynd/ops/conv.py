"""Convolution and Deconvolution (1-D, 2-D, 3-D; NCHW-style or channel-last layouts) by im2col + one GEMM.

The CPU im2col is a strided view of the (padded) input copied once into a
contiguous column buffer ``(N, C, *kernel, *out)``; the GEMM is one batched
``matmul`` over (batch, group), written straight into the output when the
layout allows.  col2im adds each kernel offset's slab back (a loop over kernel
positions, never over pixels).  On the GPU the same code runs with CuPy; only
im2col/col2im come from our kernels (``kernels/conv.cu``), GEMMs go to cuBLAS.

On the CPU, batches of 8 or more take a batch-last layout instead (see
``BATCH_LAST_MIN_BATCH``): columns ``(C, *kernel, *out, N)`` and one plain GEMM
per product, for the whole backward and for forwards with few output positions.
CPU kernels run inside :func:`~lazynd.backend.blas.blas_section`.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from ..backend.blas import blas_section
from ..backend.cuda_kernels import launch_config, load_file
from ..errors import OperatorError, ShapeError
from .params import Param, enum, optional, parse_bool, parse_int, parse_shape, parse_str
from .registry import OpDef, merge_shape, register

LAYOUTS = ("NCW", "NWC", "NCHW", "NHWC", "NCDHW", "NDHWC")


def _common_params(no_bias_default: bool) -> dict[str, Param]:
    return {
        "kernel": Param(parse_shape, doc="window size, e.g. (3, 3)"),
        "stride": Param(parse_shape, (), "stride per spatial axis (default 1)"),
        "dilate": Param(parse_shape, (), "dilation per spatial axis (default 1)"),
        "pad": Param(parse_shape, (), "zero padding per spatial axis (default 0)"),
        "num_filter": Param(parse_int, doc="number of output channels"),
        "num_group": Param(parse_int, 1, "number of groups"),
        "workspace": Param(parse_int, 1024, "accepted for MXNet compatibility"),
        "no_bias": Param(parse_bool, no_bias_default, "leave out the bias"),
        "cudnn_tune": Param(optional(parse_str), None, "accepted for MXNet compatibility"),
        "cudnn_off": Param(parse_bool, False, "accepted for MXNet compatibility"),
        "layout": Param(optional(enum(*LAYOUTS)), None, "data layout (default channels second)"),
    }


class Geometry:
    """Kernel, stride, dilation and padding of a convolution, one entry per spatial axis."""

    def __init__(self, op: str, attrs: dict, ndim: int | None = None) -> None:
        kernel = tuple(attrs["kernel"])
        nd = len(kernel)
        if nd not in (1, 2, 3) or any(k <= 0 for k in kernel):
            raise OperatorError(f"{op}: kernel must have 1 to 3 positive sizes, got {kernel}")
        if ndim is not None and ndim != nd + 2:
            raise ShapeError(f"{op}: data must be {nd + 2}-D for a {nd}-D kernel {kernel}, got {ndim}-D")
        layout = attrs.get("layout")
        if layout is not None and len(layout) != nd + 2:
            raise OperatorError(f"{op}: layout {layout} does not fit a {nd}-D kernel {kernel}")

        def fill(name: str, default: int) -> tuple[int, ...]:
            value = tuple(attrs.get(name) or ()) or (default,) * nd
            if len(value) != nd:
                raise OperatorError(f"{op}: {name} {value} must have {nd} entries like kernel {kernel}")
            return value

        self.nd = nd
        self.kernel = kernel
        self.stride = fill("stride", 1)
        self.dilate = fill("dilate", 1)
        self.pad = fill("pad", 0)
        if any(s <= 0 for s in self.stride) or any(d <= 0 for d in self.dilate) or any(p < 0 for p in self.pad):
            raise OperatorError(f"{op}: stride/dilate must be positive and pad non-negative")
        self.channel_last = layout is not None and layout.endswith("C")

    def out_size(self, op: str, spatial: tuple[int, ...]) -> tuple[int, ...]:
        out = []
        for i, size in enumerate(spatial):
            span = self.dilate[i] * (self.kernel[i] - 1) + 1
            if size and size + 2 * self.pad[i] < span:
                raise ShapeError(f"{op}: input size {spatial} with pad {self.pad} is smaller than kernel {self.kernel}")
            out.append((size + 2 * self.pad[i] - span) // self.stride[i] + 1 if size else 0)
        return tuple(out)

    # channel-last arrays are handled as transposed views of channels-second ones
    def to_nc(self, x: Any) -> Any:
        return x.transpose((0, x.ndim - 1, *range(1, x.ndim - 1))) if self.channel_last else x

    def from_nc_shape(self, shape: tuple) -> tuple:
        return (shape[0], *shape[2:], shape[1]) if self.channel_last else tuple(shape)

    def to_nc_shape(self, shape: tuple) -> tuple:
        return (shape[0], shape[-1], *shape[1:-1]) if self.channel_last else tuple(shape)


# -- im2col / col2im -----------------------------------------------------------------------------
_SOURCE = load_file("conv.cu")


def _gpu_dims(g: Geometry, spatial: tuple, out: tuple) -> list[int]:
    pad3 = 3 - g.nd
    return (
        [1] * pad3
        + list(spatial)
        + [1] * pad3
        + list(g.kernel)
        + [1] * pad3
        + list(out)
        + [1] * pad3
        + list(g.stride)
        + [1] * pad3
        + list(g.dilate)
        + [0] * pad3
        + list(g.pad)
    )


def _check_gpu_dtype(x: Any) -> str:
    if x.dtype.name not in ("float32", "float64"):
        raise OperatorError(f"convolution on the GPU supports float32 and float64, got {x.dtype.name}")
    return x.dtype.name


def im2col(kctx: Any, x: Any, g: Geometry) -> Any:
    """(N, C, *spatial) -> contiguous columns (N, C, *kernel, *out)."""
    xp = kctx.xp
    out = g.out_size("Convolution", tuple(x.shape[2:]))
    if xp is not np:
        x = xp.ascontiguousarray(x)
        col = xp.empty((*x.shape[:2], *g.kernel, *out), dtype=x.dtype)
        fn = _SOURCE.function(kctx.device_id, f"lazynd_im2col_{_check_gpu_dtype(x)}")
        grid, block = launch_config(col.size)
        fn(
            grid,
            block,
            (x, col, np.int64(col.size), np.int32(x.shape[1]), *[np.int32(v) for v in _gpu_dims(g, x.shape[2:], out)]),
        )
        return col
    if any(g.pad):
        x = np.pad(x, [(0, 0), (0, 0)] + [(p, p) for p in g.pad])
    spans = [d * (k - 1) + 1 for k, d in zip(g.kernel, g.dilate, strict=True)]
    axes = tuple(range(2, 2 + g.nd))
    win = np.lib.stride_tricks.sliding_window_view(x, spans, axis=axes)
    index: tuple[slice, ...] = (slice(None), slice(None))
    index += tuple(slice(0, s * (o - 1) + 1, s) for s, o in zip(g.stride, out, strict=True))
    index += tuple(slice(None, None, d) for d in g.dilate)
    win = win[index]
    perm = (0, 1, *range(2 + g.nd, 2 + 2 * g.nd), *range(2, 2 + g.nd))
    return np.ascontiguousarray(win.transpose(perm))


def col2im(kctx: Any, col: Any, spatial: tuple[int, ...], g: Geometry) -> Any:
    """Sum columns (N, C, *kernel, *out) back into an (N, C, *spatial) array (the adjoint of im2col)."""
    xp = kctx.xp
    n, c = col.shape[:2]
    out = col.shape[2 + g.nd :]
    if xp is not np:
        col = xp.ascontiguousarray(col)
        x = xp.zeros((n, c, *spatial), dtype=col.dtype)
        fn = _SOURCE.function(kctx.device_id, f"lazynd_col2im_{_check_gpu_dtype(col)}")
        grid, block = launch_config(col.size)
        fn(grid, block, (col, x, np.int64(col.size), np.int32(c), *[np.int32(v) for v in _gpu_dims(g, spatial, out)]))
        return x
    padded = [s + 2 * p for s, p in zip(spatial, g.pad, strict=True)]
    x = np.zeros((n, c, *padded), dtype=col.dtype)
    for offset in itertools.product(*[range(k) for k in g.kernel]):
        target = (slice(None), slice(None)) + tuple(
            slice(k * d, k * d + s * (o - 1) + 1, s) for k, d, s, o in zip(offset, g.dilate, g.stride, out, strict=True)
        )
        x[target] += col[(slice(None), slice(None), *offset)]
    if any(g.pad):
        x = x[(slice(None), slice(None), *[slice(p, p + s) for p, s in zip(g.pad, spatial, strict=True)])]
    return x


# Batch-last layout on the CPU: with the batch axis innermost, every slab that im2col copies
# and col2im adds is a run of (out width x batch) contiguous elements instead of one output
# row, and each product is one GEMM over (channels x kernel, positions x batch) instead of a
# GEMM per sample (plus a sum over the batch for the weight gradient).  Worth it once the
# batch is a few rows long.  The forward pays a transpose of its output back to batch-first,
# so it takes this layout only when the per-sample GEMMs would be thin (few output
# positions): there the batch-first im2col copies runs of one short output row and OpenBLAS
# runs far below its peak on (filters x positions) products.
BATCH_LAST_MIN_BATCH = 8
BATCH_LAST_MAX_FORWARD_POSITIONS = 256
# The backward's batch-last layout pays for its transposed copies of dy and of the data gradient
# only with long enough columns (channels per group x kernel size).  Measured at batch 128: 1 x 3x3
# (9) runs 2.3x faster in the batch-first layout, 1 x 5x5 (25) and 3 x 3x3 (27) 2-6% faster;
# 4 x 3x3 (36) 1.5x slower, 20 x 5x5 (500, LeNet's second layer) 2.2x slower.
BATCH_LAST_MIN_BACKWARD_COLUMN = 32


def _uses_batch_last(xp: Any, batch: int, positions: int | None = None) -> bool:
    """Whether the CPU kernels take the batch-last layout (``positions``: the forward's output positions)."""
    if xp is not np or batch < BATCH_LAST_MIN_BATCH:
        return False
    return positions is None or positions <= BATCH_LAST_MAX_FORWARD_POSITIONS


def _host_empty(kctx: Any) -> Any:
    """The backend's pooled ``empty``: a fresh buffer of tens of megabytes is mapped, faulted
    in and zeroed by the kernel on every call (measured: 3 ms of a 13 ms backward)."""
    return kctx.backend.empty if kctx.backend is not None else np.empty


def im2col_batch_last(x: np.ndarray, g: Geometry) -> np.ndarray:
    """(N, C, *spatial) -> contiguous columns (C, *kernel, *out, N) (NumPy only)."""
    out = g.out_size("Convolution", tuple(x.shape[2:]))
    xt = np.moveaxis(x, 0, -1)  # (C, *spatial, N)
    if any(g.pad):
        xt = np.pad(xt, [(0, 0)] + [(p, p) for p in g.pad] + [(0, 0)])
    else:
        xt = np.ascontiguousarray(xt)
    spans = [d * (k - 1) + 1 for k, d in zip(g.kernel, g.dilate, strict=True)]
    win = np.lib.stride_tricks.sliding_window_view(xt, spans, axis=tuple(range(1, 1 + g.nd)))
    index = (slice(None),) + tuple(slice(0, s * (o - 1) + 1, s) for s, o in zip(g.stride, out, strict=True))
    index += (slice(None),) + tuple(slice(None, None, d) for d in g.dilate)
    perm = (0, *range(2 + g.nd, 2 + 2 * g.nd), *range(1, 1 + g.nd), 1 + g.nd)
    return np.ascontiguousarray(win[index].transpose(perm))


def col2im_batch_last(col: np.ndarray, spatial: tuple[int, ...], g: Geometry) -> np.ndarray:
    """Sum columns (C, *kernel, *out, N) back into a (C, *spatial, N) array (the adjoint of im2col_batch_last)."""
    c, n = col.shape[0], col.shape[-1]
    out = col.shape[1 + g.nd : 1 + 2 * g.nd]
    padded = [s + 2 * p for s, p in zip(spatial, g.pad, strict=True)]
    x = np.zeros((c, *padded, n), dtype=col.dtype)
    for offset in itertools.product(*[range(k) for k in g.kernel]):
        target = (slice(None),) + tuple(
            slice(k * d, k * d + s * (o - 1) + 1, s) for k, d, s, o in zip(offset, g.dilate, g.stride, out, strict=True)
        )
        source: tuple[slice | int, ...] = (slice(None), *offset)
        x[target] += col[source]
    if any(g.pad):
        x = x[(slice(None), *[slice(p, p + s) for p, s in zip(g.pad, spatial, strict=True)])]
    return x


def _in_blas_section(kernel: Callable[..., None]) -> Callable[..., None]:
    """Run a kernel's CPU calls inside :func:`~lazynd.backend.blas.blas_section`: two GEMM-heavy
    kernels on the engine's workers at once only slow each other down under a threaded BLAS."""

    @functools.wraps(kernel)
    def run(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
        with blas_section(kctx.xp is np):
            kernel(kctx, attrs, inputs, outputs, aux)

    return run


def _store(g: Geometry, out: Any, value_nc: Any) -> None:
    g.to_nc(out)[...] = value_nc.reshape(g.to_nc(out).shape)


def _bias_shape(g: Geometry) -> tuple:
    return (1, -1) + (1,) * g.nd


# -- Convolution ---------------------------------------------------------------------------------
def _conv_inputs(attrs: dict) -> tuple[str, ...]:
    return ("data", "weight") if attrs["no_bias"] else ("data", "weight", "bias")


def _conv_forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    xp = kctx.xp
    data, weight = inputs[0], inputs[1]
    g = Geometry("Convolution", attrs, data.ndim)
    x = g.to_nc(data)
    w = g.to_nc(weight)
    groups, n, filters = attrs["num_group"], x.shape[0], w.shape[0]
    bias = None if attrs["no_bias"] else inputs[2]
    if _uses_batch_last(xp, n, math.prod(g.out_size("Convolution", tuple(x.shape[2:])))):
        _conv_forward_batch_last(g, groups, x, w, bias, g.to_nc(outputs[0]))
        return
    col = im2col(kctx, x, g)
    positions = math.prod(col.shape[2 + g.nd :])
    col = col.reshape(n, groups, -1, positions)
    wm = w.reshape(groups, filters // groups, -1)
    out = outputs[0]
    if not g.channel_last and out.flags.c_contiguous:
        xp.matmul(wm, col, out=out.reshape(n, groups, filters // groups, positions))
        target = out
    else:
        _store(g, out, xp.matmul(wm, col))
        target = g.to_nc(out)
    if bias is not None:
        target += bias.reshape(_bias_shape(g))


def _conv_forward_batch_last(
    g: Geometry, groups: int, x: np.ndarray, w: np.ndarray, bias: Any, out_nc: np.ndarray
) -> None:
    """The CPU forward in the batch-last layout: one GEMM (F, C x kernel) @ (C x kernel, positions x N)."""
    col = im2col_batch_last(x, g)  # (C, *kernel, *out, N)
    filters, out_n = w.shape[0], col.shape[1 + g.nd :]
    y = np.matmul(w.reshape(groups, filters // groups, -1), col.reshape(groups, -1, math.prod(out_n)))
    # (F, *out, N) back to batch-first in the one pass that adds the bias
    y = np.moveaxis(y.reshape(filters, *out_n), -1, 0)
    if bias is None:
        np.copyto(out_nc, y)
    else:
        np.add(y, bias.reshape(_bias_shape(g)), out=out_nc)


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


def _conv_infer(attrs: dict, in_shapes: list, aux_shapes: list) -> tuple[list, list, list]:
    g, nc, channels = _checked_geometry("Convolution", attrs, in_shapes[0])
    filters, groups = attrs["num_filter"], attrs["num_group"]
    wshape = g.from_nc_shape((filters, channels // groups if channels else 0, *g.kernel))
    in_shapes[1] = merge_shape("Convolution", "weight", in_shapes[1], wshape)
    if not attrs["no_bias"]:
        in_shapes[2] = merge_shape("Convolution", "bias", in_shapes[2], (filters,))
    if nc is None:
        return in_shapes, [None], aux_shapes
    out = g.from_nc_shape((nc[0], filters, *g.out_size("Convolution", nc[2:])))
    return in_shapes, [out], aux_shapes


def _conv_backward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    xp = kctx.xp
    out_grad, data, weight = inputs
    g = Geometry("Convolution", attrs, data.ndim)
    x, w, dy = g.to_nc(data), g.to_nc(weight), g.to_nc(out_grad)
    if _uses_batch_last(xp, x.shape[0]) and w[0].size >= BATCH_LAST_MIN_BACKWARD_COLUMN:
        _conv_backward_batch_last(kctx, attrs, g, x, w, dy, outputs)
        return
    groups, n, filters = attrs["num_group"], x.shape[0], w.shape[0]
    positions = math.prod(dy.shape[2:])
    dym = xp.ascontiguousarray(dy).reshape(n, groups, filters // groups, positions)
    col = im2col(kctx, x, g)
    col_shape = col.shape
    col = col.reshape(n, groups, -1, positions)
    wm = w.reshape(groups, filters // groups, -1)
    # per-sample GEMMs then a sum over the batch: cheaper than transposing dy and col into (K, N*P)
    dw = xp.matmul(dym, col.transpose(0, 1, 3, 2)).sum(axis=0)
    g.to_nc(outputs[1])[...] = dw.reshape(w.shape)
    dcol = xp.matmul(wm.transpose(0, 2, 1), dym).reshape(col_shape)
    g.to_nc(outputs[0])[...] = col2im(kctx, dcol, tuple(x.shape[2:]), g)
    if not attrs["no_bias"]:
        outputs[2][...] = dym.reshape(n, filters, positions).sum(axis=(0, 2))


def _conv_backward_batch_last(kctx: Any, attrs: dict, g: Geometry, x: Any, w: Any, dy: Any, outputs: list) -> None:
    """The CPU backward in the batch-last layout: two GEMMs over (channels x kernel, positions x batch)."""
    groups, filters = attrs["num_group"], w.shape[0]
    col = im2col_batch_last(x, g)  # (C, *kernel, *out, N)
    col_shape = col.shape
    col = col.reshape(groups, -1, col[0].size // math.prod(g.kernel))
    dyt = np.ascontiguousarray(np.moveaxis(dy, 0, -1)).reshape(groups, filters // groups, -1)  # (F, *out * N)
    # dW as (col @ dy^T)^T: OpenBLAS runs this orientation 25-40% faster than dy @ col^T
    dw = np.matmul(col, dyt.transpose(0, 2, 1)).transpose(0, 2, 1)
    g.to_nc(outputs[1])[...] = dw.reshape(w.shape)
    wm = w.reshape(groups, filters // groups, -1)
    dcol = _host_empty(kctx)(col.shape, col.dtype)
    np.matmul(wm.transpose(0, 2, 1), dyt, out=dcol)
    g.to_nc(outputs[0])[...] = np.moveaxis(col2im_batch_last(dcol.reshape(col_shape), tuple(x.shape[2:]), g), -1, 0)
    if not attrs["no_bias"]:
        outputs[2][...] = dyt.reshape(filters, -1).sum(axis=1)


def _backward_infer(attrs: dict, in_shapes: list, aux_shapes: list) -> tuple[list, list, list]:
    outs = [in_shapes[1], in_shapes[2]]
    if not attrs["no_bias"]:
        outs.append((attrs["num_filter"],))
    return in_shapes, outs, aux_shapes


def _conv_gradient(F: Any, attrs: dict, inputs: list, outputs: list, out_grads: list) -> list:
    return list(F._backward_Convolution(out_grads[0], inputs[0], inputs[1], **attrs))


def _grad_outputs(attrs: dict) -> tuple[str, ...]:
    return ("data_grad", "weight_grad") if attrs["no_bias"] else ("data_grad", "weight_grad", "bias_grad")


register(
    OpDef(
        "Convolution",
        _in_blas_section(_conv_forward),
        inputs=_conv_inputs,
        params=_common_params(False),
        infer_shape=_conv_infer,
        gradient=_conv_gradient,
        doc="N-D convolution (1-D to 3-D) with groups, stride, dilation and padding.",
    )
)
register(
    OpDef(
        "_backward_Convolution",
        _in_blas_section(_conv_backward),
        inputs=("out_grad", "data", "weight"),
        outputs=_grad_outputs,
        params=_common_params(False),
        infer_shape=_backward_infer,
        doc="Gradients of Convolution with respect to data, weight and bias.",
    )
)


# -- Deconvolution (the transpose of Convolution) ------------------------------------------------
def _deconv_params() -> dict[str, Param]:
    params = _common_params(True)
    params["adj"] = Param(parse_shape, (), "extra size added at the end of each output axis")
    params["target_shape"] = Param(parse_shape, (), "output spatial shape; sets pad and adj")
    return params


def _deconv_geometry(attrs: dict, spatial: tuple[int, ...], ndim: int | None = None) -> tuple[Geometry, tuple, tuple]:
    """The geometry with target_shape resolved into pad, plus (adj, output spatial size)."""
    g = Geometry("Deconvolution", attrs, ndim)
    adj = tuple(attrs["adj"]) or (0,) * g.nd
    target = tuple(attrs["target_shape"])
    if len(adj) != g.nd or (target and len(target) != g.nd):
        raise OperatorError(f"Deconvolution: adj {adj} / target_shape {target} must have {g.nd} entries")
    if target:
        pads, adjs = [], []
        for i, size in enumerate(spatial):
            full = g.stride[i] * (size - 1) + g.dilate[i] * (g.kernel[i] - 1) + 1
            total = full - target[i]
            if total < 0:
                raise ShapeError(f"Deconvolution: target_shape {target} is larger than the full output for {spatial}")
            pads.append((total + 1) // 2)
            adjs.append(total % 2)
        g.pad, adj = tuple(pads), tuple(adjs)
    if any(a >= s for a, s in zip(adj, g.stride, strict=True)):
        raise OperatorError(f"Deconvolution: adj {adj} must be smaller than stride {g.stride}")
    out = tuple(
        g.stride[i] * (size - 1) + g.dilate[i] * (g.kernel[i] - 1) + 1 - 2 * g.pad[i] + adj[i] if size else 0
        for i, size in enumerate(spatial)
    )
    return g, adj, out


def _deconv_forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    xp = kctx.xp
    data, weight = inputs[0], inputs[1]
    g0 = Geometry("Deconvolution", attrs, data.ndim)
    x = g0.to_nc(data)
    g, _, out_spatial = _deconv_geometry(attrs, tuple(x.shape[2:]), data.ndim)
    w = g.to_nc(weight)  # (C_in, F / groups, *kernel)
    groups, n, c_in = attrs["num_group"], x.shape[0], x.shape[1]
    fg = w.shape[1]
    positions = math.prod(x.shape[2:])
    xm = xp.ascontiguousarray(x).reshape(n, groups, c_in // groups, positions)
    wm = w.reshape(groups, c_in // groups, -1).transpose(0, 2, 1)
    col = xp.matmul(wm, xm).reshape(n, groups * fg, *g.kernel, *x.shape[2:])
    padded = tuple(o + 2 * p for o, p in zip(out_spatial, g.pad, strict=True))
    full = col2im(kctx, col, padded, _no_pad(g))
    result = full[(slice(None), slice(None), *[slice(p, p + o) for p, o in zip(g.pad, out_spatial, strict=True)])]
    target = g.to_nc(outputs[0])
    target[...] = result
    if not attrs["no_bias"]:
        target += inputs[2].reshape(_bias_shape(g))


def _no_pad(g: Geometry) -> Geometry:
    clone = object.__new__(Geometry)
    clone.__dict__.update(g.__dict__)
    clone.pad = (0,) * g.nd
    return clone


def _deconv_infer(attrs: dict, in_shapes: list, aux_shapes: list) -> tuple[list, list, list]:
    g, nc, channels = _checked_geometry("Deconvolution", attrs, in_shapes[0])
    filters, groups = attrs["num_filter"], attrs["num_group"]
    wshape = g.from_nc_shape((channels, filters // groups, *g.kernel))
    in_shapes[1] = merge_shape("Deconvolution", "weight", in_shapes[1], wshape)
    if not attrs["no_bias"]:
        in_shapes[2] = merge_shape("Deconvolution", "bias", in_shapes[2], (filters,))
    if nc is None:
        return in_shapes, [None], aux_shapes
    _, _, out_spatial = _deconv_geometry(attrs, nc[2:])
    return in_shapes, [g.from_nc_shape((nc[0], filters, *out_spatial))], aux_shapes


def _deconv_backward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    xp = kctx.xp
    out_grad, data, weight = inputs
    g0 = Geometry("Deconvolution", attrs, data.ndim)
    x, dy = g0.to_nc(data), g0.to_nc(out_grad)
    g, _, _ = _deconv_geometry(attrs, tuple(x.shape[2:]), data.ndim)
    w = g.to_nc(weight)
    groups, n, c_in = attrs["num_group"], x.shape[0], x.shape[1]
    positions = math.prod(x.shape[2:])
    # the forward's col2im has adjoint im2col; extra rows from adj fall outside the windows and are dropped
    col = im2col(kctx, dy, g)
    col = col[(Ellipsis, *[slice(0, s) for s in x.shape[2:]])]
    col = xp.ascontiguousarray(col).reshape(n, groups, -1, positions)
    wm = w.reshape(groups, c_in // groups, -1)
    g.to_nc(outputs[0])[...] = xp.matmul(wm, col).reshape(x.shape)
    xm = xp.ascontiguousarray(x).reshape(n, groups, c_in // groups, positions)
    dw = xp.matmul(xm, col.transpose(0, 1, 3, 2)).sum(axis=0)
    g.to_nc(outputs[1])[...] = dw.reshape(w.shape)
    if not attrs["no_bias"]:
        outputs[2][...] = dy.sum(axis=(0, *range(2, dy.ndim)))


def _deconv_gradient(F: Any, attrs: dict, inputs: list, outputs: list, out_grads: list) -> list:
    return list(F._backward_Deconvolution(out_grads[0], inputs[0], inputs[1], **attrs))


register(
    OpDef(
        "Deconvolution",
        _in_blas_section(_deconv_forward),
        inputs=_conv_inputs,
        params=_deconv_params(),
        infer_shape=_deconv_infer,
        gradient=_deconv_gradient,
        doc="Transposed convolution (the gradient of Convolution with respect to its data).",
    )
)
register(
    OpDef(
        "_backward_Deconvolution",
        _in_blas_section(_deconv_backward),
        inputs=("out_grad", "data", "weight"),
        outputs=_grad_outputs,
        params=_deconv_params(),
        infer_shape=_backward_infer,
        doc="Gradients of Deconvolution with respect to data, weight and bias.",
    )
)
