"""Region proposals of Faster R-CNN's RPN: ``Proposal`` and ``MultiProposal`` (``mx.nd.contrib``), as in MXNet 1.9.1.

Inputs: ``cls_prob`` (batch, 2A, H, W), the background then the foreground score of each of the
A anchors at every cell; ``bbox_pred`` (batch, 4A, H, W), each anchor's box deltas; ``im_info``
(batch, 3), each image's height, width and scale.  The A base anchors are built from a
``feature_stride`` square cell, one per ratio then scale (widths and heights rounded as MXNet's
``GenerateAnchors``), and shifted to every cell.  The deltas move them (centre offsets and log
sizes, or with ``iou_loss`` plain corner offsets), the boxes are clipped to the image, and those
of cells outside the image's real extent (its size over ``feature_stride``, which must fit in the
feature map) or smaller than ``rpn_min_size * scale`` get score -1.
The ``rpn_pre_nms_top_n`` best are kept, greedy non-maximum suppression at ``threshold`` keeps up
to ``rpn_post_nms_top_n``, and when fewer survive the list is repeated to fill the output:
``rois`` (batch * post, 5) rows ``[image index, x1, y1, x2, y2]`` and, shown with
``output_score``, ``score`` (batch * post, 1).  Boxes use MXNet's inclusive pixel sizes
(``x2 - x1 + 1``).  ``Proposal`` runs on one image, ``MultiProposal`` on any number.  As in
MXNet, ``Proposal``'s shapes are those of one image whatever the batch it is inferred with (Faster
R-CNN scripts infer the whole batch's shapes, then give each device one image) and the batch of
one is checked when it runs.

Everything is computed in float32 with NumPy on the host (the suppression is sequential; on the
GPU the inputs are copied there and the results back, on the kernel's stream); anchors, deltas,
clipping and the overlaps are vectorised, the suppression loops over the kept boxes.  The inputs
get zero gradients, as in MXNet.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import OperatorError, ShapeError
from .params import Param, parse_bool, parse_float, parse_float_tuple, parse_int
from .registry import OpDef, register, zero_gradient

F32 = np.float32


def base_anchors(stride: int, ratios: tuple, scales: tuple) -> np.ndarray:
    """The (len(ratios) * len(scales), 4) anchors of one cell, ratio-major, as MXNet builds them."""
    size = F32(stride)
    centre = F32(0.5) * (size - 1)
    anchors = []
    for ratio in ratios:
        width = np.floor(np.sqrt(size * size / F32(ratio)) + F32(0.5))
        height = np.floor(width * F32(ratio) + F32(0.5))
        for scale in scales:
            half_w, half_h = F32(0.5) * (width * F32(scale) - 1), F32(0.5) * (height * F32(scale) - 1)
            anchors.append([centre - half_w, centre - half_h, centre + half_w, centre + half_h])
    return np.asarray(anchors, dtype=F32)


def _decode(anchors: np.ndarray, deltas: np.ndarray, iou_loss: bool) -> np.ndarray:
    """Boxes (n, 4) from ``anchors`` (n, 4) moved by ``deltas`` (n, 4)."""
    if iou_loss:
        return anchors + deltas
    width = anchors[:, 2] - anchors[:, 0] + F32(1)
    height = anchors[:, 3] - anchors[:, 1] + F32(1)
    centre_x = anchors[:, 0] + F32(0.5) * (width - F32(1))
    centre_y = anchors[:, 1] + F32(0.5) * (height - F32(1))
    new_x = deltas[:, 0] * width + centre_x
    new_y = deltas[:, 1] * height + centre_y
    new_w = np.exp(deltas[:, 2]) * width
    new_h = np.exp(deltas[:, 3]) * height
    half_w, half_h = F32(0.5) * (new_w - F32(1)), F32(0.5) * (new_h - F32(1))
    return np.stack([new_x - half_w, new_y - half_h, new_x + half_w, new_y + half_h], axis=1)


def suppress(boxes: np.ndarray, threshold: float, limit: int) -> list[int]:
    """Greedy non-maximum suppression of ``boxes`` (n, 4), best first, inclusive pixel areas:
    the indices of up to ``limit`` kept boxes."""
    area = (boxes[:, 2] - boxes[:, 0] + F32(1)) * (boxes[:, 3] - boxes[:, 1] + F32(1))
    alive = np.ones(len(boxes), dtype=bool)
    kept: list[int] = []
    for i in range(len(boxes)):
        if len(kept) >= limit:
            break
        if not alive[i]:
            continue
        kept.append(i)
        rest = boxes[i + 1 :]
        width = np.maximum(F32(0), np.minimum(boxes[i, 2], rest[:, 2]) - np.maximum(boxes[i, 0], rest[:, 0]) + F32(1))
        height = np.maximum(F32(0), np.minimum(boxes[i, 3], rest[:, 3]) - np.maximum(boxes[i, 1], rest[:, 1]) + F32(1))
        inter = width * height
        alive[i + 1 :] &= inter / (area[i] + area[i + 1 :] - inter) <= F32(threshold)
    return kept


def propose(attrs: dict, scores: np.ndarray, deltas: np.ndarray, info: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """One image's proposals (post, 4) and scores (post,) from its foreground ``scores`` (A, H, W),
    ``deltas`` (4A, H, W) and ``info`` (3,)."""
    stride = attrs["feature_stride"]
    anchors_per_cell, height, width = scores.shape
    cell = base_anchors(stride, attrs["ratios"], attrs["scales"])
    shift_y, shift_x = np.meshgrid(np.arange(height) * stride, np.arange(width) * stride, indexing="ij")
    shifts = np.stack([shift_x, shift_y, shift_x, shift_y], axis=-1).astype(F32)  # (H, W, 4)
    # row order (cell row, cell column, anchor), as MXNet lays them out
    anchors = (shifts[:, :, None, :] + cell[None, None]).reshape(-1, 4)
    moves = deltas.reshape(anchors_per_cell, 4, height, width).transpose(2, 3, 0, 1).reshape(-1, 4)
    boxes = _decode(anchors, moves, attrs["iou_loss"])
    limits = np.array([info[1], info[0], info[1], info[0]], dtype=F32) - F32(1)
    boxes = np.maximum(np.minimum(boxes, limits), F32(0))
    score = scores.transpose(1, 2, 0).reshape(-1).astype(F32).copy()
    rows, cols = np.meshgrid(np.arange(height), np.arange(width), indexing="ij")
    outside = (rows >= int(info[0] / stride)) | (cols >= int(info[1] / stride))
    score[np.repeat(outside.reshape(-1), anchors_per_cell)] = -1
    min_size = F32(attrs["rpn_min_size"]) * F32(info[2])
    small = (boxes[:, 2] - boxes[:, 0] + 1 < min_size) | (boxes[:, 3] - boxes[:, 1] + 1 < min_size)
    boxes[small] += np.array([-1, -1, 1, 1], dtype=F32) * (min_size / F32(2))
    score[small] = -1
    count = len(score)
    pre = attrs["rpn_pre_nms_top_n"]
    pre = min(pre if pre > 0 else count, count)
    post = min(attrs["rpn_post_nms_top_n"], pre)
    order = np.argsort(-score, kind="stable")[:pre]
    kept = suppress(boxes[order], attrs["threshold"], post)
    chosen = order[np.asarray(kept)[np.arange(attrs["rpn_post_nms_top_n"]) % len(kept)]]
    return boxes[chosen], score[chosen]


def _forward_one_image(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    """``Proposal``: :func:`_forward` of a batch of one image (MXNet checks it only here too)."""
    if inputs[0].shape[0] != 1:
        raise OperatorError(
            f"_contrib_Proposal: runs on one image per device (batch 1), got a batch of {inputs[0].shape[0]}; "
            "use MultiProposal"
        )
    _forward(kctx, attrs, inputs, outputs, aux, name="_contrib_Proposal")


def _check_extent(name: str, attrs: dict, im_info: np.ndarray, height: int, width: int) -> None:
    """Refuse an image whose real extent (its size over ``feature_stride``, in cells) passes the
    (height, width) feature map: MXNet 1.9.1 refuses it (MultiProposal aborts the process)."""
    bad = np.flatnonzero(~np.isfinite(im_info).all(axis=1))
    if bad.size:
        raise OperatorError(f"{name}: image {bad[0]}'s im_info {im_info[bad[0]].tolist()} holds a non-finite value")
    cells = (im_info[:, :2] / F32(attrs["feature_stride"])).astype(np.int64)
    for image, (rows, cols) in enumerate(cells):
        if rows > height or cols > width:
            raise OperatorError(
                f"{name}: image {image}'s im_info {im_info[image].tolist()} spans {rows} x {cols} cells of "
                f"feature_stride {attrs['feature_stride']}, expected at most the feature map's {height} x {width}"
            )


def _forward(
    kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list, *, name: str = "_contrib_MultiProposal"
) -> None:
    xp = kctx.xp
    cls_prob, bbox_pred, im_info = (x if xp is np else x.get() for x in inputs)
    _check_extent(name, attrs, im_info.astype(F32), *cls_prob.shape[2:])
    anchors_per_cell = cls_prob.shape[1] // 2
    post = attrs["rpn_post_nms_top_n"]
    rois = np.zeros((len(cls_prob) * post, 5), dtype=F32)
    score = np.zeros((len(cls_prob) * post, 1), dtype=F32)
    for image in range(len(cls_prob)):
        boxes, scores = propose(
            attrs, cls_prob[image, anchors_per_cell:].astype(F32), bbox_pred[image].astype(F32), im_info[image]
        )
        rows = slice(image * post, (image + 1) * post)
        rois[rows, 0] = image
        rois[rows, 1:] = boxes
        score[rows, 0] = scores
    outputs[0][...] = xp.asarray(rois, dtype=outputs[0].dtype)
    outputs[1][...] = xp.asarray(score, dtype=outputs[1].dtype)


def _infer_shape(name: str, attrs: dict, in_shapes: list, aux_shapes: list) -> tuple[list, list, list]:
    anchors_per_cell = len(attrs["scales"]) * len(attrs["ratios"])
    if not anchors_per_cell or attrs["feature_stride"] < 1 or attrs["rpn_post_nms_top_n"] < 1:
        raise ShapeError(
            f"{name}: scales and ratios must be non-empty and feature_stride and rpn_post_nms_top_n positive, got "
            f"scales {attrs['scales']}, ratios {attrs['ratios']}, feature_stride {attrs['feature_stride']}, "
            f"rpn_post_nms_top_n {attrs['rpn_post_nms_top_n']}"
        )
    cls_prob, bbox_pred, im_info = in_shapes
    if cls_prob is None:
        return list(in_shapes), [None, None], list(aux_shapes)
    batch, channels, height, width = cls_prob if len(cls_prob) == 4 else (None,) * 4
    expected = {
        "cls_prob": (batch, 2 * anchors_per_cell, height, width),
        "bbox_pred": (batch, 4 * anchors_per_cell, height, width),
        "im_info": (batch, 3),
    }
    for arg, shape in zip(expected, in_shapes, strict=True):
        if shape is not None and tuple(shape) != expected[arg]:
            raise ShapeError(
                f"{name}: '{arg}' must be {expected[arg]} for {anchors_per_cell} anchors per cell "
                f"({len(attrs['scales'])} scales x {len(attrs['ratios'])} ratios), got shape {tuple(shape)}"
            )
    images = 1 if name == "_contrib_Proposal" else batch
    rows = images * attrs["rpn_post_nms_top_n"]
    return list(expected.values()), [(rows, 5), (rows, 1)], list(aux_shapes)


_PARAMS = {
    "rpn_pre_nms_top_n": Param(parse_int, 6000, "boxes kept, best first, before suppression (<= 0: all)"),
    "rpn_post_nms_top_n": Param(parse_int, 300, "boxes output per image after suppression"),
    "threshold": Param(parse_float, 0.7, "overlap above which a worse box is suppressed"),
    "rpn_min_size": Param(parse_int, 16, "a box narrower or lower than this times the image scale gets score -1"),
    "scales": Param(parse_float_tuple, (4.0, 8.0, 16.0, 32.0), "anchor scales"),
    "ratios": Param(parse_float_tuple, (0.5, 1.0, 2.0), "anchor height-to-width ratios"),
    "feature_stride": Param(parse_int, 16, "image pixels per feature-map cell"),
    "output_score": Param(parse_bool, False, "also output each box's score"),
    "iou_loss": Param(parse_bool, False, "deltas are corner offsets (IoU loss) rather than centre and log size"),
}

for _name, _kernel in (("_contrib_Proposal", _forward_one_image), ("_contrib_MultiProposal", _forward)):
    register(
        OpDef(
            _name,
            _kernel,
            inputs=("cls_prob", "bbox_pred", "im_info"),
            outputs=("output", "score"),
            num_visible_outputs=lambda attrs: 2 if attrs["output_score"] else 1,
            params=_PARAMS,
            infer_shape=lambda attrs, s, a, _name=_name: _infer_shape(_name, attrs, s, a),
            gradient=zero_gradient,
            float_data=True,
            doc="Region proposals of an RPN: anchors moved by the predicted deltas, clipped, filtered "
            f"and suppressed (``mx.nd.contrib.{_name[9:]}``).",
        )
    )
