"""Bounding-box operators of MXNet 1.x's ``contrib`` namespace: ``box_iou`` and ``box_nms``.

Boxes are four numbers, ``corner`` (``xmin, ymin, xmax, ymax``) or ``center`` (``x, y, width,
height``).  The area of a box is ``(xmax - xmin) * (ymax - ymin)``; the overlap of two boxes of
no common area (a box of zero area included) is 0.

``box_iou(lhs, rhs)`` gives the overlap of every box of ``lhs`` (..., 4) with every box of
``rhs`` (..., 4), shaped ``lhs.shape[:-1] + rhs.shape[:-1]``; one kernel over ``kctx.xp``.  Its
gradient is zero, as in MXNet.

``box_nms(data)`` (alias ``box_non_maximum_suppression``) is greedy non-maximum suppression,
for each item of the leading axes of ``data`` (..., N, K), where each of the N rows holds a
score at ``score_index``, a box at ``coord_start`` and, with ``id_index >= 0``, a class id.  The
rows whose score is above ``valid_thresh`` (and whose id is not ``background_id``) are sorted by
score, highest first, equal scores in row order, and cut to ``topk`` (``topk=0``, MXNet's fast path,
passes ``data`` through untouched); going down the list, a
row is kept unless it overlaps a row kept before it by more than ``overlap_thresh`` (of the same
class, unless ``force_suppress``).  The output keeps ``data``'s shape: the kept rows first, in
that order (boxes written in ``out_format``), then rows of -1.  A hidden second output records
each output row's source row, for the gradient, which routes each output row's head gradient
back to its source row, as MXNet's.  The suppression is sequential: it runs with NumPy on the
host (on the GPU, the inputs are copied there and the results back, on the kernel's stream).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import OperatorError, ShapeError
from .params import Param, enum, parse_bool, parse_float, parse_int
from .registry import OpDef, dim_is_known, register, zero_gradient

BOX_FORMAT = enum("corner", "center")


def to_corner(xp: Any, boxes: Any, box_format: str) -> Any:
    """``boxes`` (..., 4) as corners (a new array; computed in their dtype)."""
    if box_format == "corner":
        return boxes.copy()
    half = boxes[..., 2:] / boxes.dtype.type(2)
    return xp.concatenate([boxes[..., :2] - half, boxes[..., :2] + half], axis=-1)


def from_corner(xp: Any, boxes: Any, box_format: str) -> Any:
    """Corner ``boxes`` (..., 4) in ``box_format``."""
    if box_format == "corner":
        return boxes
    size = boxes[..., 2:] - boxes[..., :2]
    center = (boxes[..., :2] + boxes[..., 2:]) / boxes.dtype.type(2)
    return xp.concatenate([center, size], axis=-1)


def pairwise_iou(xp: Any, lhs: Any, rhs: Any) -> Any:
    """The overlap (intersection over union) of each corner box of ``lhs`` (L, 4) with each of
    ``rhs`` (R, 4): (L, R), 0 where the union is empty."""
    top_left = xp.maximum(lhs[:, None, :2], rhs[None, :, :2])
    bottom_right = xp.minimum(lhs[:, None, 2:], rhs[None, :, 2:])
    size = xp.maximum(bottom_right - top_left, 0)
    intersection = size[..., 0] * size[..., 1]
    lhs_area = (lhs[:, 2] - lhs[:, 0]) * (lhs[:, 3] - lhs[:, 1])
    rhs_area = (rhs[:, 2] - rhs[:, 0]) * (rhs[:, 3] - rhs[:, 1])
    union = lhs_area[:, None] + rhs_area[None, :] - intersection
    positive = union > 0
    return xp.where(positive, intersection / xp.where(positive, union, 1), 0).astype(lhs.dtype)


# -- box_iou --------------------------------------------------------------------------------------
def _box_iou_infer(attrs: dict, in_shapes: list, aux_shapes: list) -> tuple[list, list, list]:
    for name, shape in zip(("lhs", "rhs"), in_shapes, strict=True):
        if shape is not None and (not len(shape) or (shape[-1] != 4 and dim_is_known(shape[-1]))):
            raise ShapeError(f"_contrib_box_iou: the last axis of '{name}' must be 4 (a box), got shape {tuple(shape)}")
    lhs, rhs = in_shapes
    out = None if lhs is None or rhs is None else (*lhs[:-1], *rhs[:-1])
    return list(in_shapes), [out], list(aux_shapes)


def _box_iou_forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    xp = kctx.xp
    lhs, rhs = (to_corner(xp, x.reshape(-1, 4), attrs["format"]) for x in inputs)
    outputs[0][...] = pairwise_iou(xp, lhs, rhs).reshape(outputs[0].shape)


register(
    OpDef(
        "_contrib_box_iou",
        _box_iou_forward,
        inputs=("lhs", "rhs"),
        params={"format": Param(BOX_FORMAT, "corner", "the boxes' encoding: 'corner' or 'center'")},
        infer_shape=_box_iou_infer,
        gradient=zero_gradient,
        float_data=True,  # MXNet: "only support floating point types"
        doc="The overlap of every box of 'lhs' with every box of 'rhs' (``mx.nd.contrib.box_iou``).",
    )
)


# -- box_nms --------------------------------------------------------------------------------------
NMS = "_contrib_box_nms"


def _check_columns(attrs: dict, width: int) -> None:
    """The column parameters against the row width ``width`` of 'data'."""
    if width < 5:
        raise ShapeError(f"{NMS}: rows of 'data' have {width} values, expected at least 5 (a score and 4 coordinates)")
    if attrs["coord_start"] < 0 or attrs["coord_start"] + 4 > width:
        raise ShapeError(f"{NMS}: coord_start {attrs['coord_start']} leaves no 4 box columns in rows of {width} values")
    if not 0 <= attrs["score_index"] < width:
        raise ShapeError(f"{NMS}: score_index {attrs['score_index']} is outside rows of {width} values")
    if attrs["id_index"] >= width:
        raise ShapeError(f"{NMS}: id_index {attrs['id_index']} is outside rows of {width} values")
    boxes = range(attrs["coord_start"], attrs["coord_start"] + 4)
    for name in ("score_index", "id_index"):
        if attrs[name] in boxes:  # MXNet 1.9.1 refuses a column read both ways
            raise OperatorError(
                f"{NMS}: {name} {attrs[name]} falls among the box columns {boxes.start}..{boxes.stop - 1}, "
                "expected a column of its own"
            )
    if attrs["id_index"] == attrs["score_index"]:
        raise OperatorError(f"{NMS}: id_index {attrs['id_index']} is the score_index, expected a column of its own")


def _box_nms_infer(attrs: dict, in_shapes: list, aux_shapes: list) -> tuple[list, list, list]:
    data = in_shapes[0]
    if data is None:
        return list(in_shapes), [None, None], list(aux_shapes)
    if len(data) < 2:
        raise ShapeError(f"{NMS}: 'data' must be (..., num_boxes, row_width), got shape {tuple(data)}")
    if data[-1]:
        _check_columns(attrs, data[-1])
    return list(in_shapes), [tuple(data), tuple(data[:-1])], list(aux_shapes)


def _box_nms_type(attrs: dict, in_types: list, aux_types: list) -> tuple[list, list, list]:
    return list(in_types), [in_types[0], "int32"], list(aux_types)


def nms_kept_rows(rows: np.ndarray, attrs: dict) -> np.ndarray:
    """The rows of ``rows`` (N, K) that non-maximum suppression keeps, in output order."""
    scores = rows[:, attrs["score_index"]]
    valid = scores > attrs["valid_thresh"]
    id_index = attrs["id_index"]
    ids = rows[:, id_index] if id_index >= 0 else None
    if ids is not None:  # MXNet drops the background class even at its default -1 (GluonCV's padding id)
        valid &= ids != attrs["background_id"]
    candidates = np.flatnonzero(valid)
    order = candidates[np.argsort(-scores[candidates], kind="stable")]
    if attrs["topk"] > 0:
        order = order[: attrs["topk"]]
    start = attrs["coord_start"]
    boxes = to_corner(np, rows[:, start : start + 4], attrs["in_format"])
    kept = []
    while order.size:
        best, rest = order[0], order[1:]
        kept.append(best)
        suppressed = pairwise_iou(np, boxes[best : best + 1], boxes[rest])[0] > attrs["overlap_thresh"]
        if ids is not None and not attrs["force_suppress"]:
            suppressed &= ids[rest] == ids[best]
        order = rest[~suppressed]
    return np.asarray(kept, dtype=np.int64)


def _box_nms_forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    xp = kctx.xp
    data = inputs[0] if xp is np else inputs[0].get()
    _check_columns(attrs, data.shape[-1])
    batch = data.reshape(int(np.prod(data.shape[:-2])), *data.shape[-2:])  # -1 is ambiguous with no boxes
    out = np.full(batch.shape, -1, dtype=data.dtype)
    record = np.full(batch.shape[:-1], -1, dtype=np.int32)
    start = attrs["coord_start"]
    if attrs["topk"] == 0:  # MXNet's fast path: 'data' passes through untouched, formats and thresholds unread
        out[...] = batch
        record[...] = np.arange(batch.shape[-2], dtype=np.int32)
    else:
        for item, rows in enumerate(batch):
            kept = nms_kept_rows(rows, attrs)
            out[item, : kept.size] = rows[kept]
            if attrs["in_format"] != attrs["out_format"]:
                boxes = to_corner(np, rows[kept, start : start + 4], attrs["in_format"])
                out[item, : kept.size, start : start + 4] = from_corner(np, boxes, attrs["out_format"])
            record[item, : kept.size] = kept
    outputs[0][...] = (out if xp is np else xp.asarray(out)).reshape(outputs[0].shape)
    outputs[1][...] = (record if xp is np else xp.asarray(record)).reshape(outputs[1].shape)


def _box_nms_gradient(F: Any, attrs: dict, inputs: list, outputs: list, out_grads: list) -> list:
    return [F._backward_contrib_box_nms(out_grads[0], outputs[1])]


_NMS_PARAMS = {
    "overlap_thresh": Param(parse_float, 0.5, "a row overlapping a kept row by more than this is suppressed"),
    "valid_thresh": Param(parse_float, 0.0, "rows of a score not above this are dropped"),
    "topk": Param(parse_int, -1, "keep only the topk highest scores before suppression (-1: all; 0: 'data' unchanged)"),
    "coord_start": Param(parse_int, 2, "the column of the box's first coordinate"),
    "score_index": Param(parse_int, 1, "the column of the score"),
    "id_index": Param(parse_int, -1, "the column of the class id (-1: no classes)"),
    "background_id": Param(parse_int, -1, "with id_index >= 0, rows of this class id are dropped"),
    "force_suppress": Param(parse_bool, False, "suppress across classes too"),
    "in_format": Param(BOX_FORMAT, "corner", "the boxes' encoding in 'data'"),
    "out_format": Param(BOX_FORMAT, "corner", "the boxes' encoding in the output"),
}

register(
    OpDef(
        NMS,
        _box_nms_forward,
        outputs=("output0", "output1"),  # MXNet 1.9.1's names (the second, hidden, records each row's source)
        num_visible_outputs=1,
        params=_NMS_PARAMS,
        infer_shape=_box_nms_infer,
        infer_type=_box_nms_type,
        gradient=_box_nms_gradient,
        aliases=("_contrib_box_non_maximum_suppression",),
        float_data=True,  # MXNet: "only support floating point types"
        doc="Greedy non-maximum suppression of scored boxes (``mx.nd.contrib.box_nms``).",
    )
)


def _backward_box_nms_forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    head, record = inputs
    grad = outputs[0]
    grad[...] = 0
    width = head.shape[-1]
    flat_head, flat_record = head.reshape(-1, width), record.reshape(-1)
    boxes = record.shape[-1]
    # row r of item b came from row record[b, r] of item b
    items = kctx.xp.arange(flat_record.size) // boxes
    valid = flat_record >= 0
    sources = (items * boxes + flat_record)[valid]
    grad.reshape(-1, width)[sources] = flat_head[valid]


register(
    OpDef(
        "_backward_contrib_box_nms",
        _backward_box_nms_forward,
        inputs=("out_grad", "record"),
        params=_NMS_PARAMS,
        infer_shape=lambda attrs, in_shapes, aux_shapes: (list(in_shapes), [in_shapes[0]], list(aux_shapes)),
        infer_type=lambda attrs, in_types, aux_types: (list(in_types), [in_types[0]], list(aux_types)),
        doc="The gradient of box_nms: each output row's head gradient back at its source row.",
    )
)
