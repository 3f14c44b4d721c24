"""ROIPooling: max pooling of regions of interest into a fixed ``pooled_size`` grid (Fast R-CNN).

Each row of ``rois`` is ``[batch_index, x1, y1, x2, y2]`` in input-image coordinates;
``spatial_scale`` maps them onto the feature map, where the corners are rounded and the
region (at least one cell high and wide) is split into ``pooled_size`` bins with floor/ceil
edges, clipped to the map.  An empty bin gives 0, and so does a region of a negative batch index
(the padding rows of a batch of regions; its gradient is 0).

The kernel loops over the regions (their geometry is worked out on the host) and pools
each one with two vectorised max passes, over the bins' columns and then their rows, in
``kctx.xp``; a hidden output keeps each maximum's position (row * width + column, -1 for
an empty bin) for the backward operator, which adds the output gradient there.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import OperatorError, ShapeError
from .params import SPATIAL_SCALE, Param, parse_shape
from .registry import OpDef, merge_shape, register
from .roi_align import refuse_nonfinite_rois

_PARAMS = {
    "pooled_size": Param(parse_shape, doc="(height, width) of the pooled output"),
    "spatial_scale": Param(SPATIAL_SCALE, doc="ratio of the feature map's size to the input image's"),
}


def _bins(start: int, end: int, pooled: int, limit: int) -> tuple[np.ndarray, np.ndarray]:
    """First and one-past-last cell of each of ``pooled`` bins over cells ``start..end``."""
    size = max(end - start + 1, 1) / pooled
    index = np.arange(pooled)
    low = np.clip(np.floor(index * size).astype(np.int64) + start, 0, limit)
    high = np.clip(np.ceil((index + 1) * size).astype(np.int64) + start, 0, limit)
    return low, high


def _regions(attrs: dict, rois: np.ndarray, height: int, width: int) -> list[tuple[int, tuple, tuple]]:
    """Per region: (batch index, (row starts, row ends), (column starts, column ends))."""
    pooled_h, pooled_w = attrs["pooled_size"]
    scale = attrs["spatial_scale"]
    refuse_nonfinite_rois("ROIPooling", rois)
    regions = []
    for roi in rois:
        # C's round(): halves away from zero (NumPy's rounds them to even)
        x1, y1, x2, y2 = (int(np.sign(v) * np.floor(abs(v) * scale + 0.5)) for v in roi[1:5])
        regions.append((int(roi[0]), _bins(y1, y2, pooled_h, height), _bins(x1, x2, pooled_w, width)))
    return regions


def _pool_region(xp: Any, image: Any, rows: tuple, cols: tuple) -> tuple[Any, Any]:
    """Maxima (C, PH, PW) of one region of ``image`` (C, H, W) and their positions (-1: empty bin)."""
    channels, height, width = image.shape
    if height == 0 or width == 0:  # every bin is empty: 0 (and no position), as MXNet 1.9.1 gives
        shape = (channels, len(rows[0]), len(cols[0]))
        return xp.zeros(shape, image.dtype), xp.full(shape, -1, dtype=np.int64)
    low = xp.asarray(-np.inf, dtype=image.dtype)
    in_col = (xp.arange(width)[None, :] >= xp.asarray(cols[0])[:, None]) & (
        xp.arange(width)[None, :] < xp.asarray(cols[1])[:, None]
    )  # (PW, W)
    in_row = (xp.arange(height)[None, :] >= xp.asarray(rows[0])[:, None]) & (
        xp.arange(height)[None, :] < xp.asarray(rows[1])[:, None]
    )  # (PH, H)
    by_col = xp.where(in_col[None, None], image[:, :, None, :], low)  # (C, H, PW, W)
    col_max, col_arg = by_col.max(axis=3), by_col.argmax(axis=3)  # (C, H, PW)
    by_row = xp.where(in_row[None, :, :, None], col_max[:, None], low)  # (C, PH, H, PW)
    best, row_arg = by_row.max(axis=2), by_row.argmax(axis=2)  # (C, PH, PW)
    col_at = xp.take_along_axis(col_arg, row_arg, axis=1)  # the column of each row's maximum
    empty = xp.asarray((rows[1] <= rows[0])[:, None] | (cols[1] <= cols[0])[None, :])
    best = xp.where(empty[None], xp.zeros((), image.dtype), best)
    position = xp.where(empty[None], -1, row_arg * width + col_at)
    return best, position


def _host(xp: Any, array: Any) -> np.ndarray:
    """``array`` on the host; a CuPy array is copied on the current (the kernel's) stream."""
    return array if xp is np else array.get()


def _check_batch(index: int, batch: int) -> None:
    if index >= batch:
        raise OperatorError(f"ROIPooling: roi batch index {index} is out of range for a batch of {batch}")


def _forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    xp = kctx.xp
    data, rois = inputs
    out, argmax = outputs
    batch, _, height, width = data.shape
    for r, (b, rows, cols) in enumerate(_regions(attrs, _host(xp, rois), height, width)):
        _check_batch(b, batch)
        if b < 0:  # a padding region (batch index -1): 0, and no gradient, as MXNet 1.9.1
            out[r] = 0
            argmax[r] = -1
            continue
        best, position = _pool_region(xp, data[b], rows, cols)
        out[r] = best
        argmax[r] = position


def _backward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    xp = kctx.xp
    out_grad, rois, argmax = inputs
    grad = outputs[0]
    batch, channels, height, width = grad.shape
    plane = height * width
    flat = xp.zeros(grad.size, dtype=grad.dtype)
    batch_index = rois[:, 0].astype(xp.int64)
    position = argmax.astype(xp.int64)
    # each maximum's index in the flattened (N, C, H, W) gradient
    target = batch_index[:, None, None, None] * (channels * plane) + xp.arange(channels)[None, :, None, None] * plane
    target = target + position
    used = position >= 0
    kctx.backend.scatter_add(flat, target[used], out_grad[used])
    grad[...] = flat.reshape(grad.shape)


def _infer(attrs: dict, in_shapes: list, aux_shapes: list) -> tuple[list, list, list]:
    if len(attrs["pooled_size"]) != 2 or min(attrs["pooled_size"]) < 1:
        raise OperatorError(f"ROIPooling: pooled_size must be two positive sizes, got {attrs['pooled_size']}")
    data, rois = in_shapes
    if data is not None and len(data) != 4:
        raise ShapeError(f"ROIPooling: data must be 4-D (N, C, H, W), got {tuple(data)}")
    if rois is not None and (len(rois) != 2 or rois[1] not in (0, 5)):
        raise ShapeError(f"ROIPooling: rois must be (num_rois, 5), got {tuple(rois)}")
    if rois is not None:
        rois = merge_shape("ROIPooling", "rois", rois, (rois[0], 5))
    if data is None or rois is None:
        return [data, rois], [None, None], aux_shapes
    out = (rois[0], data[1], *attrs["pooled_size"])
    return [tuple(data), rois], [out, out], aux_shapes


register(
    OpDef(
        "ROIPooling",
        _forward,
        inputs=("data", "rois"),
        outputs=("output", "maxidx"),
        num_visible_outputs=1,
        params=dict(_PARAMS),
        infer_shape=_infer,
        float_data=True,  # MXNet: "only support floating point types" (empty bins give 0)
        gradient=lambda F, attrs, inputs, outputs, og: [
            F._backward_ROIPooling(og[0], inputs[1], outputs[1], inputs[0], **attrs),
            None,
        ],
        doc="Max-pool each region of interest ``[batch_index, x1, y1, x2, y2]`` of (N, C, H, W) ``data`` "
        "into (num_rois, C, *pooled_size).",
    )
)
register(
    OpDef(
        "_backward_ROIPooling",
        lambda kctx, attrs, inputs, outputs, aux: _backward(kctx, attrs, inputs[:3], outputs, aux),
        inputs=("out_grad", "rois", "maxidx", "like"),
        params=dict(_PARAMS),
        infer_shape=lambda attrs, s, a: (s, [s[3]], a),
        infer_type=lambda attrs, t, a: (t, [t[0]], a),
        doc="Gradient of ROIPooling: each output gradient added at its maximum's position.",
    )
)
