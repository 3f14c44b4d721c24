"""``RROIAlign`` (``mx.nd.contrib.RROIAlign``, rotated region pooling for text detection), as in MXNet 1.9.1.

Each row of ``rois`` is ``[batch_index, centre x, centre y, width, height, angle]`` in image
coordinates, the angle in degrees (counter-clockwise); ``spatial_scale`` maps centre and size onto
the feature map, where the region is at least one cell wide and high.  The region is split into
``pooled_size`` bins in its own (rotated) frame; each bin is the mean of a grid of
``sampling_ratio`` x ``sampling_ratio`` points (by default the bin's size in cells, rounded up),
each rotated into the map and read bilinearly as ``ROIAlign`` reads: a point more than one cell
outside the map reads 0, one within a cell of the edge reads the edge.

One loop over the regions, as MXNet's CPU kernel; each region's points, their four bilinear taps
(:mod:`._bilinear`) and the gather from every channel are vectorised over ``kctx.xp``.  MXNet gives
the operator no gradient, and neither does lazynd.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..errors import OperatorError
from ._bilinear import bilinear_taps
from .params import SPATIAL_SCALE, Param, parse_int, parse_shape
from .registry import OpDef, register
from .roi_align import check_region_inputs, refuse_nonfinite_rois

NAME = "_contrib_RROIAlign"


def _points(attrs: dict, roi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The sample rows and columns (ph, pw, grid_h, grid_w) of one region on the map (float32)."""
    f = np.float32
    pooled_h, pooled_w = attrs["pooled_size"]
    scale = f(attrs["spatial_scale"])
    centre_x, centre_y = f(roi[1]) * scale, f(roi[2]) * scale
    width, height = max(f(roi[3]) * scale, f(1)), max(f(roi[4]) * scale, f(1))
    angle = f(roi[5]) * f(math.pi / 180)
    ratio = attrs["sampling_ratio"]
    grid_h = ratio if ratio > 0 else math.ceil(height / pooled_h)
    grid_w = ratio if ratio > 0 else math.ceil(width / pooled_w)
    bin_h, bin_w = height / f(pooled_h), width / f(pooled_w)
    # offsets from the centre along the region's own axes
    along_h = (
        -height / 2
        + np.arange(pooled_h, dtype=f)[:, None] * bin_h
        + (np.arange(grid_h, dtype=f) + f(0.5)) * (bin_h / f(grid_h))
    )
    along_w = (
        -width / 2
        + np.arange(pooled_w, dtype=f)[:, None] * bin_w
        + (np.arange(grid_w, dtype=f) + f(0.5)) * (bin_w / f(grid_w))
    )
    yy, xx = along_h[:, None, :, None], along_w[None, :, None, :]
    cos, sin = f(math.cos(angle)), f(math.sin(angle))
    rows = yy * cos - xx * sin + centre_y
    cols = yy * sin + xx * cos + centre_x
    rows, cols = np.broadcast_arrays(rows, cols)
    return rows, cols


def _forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    xp = kctx.xp
    data, rois = inputs
    out = outputs[0]
    batch, channels, height, width = data.shape
    host = rois if xp is np else rois.get()
    refuse_nonfinite_rois(NAME, host)
    flat = data.reshape(batch, channels, -1)
    for r, roi in enumerate(host):
        index = int(roi[0])
        if not 0 <= index < batch:
            raise OperatorError(f"{NAME}: a region's batch index {index} is outside the batch of {batch} images")
        rows, cols = _points(attrs, roi)
        inside = (rows >= -1) & (rows <= height) & (cols >= -1) & (cols <= width)
        taps = bilinear_taps(
            np, np.clip(rows, 0, height - 1), np.clip(cols, 0, width - 1), height, width
        )  # built on the host, where the region is
        total: Any = 0
        for tap in taps:
            weight = xp.asarray(tap.weight * inside, dtype=data.dtype)
            total = total + flat[index][:, xp.asarray(tap.index)] * weight
        out[r] = total.mean(axis=(3, 4))


def _infer_shape(attrs: dict, in_shapes: list, aux_shapes: list) -> tuple[list, list, list]:
    data, rois = check_region_inputs(NAME, attrs, in_shapes, "batch_index, x, y, width, height, angle")
    out = None if data is None or rois is None else (rois[0], data[1], *attrs["pooled_size"])
    return [data, rois], [out], list(aux_shapes)


register(
    OpDef(
        NAME,
        _forward,
        nonempty_axes={"data": (0, -2, -1)},
        inputs=("data", "rois"),
        params={
            "pooled_size": Param(parse_shape, doc="(height, width) of each region's output"),
            "spatial_scale": Param(SPATIAL_SCALE, doc="ratio of the feature map's size to the image's"),
            "sampling_ratio": Param(parse_int, -1, "points per bin along each axis (-1: the bin's size, rounded up)"),
        },
        infer_shape=_infer_shape,
        float_data=True,
        doc="Average bilinear samples of each rotated region into pooled_size bins (``mx.nd.contrib.RROIAlign``).",
    )
)
