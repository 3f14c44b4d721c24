"""``MultiBoxTarget`` (``mx.nd.contrib.MultiBoxTarget``, SSD's training targets), as in MXNet 1.9.1.

Inputs: ``anchor`` (1, anchors, 4) corner boxes; ``label`` (batch, objects, 5 or more) rows
``[class, xmin, ymin, xmax, ymax]``, the objects of an image ending at the first row of class
-1 (a padding row: its box must be -1 too); ``cls_pred`` (batch, classes, anchors) unnormalised
class scores, read for negative mining.

For each image, anchors are matched to objects: first one to one, the pair of the highest
overlap (above 1e-6) among unmatched anchors and objects at a time; then, with
``overlap_threshold > 0``, every other anchor to the object it overlaps most, when by more than
``overlap_threshold``.  A matched anchor is positive: class target ``class + 1``, a location
mask of 1 and the location target ``((gx - ax) / aw / v0, (gy - ay) / ah / v1, log(gw / aw) / v2,
log(gh / ah) / v3)`` (centres and sizes of the object g and the anchor a, ``variances`` v).
Without negative mining (``negative_mining_ratio <= 0``) every other anchor is a negative (class
target 0).  With it, the negatives are the anchors of lowest background probability (softmax
of ``cls_pred``; equal ones in anchor order) among those whose best overlap is below
``negative_mining_thresh`` (which must then be above 0), ``ratio`` per positive; the rest get
``ignore_label``, as does every anchor of an image with no objects.  ``minimum_negative_samples`` is accepted and, as in
MXNet 1.9.1's CPU operator, not used.

Outputs: ``loc_target`` and ``loc_mask`` (batch, anchors * 4), ``cls_target`` (batch, anchors).
The matching is sequential and runs with NumPy on the host (on the GPU, the inputs are copied
there and the results back, on the kernel's stream); the gradient is zero, as MXNet's.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import OperatorError, ShapeError
from .bbox import pairwise_iou
from .params import Param, parse_float, parse_float_tuple, parse_int
from .registry import OpDef, dim_is_known, merge_shape, register, zero_gradient

NAME = "_contrib_MultiBoxTarget"
_MATCHED, _NEGATIVE, _IGNORED = 1, 0, -1


def _infer_shape(attrs: dict, in_shapes: list, aux_shapes: list) -> tuple[list, list, list]:
    if len(attrs["variances"]) != 4:
        raise ShapeError(f"{NAME}: 'variances' must hold 4 values, got {attrs['variances']}")
    if attrs["negative_mining_ratio"] > 0 and attrs["negative_mining_thresh"] <= 0:  # MXNet 1.9.1 refuses it too
        raise OperatorError(
            f"{NAME}: negative mining (negative_mining_ratio {attrs['negative_mining_ratio']}) needs "
            f"negative_mining_thresh above 0, got {attrs['negative_mining_thresh']}"
        )
    anchor, label, cls_pred = in_shapes
    # (a 0 is an unknown dim, except in an imperative call's shapes, where it is a size and refused)
    if anchor is not None and (len(anchor) != 3 or (dim_is_known(anchor[-1]) and anchor[-1] != 4)):
        raise ShapeError(f"{NAME}: 'anchor' must be (1, anchors, 4), got shape {tuple(anchor)}")
    if label is not None and (len(label) != 3 or (dim_is_known(label[-1]) and label[-1] < 5)):
        raise ShapeError(f"{NAME}: 'label' must be (batch, objects, 5 or more), got shape {tuple(label)}")
    if cls_pred is not None and len(cls_pred) != 3:
        raise ShapeError(f"{NAME}: 'cls_pred' must be (batch, classes, anchors), got shape {tuple(cls_pred)}")
    batch = (label[0] if label is not None else 0) or (cls_pred[0] if cls_pred is not None else 0)
    anchors = (anchor[1] if anchor is not None else 0) or (cls_pred[2] if cls_pred is not None else 0)
    anchor = merge_shape(NAME, "anchor", anchor, (1, anchors, 4))
    label = merge_shape(NAME, "label", label, (batch, 0, 0)) if label is not None else None
    cls_pred = merge_shape(NAME, "cls_pred", cls_pred, (batch, 0, anchors)) if cls_pred is not None else None
    # a batch of 0 is a size under NumPy shape semantics (an imperative call), else unknown
    known = (batch or ((label is not None or cls_pred is not None) and dim_is_known(batch))) and anchors
    loc = (batch, anchors * 4) if known else None
    return [anchor, label, cls_pred], [loc, loc, (batch, anchors) if known else None], list(aux_shapes)


def _match(overlaps: np.ndarray, threshold: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each anchor's flag (matched or not yet), its object and its best overlap."""
    anchors, objects = overlaps.shape
    flags = np.full(anchors, _IGNORED, np.int64)
    match = np.full(anchors, -1, np.int64)
    best = np.full(anchors, -1.0, overlaps.dtype)
    free = overlaps.copy()
    for _ in range(objects):
        flat = int(np.argmax(free))  # the first of equal overlaps in (anchor, object) order
        anchor, obj = divmod(flat, objects)
        if not free[anchor, obj] > np.float32(1e-6):
            break
        flags[anchor], match[anchor], best[anchor] = _MATCHED, obj, free[anchor, obj]
        free[anchor, :] = -1
        free[:, obj] = -1
    # every other anchor's best overlap, read by negative mining whatever the threshold (as MXNet:
    # an anchor half covered by an object is no negative at negative_mining_thresh 0.5)
    rest = flags != _MATCHED
    nearest = np.argmax(overlaps, axis=1)
    highest = overlaps[np.arange(anchors), nearest]
    better = rest & (highest > best)
    match[better], best[better] = nearest[better], highest[better]
    if threshold > 0:
        flags[rest & (best > overlaps.dtype.type(threshold))] = _MATCHED
    return flags, match, best


def _mine_negatives(flags: np.ndarray, best: np.ndarray, scores: np.ndarray, attrs: dict) -> None:
    """Mark the hardest negatives in ``flags`` (scores: (classes, anchors) of one image)."""
    positives = int((flags == _MATCHED).sum())
    # (MXNet 1.9.1's CPU operator reads no minimum_negative_samples here)
    # (an infinite ratio asks for every other anchor: min() before int(), which has no int for inf)
    wanted = int(min(positives * attrs["negative_mining_ratio"], flags.size - positives)) if positives else 0
    if wanted <= 0:
        return
    candidates = np.flatnonzero((flags != _MATCHED) & (best < best.dtype.type(attrs["negative_mining_thresh"])))
    shifted = np.exp(scores[:, candidates] - scores[:, candidates].max(axis=0))
    background = shifted[0] / shifted.sum(axis=0)
    hardest = candidates[np.argsort(background, kind="stable")[:wanted]]
    flags[hardest] = _NEGATIVE


def _encode(anchors: np.ndarray, objects: np.ndarray, variances: tuple) -> np.ndarray:
    """Location targets (n, 4) of corner ``objects`` against corner ``anchors``."""
    t = anchors.dtype.type
    aw, ah = anchors[:, 2] - anchors[:, 0], anchors[:, 3] - anchors[:, 1]
    ax, ay = (anchors[:, 0] + anchors[:, 2]) * t(0.5), (anchors[:, 1] + anchors[:, 3]) * t(0.5)
    gw, gh = objects[:, 2] - objects[:, 0], objects[:, 3] - objects[:, 1]
    gx, gy = (objects[:, 0] + objects[:, 2]) * t(0.5), (objects[:, 1] + objects[:, 3]) * t(0.5)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.stack(
            [
                (gx - ax) / aw / t(variances[0]),
                (gy - ay) / ah / t(variances[1]),
                np.log(gw / aw) / t(variances[2]),
                np.log(gh / ah) / t(variances[3]),
            ],
            axis=-1,
        )


def image_targets(
    anchors: np.ndarray, label: np.ndarray, scores: np.ndarray, attrs: dict
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(loc_target (anchors, 4), loc_mask (anchors, 4), cls_target (anchors,))`` of one image."""
    dtype = anchors.dtype
    count = anchors.shape[0]
    loc_target, loc_mask = np.zeros((count, 4), dtype), np.zeros((count, 4), dtype)
    cls_target = np.full(count, attrs["ignore_label"], dtype)
    ends = np.flatnonzero(label[:, 0] == -1)
    if ends.size and (label[ends[0], 1:5] != -1).any():  # MXNet 1.9.1 refuses it too
        box = ", ".join(f"{value:g}" for value in label[ends[0], 1:5])
        raise OperatorError(
            f"{NAME}: row {ends[0]} of an image's 'label' is of class -1, the padding that ends its objects, "
            f"but holds the box [{box}]; expected a padding row of -1 (every value)"
        )
    objects = label[: ends[0] if ends.size else label.shape[0]]
    if not objects.shape[0] or not count:
        return loc_target, loc_mask, cls_target
    overlaps = pairwise_iou(np, anchors, objects[:, 1:5])
    flags, match, best = _match(overlaps, attrs["overlap_threshold"])
    if attrs["negative_mining_ratio"] > 0:
        _mine_negatives(flags, best, scores, attrs)
    else:
        flags[flags != _MATCHED] = _NEGATIVE
    positive = flags == _MATCHED
    cls_target[positive] = objects[match[positive], 0] + 1
    cls_target[flags == _NEGATIVE] = 0
    loc_mask[positive] = 1
    loc_target[positive] = _encode(anchors[positive], objects[match[positive], 1:5], attrs["variances"])
    return loc_target, loc_mask, cls_target


def _forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    xp = kctx.xp
    anchor, label, cls_pred = (x if xp is np else x.get() for x in inputs)
    dtype = outputs[0].dtype
    anchors = anchor.reshape(-1, 4).astype(dtype, copy=False)
    results = [
        image_targets(anchors, image_label.astype(dtype, copy=False), scores.astype(dtype, copy=False), attrs)
        for image_label, scores in zip(label, cls_pred, strict=True)
    ]
    for index, target in enumerate(outputs):
        values = np.stack([r[index] for r in results]).reshape(target.shape)
        target[...] = values if xp is np else xp.asarray(values)


register(
    OpDef(
        NAME,
        _forward,
        inputs=("anchor", "label", "cls_pred"),
        outputs=("loc_target", "loc_mask", "cls_target"),
        params={
            "overlap_threshold": Param(parse_float, 0.5, "an anchor overlapping an object by more is a positive"),
            "ignore_label": Param(parse_float, -1.0, "the class target of ignored anchors"),
            "negative_mining_ratio": Param(parse_float, -1.0, "negatives per positive (-1: no mining)"),
            "negative_mining_thresh": Param(parse_float, 0.5, "negatives overlap every object by less"),
            "minimum_negative_samples": Param(parse_int, 0, "accepted, not used (as MXNet 1.9.1's CPU operator)"),
            "variances": Param(parse_float_tuple, (0.1, 0.1, 0.2, 0.2), "scales of the location targets"),
        },
        infer_shape=_infer_shape,
        infer_type=lambda attrs, in_types, aux_types: (
            [t or in_types[0] for t in in_types],
            [in_types[0]] * 3,
            list(aux_types),
        ),
        gradient=zero_gradient,
        float_data=True,
        doc=__doc__ or "",
    )
)
