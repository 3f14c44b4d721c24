"""R-FCN's position-sensitive region pooling: ``PSROIPooling`` and ``DeformablePSROIPooling``
(``mx.nd.contrib``), as in MXNet 1.9.1.

Each row of ``rois`` is ``[batch_index, x1, y1, x2, y2]``; its corners are rounded (halves away
from zero), ``x2``/``y2`` taken one pixel further, and scaled by ``spatial_scale``; the region (at
least 0.1 high and wide) is split into ``pooled_size`` x ``pooled_size`` bins.  Bin (i, j) of output
channel ``c`` reads input channel ``(c * group_size + gi) * group_size + gj``, where ``gi = floor(i *
group_size / pooled_size)`` (``gj`` alike), so ``data`` needs ``output_dim * group_size**2`` channels.

``PSROIPooling`` averages the whole cells of each bin (floor/ceil edges, clipped to the map; an
empty bin gives 0).  The average is a product of one weight per axis, so each region's output is
``rows @ plane @ cols.T`` on the part of the map it covers, as in ``ROIAlign``; one loop over the
regions, as MXNet's CPU kernel.

``DeformablePSROIPooling`` shifts the region half a pixel back and averages ``sample_per_part``
squared bilinear samples per bin; with a ``trans`` input (not ``no_trans``) each bin first moves by
``trans_std * trans[r, 2k:2k+2, pi, pj] * (region width, height)``, where ``k`` is the output
channel's class (``trans`` has 2 channels per class) and ``(pi, pj)`` the bin's cell of a
``part_size`` grid.  Samples more than half a pixel outside the map are skipped, the others are
clamped into it.  All regions, channels, bins and samples are one vectorised gather over
``kctx.xp``; the gradients scatter back into ``data`` and ``trans`` (positions clamped to the edge
give the offsets no gradient).  The regions get no gradient, as in MXNet.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import OperatorError, ShapeError
from ._bilinear import bilinear_taps
from .params import FRACTION, SPATIAL_SCALE, Param, parse_bool, parse_int
from .registry import OpDef, merge_shape, register
from .roi_align import extent

PS = "_contrib_PSROIPooling"
DEFORMABLE = "_contrib_DeformablePSROIPooling"


def _group_size(attrs: dict) -> int:
    return attrs["group_size"] if attrs["group_size"] > 0 else attrs["pooled_size"]


def channel_map(attrs: dict) -> np.ndarray:
    """(output_dim, pooled, pooled): the input channel each output channel's bin reads."""
    pooled, group = attrs["pooled_size"], _group_size(attrs)
    cell = np.clip(np.arange(pooled) * group // pooled, 0, group - 1)
    top = np.arange(attrs["output_dim"])[:, None, None]
    return (top * group + cell[None, :, None]) * group + cell[None, None, :]


def _corners(xp: Any, rois: Any, attrs: dict, shift: float) -> tuple[Any, Any, Any, Any]:
    """Each region's (start x, start y, width, height) on the map (one array of the regions each)."""
    rounded = xp.sign(rois[:, 1:5]) * xp.floor(xp.abs(rois[:, 1:5]) + 0.5)
    scale = rois.dtype.type(attrs["spatial_scale"])
    start = rounded[:, :2] * scale - shift
    size = xp.maximum((rounded[:, 2:] + 1) * scale - shift - start, rois.dtype.type(0.1))
    return start[:, 0], start[:, 1], size[:, 0], size[:, 1]


# -- PSROIPooling ---------------------------------------------------------------------------------
def _bin_weights(start: float, length: float, pooled: int, size: int) -> np.ndarray:
    """(pooled, size): each bin's mean over its whole cells along one axis (float32, as MXNet)."""
    step = np.float32(length) / np.float32(pooled)
    index = np.arange(pooled, dtype=np.float32)
    low = np.clip(np.floor(index * step + np.float32(start)), 0, size).astype(np.int64)
    high = np.clip(np.ceil((index + 1) * step + np.float32(start)), 0, size).astype(np.int64)
    cells = np.arange(size)
    inside = (cells[None, :] >= low[:, None]) & (cells[None, :] < high[:, None])
    return inside / np.maximum(high - low, 1)[:, None]


def _ps_regions(attrs: dict, xp: Any, rois: Any, data_shape: tuple) -> list[tuple[int, Any, Any, slice, slice]]:
    """Per region: (batch index, rows, cols, row extent, column extent)."""
    batch, _, height, width = data_shape
    host = (rois if xp is np else rois.get()).astype(np.float32)
    x1, y1, roi_w, roi_h = _corners(np, host, attrs, 0.0)
    regions = []
    for r, index in enumerate(host[:, 0].astype(np.int64)):
        if not 0 <= index < batch:
            raise OperatorError(f"{PS}: a region's batch index {index} is outside the batch of {batch} images")
        rows = _bin_weights(y1[r], roi_h[r], attrs["pooled_size"], height)
        cols = _bin_weights(x1[r], roi_w[r], attrs["pooled_size"], width)
        row_span, col_span = extent(rows), extent(cols)
        regions.append((int(index), rows[:, row_span], cols[:, col_span], row_span, col_span))
    return regions


def _ps_forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    xp = kctx.xp
    data, rois = inputs
    out = outputs[0]
    out[...] = 0
    channels = xp.asarray(channel_map(attrs))
    for r, (index, rows, cols, row_span, col_span) in enumerate(_ps_regions(attrs, xp, rois, data.shape)):
        planes = data[index][:, row_span, col_span][channels]  # (output_dim, pooled, pooled, h, w)
        left, right = xp.asarray(rows, dtype=data.dtype), xp.asarray(cols, dtype=data.dtype)
        out[r] = xp.einsum("ph,cpqhw,qw->cpq", left, planes, right)


def _ps_backward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    xp = kctx.xp
    out_grad, rois, data = inputs
    grad = outputs[0]
    grad[...] = 0
    channels = xp.asarray(channel_map(attrs))[:, :, :, None, None]
    for r, (index, rows, cols, row_span, col_span) in enumerate(_ps_regions(attrs, xp, rois, data.shape)):
        left, right = xp.asarray(rows, dtype=grad.dtype), xp.asarray(cols, dtype=grad.dtype)
        part = xp.einsum("ph,cpq,qw->cpqhw", left, out_grad[r], right)
        row_index = xp.arange(row_span.start, row_span.stop)[:, None]
        col_index = xp.arange(col_span.start, col_span.stop)[None, :]
        # with group_size < pooled_size several bins read one channel: their gradients add up
        kctx.backend.scatter_add(grad[index], (channels, row_index, col_index), part)


# -- DeformablePSROIPooling -----------------------------------------------------------------------
def _classes(attrs: dict, trans_shape: tuple | None) -> int:
    return 1 if attrs["no_trans"] or trans_shape is None else trans_shape[1] // 2


def _samples(xp: Any, attrs: dict, data: Any, rois: Any, trans: Any) -> dict:
    """The sample points of every (region, output channel, bin row, bin column, sample row, sample column)."""
    pooled, samples = attrs["pooled_size"], attrs["sample_per_part"]
    part = attrs["part_size"] if attrs["part_size"] > 0 else pooled
    dtype = data.dtype.type
    x1, y1, roi_w, roi_h = (v[:, None, None, None, None, None] for v in _corners(xp, rois, attrs, 0.5))
    bin_w, bin_h = roi_w / pooled, roi_h / pooled
    bins = xp.arange(pooled, dtype=data.dtype)
    steps = xp.arange(samples, dtype=data.dtype)
    part_cell = np.floor(np.arange(pooled) / pooled * part).astype(np.int64)
    output_dim = attrs["output_dim"]
    num_classes = _classes(attrs, None if trans is None else trans.shape)
    class_id = np.arange(output_dim) // (output_dim // num_classes)
    offset_x: Any = dtype(0)
    offset_y: Any = dtype(0)
    if trans is not None:
        channel = xp.asarray(2 * class_id)[:, None, None]
        row, col = xp.asarray(part_cell)[None, :, None], xp.asarray(part_cell)[None, None, :]
        scale = dtype(attrs["trans_std"])
        offset_x = trans[:, channel, row, col][..., None, None] * scale * roi_w
        offset_y = trans[:, channel + 1, row, col][..., None, None] * scale * roi_h
    x = (
        bins[None, None, None, :, None, None] * bin_w
        + x1
        + offset_x
        + steps[None, None, None, None, None, :] * (bin_w / samples)
    )
    y = (
        bins[None, None, :, None, None, None] * bin_h
        + y1
        + offset_y
        + steps[None, None, None, None, :, None] * (bin_h / samples)
    )
    height, width = data.shape[2:]
    x, y = xp.broadcast_arrays(x, y)
    valid = ((x >= -0.5) & (x <= width - 0.5) & (y >= -0.5) & (y <= height - 0.5)).astype(data.dtype)
    count = valid.sum(axis=(4, 5))
    return {
        "x": xp.clip(x, 0, width - 1),
        "y": xp.clip(y, 0, height - 1),
        # the offsets' gradient stops where a sample is clamped to the edge
        "free_x": (x > 0) & (x < width - 1),
        "free_y": (y > 0) & (y < height - 1),
        "share": valid / xp.maximum(count, 1)[..., None, None],  # each sample's part of its bin's mean
        "batch": rois[:, 0].astype(xp.int64)[:, None, None, None, None, None],
        "channel": xp.asarray(channel_map(attrs))[None, :, :, :, None, None],
        "pick": (class_id, part_cell),
    }


def _check_batch(xp: Any, rois: Any, batch: int) -> None:
    index = (rois if xp is np else rois.get())[:, 0].astype(np.int64)
    bad = index[(index < 0) | (index >= batch)]
    if bad.size:
        raise OperatorError(f"{DEFORMABLE}: a region's batch index {bad[0]} is outside the batch of {batch} images")


def _deformable_forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    xp = kctx.xp
    data, rois = inputs[:2]
    _check_batch(xp, rois, data.shape[0])
    points = _samples(xp, attrs, data, rois, None if attrs["no_trans"] else inputs[2])
    flat = data.reshape(*data.shape[:2], -1)
    total: Any = 0
    for tap in bilinear_taps(xp, points["y"], points["x"], *data.shape[2:]):
        total = total + flat[points["batch"], points["channel"], tap.index] * tap.weight
    outputs[0][...] = (total * points["share"]).sum(axis=(4, 5))


def _deformable_backward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    xp = kctx.xp
    out_grad, data, rois = inputs[:3]
    trans = None if attrs["no_trans"] else inputs[3]
    points = _samples(xp, attrs, data, rois, trans)
    flat = data.reshape(*data.shape[:2], -1)
    data_grad = xp.zeros(flat.shape, dtype=data.dtype)
    head = out_grad[..., None, None] * points["share"]
    pulled_y: Any = 0
    pulled_x: Any = 0
    for tap in bilinear_taps(xp, points["y"], points["x"], *data.shape[2:]):
        kctx.backend.scatter_add(data_grad, (points["batch"], points["channel"], tap.index), head * tap.weight)
        if trans is not None:
            value = flat[points["batch"], points["channel"], tap.index] * head
            pulled_y = pulled_y + value * tap.dweight_dy
            pulled_x = pulled_x + value * tap.dweight_dx
    outputs[0][...] = data_grad.reshape(data.shape)
    if trans is None:
        return
    _, _, roi_w, roi_h = _corners(xp, rois, attrs, 0.5)
    std = data.dtype.type(attrs["trans_std"])
    move_x = (pulled_x * points["free_x"]).sum(axis=(4, 5)) * std * roi_w[:, None, None, None]
    move_y = (pulled_y * points["free_y"]).sum(axis=(4, 5)) * std * roi_h[:, None, None, None]
    class_id, part_cell = points["pick"]
    trans_grad = xp.zeros(trans.shape, dtype=trans.dtype)
    region = xp.arange(len(rois))[:, None, None, None]
    cells = (xp.asarray(part_cell)[None, None, :, None], xp.asarray(part_cell)[None, None, None, :])
    channel = xp.asarray(2 * class_id)[None, :, None, None]
    kctx.backend.scatter_add(trans_grad, (region, channel, *cells), move_x)
    kctx.backend.scatter_add(trans_grad, (region, channel + 1, *cells), move_y)
    outputs[1][...] = trans_grad


# -- shapes and registration ----------------------------------------------------------------------
def _infer_shape(name: str, attrs: dict, in_shapes: list, aux_shapes: list) -> tuple[list, list, list]:
    pooled, group = attrs["pooled_size"], _group_size(attrs)
    if pooled < 1 or group < 1 or attrs["output_dim"] < 1:
        raise ShapeError(
            f"{name}: pooled_size, group_size and output_dim must be positive, got "
            f"pooled_size {pooled}, group_size {group}, output_dim {attrs['output_dim']}"
        )
    if name == DEFORMABLE and attrs["sample_per_part"] < 1:
        raise ShapeError(f"{name}: sample_per_part must be positive, got {attrs['sample_per_part']}")
    data, rois = in_shapes[:2]
    if data is not None and (len(data) != 4 or (data[1] and data[1] < attrs["output_dim"] * group * group)):
        raise ShapeError(
            f"{name}: 'data' must be 4-D with at least output_dim * group_size**2 = "
            f"{attrs['output_dim'] * group * group} channels, got shape {tuple(data)}"
        )
    if rois is not None and (len(rois) != 2 or rois[1] not in (0, 5)):
        raise ShapeError(f"{name}: 'rois' must be (num_rois, 5), got shape {tuple(rois)}")
    rois = merge_shape(name, "rois", rois, (rois[0], 5)) if rois is not None else None
    shapes = [data, rois]
    if len(in_shapes) == 3:
        trans, part = in_shapes[2], attrs["part_size"] if attrs["part_size"] > 0 else pooled
        if trans is not None and (
            len(trans) != 4 or trans[1] % 2 or trans[2:] != (part, part) or attrs["output_dim"] % (trans[1] // 2 or 1)
        ):
            raise ShapeError(
                f"{name}: 'trans' must be (num_rois, 2 * classes, {part}, {part}) with classes dividing output_dim "
                f"{attrs['output_dim']}, got shape {tuple(trans)}"
            )
        shapes.append(trans if trans is not None or rois is None else None)
    out = None if rois is None else (rois[0], attrs["output_dim"], pooled, pooled)
    return shapes, [out], list(aux_shapes)


_PS_PARAMS = {
    "spatial_scale": Param(SPATIAL_SCALE, doc="ratio of the feature map's size to the image's"),
    "output_dim": Param(parse_int, doc="output channels"),
    "pooled_size": Param(parse_int, doc="bins per side of each region"),
    "group_size": Param(parse_int, 0, "channel groups per side (0: pooled_size)"),
}
_DEFORMABLE_PARAMS = {  # MXNet's order (its generated functions read them positionally)
    **{name: _PS_PARAMS[name] for name in ("spatial_scale", "output_dim")},
    "group_size": Param(parse_int, doc="channel groups per side"),
    "pooled_size": _PS_PARAMS["pooled_size"],
    "part_size": Param(parse_int, 0, "cells per side of the offset grid (0: pooled_size)"),
    "sample_per_part": Param(parse_int, 1, "bilinear samples per side of each bin"),
    "trans_std": Param(FRACTION, 0.0, "scale of the offsets"),
    "no_trans": Param(parse_bool, False, "no offsets (no 'trans' input)"),
}


def _deformable_inputs(attrs: dict) -> tuple[str, ...]:
    return ("data", "rois") if attrs["no_trans"] else ("data", "rois", "trans")


def _deformable_gradient(F: Any, attrs: dict, inputs: list, outputs: list, og: list) -> list:
    grads = F._backward_contrib_DeformablePSROIPooling(og[0], *inputs, **attrs)
    if attrs["no_trans"]:
        return [grads, None]
    return [grads[0], None, grads[1]]  # the regions get no gradient (zero), as in MXNet


register(
    OpDef(
        PS,
        _ps_forward,
        inputs=("data", "rois"),
        params=_PS_PARAMS,
        infer_shape=lambda attrs, s, a: _infer_shape(PS, attrs, s, a),
        gradient=lambda F, attrs, inputs, outputs, og: [
            F._backward_contrib_PSROIPooling(og[0], inputs[1], inputs[0], **attrs),
            None,
        ],
        float_data=True,
        doc="Position-sensitive average pooling of regions of interest (R-FCN, ``mx.nd.contrib.PSROIPooling``).",
    )
)
register(
    OpDef(
        "_backward_contrib_PSROIPooling",
        _ps_backward,
        inputs=("out_grad", "rois", "data"),
        params=_PS_PARAMS,
        infer_shape=lambda attrs, s, a: (s, [s[2]], a),
        infer_type=lambda attrs, t, a: (t, [t[0]], a),
        shape_only_inputs=(2,),
        doc="Gradient of PSROIPooling: each bin's gradient spread evenly over its cells.",
    )
)
register(
    OpDef(
        DEFORMABLE,
        _deformable_forward,
        nonempty_axes={"data": (-2, -1)},
        inputs=_deformable_inputs,
        params=_DEFORMABLE_PARAMS,
        infer_shape=lambda attrs, s, a: _infer_shape(DEFORMABLE, attrs, s, a),
        gradient=_deformable_gradient,
        float_data=True,
        doc="Deformable position-sensitive pooling of regions of interest (``mx.nd.contrib.DeformablePSROIPooling``).",
    )
)
register(
    OpDef(
        "_backward_contrib_DeformablePSROIPooling",
        _deformable_backward,
        inputs=lambda attrs: ("out_grad", *_deformable_inputs(attrs)),
        outputs=lambda attrs: ("data_grad",) if attrs["no_trans"] else ("data_grad", "trans_grad"),
        params=_DEFORMABLE_PARAMS,
        infer_shape=lambda attrs, s, a: (s, [s[1]] if attrs["no_trans"] else [s[1], s[3]], a),
        infer_type=lambda attrs, t, a: (t, [t[1]] if attrs["no_trans"] else [t[1], t[3]], a),
        doc="Gradients of DeformablePSROIPooling with respect to data and trans.",
    )
)
