"""Picking one element per row: ``pick`` and MXNet 0.9's ``choose_element_0index``,
``fill_element_0index`` and ``onehot_encode``, with their backward operators.

Every kernel moves the indexed axis last and works on a ``(rows, n)`` view, where each
row is indexed exactly once, so plain advanced-index assignment is exact on NumPy and
CuPy alike (no scatter-add is needed).
"""

from __future__ import annotations

import math
from typing import Any

from ..errors import ShapeError
from .label_classes import checked_classes
from .params import Param, enum, parse_bool, parse_int
from .registry import OpDef, merge_shape, refuse_empty_axis, register
from .shape import normalize_axis

_PICK_PARAMS = {
    "axis": Param(parse_int, -1, "the axis to pick along"),
    "keepdims": Param(parse_bool, False, "keep the picked axis with length 1"),
    "mode": Param(enum("clip", "wrap"), "clip", "what out-of-range indices do"),
}
_ROWS = {"axis": 1, "keepdims": False, "mode": "clip"}  # the 0.9 functions pick along the rows


def _rows_view(xp: Any, data: Any, axis: int) -> Any:
    """``data`` with ``axis`` moved last, as a ``(rows, n)`` array (a copy where it must be)."""
    return xp.ascontiguousarray(xp.moveaxis(data, axis, -1)).reshape(-1, data.shape[axis])


def _row_indices(kctx: Any, index: Any, n: int, mode: str, op: str = "pick") -> Any:
    """The positions ``index`` names along a row of ``n``, clipped or wrapped as MXNet does; NaN
    (and, wrapping, an infinity) names none and is refused (:func:`checked_classes`)."""
    return checked_classes(kctx.backend, op, "index", index, n, mode=mode)


def _flat_positions(kctx: Any, index: Any, n: int, mode: str) -> Any:
    """Where each row's pick lies in a contiguous ``(rows, n)`` array read flat: ``row * n + index``."""
    xp = kctx.xp
    idx = _row_indices(kctx, index, n, mode)
    idx += xp.arange(0, idx.size * n, n, dtype=idx.dtype)
    return idx


def _pick_forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    xp = kctx.xp
    data, index = inputs
    axis = normalize_axis("pick", attrs["axis"], data.ndim)
    out = outputs[0]
    if axis == data.ndim - 1 and data.flags.c_contiguous and out.flags.c_contiguous:
        # a loss's pick along the classes of a (batch, classes) array: one gather from the flat data
        xp.take(data.reshape(-1), _flat_positions(kctx, index, data.shape[axis], attrs["mode"]), out=out.reshape(-1))
        return
    rows = _rows_view(xp, data, axis)
    idx = _row_indices(kctx, index, rows.shape[1], attrs["mode"])
    out[...] = rows[xp.arange(rows.shape[0]), idx].reshape(out.shape)


def _pick_backward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    xp = kctx.xp
    out_grad, index, like = inputs
    axis = normalize_axis("pick", attrs["axis"], like.ndim)
    out = outputs[0]
    if axis == like.ndim - 1 and out.flags.c_contiguous:
        # each row picked once: the gradient goes straight into the zeroed output, read flat
        out.fill(0)
        out.reshape(-1)[_flat_positions(kctx, index, like.shape[axis], attrs["mode"])] = out_grad.reshape(-1)
        return
    moved = xp.moveaxis(like, axis, -1).shape
    grad = xp.zeros((out_grad.size, like.shape[axis]), dtype=out.dtype)
    idx = _row_indices(kctx, index, grad.shape[1], attrs["mode"])
    grad[xp.arange(grad.shape[0]), idx] = out_grad.reshape(-1)
    out[...] = xp.moveaxis(grad.reshape(moved), -1, axis)


def _picked_shape(op: str, attrs: dict, data: tuple, keepdims: bool) -> tuple:
    if not data:
        raise ShapeError(f"{op}: data must have at least 1 axis, got shape ()")
    axis = normalize_axis(op, attrs["axis"], len(data))
    return data[:axis] + ((1,) if keepdims else ()) + data[axis + 1 :] or (1,)  # MXNet has no 0-d arrays


def _pick_infer(attrs: dict, in_shapes: list, aux_shapes: list) -> tuple[list, list, list]:
    data, index = in_shapes
    if data is None:
        return in_shapes, [index], aux_shapes
    picked = _picked_shape("pick", attrs, tuple(data), attrs["keepdims"])
    # As MXNet, the index may keep the picked axis with length 1 or drop it, whatever
    # keepdims says of the output: its number of axes tells which. An index of unknown shape
    # drops it, as MXNet infers it (simple_bind allocates a label of (batch,), not (batch, 1))
    index_keeps_axis = index is not None and len(index) == len(data)
    expected = _picked_shape("pick", attrs, tuple(data), index_keeps_axis)
    if not (index is not None and tuple(index) == () and expected == (1,)):  # one index may be 0-d
        index = merge_shape("pick", "index", index, expected, complete=True)
    axis = normalize_axis("pick", attrs["axis"], len(data))
    refuse_empty_axis("pick", "data", tuple(data), axis, math.prod(picked) if index is not None else 0)
    return [tuple(data), index], [picked], aux_shapes


def _index_type(attrs: dict, in_types: list, aux_types: list) -> tuple[list, list, list]:
    return [in_types[0], in_types[1] or in_types[0]], [in_types[0]], aux_types


register(
    OpDef(
        "pick",
        _pick_forward,
        inputs=("data", "index"),
        params=dict(_PICK_PARAMS),
        infer_shape=_pick_infer,
        infer_type=_index_type,
        gradient=lambda F, attrs, inputs, outputs, og: [F._backward_pick(og[0], inputs[1], inputs[0], **attrs), None],
        doc="Pick ``data[..., index, ...]`` along ``axis``: one element per position of the other axes.",
    )
)
register(
    OpDef(
        "_backward_pick",
        _pick_backward,
        inputs=("out_grad", "index", "like"),
        params=dict(_PICK_PARAMS),
        infer_shape=lambda attrs, s, a: (s, [s[2]], a),
        infer_type=lambda attrs, t, a: (t, [t[0]], a),
        doc="Gradient of ``pick``: the output gradient placed at the picked positions of a zero array.",
    )
)


# -- MXNet 0.9's row functions ---------------------------------------------------------------------
def _check_rows(op: str, matrix: Any, index: Any) -> tuple[Any, Any]:
    if matrix is not None and len(matrix) != 2:
        raise ShapeError(f"{op}: lhs must be 2-D (rows, columns), got {tuple(matrix)}")
    if matrix is not None:
        index = merge_shape(op, "rhs", index, (matrix[0],), complete=True)
        refuse_empty_axis(op, "lhs", tuple(matrix), 1, matrix[0])
    return matrix, index


def _choose_infer(attrs: dict, in_shapes: list, aux_shapes: list) -> tuple[list, list, list]:
    lhs, rhs = _check_rows("choose_element_0index", *in_shapes)
    return [lhs, rhs], [rhs], aux_shapes


register(
    OpDef(
        "choose_element_0index",
        lambda kctx, attrs, i, o, a: _pick_forward(kctx, _ROWS, i, o, a),
        inputs=("lhs", "rhs"),
        infer_shape=_choose_infer,
        infer_type=_index_type,
        gradient=lambda F, attrs, inputs, outputs, og: [F._backward_pick(og[0], inputs[1], inputs[0], axis=1), None],
        doc="``out[i] = lhs[i, rhs[i]]`` for a 2-D ``lhs`` (MXNet 0.9; ``pick`` along axis 1).",
    )
)


def _fill_forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    xp = kctx.xp
    lhs, values, index = inputs
    out = outputs[0]
    if out is not lhs:
        out[...] = lhs
    idx = _row_indices(kctx, index, lhs.shape[1], "clip", "fill_element_0index")
    out[xp.arange(lhs.shape[0]), idx] = values


def _fill_backward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    xp = kctx.xp
    out_grad, index = inputs
    lhs_grad, values_grad = outputs
    rows = xp.arange(out_grad.shape[0])
    idx = _row_indices(kctx, index, out_grad.shape[1], "clip", "fill_element_0index")
    values_grad[...] = out_grad[rows, idx]
    lhs_grad[...] = out_grad
    lhs_grad[rows, idx] = 0


def _fill_infer(attrs: dict, in_shapes: list, aux_shapes: list) -> tuple[list, list, list]:
    lhs, mhs, rhs = in_shapes
    lhs, rhs = _check_rows("fill_element_0index", lhs, rhs)
    if lhs is not None:
        mhs = merge_shape("fill_element_0index", "mhs", mhs, (lhs[0],))
    return [lhs, mhs, rhs], [lhs], aux_shapes


register(
    OpDef(
        "fill_element_0index",
        _fill_forward,
        inputs=("lhs", "mhs", "rhs"),
        infer_shape=_fill_infer,
        infer_type=lambda attrs, t, a: ([t[0], t[1] or t[0], t[2] or t[0]], [t[0]], a),
        inplace=((0, 0),),
        gradient=lambda F, attrs, inputs, outputs, og: [*F._backward_fill_element_0index(og[0], inputs[2]), None],
        doc="A copy of ``lhs`` with ``lhs[i, rhs[i]] = mhs[i]`` (MXNet 0.9).",
    )
)
register(
    OpDef(
        "_backward_fill_element_0index",
        _fill_backward,
        inputs=("out_grad", "rhs"),
        outputs=("lhs_grad", "mhs_grad"),
        infer_shape=lambda attrs, s, a: (s, [s[0], None if s[0] is None else (s[0][0],)], a),
        infer_type=lambda attrs, t, a: (t, [t[0], t[0]], a),
        doc="Gradient of ``fill_element_0index``: lhs gets the rest of the rows, mhs the filled entries.",
    )
)


def _onehot_encode_forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    xp = kctx.xp
    indices, target = inputs
    out = outputs[0]
    out[...] = 0
    idx = _row_indices(kctx, indices, out.shape[1], "clip", "onehot_encode")
    out[xp.arange(out.shape[0]), idx] = 1
    if target is not out:
        target[...] = out  # 0.9's onehot_encode(indices, out) writes into ``out``


def _onehot_encode_infer(attrs: dict, in_shapes: list, aux_shapes: list) -> tuple[list, list, list]:
    indices, target = in_shapes
    target, indices = _check_rows("onehot_encode", target, indices)
    return [indices, target], [target], aux_shapes


register(
    OpDef(
        "onehot_encode",
        _onehot_encode_forward,
        inputs=("lhs", "rhs"),
        infer_shape=_onehot_encode_infer,
        infer_type=lambda attrs, t, a: ([t[0] or t[1], t[1]], [t[1]], a),
        mutates=(1,),
        gradient=lambda F, attrs, inputs, outputs, og: [None, None],
        aliases=("_onehot_encode",),
        doc="One-hot encode ``lhs`` (n,) into ``rhs`` (n, depth), which is overwritten and also returned "
        "(MXNet 0.9's ``onehot_encode(indices, out)``).",
    )
)
