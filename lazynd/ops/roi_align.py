"""``ROIAlign`` (``mx.nd.contrib.ROIAlign``, Mask R-CNN's region pooling), as in MXNet 1.9.1.

Each row of ``rois`` is ``[batch_index, x1, y1, x2, y2]`` in image coordinates, scaled onto the
feature map by ``spatial_scale`` (less half a cell with ``aligned``; without it a region is at
least one cell high and wide).  The region is split into ``pooled_size`` bins; each bin is the
mean of a grid of ``sample_ratio`` x ``sample_ratio`` points (by default ``ceil`` of the bin's
size in cells) read by bilinear interpolation; a point more than one cell outside the map reads
0.  A region of a negative batch index gives 0.  With ``position_sensitive`` (R-FCN), bin (i, j)
of output channel c reads input channel ``(c * ph + i) * pw + j``, so the output has
``channels / (ph * pw)`` channels.

Bilinear weights are products of one weight per axis, and the point grid is a product of one
grid per axis, so each region's output is ``rows @ plane @ cols.T``: ``rows`` (ph, height) and
``cols`` (pw, width) hold the mean weights each bin takes from the map's rows and columns.  They
are built on the host from the regions (read there); each region is then two contractions over
``kctx.xp`` on the part of the map it covers, and the gradient the transposed ones, added into
the data's gradient.  The regions get no gradient, as in MXNet.

A NaN or infinite cell (or head gradient) would meet the zero weight of every bin that does not
read it in those contractions (0 * inf is NaN), where MXNet's per-point sums never see it: the
contractions take it as 0 and :func:`add_nonfinite` adds its terms to the bins whose points tap
it.  Position-sensitive regions take the same rule, each bin from its own input channel.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..errors import OperatorError, ShapeError
from .params import SPATIAL_SCALE, Param, parse_bool, parse_int, parse_shape
from .registry import OpDef, merge_shape, register

NAME = "_contrib_ROIAlign"


def _axis_weights(start: float, length: float, bins: int, samples: int, size: int) -> tuple[np.ndarray, ...]:
    """(bins, size) each: each bin's mean bilinear weights over its ``samples`` points along one axis,
    the cells its points tap, and those a point taps at weight 0 (an integer point's second tap, a
    point on the last cell), which turn an infinite cell into NaN, as in MXNet's sums."""
    weights = np.zeros((bins, size))
    taps = np.zeros((bins, size), dtype=bool)
    zero_taps = np.zeros((bins, size), dtype=bool)
    if samples < 1:
        return weights, taps, zero_taps
    step = length / bins
    for b in range(bins):
        for s in range(samples):
            point = start + b * step + (s + 0.5) * step / samples
            if point < -1.0 or point > size:
                continue  # outside the map: the point reads 0
            point = max(point, 0.0)
            low = int(point)
            if low >= size - 1:
                low = high = size - 1
                point = float(low)
            else:
                high = low + 1
            fraction = point - low
            weights[b, low] += (1.0 - fraction) / samples
            weights[b, high] += fraction / samples
            taps[b, [low, high]] = True
            zero_taps[b, high] |= fraction == 0.0
    return weights, taps, zero_taps


def region_weights(attrs: dict, roi: np.ndarray, height: int, width: int) -> tuple[tuple[np.ndarray, ...], ...]:
    """``(rows (ph, height), cols (pw, width))`` of one region ``[batch_index, x1, y1, x2, y2]``, each
    the weights, taps and zero taps of :func:`_axis_weights`."""
    pooled_h, pooled_w = attrs["pooled_size"]
    offset = 0.5 if attrs["aligned"] else 0.0
    scale = attrs["spatial_scale"]
    x1, y1, x2, y2 = (float(v) * scale - offset for v in roi[1:5])
    roi_w, roi_h = x2 - x1, y2 - y1
    if not attrs["aligned"]:
        roi_w, roi_h = max(roi_w, 1.0), max(roi_h, 1.0)
    elif roi_w <= 0 or roi_h <= 0:  # (MXNet 1.9.1 aborts the process here)
        raise OperatorError(
            f"{NAME}: with aligned, a region must have a positive width and height, got "
            f"[{', '.join(f'{float(v):g}' for v in roi[1:5])}] (width {roi_w:g}, height {roi_h:g} on the map)"
        )
    ratio = attrs["sample_ratio"]
    grid_h = ratio if ratio > 0 else math.ceil(roi_h / pooled_h)
    grid_w = ratio if ratio > 0 else math.ceil(roi_w / pooled_w)
    return (
        _axis_weights(y1, roi_h, pooled_h, grid_h, height),
        _axis_weights(x1, roi_w, pooled_w, grid_w, width),
    )


def extent(weights: np.ndarray) -> slice:
    """The rows (columns) of the map a region reads."""
    used = np.flatnonzero(weights.any(axis=0))
    return slice(int(used[0]), int(used[-1]) + 1) if used.size else slice(0, 0)


def _regions(attrs: dict, xp: Any, rois: Any, data_shape: tuple) -> list[tuple[Any, ...]]:
    """Per region: (batch index, rows, cols, row extent, column extent, (row taps, row zero taps,
    column taps, column zero taps)); index -1: gives 0."""
    batch, _, height, width = data_shape
    host = rois if xp is np else rois.get()
    refuse_nonfinite_rois(NAME, host)
    regions = []
    for roi in host:
        index = int(roi[0])
        if index >= batch:
            raise OperatorError(f"{NAME}: a region's batch index {index} is outside the batch of {batch} images")
        (rows, *row_taps), (cols, *col_taps) = region_weights(attrs, roi, height, width)
        row_span, col_span = extent(row_taps[0]), extent(col_taps[0])
        taps = tuple(t[:, row_span] for t in row_taps) + tuple(t[:, col_span] for t in col_taps)
        regions.append((index, rows[:, row_span], cols[:, col_span], row_span, col_span, taps))
    return regions


def _channel_groups(attrs: dict, channels: int) -> int:
    pooled_h, pooled_w = attrs["pooled_size"]
    if channels % (pooled_h * pooled_w):
        raise ShapeError(
            f"{NAME}: with position_sensitive, the {channels} channels of 'data' must divide by "
            f"pooled_size {pooled_h} x {pooled_w}"
        )
    return channels // (pooled_h * pooled_w)


def _forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    xp = kctx.xp
    data, rois = inputs
    out = outputs[0]
    out[...] = 0
    pooled_h, pooled_w = attrs["pooled_size"]
    finite = bool(xp.isfinite(data).all())  # (one check a call: a device waits for it once)
    for r, (index, rows, cols, row_span, col_span, taps) in enumerate(_regions(attrs, xp, rois, data.shape)):
        if index < 0 or rows.shape[1] == 0 or cols.shape[1] == 0:
            continue
        part = data[index, :, row_span, col_span]
        left, right = xp.asarray(rows, dtype=data.dtype), xp.asarray(cols, dtype=data.dtype)
        clean = part if finite else xp.where(xp.isfinite(part), part, 0)
        if attrs["position_sensitive"]:
            clean = clean.reshape(-1, pooled_h, pooled_w, *part.shape[1:])
            out[r] = xp.einsum("ph,cpqhw,qw->cpq", left, clean, right)
        else:
            out[r] = pool_region(left, clean, right)
        if finite:
            continue
        if attrs["position_sensitive"]:  # every input channel into every bin, then each keeps its own
            every_bin = xp.zeros((part.shape[0], pooled_h, pooled_w), dtype=out.dtype)
            add_nonfinite(kctx, every_bin, left, part, right, taps)
            out[r] += own_bins(every_bin, pooled_h, pooled_w)
        else:
            add_nonfinite(kctx, out[r], left, part, right, taps)


def _backward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    xp = kctx.xp
    out_grad, rois, data = inputs
    grad = outputs[0]
    grad[...] = 0
    pooled_h, pooled_w = attrs["pooled_size"]
    finite = bool(xp.isfinite(out_grad).all())
    for r, (index, rows, cols, row_span, col_span, taps) in enumerate(_regions(attrs, xp, rois, data.shape)):
        if index < 0 or rows.shape[1] == 0 or cols.shape[1] == 0:
            continue
        left, right = xp.asarray(rows, dtype=grad.dtype), xp.asarray(cols, dtype=grad.dtype)
        head = out_grad[r]
        clean = head if finite else xp.where(xp.isfinite(head), head, 0)
        if attrs["position_sensitive"]:
            part = xp.einsum("ph,cpq,qw->cpqhw", left, clean, right)
            part = part.reshape(-1, *part.shape[3:])
        else:
            part = spread_region(left, clean, right)
        if not finite:
            if attrs["position_sensitive"]:  # each bin's gradient as if from its own input channel alone
                head = in_own_bins(xp, head, pooled_h, pooled_w)
            add_nonfinite(kctx, part, left.T, head, right.T, tuple(t.T for t in taps))
        grad[index, :, row_span, col_span] += part


def own_bins(every_bin: Any, pooled_h: int, pooled_w: int) -> Any:
    """(C * ph * pw, ph, pw) -> (C, ph, pw): with ``position_sensitive``, bin (i, j) of output channel
    ``c`` is bin (i, j) of input channel ``(c * ph + i) * pw + j``."""
    bins = pooled_h * pooled_w
    return every_bin.reshape(-1, bins, bins).diagonal(axis1=1, axis2=2).reshape(-1, pooled_h, pooled_w)


def in_own_bins(xp: Any, pooled: Any, pooled_h: int, pooled_w: int) -> Any:
    """(C, ph, pw) -> (C * ph * pw, ph, pw), the converse of :func:`own_bins`: each bin's value in its
    own input channel, 0 in that channel's other bins (which it does not feed)."""
    bins = pooled_h * pooled_w
    every_bin = xp.zeros((pooled.shape[0], bins, bins), dtype=pooled.dtype)
    diagonal = xp.arange(bins)
    every_bin[:, diagonal, diagonal] = pooled.reshape(-1, bins)
    return every_bin.reshape(-1, pooled_h, pooled_w)


def pool_region(rows: Any, part: Any, cols: Any) -> Any:
    """``rows @ part[c] @ cols.T`` for every channel ``c`` of ``part`` (C, h, w): (C, ph, pw).

    As two matrix products over all the channels at once (``einsum`` of the three operands ran
    one unblocked loop over every (c, p, q, h, w): nine tenths of ROIAlign's time)."""
    channels, height, width = part.shape
    by_col = part.reshape(channels * height, width) @ cols.T  # (C * h, pw)
    by_col = by_col.reshape(channels, height, -1).transpose(1, 0, 2).reshape(height, -1)  # (h, C * pw)
    return (rows @ by_col).reshape(rows.shape[0], channels, -1).transpose(1, 0, 2)


def spread_region(rows: Any, grad: Any, cols: Any) -> Any:
    """``rows.T @ grad[c] @ cols`` for every channel ``c`` of ``grad`` (C, ph, pw): (C, h, w),
    the transpose of :func:`pool_region`."""
    channels, pooled_h, pooled_w = grad.shape
    by_row = rows.T @ grad.transpose(1, 0, 2).reshape(pooled_h, -1)  # (h, C * pw)
    by_row = by_row.reshape(-1, channels, pooled_w).transpose(1, 0, 2).reshape(-1, pooled_w)  # (C * h, pw)
    return (by_row @ cols).reshape(channels, -1, cols.shape[1])


def add_nonfinite(kctx: Any, out: Any, left: Any, values: Any, right: Any, taps: tuple) -> None:
    """Add to ``out`` (C, I, J), ``left @ values[c] @ right.T`` taken without the non-finite entries
    of ``values`` (C, A, B), the terms of those entries: each reaches only the outputs whose points
    tap it (``taps``: left's taps and zero taps (I, A), right's (J, B)), as weight times value, or
    NaN where a point taps it at weight 0.  In the products it would reach every output (0 * inf)."""
    xp = kctx.xp
    channel, a, b = xp.nonzero(~xp.isfinite(values))
    left_taps, left_zeros, right_taps, right_zeros = (xp.asarray(t) for t in taps)
    outer = (slice(None), slice(None), None), (slice(None), None, slice(None))  # (n, I, 1) and (n, 1, J)
    reads = left_taps[:, a].T[outer[0]] & right_taps[:, b].T[outer[1]]
    zeros = (left_zeros[:, a].T[outer[0]] & right_taps[:, b].T[outer[1]]) | (
        left_taps[:, a].T[outer[0]] & right_zeros[:, b].T[outer[1]]
    )
    terms = left[:, a].T[outer[0]] * right[:, b].T[outer[1]] * values[channel, a, b][:, None, None]
    terms = xp.where(zeros, xp.nan, terms)
    kctx.backend.scatter_add(out, channel, xp.where(reads, terms, 0).astype(out.dtype))


def refuse_nonfinite_rois(op: str, rois: np.ndarray) -> None:
    """Raise OperatorError naming the first region of ``rois`` (rows on the host) holding a NaN
    or an infinity: there is no pixel to read there (the kernels failed converting it to one)."""
    bad = np.flatnonzero(~np.isfinite(rois).all(axis=1))
    if bad.size:
        raise OperatorError(
            f"{op}: region {bad[0]} of 'rois' holds a non-finite value {rois[bad[0]].tolist()}, expected finite numbers"
        )


def check_region_inputs(op: str, attrs: dict, in_shapes: list, row: str) -> tuple[Any, Any]:
    """The (data, rois) shapes of a region pooling ``op`` with a ``pooled_size`` pair and a
    ``spatial_scale``, checked: data 4-D, rois rows of ``len(row.split(", "))`` values ``[row]``."""
    if len(attrs["pooled_size"]) != 2 or min(attrs["pooled_size"]) < 1:
        raise ShapeError(f"{op}: pooled_size must be two positive sizes, got {attrs['pooled_size']}")
    data, rois = in_shapes
    if data is not None and len(data) != 4:
        raise ShapeError(f"{op}: 'data' must be 4-D (batch, channels, height, width), got shape {tuple(data)}")
    width = len(row.split(", "))
    if rois is not None and (len(rois) != 2 or rois[1] not in (0, width)):
        raise ShapeError(f"{op}: 'rois' must be (num_rois, {width}) rows [{row}], got shape {tuple(rois)}")
    return data, merge_shape(op, "rois", rois, (rois[0], width)) if rois is not None else None


def _infer_shape(attrs: dict, in_shapes: list, aux_shapes: list) -> tuple[list, list, list]:
    data, rois = check_region_inputs(NAME, attrs, in_shapes, "batch_index, x1, y1, x2, y2")
    if data is None or rois is None or not data[1]:
        return [data, rois], [None], list(aux_shapes)
    channels = _channel_groups(attrs, data[1]) if attrs["position_sensitive"] else data[1]
    return [tuple(data), rois], [(rois[0], channels, *attrs["pooled_size"])], list(aux_shapes)


_PARAMS = {
    "pooled_size": Param(parse_shape, doc="(height, width) of each region's output"),
    "spatial_scale": Param(SPATIAL_SCALE, doc="ratio of the feature map's size to the image's"),
    "sample_ratio": Param(parse_int, -1, "points per bin along each axis (-1: the bin's size in cells, rounded up)"),
    "position_sensitive": Param(parse_bool, False, "bin (i, j) reads its own group of channels (R-FCN)"),
    "aligned": Param(parse_bool, False, "shift the regions by half a cell (pixel centres)"),
}

register(
    OpDef(
        NAME,
        _forward,
        inputs=("data", "rois"),
        params=_PARAMS,
        infer_shape=_infer_shape,
        gradient=lambda F, attrs, inputs, outputs, out_grads: [
            F._backward_contrib_ROIAlign(out_grads[0], inputs[1], inputs[0], **attrs),
            None,  # the regions get no gradient (zero), as in MXNet
        ],
        float_data=True,
        doc="Average bilinear samples of each region of interest into pooled_size bins (``mx.nd.contrib.ROIAlign``).",
    )
)
register(
    OpDef(
        "_backward_contrib_ROIAlign",
        _backward,
        inputs=("out_grad", "rois", "data"),
        params=_PARAMS,
        infer_shape=lambda attrs, s, a: (s, [s[2]], a),
        infer_type=lambda attrs, t, a: (t, [t[0]], a),
        shape_only_inputs=(2,),
        doc="Gradient of ROIAlign: each bin's gradient spread over the points it read.",
    )
)
