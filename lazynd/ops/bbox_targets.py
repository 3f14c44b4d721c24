"""Box matching and box regression targets of MXNet 1.x's ``contrib`` namespace:
``bipartite_matching``, ``box_encode`` and ``box_decode``.

``bipartite_matching(data, threshold)`` matches the rows and columns of each score matrix
(..., N, M) greedily: the best remaining score (highest, or lowest with ``is_ascend``; equal
scores in row-major order) whose row and column are both free is matched, while it is beyond
``threshold`` (strictly).  ``topk > 0`` stops after ``topk + 1`` matches, which is what MXNet
1.9.1 does.  Outputs: each row's column and each column's row, -1 where unmatched, in the
data's dtype.  The matching is sequential and runs with NumPy on the host.

``box_encode(samples, matches, anchors, refs, means, stds)`` gives the regression target of
each positive anchor (``samples > 0.5``) toward its matched reference box: the centre offsets in
anchor widths and heights and the log ratios of the sizes, less ``means``, over ``stds``;
``(targets, masks)``, zeros (mask 0) for the other anchors.  ``box_decode(data, anchors)`` turns
such offsets (scaled by ``std0..3``; size terms clipped to ``clip`` when it is positive) back
into corner boxes.  Both are kernels over ``kctx.xp``; MXNet gives them zero gradients.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import OperatorError, ShapeError
from .bbox import BOX_FORMAT, to_corner
from .params import REQUIRED, Param, parse_bool, parse_float, parse_int
from .registry import OpDef, dim_is_known, merge_shape, register, zero_gradient


def _centers(xp: Any, corners: Any) -> tuple[Any, Any, Any, Any]:
    """``(x, y, width, height)`` of corner boxes (..., 4)."""
    two = corners.dtype.type(2)
    width, height = corners[..., 2] - corners[..., 0], corners[..., 3] - corners[..., 1]
    return (corners[..., 0] + corners[..., 2]) / two, (corners[..., 1] + corners[..., 3]) / two, width, height


# -- bipartite_matching ---------------------------------------------------------------------------
MATCHING = "_contrib_bipartite_matching"


def _matching_infer(attrs: dict, in_shapes: list, aux_shapes: list) -> tuple[list, list, list]:
    data = in_shapes[0]
    if data is None:
        return list(in_shapes), [None, None], list(aux_shapes)
    if len(data) < 2:
        raise ShapeError(f"{MATCHING}: 'data' must be (..., rows, columns), got shape {tuple(data)}")
    return list(in_shapes), [tuple(data[:-1]), (*data[:-2], data[-1])], list(aux_shapes)


def greedy_matching(scores: np.ndarray, attrs: dict) -> tuple[np.ndarray, np.ndarray]:
    """Each row's matched column and each column's matched row (-1: none) of one score matrix."""
    rows, cols = scores.shape
    row_match, col_match = np.full(rows, -1, np.int64), np.full(cols, -1, np.int64)
    ascending, threshold, topk = attrs["is_ascend"], attrs["threshold"], attrs["topk"]
    # taken rows and columns are masked with the worst value, so the best free score is one argmax
    worst = np.inf if ascending else -np.inf
    # compared in the data's dtype, as MXNet's: a float32 score of 0.6 is not above a threshold of 0.6
    free = scores.copy() if scores.dtype.kind == "f" else scores.astype(np.float64)
    threshold = free.dtype.type(threshold)
    free[np.isnan(free)] = worst
    count = 0
    while rows and cols and (topk <= 0 or count <= topk):
        flat = int(np.argmin(free) if ascending else np.argmax(free))
        row, col = divmod(flat, cols)
        best = free[row, col]
        if not (best < threshold if ascending else best > threshold):
            break
        row_match[row], col_match[col] = col, row
        free[row, :] = worst
        free[:, col] = worst
        count += 1
    return row_match, col_match


def _matching_forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    xp = kctx.xp
    data = inputs[0] if xp is np else inputs[0].get()
    matrices = data.reshape(-1, *data.shape[-2:])
    row_out = np.empty(matrices.shape[:2], dtype=data.dtype)
    col_out = np.empty((matrices.shape[0], matrices.shape[2]), dtype=data.dtype)
    for item, scores in enumerate(matrices):
        row_out[item], col_out[item] = greedy_matching(scores, attrs)
    for target, result in zip(outputs, (row_out, col_out), strict=True):
        target[...] = (result if xp is np else xp.asarray(result)).reshape(target.shape)


register(
    OpDef(
        MATCHING,
        _matching_forward,
        nonempty_axes={"data": (-2, -1)},
        outputs=("output0", "output1"),  # each row's column, each column's row (MXNet 1.9.1's names)
        params={
            "is_ascend": Param(parse_bool, False, "match the lowest scores first (else the highest)"),
            "threshold": Param(parse_float, REQUIRED, "scores must be above it (below it with is_ascend)"),
            "topk": Param(parse_int, -1, "stop after topk + 1 matches, as MXNet 1.9.1 (-1: no limit)"),
        },
        infer_shape=_matching_infer,
        gradient=zero_gradient,
        doc="Greedy bipartite matching of a score matrix's rows and columns (``mx.nd.contrib.bipartite_matching``).",
    )
)


# -- box_encode -----------------------------------------------------------------------------------
ENCODE = "_contrib_box_encode"


def _encode_infer(attrs: dict, in_shapes: list, aux_shapes: list) -> tuple[list, list, list]:
    samples, matches, anchors, refs, means, stds = in_shapes
    batch, boxes = 0, 0
    for shape in (samples, matches):
        if shape is not None:
            if len(shape) != 2:
                raise ShapeError(f"{ENCODE}: 'samples' and 'matches' must be (batch, anchors), got {tuple(shape)}")
            batch, boxes = batch or shape[0], boxes or shape[1]
    if anchors is not None:
        batch, boxes = batch or anchors[0], boxes or anchors[1]
    pair = (batch, boxes)
    samples = merge_shape(ENCODE, "samples", samples, pair)
    matches = merge_shape(ENCODE, "matches", matches, pair)
    anchors = merge_shape(ENCODE, "anchors", anchors, (*pair, 4))
    refs = merge_shape(ENCODE, "refs", refs, (batch, 0, 4))
    means = merge_shape(ENCODE, "means", means, (4,))
    stds = merge_shape(ENCODE, "stds", stds, (4,))
    out = anchors if anchors is not None and all(dim_is_known(dim) for dim in anchors) else None
    return [samples, matches, anchors, refs, means, stds], [out, out], list(aux_shapes)


def _encode_forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    xp = kctx.xp
    samples, matches, anchors, refs, means, stds = inputs
    targets, masks = outputs
    count = refs.shape[1]
    if matches.size and (float(matches.min()) < 0 or float(matches.max()) >= count):
        raise OperatorError(
            f"{ENCODE}: 'matches' must hold indices of 'refs' in [0, {count - 1}], "
            f"got values in [{float(matches.min()):g}, {float(matches.max()):g}]"
        )
    index = matches.astype("int64")
    matched = xp.take_along_axis(refs, xp.broadcast_to(index[..., None], (*index.shape, 4)), axis=1)
    ax, ay, aw, ah = _centers(xp, anchors)
    gx, gy, gw, gh = _centers(xp, matched)
    with np.errstate(divide="ignore", invalid="ignore"):
        encoded = xp.stack([(gx - ax) / aw, (gy - ay) / ah, xp.log(gw / aw), xp.log(gh / ah)], axis=-1)
        encoded = (encoded - means) / stds
    positive = (samples > 0.5)[..., None]
    targets[...] = xp.where(positive, encoded, 0)
    masks[...] = xp.broadcast_to(positive, masks.shape)


register(
    OpDef(
        ENCODE,
        _encode_forward,
        inputs=("samples", "matches", "anchors", "refs", "means", "stds"),
        outputs=("output0", "output1"),  # targets, masks (MXNet 1.9.1's names)
        infer_shape=_encode_infer,
        infer_type=lambda attrs, in_types, aux_types: (
            [t or in_types[2] for t in in_types],
            [in_types[2], in_types[2]],
            list(aux_types),
        ),
        gradient=zero_gradient,
        float_data=True,  # MXNet: "only support floating point types"
        doc="Regression targets of positive anchors toward their matched boxes (``mx.nd.contrib.box_encode``).",
    )
)


# -- box_decode -----------------------------------------------------------------------------------
DECODE = "_contrib_box_decode"


def _decode_infer(attrs: dict, in_shapes: list, aux_shapes: list) -> tuple[list, list, list]:
    data, anchors = in_shapes
    # (a 0 is an unknown dim, except in an imperative call's shapes, where it is a size and refused)
    if data is not None and (len(data) != 3 or (dim_is_known(data[-1]) and data[-1] != 4)):
        raise ShapeError(f"{DECODE}: 'data' must be (batch, anchors, 4), got shape {tuple(data)}")
    if anchors is not None and (
        len(anchors) != 3 or anchors[0] not in (0, 1) or (dim_is_known(anchors[-1]) and anchors[-1] != 4)
    ):
        raise ShapeError(f"{DECODE}: 'anchors' must be (1, anchors, 4), got shape {tuple(anchors)}")
    if data is not None and anchors is not None and data[1] and anchors[1] and data[1] != anchors[1]:
        raise ShapeError(f"{DECODE}: 'anchors' {tuple(anchors)} and 'data' {tuple(data)} differ in their anchors")
    return list(in_shapes), [data], list(aux_shapes)


def _decode_forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    xp = kctx.xp
    data, anchors = inputs
    t = data.dtype.type
    ax, ay, aw, ah = _centers(xp, to_corner(xp, anchors, attrs["format"]))
    x = data[..., 0] * t(attrs["std0"]) * aw + ax
    y = data[..., 1] * t(attrs["std1"]) * ah + ay
    log_w, log_h = data[..., 2] * t(attrs["std2"]), data[..., 3] * t(attrs["std3"])
    if attrs["clip"] > 0:
        log_w, log_h = xp.minimum(log_w, t(attrs["clip"])), xp.minimum(log_h, t(attrs["clip"]))
    half_w, half_h = xp.exp(log_w) * aw / t(2), xp.exp(log_h) * ah / t(2)
    outputs[0][...] = xp.stack([x - half_w, y - half_h, x + half_w, y + half_h], axis=-1)


register(
    OpDef(
        DECODE,
        _decode_forward,
        inputs=("data", "anchors"),
        params={
            **{f"std{i}": Param(parse_float, 1.0, f"scale of the encoded value {i}") for i in range(4)},
            "clip": Param(parse_float, -1.0, "clip the size terms to this when positive"),
            "format": Param(BOX_FORMAT, "center", "the anchors' encoding: 'corner' or 'center'"),
        },
        infer_shape=_decode_infer,
        gradient=zero_gradient,
        float_data=True,  # MXNet: "only support floating point types"
        doc="Corner boxes from regression offsets against anchors (``mx.nd.contrib.box_decode``).",
    )
)
