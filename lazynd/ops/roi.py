"""ROIPooling: max pooling of regions of interest into a fixed ``pooled_size`` grid (Fast R-CNN).

Each row of ``rois`` is ``[batch_index, x1, y1, x2, y2]`` in input-image coordinates;
``spatial_scale`` maps them onto the feature map, where the corners are rounded and the
region (at least one cell high and wide) is split into ``pooled_size`` bins with floor/ceil
edges, clipped to the map.  An empty bin gives 0, and so does a region of a negative batch index
(the padding rows of a batch of regions; its gradient is 0).

The regions' geometry (every bin's first row and column and its size) is worked out on the host
for all regions at once; the maxima of all bins then come from one sparse table of maxima over
the maps (:mod:`.window_max`), in ``kctx.xp``, with no loop over regions or bins.  A hidden
output keeps each maximum's position (row * width + column, -1 for an empty bin) for the
backward operator, which adds the output gradient there in one scatter.  MXNet 1.9.1 keeps these
positions in the data's type; we keep them in int32 (:data:`POSITION_TYPE`), as float16 holds
integers exactly only up to 2048 (a 64 x 64 map would send gradients to rounded cells), float32
only up to 2**24.  The hidden output is never part of the symbol's JSON, so MXNet reads it the same.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import OperatorError, ShapeError
from .params import SPATIAL_SCALE, Param, parse_shape
from .registry import OpDef, merge_shape, register
from .roi_align import refuse_nonfinite_rois
from .window_max import rectangle_max

# the type of the hidden positions; a map of more cells than it counts is refused (the table of
# maxima over such a map would not fit in memory anyway)
POSITION_TYPE = "int32"

_PARAMS = {
    "pooled_size": Param(parse_shape, doc="(height, width) of the pooled output"),
    "spatial_scale": Param(SPATIAL_SCALE, doc="ratio of the feature map's size to the input image's"),
}


def _bins(start: np.ndarray, end: np.ndarray, pooled: int, limit: int) -> tuple[np.ndarray, np.ndarray]:
    """First and one-past-last cell (regions, pooled) of each region's bins over cells ``start..end``."""
    size = np.maximum(end - start + 1, 1) / pooled
    index = np.arange(pooled)
    low = np.clip(np.floor(index * size[:, None]).astype(np.int64) + start[:, None], 0, limit)
    high = np.clip(np.ceil((index + 1) * size[:, None]).astype(np.int64) + start[:, None], 0, limit)
    return low, high


def _regions(attrs: dict, rois: np.ndarray, batch: int, height: int, width: int) -> tuple[np.ndarray, ...]:
    """Batch indices (regions,), bins' first rows and rows (regions, PH), first columns and columns
    (regions, PW) of every region: a bin of no rows or columns is empty."""
    pooled_h, pooled_w = attrs["pooled_size"]
    refuse_nonfinite_rois("ROIPooling", rois)
    index = rois[:, 0].astype(np.int64)
    beyond = index[index >= batch]
    if beyond.size:  # the first such region, as the loop over them named it
        raise OperatorError(f"ROIPooling: roi batch index {int(beyond[0])} is out of range for a batch of {batch}")
    corners = rois[:, 1:5]
    # C's round(): halves away from zero (NumPy's rounds them to even), in the regions' type;
    # clipped far outside any map so that the cells stay integers
    scaled = np.sign(corners) * np.floor(np.abs(corners) * attrs["spatial_scale"] + 0.5)
    x1, y1, x2, y2 = np.clip(scaled.astype(np.float64), -(2.0**40), 2.0**40).astype(np.int64).T
    (top, bottom), (left, right) = _bins(y1, y2, pooled_h, height), _bins(x1, x2, pooled_w, width)
    return index, top, bottom - top, left, right - left


def _forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    xp = kctx.xp
    data, rois = inputs
    out, argmax = outputs
    batch, channels, height, width = data.shape
    index, top, rows, left, cols = _regions(attrs, rois if xp is np else rois.get(), batch, height, width)
    # an empty bin, and every bin of a padding region (batch index -1), gives 0 and no position,
    # as MXNet 1.9.1
    empty = (rows <= 0)[:, :, None] | (cols <= 0)[:, None, :] | (index < 0)[:, None, None]
    if empty.all() or channels == 0:
        out[...] = 0
        argmax[...] = -1
        return
    shape = empty.shape
    best, position = rectangle_max(
        xp,
        data.transpose(0, 2, 3, 1),
        np.broadcast_to(np.maximum(index, 0)[:, None, None], shape),
        np.where(empty, 0, top[:, :, None]),
        np.where(empty, 0, left[:, None, :]),
        np.where(empty, 1, rows[:, :, None]),
        np.where(empty, 1, cols[:, None, :]),
    )  # (regions, PH, PW, channels)
    hole = xp.asarray(empty)[:, None]
    out[...] = xp.where(hole, xp.zeros((), data.dtype), best.transpose(0, 3, 1, 2))
    argmax[...] = xp.where(hole, -1, position.transpose(0, 3, 1, 2))


def _backward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    xp = kctx.xp
    out_grad, rois, argmax = inputs
    grad = outputs[0]
    batch, channels, height, width = grad.shape
    plane = height * width
    # one slot past the gradient takes the bins of no maximum (empty, or of a padding region):
    # cheaper than picking the others out of both arrays
    flat = xp.zeros(grad.size + 1, dtype=grad.dtype)
    index = np.int32 if grad.size < np.iinfo(np.int32).max else np.int64
    batch_index = rois[:, 0].astype(index)
    position = argmax.astype(index)
    # each maximum's index in the flattened (N, C, H, W) gradient
    base = (
        batch_index[:, None, None, None] * (channels * plane)
        + xp.arange(channels, dtype=index)[None, :, None, None] * plane
    )
    target = xp.where(position >= 0, position + base, index(grad.size))
    kctx.backend.scatter_add(flat, target.reshape(-1), out_grad.reshape(-1))
    grad[...] = flat[:-1].reshape(grad.shape)


def _infer(attrs: dict, in_shapes: list, aux_shapes: list) -> tuple[list, list, list]:
    if len(attrs["pooled_size"]) != 2 or min(attrs["pooled_size"]) < 1:
        raise OperatorError(f"ROIPooling: pooled_size must be two positive sizes, got {attrs['pooled_size']}")
    data, rois = in_shapes
    if data is not None and len(data) != 4:
        raise ShapeError(f"ROIPooling: data must be 4-D (N, C, H, W), got {tuple(data)}")
    if data is not None and None not in data[2:] and data[2] * data[3] > np.iinfo(POSITION_TYPE).max:
        raise ShapeError(
            f"ROIPooling: data's map of {data[2]} x {data[3]} cells has more than the "
            f"{np.iinfo(POSITION_TYPE).max} cells that the {POSITION_TYPE} positions of its maxima count"
        )
    if rois is not None and (len(rois) != 2 or rois[1] not in (0, 5)):
        raise ShapeError(f"ROIPooling: rois must be (num_rois, 5), got {tuple(rois)}")
    if rois is not None:
        rois = merge_shape("ROIPooling", "rois", rois, (rois[0], 5))
    if data is None or rois is None:
        return [data, rois], [None, None], aux_shapes
    out = (rois[0], data[1], *attrs["pooled_size"])
    return [tuple(data), rois], [out, out], aux_shapes


def _infer_type(attrs: dict, in_types: list, aux_types: list) -> tuple[list, list, list]:
    """Data and regions of one type, the output of theirs and the hidden positions int32."""
    dtype = next((t for t in in_types if t is not None), None)
    if None not in in_types and in_types[0] != in_types[1]:
        raise OperatorError(f"ROIPooling: input 'rois' has dtype {in_types[1]}, expected {dtype} like 'data'")
    return [dtype, dtype], [dtype, POSITION_TYPE], aux_types


register(
    OpDef(
        "ROIPooling",
        _forward,
        inputs=("data", "rois"),
        outputs=("output", "maxidx"),
        num_visible_outputs=1,
        params=dict(_PARAMS),
        infer_shape=_infer,
        infer_type=_infer_type,
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
