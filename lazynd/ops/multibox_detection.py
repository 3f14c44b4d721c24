"""``MultiBoxDetection`` (``mx.nd.contrib.MultiBoxDetection``, SSD's output layer), as in MXNet 1.9.1.

Inputs: ``cls_prob`` (batch, classes, anchors), class 0 the background; ``loc_pred`` (batch,
anchors * 4), offsets as ``box_decode`` reads them (scaled by ``variances``); ``anchor``
(1, anchors, 4) corner boxes (``MultiBoxPrior``).  For each anchor the best class other than
the background (the first of equal probabilities) and its probability make a detection when
that probability is at least ``threshold``.  The detections, sorted by probability (highest
first, equal ones in anchor order), are written as rows ``[class - 1, probability, xmin, ymin,
xmax, ymax]`` (boxes clipped to [0, 1] with ``clip``); rows past them are -1.  Past
``nms_topk`` (when positive) the class is -1, and those rows hold the remaining detections in
anchor order, not by probability (what MXNet 1.9.1 leaves there).  Where suppressed, the
class becomes -1 and the row stays:
going down the list, a detection overlapping an earlier kept one of the same class (any class
with ``force_suppress``) by ``nms_threshold`` or more is suppressed.  With ``nms_threshold <= 0``
there is no sorting, cut or suppression: the detections are listed in anchor order (as MXNet).

As MXNet 1.9.1's CPU operator, ``background_id`` is accepted but class 0 is the background.
The operator is sequential and runs with NumPy on the host (on the GPU, the inputs are copied
there and the results back, on the kernel's stream); its gradient is zero, as MXNet's.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import ShapeError
from .bbox import pairwise_iou
from .params import Param, parse_bool, parse_float, parse_float_tuple, parse_int
from .registry import OpDef, dim_is_known, merge_shape, register, zero_gradient

NAME = "_contrib_MultiBoxDetection"


def _infer_shape(attrs: dict, in_shapes: list, aux_shapes: list) -> tuple[list, list, list]:
    if len(attrs["variances"]) != 4:
        raise ShapeError(f"{NAME}: 'variances' must hold 4 values, got {attrs['variances']}")
    cls_prob, loc_pred, anchor = in_shapes
    if cls_prob is not None and len(cls_prob) != 3:
        raise ShapeError(f"{NAME}: 'cls_prob' must be (batch, classes, anchors), got shape {tuple(cls_prob)}")
    if anchor is not None and (len(anchor) != 3 or anchor[-1] not in (0, 4)):
        raise ShapeError(f"{NAME}: 'anchor' must be (1, anchors, 4), got shape {tuple(anchor)}")
    batch = cls_prob[0] if cls_prob is not None else (loc_pred[0] if loc_pred is not None else 0)
    anchors = (cls_prob[2] if cls_prob is not None else 0) or (anchor[1] if anchor is not None else 0)
    if not anchors and loc_pred is not None and len(loc_pred) == 2 and loc_pred[1]:
        anchors = loc_pred[1] // 4
    loc_pred = merge_shape(NAME, "loc_pred", loc_pred, (batch, anchors * 4))
    anchor = merge_shape(NAME, "anchor", anchor, (1, anchors, 4))
    if cls_prob is not None:
        cls_prob = merge_shape(NAME, "cls_prob", cls_prob, (batch, 0, anchors))
    # a batch of 0 is a size under NumPy shape semantics (an imperative call), else unknown
    batch_known = batch or ((cls_prob is not None or loc_pred is not None) and dim_is_known(batch))
    out = (batch, anchors, 6) if batch_known and anchors else None
    return [cls_prob, loc_pred, anchor], [out], list(aux_shapes)


def decode_locations(offsets: np.ndarray, anchors: np.ndarray, variances: tuple, clip: bool) -> np.ndarray:
    """Corner boxes (anchors, 4) from regression ``offsets`` (anchors, 4) against corner ``anchors``."""
    t = anchors.dtype.type
    width, height = anchors[:, 2] - anchors[:, 0], anchors[:, 3] - anchors[:, 1]
    x, y = (anchors[:, 0] + anchors[:, 2]) / t(2), (anchors[:, 1] + anchors[:, 3]) / t(2)
    center_x = offsets[:, 0] * t(variances[0]) * width + x
    center_y = offsets[:, 1] * t(variances[1]) * height + y
    with np.errstate(over="ignore"):  # a huge size offset gives an infinite box, as in MXNet, and no NumPy warning
        half_w = np.exp(offsets[:, 2] * t(variances[2])) * width / t(2)
        half_h = np.exp(offsets[:, 3] * t(variances[3])) * height / t(2)
    boxes = np.stack([center_x - half_w, center_y - half_h, center_x + half_w, center_y + half_h], axis=-1)
    return np.clip(boxes, t(0), t(1)) if clip else boxes


def detect(probs: np.ndarray, offsets: np.ndarray, anchors: np.ndarray, attrs: dict) -> np.ndarray:
    """The detection rows (anchors, 6) of one image: ``probs`` (classes, anchors), ``offsets`` (anchors, 4)."""
    count = probs.shape[1]
    out = np.full((count, 6), -1, dtype=probs.dtype)
    if probs.shape[0] < 2 or not count:
        return out
    best = np.argmax(probs[1:], axis=0)  # the first of equal probabilities, as MXNet's strict '>'
    score = probs[1:][best, np.arange(count)]
    valid = np.flatnonzero(score >= probs.dtype.type(attrs["threshold"]))
    boxes = decode_locations(offsets, anchors, attrs["variances"], attrs["clip"])
    if attrs["nms_threshold"] <= 0:  # MXNet 1.9.1 sorts, cuts to nms_topk and suppresses only above 0
        rows = out[: valid.size]
        rows[:, 0], rows[:, 1], rows[:, 2:] = best[valid], score[valid], boxes[valid]
        return out
    order = valid[np.argsort(-score[valid], kind="stable")]
    topk = attrs["nms_topk"]
    keep = order.size if topk <= 0 else min(topk, order.size)
    # the first ``keep`` rows in score order; past them, as MXNet 1.9.1 leaves them, the
    # detections in anchor order (of class -1)
    listed = np.concatenate([order[:keep], valid[keep:]])
    rows = out[: order.size]
    rows[:, 0], rows[:, 1], rows[:, 2:] = best[listed], score[listed], boxes[listed]
    rows[keep:, 0] = -1
    for i in range(keep):
        if rows[i, 0] < 0:
            continue
        later = rows[i + 1 : keep]
        overlap = pairwise_iou(np, rows[i : i + 1, 2:], later[:, 2:])[0] >= probs.dtype.type(attrs["nms_threshold"])
        same = np.ones_like(overlap) if attrs["force_suppress"] else later[:, 0] == rows[i, 0]
        later[overlap & same & (later[:, 0] >= 0), 0] = -1
    return out


def _forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    xp = kctx.xp
    cls_prob, loc_pred, anchor = (x if xp is np else x.get() for x in inputs)
    anchors = anchor.reshape(-1, 4).astype(cls_prob.dtype, copy=False)
    result = np.stack(
        [
            detect(probs, offsets.reshape(-1, 4).astype(cls_prob.dtype, copy=False), anchors, attrs)
            for probs, offsets in zip(cls_prob, loc_pred, strict=True)
        ]
    ).reshape(outputs[0].shape)
    outputs[0][...] = result if xp is np else xp.asarray(result)


register(
    OpDef(
        NAME,
        _forward,
        inputs=("cls_prob", "loc_pred", "anchor"),
        params={
            "clip": Param(parse_bool, True, "clip the boxes to [0, 1]"),
            "threshold": Param(parse_float, 0.01, "the lowest probability of a detection"),
            "background_id": Param(parse_int, 0, "accepted; class 0 is the background, as MXNet 1.9.1's CPU operator"),
            "nms_threshold": Param(parse_float, 0.5, "suppress detections overlapping a kept one by this or more"),
            "force_suppress": Param(parse_bool, False, "suppress across classes too"),
            "variances": Param(parse_float_tuple, (0.1, 0.1, 0.2, 0.2), "scales of the offsets"),
            "nms_topk": Param(parse_int, -1, "keep only the nms_topk best detections (-1: all)"),
        },
        infer_shape=_infer_shape,
        gradient=zero_gradient,
        float_data=True,
        doc=__doc__ or "",
    )
)
