"""N-dimensional indexing: ``gather_nd``, ``scatter_nd`` and ``_scatter_set_nd`` (MXNet 1.x), with
``_backward_gather_nd``.

``indices`` has shape ``(M, Y0, ..., Yk)``: column ``indices[:, y]`` addresses the first ``M``
axes of the indexed array.  Negative indices count from the end and are then truncated toward
zero (-0.1 is n - 0.9, so n - 1), as in MXNet's kernel; an index outside ``[-n, n - 1]`` fails
the operation, naming it: on the host at once; on a GPU, where reading the indices back would make
the host wait for the device at every call (and keep an executor's pass from being captured into a
CUDA graph), a device check raises it at the next wait, and meanwhile an index out of range
addresses nothing (``gather_nd`` gives 0 for it, a scatter drops its value).

Kernels use ``kctx.xp`` indexing; the scatter-add of the gradient goes through
``kctx.backend.scatter_add`` (``np.add.at`` / ``cupyx.scatter_add``).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..errors import OperatorError, ShapeError
from .label_classes import shown
from .params import REQUIRED, Param, optional, parse_shape
from .registry import OpDef, merge_shape, register


def _index_tuple(op: str, kctx: Any, indices: Any, shape: tuple) -> tuple[tuple, Any]:
    """The columns of ``indices`` as one integer index array per addressed axis, negatives wrapped,
    and where all of a position's indices are in range (None: everywhere).

    As MXNet's kernel, a negative index is wrapped (``+ n``) before it is truncated toward zero:
    -0.1 on an axis of 3 is 2.9, so 2 (truncating first would give 0).  Indices outside
    ``[-n, n - 1]`` are refused: on the host at once, on a device by a check raised at the next
    wait (:meth:`Backend.check_range`; meanwhile such a position reads index 0).
    """
    xp = kctx.xp
    m = indices.shape[0]
    float_indices = indices.dtype.kind == "f"
    idx = indices.reshape(m, -1).astype(xp.float64 if float_indices else xp.int64)
    columns = []
    valid = None
    for axis in range(m):
        n = shape[axis]
        column = idx[axis]
        bad = ~((column >= -n) & (column <= n - 1))  # written so that NaN is out of range too
        if xp is np:
            if bool(bad.any()):
                first = shown(column[bad][0])  # NaN and 2**63 as given
                raise OperatorError(f"{op}: index {first} is out of bounds for axis {axis} with size {n}")
        else:
            kctx.backend.check_range(op, f"index on axis {axis}", column, -n, n - 1, inclusive=True)
            valid = ~bad if valid is None else valid & ~bad
            column = xp.where(bad, 0, column)
        columns.append(xp.where(column < 0, column + n, column).astype(xp.int64))
    return tuple(columns), valid


def _check_indices(op: str, indices: tuple, ndim: int) -> None:
    if len(indices) < 2:
        raise ShapeError(
            f"{op}: 'indices' must have at least 2 dims (M, ...), got shape {tuple(indices)}: "
            "one column of M indices per element"
        )
    if indices[0] and indices[0] > ndim:
        raise ShapeError(
            f"{op}: 'indices' addresses {indices[0]} axes (its first dim) but the indexed array has {ndim}"
        )


# -- gather_nd --------------------------------------------------------------------------------------
def _gather_nd_forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    data, indices = inputs
    index, valid = _index_tuple("gather_nd", kctx, indices, data.shape)
    found = data[index]
    if valid is not None:
        found = kctx.xp.where(valid.reshape(-1, *[1] * (found.ndim - 1)), found, found.dtype.type(0))
    outputs[0][...] = found.reshape(outputs[0].shape)


def _gather_nd_infer(attrs: dict, in_shapes: list, aux_shapes: list) -> tuple[list, list, list]:
    data, indices = in_shapes
    if data is None or indices is None:
        return in_shapes, [None], aux_shapes
    _check_indices("gather_nd", tuple(indices), len(data))
    return in_shapes, [tuple(indices[1:]) + tuple(data[indices[0] :])], aux_shapes


def _gather_nd_gradient(F: Any, attrs: dict, inputs: list, outputs: list, out_grads: list) -> list:
    return [F._backward_gather_nd(out_grads[0], inputs[1], inputs[0]), None]


register(
    OpDef(
        "gather_nd",
        _gather_nd_forward,
        inputs=("data", "indices"),
        infer_shape=_gather_nd_infer,
        infer_type=lambda attrs, t, a: (t, [t[0]], a),
        gradient=_gather_nd_gradient,
        doc="``out[y, ...] = data[indices[0, y], ..., indices[M-1, y], ...]``: gather by index columns.",
    )
)


# -- scatter_nd and the gradient of gather_nd --------------------------------------------------------
def _scatter_data_shape(op: str, indices: tuple, shape: tuple) -> tuple:
    """The shape ``data`` must have to be scattered by ``indices`` into ``shape``."""
    _check_indices(op, indices, len(shape))
    return tuple(indices[1:]) + tuple(shape[indices[0] :])


def _scatter(kctx: Any, op: str, data: Any, indices: Any, out: Any, accumulate: bool, base: Any = None) -> None:
    """Write (or with ``accumulate``, add) ``data`` at the index columns of ``indices`` into ``out``,
    which starts as zeros, or as ``base`` where one is given."""
    index, valid = _index_tuple(op, kctx, indices, out.shape)
    m = indices.shape[0]
    values = data.reshape((index[0].size,) + tuple(out.shape[m:]))
    if valid is not None:
        _scatter_valid(kctx, index, valid, values, out, accumulate, base)
        return
    if base is None:
        out[...] = 0
    elif base is not out:
        out[...] = base
    if accumulate:
        target = out if out.flags.c_contiguous else kctx.xp.zeros(out.shape, dtype=out.dtype)
        kctx.backend.scatter_add(target, index, values)
        if target is not out:
            out[...] = target
    else:
        # repeated positions keep one of their values (MXNet leaves which undefined)
        out[index] = values


def _scatter_valid(kctx: Any, index: tuple, valid: Any, values: Any, out: Any, accumulate: bool, base: Any) -> None:
    """:func:`_scatter` on a device where some positions are out of range: every position goes to a
    row of a buffer with one row more than ``out`` has positions, those out of range to the last,
    which is dropped."""
    xp = kctx.xp
    m = len(index)
    lead = math.prod(out.shape[:m])
    flat = xp.zeros(index[0].shape, dtype=xp.int64)
    for column, size in zip(index, out.shape[:m], strict=True):
        flat = flat * size + column
    flat = xp.where(valid, flat, lead)
    buffer = xp.zeros((lead + 1, *out.shape[m:]), dtype=out.dtype)
    if base is not None:
        buffer[:lead] = base.reshape(lead, *out.shape[m:])
    if accumulate:
        kctx.backend.scatter_add(buffer, flat, values)
    else:
        buffer[flat] = values  # repeated positions keep one of their values (MXNet leaves which undefined)
    out[...] = buffer[:lead].reshape(out.shape)


def _scatter_nd_forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    _scatter(kctx, "scatter_nd", inputs[0], inputs[1], outputs[0], accumulate=False)


def _scatter_nd_infer(attrs: dict, in_shapes: list, aux_shapes: list) -> tuple[list, list, list]:
    data, indices = in_shapes
    shape = tuple(attrs["shape"])
    if indices is not None:
        data = merge_shape("scatter_nd", "data", data, _scatter_data_shape("scatter_nd", tuple(indices), shape))
    return [data, indices], [shape], aux_shapes


def _scatter_nd_gradient(F: Any, attrs: dict, inputs: list, outputs: list, out_grads: list) -> list:
    return [F.gather_nd(out_grads[0], inputs[1]), None]


register(
    OpDef(
        "scatter_nd",
        _scatter_nd_forward,
        inputs=("data", "indices"),
        params={"shape": Param(parse_shape, REQUIRED, "shape of the output")},
        infer_shape=_scatter_nd_infer,
        infer_type=lambda attrs, t, a: (t, [t[0]], a),
        gradient=_scatter_nd_gradient,
        doc="Zeros of ``shape`` with ``data`` written at the index columns of ``indices`` (gather_nd's inverse).",
    )
)


def _backward_gather_nd_inputs(attrs: dict) -> tuple[str, ...]:
    # MXNet's form takes the output shape as a parameter; the gradient rule passes the gathered
    # array instead (a symbol's shape is not known when the rule runs)
    return ("data", "indices") if attrs["shape"] is not None else ("data", "indices", "like")


def _backward_gather_nd_forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    _scatter(kctx, "_backward_gather_nd", inputs[0], inputs[1], outputs[0], accumulate=True)


def _backward_gather_nd_infer(attrs: dict, in_shapes: list, aux_shapes: list) -> tuple[list, list, list]:
    shape = attrs["shape"] if attrs["shape"] is not None else in_shapes[2]
    if shape is None:
        return in_shapes, [None], aux_shapes
    shape = tuple(shape)
    data, indices = in_shapes[:2]
    if indices is not None and all(shape):
        expected = _scatter_data_shape("_backward_gather_nd", tuple(indices), shape)
        data = merge_shape("_backward_gather_nd", "data", data, expected)
    return [data, indices, *in_shapes[2:]], [shape], aux_shapes


register(
    OpDef(
        "_backward_gather_nd",
        _backward_gather_nd_forward,
        inputs=_backward_gather_nd_inputs,
        params={"shape": Param(optional(parse_shape), None, "shape of the output (else that of 'like')")},
        infer_shape=_backward_gather_nd_infer,
        infer_type=lambda attrs, t, a: (t, [t[0]], a),
        gradient=lambda F, attrs, inputs, outputs, og: [F.gather_nd(og[0], inputs[1]), *[None] * (len(inputs) - 1)],
        doc="Gradient of ``gather_nd``: ``data`` scatter-added at the index columns (repeats summed).",
    )
)


# -- _scatter_set_nd: scatter_nd onto a copy of lhs (MXNet's ``x[index_arrays] = values``) ---------------
def _scatter_set_nd_forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    lhs, rhs, indices = inputs
    _scatter(kctx, "_scatter_set_nd", rhs, indices, outputs[0], accumulate=False, base=lhs)


def _scatter_set_nd_infer(attrs: dict, in_shapes: list, aux_shapes: list) -> tuple[list, list, list]:
    lhs, rhs, indices = in_shapes
    shape = tuple(attrs["shape"])
    lhs = merge_shape("_scatter_set_nd", "lhs", lhs, shape)
    if indices is not None:
        expected = _scatter_data_shape("_scatter_set_nd", tuple(indices), shape)
        rhs = merge_shape("_scatter_set_nd", "rhs", rhs, expected)
    return [lhs, rhs, indices], [shape], aux_shapes


def _scatter_set_nd_gradient(F: Any, attrs: dict, inputs: list, outputs: list, out_grads: list) -> list:
    # lhs keeps the gradient where it was not overwritten; rhs takes it where it was written
    lhs_grad = F._scatter_set_nd(out_grads[0], F.zeros_like(inputs[1]), inputs[2], shape=attrs["shape"])
    return [lhs_grad, F.gather_nd(out_grads[0], inputs[2]), None]


register(
    OpDef(
        "_scatter_set_nd",
        _scatter_set_nd_forward,
        inputs=("lhs", "rhs", "indices"),
        params={"shape": Param(parse_shape, REQUIRED, "shape of the output, that of lhs")},
        infer_shape=_scatter_set_nd_infer,
        infer_type=lambda attrs, t, a: ([t[0] or t[1], t[1] or t[0], t[2]], [t[0] or t[1]], a),
        inplace=((0, 0),),
        gradient=_scatter_set_nd_gradient,
        doc="A copy of ``lhs`` with ``rhs`` written at the index columns of ``indices`` (``scatter_nd`` "
        "without zeroing the rest); MXNet calls it with ``out=lhs`` to assign in place.",
    )
)
