"""Deformable convolutions (``mx.nd.contrib``): ``DeformableConvolution`` (v1) and
``ModulatedDeformableConvolution`` (v2, with a mask), as in MXNet 1.9.1; 2-D, channels second.

A convolution reads, for output cell ``(ho, wo)`` and kernel tap ``(i, j)``, the input at
``(ho * stride - pad + i * dilate)``; here each read moves by a learned offset, ``offset[n, 2 * k]``
down and ``offset[n, 2 * k + 1]`` across for tap ``k = i * kernel_w + j``, and is read bilinearly:
version 2 counts a pixel outside the map as 0 and multiplies the read by ``mask[n, k]``; version 1,
as MXNet's, reads 0 for a point outside ``[0, height) x [0, width)`` and clamps a point within a
pixel of the bottom or right edge onto it.  The input channels are
split into ``num_deformable_group`` groups with their own offsets (and masks): ``offset`` is (batch,
2 * groups * taps, out_h, out_w) and ``mask`` (batch, groups * taps, out_h, out_w).  The sampled
columns then meet the weight in one grouped product, as in ``Convolution``.

Everything is vectorised over ``kctx.xp``: the sample points of every tap and output cell, four
bilinear taps (:mod:`._bilinear`) gathered into columns ``(batch, channels * taps, cells)``, a
batched matrix product.  The backward operator gives the gradients of data (scattered back
through the bilinear weights), offset (the weights' derivatives), mask, weight and bias.
"""

from __future__ import annotations

from typing import Any

from ..errors import OperatorError, ShapeError
from ._bilinear import Tap, bilinear_taps
from .conv_columns import Geometry, zero_gradients_of_an_empty_output
from .params import Param, enum, optional, parse_bool, parse_int, parse_positive_int, parse_shape, parse_workspace
from .products import product
from .registry import BackwardOpGradient, OpDef, merge_shape, register

V1 = "_contrib_DeformableConvolution"
V2 = "_contrib_ModulatedDeformableConvolution"


def _modulated(attrs: dict) -> bool:
    return "im2col_step" in attrs


def _points(xp: Any, attrs: dict, offset: Any) -> tuple[Any, Any]:
    """The sample rows and columns (batch, groups, taps, out_h * out_w) of every tap and output cell."""
    g = Geometry(V2 if _modulated(attrs) else V1, attrs)
    batch, _, out_h, out_w = offset.shape
    kernel_h, kernel_w = g.kernel
    moves = offset.reshape(batch, -1, kernel_h * kernel_w, 2, out_h, out_w)
    dtype = offset.dtype
    base_y = (xp.arange(out_h, dtype=dtype) * g.stride[0] - g.pad[0])[None, :, None] + (
        xp.arange(kernel_h, dtype=dtype) * g.dilate[0]
    ).repeat(kernel_w)[:, None, None]
    base_x = (xp.arange(out_w, dtype=dtype) * g.stride[1] - g.pad[1])[None, None, :] + xp.tile(
        xp.arange(kernel_w, dtype=dtype) * g.dilate[1], kernel_h
    )[:, None, None]
    y = (moves[:, :, :, 0] + base_y).reshape(*moves.shape[:3], -1)
    x = (moves[:, :, :, 1] + base_x).reshape(*moves.shape[:3], -1)
    return y, x


def _v2_taps(xp: Any, y: Any, x: Any, height: int, width: int) -> list[Tap]:
    """Version 2 reads a point with a plain bilinear read, a pixel outside the map counting as 0."""
    return bilinear_taps(xp, y, x, height, width)


def _v1_taps(xp: Any, y: Any, x: Any, height: int, width: int) -> list[Tap]:
    """Version 1 reads 0 for a point outside ``[0, height) x [0, width)`` and clamps one within a
    pixel of the far edges onto them, so the offsets get no gradient there."""
    inside = ((y >= 0) & (y < height) & (x >= 0) & (x < width)).astype(y.dtype)
    free_y, free_x = inside * (y < height - 1), inside * (x < width - 1)
    taps = bilinear_taps(xp, xp.minimum(y, height - 1), xp.minimum(x, width - 1), height, width)
    return [Tap(t.index, t.weight * inside, t.dweight_dy * free_y, t.dweight_dx * free_x) for t in taps]


def _gather(xp: Any, flat: Any, index: Any) -> Any:
    """``flat`` (batch, groups, channels, pixels) read at ``index`` (batch, groups, taps, cells):
    (batch, groups, channels, taps, cells)."""
    batch, groups, channels, _ = flat.shape
    picked = xp.take_along_axis(flat, index.reshape(batch, groups, 1, -1), axis=3)
    return picked.reshape(batch, groups, channels, *index.shape[2:])


def _columns(xp: Any, attrs: dict, data: Any, offset: Any, mask: Any) -> tuple[Any, Any, list]:
    """The sampled columns (batch, groups, channels per group, taps, cells), unmodulated, the
    modulated ones and the taps of the sample points."""
    batch, channels, height, width = data.shape
    groups = attrs["num_deformable_group"]
    flat = data.reshape(batch, groups, channels // groups, height * width)
    y, x = _points(xp, attrs, offset)
    taps = _v2_taps(xp, y, x, height, width) if mask is not None else _v1_taps(xp, y, x, height, width)
    sampled: Any = 0
    for tap in taps:
        sampled = sampled + _gather(xp, flat, tap.index) * tap.weight[:, :, None]
    modulated = sampled if mask is None else sampled * mask.reshape(batch, groups, 1, *y.shape[2:])
    return sampled, modulated, taps


def _grouped_weight(attrs: dict, weight: Any) -> Any:
    groups = attrs["num_group"]
    return weight.reshape(groups, weight.shape[0] // groups, -1)


def _forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    xp = kctx.xp
    data, offset = inputs[:2]
    mask = inputs[2] if _modulated(attrs) else None
    weight = inputs[3 if _modulated(attrs) else 2]
    _, columns, _ = _columns(xp, attrs, data, offset, mask)
    batch, groups = data.shape[0], attrs["num_group"]
    columns = columns.reshape(batch, groups, -1, columns.shape[-1])  # (batch, groups, rows, cells)
    out = product(kctx, _grouped_weight(attrs, weight)[None], columns).reshape(outputs[0].shape)
    if not attrs["no_bias"]:
        out = out + inputs[-1][None, :, None, None]
    outputs[0][...] = out


def _backward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    xp = kctx.xp
    modulated = _modulated(attrs)
    out_grad, data, offset = inputs[:3]
    mask = inputs[3] if modulated else None
    weight = inputs[4 if modulated else 3]
    if zero_gradients_of_an_empty_output(out_grad, outputs):
        return
    sampled, columns, taps = _columns(xp, attrs, data, offset, mask)
    batch, channels, height, width = data.shape
    groups, deformable = attrs["num_group"], attrs["num_deformable_group"]
    head = out_grad.reshape(batch, groups, -1, out_grad.shape[2] * out_grad.shape[3])
    grouped = _grouped_weight(attrs, weight)
    weight_grad = product(kctx, head, columns.reshape(batch, groups, -1, head.shape[-1]).swapaxes(2, 3)).sum(axis=0)
    column_grad = product(kctx, grouped.swapaxes(1, 2)[None], head).reshape(columns.shape)
    if mask is not None:
        mask_grad = (column_grad * sampled).sum(axis=2)
        column_grad = column_grad * mask.reshape(batch, deformable, 1, *columns.shape[3:])
    flat = data.reshape(batch, deformable, channels // deformable, height * width)
    data_grad = xp.zeros(flat.shape, dtype=data.dtype)
    where = (xp.arange(batch)[:, None, None, None, None], xp.arange(deformable)[None, :, None, None, None])
    channel = xp.arange(channels // deformable)[None, None, :, None, None]
    move_y: Any = 0
    move_x: Any = 0
    for tap in taps:
        index = tap.index[:, :, None]
        kctx.backend.scatter_add(data_grad, (*where, channel, index), column_grad * tap.weight[:, :, None])
        pulled = (_gather(xp, flat, tap.index) * column_grad).sum(axis=2)
        move_y = move_y + pulled * tap.dweight_dy
        move_x = move_x + pulled * tap.dweight_dx
    outputs[0][...] = data_grad.reshape(data.shape)
    outputs[1][...] = xp.stack([move_y, move_x], axis=3).reshape(offset.shape)
    rest = outputs[2:]
    if mask is not None:
        rest[0][...] = mask_grad.reshape(mask.shape)
        rest = rest[1:]
    rest[0][...] = weight_grad.reshape(weight.shape)
    if not attrs["no_bias"]:
        rest[1][...] = out_grad.sum(axis=(0, 2, 3))


def _names(attrs: dict) -> tuple[str, ...]:
    names = ("data", "offset", "mask", "weight") if _modulated(attrs) else ("data", "offset", "weight")
    return names if attrs["no_bias"] else (*names, "bias")


def _infer_shape(attrs: dict, in_shapes: list, aux_shapes: list) -> tuple[list, list, list]:
    op = V2 if _modulated(attrs) else V1
    g = Geometry(op, attrs)
    if g.nd != 2 or attrs["layout"] not in (None, "NCHW"):
        raise OperatorError(
            f"{op}: only 2-D NCHW convolutions are supported, got kernel {g.kernel}, layout {attrs['layout']}"
        )
    filters, groups, deformable = attrs["num_filter"], attrs["num_group"], attrs["num_deformable_group"]
    if filters <= 0 or groups <= 0 or deformable <= 0 or filters % groups:
        raise OperatorError(
            f"{op}: num_filter {filters} must be a positive multiple of num_group {groups}, "
            f"num_deformable_group {deformable} positive"
        )
    shapes = dict(zip(_names(attrs), in_shapes, strict=True))
    data = shapes["data"]
    if data is None:
        return in_shapes, [None], aux_shapes
    if len(data) != 4:
        raise ShapeError(f"{op}: 'data' must be 4-D (batch, channels, height, width), got shape {tuple(data)}")
    batch, channels = data[:2]
    if channels % groups or channels % deformable:
        raise ShapeError(
            f"{op}: the {channels} channels of 'data' must divide by num_group {groups} and num_deformable_group {deformable}"
        )
    out_h, out_w = g.out_size(op, tuple(data[2:]))
    taps = g.kernel[0] * g.kernel[1]
    expected = {
        "data": tuple(data),
        "offset": (batch, 2 * deformable * taps, out_h, out_w),
        "mask": (batch, deformable * taps, out_h, out_w),
        "weight": (filters, channels // groups, *g.kernel),
        "bias": (filters,),
    }
    merged = [merge_shape(op, name, shapes[name], expected[name]) for name in shapes]
    return merged, [(batch, filters, out_h, out_w)], aux_shapes


def _params(modulated: bool) -> dict[str, Param]:
    params = {
        "kernel": Param(parse_shape, doc="window size (height, width)"),
        "stride": Param(parse_shape, (), "stride per spatial axis (default 1)"),
        "dilate": Param(parse_shape, (), "dilation per spatial axis (default 1)"),
        "pad": Param(parse_shape, (), "zero padding per spatial axis (default 0)"),
        "num_filter": Param(parse_positive_int, doc="number of output channels"),
        "num_group": Param(parse_int, 1, "number of channel groups of the product"),
        "num_deformable_group": Param(parse_int, 1, "number of channel groups with their own offsets"),
        "workspace": Param(parse_workspace, 1024, "accepted for MXNet compatibility"),
        "no_bias": Param(parse_bool, False, "leave out the bias"),
    }
    if modulated:  # MXNet's order (its generated functions read them positionally)
        params["im2col_step"] = Param(parse_int, 64, "accepted for MXNet compatibility")
    params["layout"] = Param(optional(enum("NCW", "NCHW", "NCDHW")), None, "data layout (NCHW only)")
    return params


def _grad_names(attrs: dict) -> tuple[str, ...]:
    return tuple(f"{name}_grad" for name in _names(attrs))


for _name, _modulated_op in ((V1, False), (V2, True)):
    register(
        OpDef(
            _name,
            _forward,
            inputs=_names,
            params=_params(_modulated_op),
            infer_shape=_infer_shape,
            gradient=BackwardOpGradient(f"_backward{_name}", 5 if _modulated_op else 4),
            float_data=True,
            doc=f"2-D convolution reading its input at learned offsets (``mx.nd.contrib.{_name[9:]}``).",
        )
    )
    register(
        OpDef(
            f"_backward{_name}",
            _backward,
            inputs=lambda attrs: ("out_grad", *_names(attrs)),
            outputs=_grad_names,
            params=_params(_modulated_op),
            infer_shape=lambda attrs, s, a: (s, list(s[1:]), a),
            infer_type=lambda attrs, t, a: (t, list(t[1:]), a),
            doc="Gradients of a deformable convolution with respect to every input.",
        )
    )
