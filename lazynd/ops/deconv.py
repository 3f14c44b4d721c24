"""Deconvolution (transposed convolution, 1-D to 3-D) and its backward.

The forward is one batched ``matmul`` of the weight with the data into columns,
folded back by ``col2im``; the backward is ``im2col`` of the output gradient and
two GEMMs.  It shares its parameters, shape checks and the BLAS section with
:mod:`~lazynd.ops.conv`.
"""

from __future__ import annotations

import math
from typing import Any

from ..errors import OperatorError, ShapeError
from .conv import (
    _backward_infer,
    _bias_shape,
    _checked_geometry,
    _common_params,
    _conv_inputs,
    _grad_outputs,
    _in_blas_section,
)
from .conv_columns import Geometry, col2im, im2col, zero_gradients_of_an_empty_output
from .params import Param, parse_shape
from .products import product
from .registry import BackwardOpGradient, OpDef, merge_shape, register


# -- Deconvolution (the transpose of Convolution) ------------------------------------------------
def _deconv_params() -> dict[str, Param]:
    """Convolution's parameters with ``adj`` and ``target_shape`` after ``pad``: MXNet's order,
    which its generated functions read positionally."""
    common = _common_params(True)
    params = {name: common[name] for name in ("kernel", "stride", "dilate", "pad")}
    params["adj"] = Param(parse_shape, (), "extra size added at the end of each output axis")
    params["target_shape"] = Param(parse_shape, (), "output spatial shape; sets pad and adj")
    params.update((name, param) for name, param in common.items() if name not in params)
    return params


def _deconv_geometry(attrs: dict, spatial: tuple[int, ...], ndim: int | None = None) -> tuple[Geometry, tuple, tuple]:
    """The geometry with target_shape resolved into pad, plus (adj, output spatial size)."""
    g = Geometry("Deconvolution", attrs, ndim)
    adj = tuple(attrs["adj"]) or (0,) * g.nd
    target = tuple(attrs["target_shape"])
    if not any(target):
        target = ()  # MXNet writes an unset target_shape as zeros, e.g. (0, 0)
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
    if any(o <= 0 < size for o, size in zip(out, spatial, strict=True)):
        raise ShapeError(
            f"Deconvolution: pad {g.pad} leaves no output for input size {spatial} "
            f"(kernel {g.kernel}, stride {g.stride}, dilate {g.dilate}, adj {adj}): output size {out}"
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
    col = product(kctx, wm, xm).reshape(n, groups * fg, *g.kernel, *x.shape[2:])
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
    if zero_gradients_of_an_empty_output(out_grad, outputs):
        return
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
    if outputs[0] is not None:  # None: a gradient nobody reads (see conv._conv_backward)
        wm = w.reshape(groups, c_in // groups, -1)
        g.to_nc(outputs[0])[...] = product(kctx, wm, col).reshape(x.shape)
    if outputs[1] is not None:
        xm = xp.ascontiguousarray(x).reshape(n, groups, c_in // groups, positions)
        dw = product(kctx, xm, col.transpose(0, 1, 3, 2)).sum(axis=0)
        g.to_nc(outputs[1])[...] = dw.reshape(w.shape)
    if not attrs["no_bias"] and outputs[2] is not None:
        outputs[2][...] = dy.sum(axis=(0, *range(2, dy.ndim)))


register(
    OpDef(
        "Deconvolution",
        _in_blas_section(_deconv_forward),
        gpu_float16_as_float32=True,
        blas_heavy=True,
        inputs=_conv_inputs,
        positional_inputs=("data", "weight", "bias"),  # MXNet lists bias before the parameters, whatever no_bias
        params=_deconv_params(),
        infer_shape=_deconv_infer,
        # one backward operator: autograd leaves out the gradient of a data that takes none (a
        # generator's noise) and writes the weight's into its gradient buffer
        gradient=BackwardOpGradient("_backward_Deconvolution", 2),
        doc="Transposed convolution (the gradient of Convolution with respect to its data).",
    )
)
register(
    OpDef(
        "_backward_Deconvolution",
        _in_blas_section(_deconv_backward),
        gpu_float16_as_float32=True,
        blas_heavy=True,
        inputs=("out_grad", "data", "weight"),
        outputs=_grad_outputs,
        optional_outputs=True,
        params=_deconv_params(),
        infer_shape=_backward_infer,
        doc="Gradients of Deconvolution with respect to data, weight and bias.",
    )
)
