"""Indexing: take, batch_take, one_hot and where (MXNet semantics and defaults), with their backward
operators.  Slicing (``slice``, ``slice_axis``, ``slice_like``) is in :mod:`lazynd.ops.slicing`.

Kernels use ``kctx.xp``; the scatter-adds of the backward operators go through
``kctx.backend.scatter_add`` because NumPy and CuPy spell it differently.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..errors import OperatorError, ShapeError
from .host_arithmetic import scalar_as
from .join_split import as_list
from .label_classes import checked_classes
from .params import REQUIRED, Param, dtype_among, enum, parse_float, parse_int
from .registry import OpDef, merge_shape, refuse_empty_axis, register
from .shape import normalize_axis


# -- take, batch_take ----------------------------------------------------------------------------------
def _take_indices(kctx: Any, indices: Any, n: int, mode: str) -> Any:
    """The positions ``indices`` name along an axis of ``n`` (:func:`checked_classes`): clipped or
    wrapped as MXNet does, NaN refused; with mode='raise', as MXNet, the index as given is checked,
    before a fractional one is truncated: 2.6 is out of [0, 2]."""
    expected = f"for an axis of size {n} (mode='raise')"
    return checked_classes(kctx.backend, "take", "index", indices, n, mode=mode, as_given=True, expected=expected)


def _take_layout(attrs: dict, a_shape: tuple) -> tuple[int, int, int, int]:
    axis = normalize_axis("take", attrs["axis"], len(a_shape))
    return axis, math.prod(a_shape[:axis]), a_shape[axis], math.prod(a_shape[axis + 1 :])


def _take_forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    xp = kctx.xp
    a, indices = inputs
    axis, pre, n, post = _take_layout(attrs, a.shape)
    out = outputs[0]
    if xp is np and attrs["mode"] == "clip" and out.flags.c_contiguous and indices.dtype.kind in "iu":
        # NumPy's take clips integers by itself: no clipped copy of the indices (floats are
        # clipped as numbers first: converting NaN or 2**63 is undefined)
        np.take(
            a.reshape(pre, n, post),
            indices.reshape(-1).astype(np.intp),
            axis=1,
            out=out.reshape(pre, -1, post),
            mode="clip",
        )
        return
    idx = _take_indices(kctx, indices.reshape(-1), n, attrs["mode"])
    if out.flags.c_contiguous:
        # indices are checked above; NumPy's default mode='raise' would also buffer the output
        mode = {"mode": "clip"} if xp is np else {}
        xp.take(a.reshape(pre, n, post), idx, axis=1, out=out.reshape(pre, idx.size, post), **mode)
    else:
        out[...] = xp.take(a.reshape(pre, n, post), idx, axis=1).reshape(out.shape)


def _take_infer(attrs: dict, in_shapes: list, aux_shapes: list) -> tuple[list, list, list]:
    a, indices = in_shapes
    if a is None or indices is None:
        return in_shapes, [None], aux_shapes
    if not a:
        raise ShapeError("take: 'a' must have at least 1 dim, got shape ()")
    axis = normalize_axis("take", attrs["axis"], len(a))
    refuse_empty_axis("take", "a", tuple(a), axis, math.prod(indices))
    return in_shapes, [tuple(a[:axis]) + tuple(indices) + tuple(a[axis + 1 :])], aux_shapes


def _backward_take_forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    xp = kctx.xp
    grad, indices = inputs[0], inputs[1]
    out = outputs[0]
    axis, pre, n, post = _take_layout(attrs, out.shape)
    idx = _take_indices(kctx, indices.reshape(-1), n, "wrap" if attrs["mode"] == "wrap" else "clip")
    # straight into the gradient where it has the layout (a copy of a vocabulary-sized array cost
    # as much as the scatter); into a buffer where it is a strided view or overlaps the head gradient
    direct = out.flags.c_contiguous and not xp.may_share_memory(out, grad)
    if direct:
        out.fill(0)
    target = out.reshape(pre, n, post) if direct else xp.zeros((pre, n, post), dtype=out.dtype)
    kctx.backend.scatter_add(target, (slice(None), idx, slice(None)), grad.reshape(pre, idx.size, post))
    if not direct:
        out[...] = target.reshape(out.shape)


_TAKE_PARAMS = {
    "axis": Param(parse_int, 0, "the axis to index"),
    "mode": Param(enum("clip", "wrap", "raise"), "clip", "what out-of-range indices do"),
}
register(
    OpDef(
        "take",
        _take_forward,
        inputs=("a", "indices"),
        params=dict(_TAKE_PARAMS),
        infer_shape=_take_infer,
        infer_type=lambda attrs, t, a: (t, [t[0]], a),
        gradient=lambda F, attrs, inputs, outputs, og: [F._backward_take(og[0], inputs[1], inputs[0], **attrs), None],
        doc="Gather slices of ``a`` along ``axis`` at ``indices``.",
    )
)
register(
    OpDef(
        "_backward_take",
        _backward_take_forward,
        inputs=("out_grad", "indices", "like"),
        params=dict(_TAKE_PARAMS),
        infer_shape=lambda attrs, s, a: (s, [s[2]], a),
        infer_type=lambda attrs, t, a: (t, [t[0]], a),
        # linear in the output gradient: its gradient gathers again (second-order gradients of ``take``
        # and of indexing by index arrays, which MXNet 1.9.1 refuses)
        gradient=lambda F, attrs, inputs, outputs, og: [F.take(og[0], inputs[1], **attrs), None, None],
        doc="Gradient of ``take``: scatter-add the output gradient to the gathered positions.",
    )
)


def _batch_take_infer(attrs: dict, in_shapes: list, aux_shapes: list) -> tuple[list, list, list]:
    a, indices = in_shapes
    if a is not None and len(a) != 2:
        raise ShapeError(f"batch_take: 'a' must be 2-D (batch, n), got {tuple(a)}")
    if indices is not None and len(indices) != 1:
        raise ShapeError(f"batch_take: 'indices' must be 1-D, got {tuple(indices)}")
    if a is not None:
        indices = merge_shape("batch_take", "indices", indices, (a[0],), complete=True)
        refuse_empty_axis("batch_take", "a", tuple(a), 1, a[0])
    return [a, indices], [indices], aux_shapes


def _batch_take_forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    xp = kctx.xp
    a, indices = inputs
    idx = checked_classes(kctx.backend, "batch_take", "indices", indices, a.shape[1], mode="clip")
    outputs[0][...] = a[xp.arange(a.shape[0]), idx]


register(
    OpDef(
        "batch_take",
        _batch_take_forward,
        inputs=("a", "indices"),
        infer_shape=_batch_take_infer,
        infer_type=lambda attrs, t, a: (t, [t[0]], a),
        gradient=lambda F, attrs, inputs, outputs, og: [None, None],
        doc="``out[i] = a[i, indices[i]]`` (indices clipped to the row).",
    )
)


# -- one_hot, where ------------------------------------------------------------------------------------
def _one_hot_forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    # fill with off_value, then write on_value at each in-range index: no (N, depth) temporaries
    _one_hot_write(kctx, attrs, inputs[0], outputs[0], filled=False)


def _one_hot_into_zeros(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    # the output is zero-filled already: with the default off_value only the ones are written
    _one_hot_write(kctx, attrs, inputs[0], outputs[0], filled=attrs["off_value"] == 0)


def _one_hot_write(kctx: Any, attrs: dict, indices: Any, out: Any, filled: bool) -> None:
    xp, depth = kctx.xp, attrs["depth"]
    if out.size == 0:  # no rows, or depth 0
        return
    if indices.dtype.kind == "f":
        # MXNet's rule (a number out of range leaves its row at off_value) for every number, as
        # given: converting inf or 2**63 is undefined; NaN is no number and is refused by name
        idx = checked_classes(kctx.backend, "one_hot", "indices", indices, depth, mode="ignore", fallback=-1)
    else:
        idx = (indices if indices.ndim == 1 else indices.reshape(-1)).astype(xp.int64)
    n = idx.size
    # each row's entry by flat index (row * depth + index): cheaper than indexing two arrays
    if xp is np:
        # int64 indices seen as uint64: a negative one is at least 2**63, so the largest checks
        # both ends of the range (found by argmax: 0.3 us for 1000 indices, against 1.2 for max)
        unsigned = idx.view(np.uint64)
        if not n or unsigned[unsigned.argmax()] < depth:
            positions = np.add(_row_starts(n, depth), idx)
        else:  # an index out of range leaves its row at off_value
            rows = np.nonzero((idx >= 0) & (idx < depth))[0]
            positions = rows * depth + idx[rows]
        values: Any = scalar_as(out.dtype, attrs["on_value"])
    else:
        # on the device, without reading the indices back to the host (a wait for the device at
        # every call, and no CUDA graph could hold the pass): a row whose index is out of range
        # writes off_value at its first position, which holds off_value already
        valid = (idx >= 0) & (idx < depth)
        positions = xp.arange(0, n * depth, depth) + xp.where(valid, idx, 0)
        on, off = scalar_as(out.dtype, attrs["on_value"]), scalar_as(out.dtype, attrs["off_value"])
        values = xp.where(valid, on, off).astype(out.dtype, copy=False)
    table = out if out.flags.c_contiguous else xp.empty(out.shape, dtype=out.dtype)
    flat = table.reshape(-1)
    if not filled or table is not out:
        flat.fill(scalar_as(out.dtype, attrs["off_value"]))
    flat[positions] = values
    if table is not out:
        out[...] = table


# (rows, depth) -> the flat index of each row's start, read-only: a batch's one_hot has the same
# shape every step, and the cached arange saves 0.8 us a call
_ROW_STARTS: dict[tuple[int, int], np.ndarray] = {}
_ROW_STARTS_MAX = 16


def _row_starts(n: int, depth: int) -> np.ndarray:
    starts = _ROW_STARTS.get((n, depth))
    if starts is None:
        if len(_ROW_STARTS) >= _ROW_STARTS_MAX:
            _ROW_STARTS.clear()
        starts = np.arange(0, n * depth, depth)
        starts.flags.writeable = False
        _ROW_STARTS[(n, depth)] = starts
    return starts


def _one_hot_infer(attrs: dict, in_shapes: list, aux_shapes: list) -> tuple[list, list, list]:
    if attrs["depth"] < 0:  # depth 0 is an empty trailing axis, as in MXNet
        raise OperatorError(f"one_hot: depth={attrs['depth']} must be at least 0")
    for name in ("on_value", "off_value"):
        try:  # at the call: the kernel's cast raised inside an EngineError at the wait
            scalar_as(attrs["dtype"], attrs[name])
        except OperatorError as error:
            raise OperatorError(f"one_hot: {name}={attrs[name]} with dtype={attrs['dtype']}: {error}") from None
    data = in_shapes[0]
    return in_shapes, [None if data is None else tuple(data) + (attrs["depth"],)], aux_shapes


register(
    OpDef(
        "one_hot",
        _one_hot_forward,
        inputs=("indices",),
        params={
            "depth": Param(parse_int, REQUIRED, "number of classes"),
            "on_value": Param(parse_float, 1.0, "value at the index"),
            "off_value": Param(parse_float, 0.0, "value elsewhere"),
            # MXNet 1.9.1's choices (but bfloat16)
            "dtype": Param(
                dtype_among("float16", "float32", "float64", "int32", "int64", "int8", "uint8"),
                "float32",
                "output dtype",
            ),
        },
        infer_shape=_one_hot_infer,
        infer_type=lambda attrs, t, a: (t, [attrs["dtype"]], a),
        gradient=lambda F, attrs, inputs, outputs, og: [None],
        forward_into_zeros=_one_hot_into_zeros,
        doc="One-hot encode integer indices into a trailing axis of length ``depth``.",
    )
)


def _condition(xp: Any, condition: Any, ndim: int) -> Any:
    mask = condition != 0
    return mask.reshape(mask.shape + (1,) * (ndim - mask.ndim))


def _where_forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    xp = kctx.xp
    condition, x, y = inputs
    outputs[0][...] = xp.where(_condition(xp, condition, x.ndim), x, y)


def _where_infer(attrs: dict, in_shapes: list, aux_shapes: list) -> tuple[list, list, list]:
    condition, x, y = in_shapes
    x = y = merge_shape("where", "y", y, merge_shape("where", "x", x, None))
    if condition is not None and x is not None and tuple(condition) != tuple(x[:1]):
        condition = merge_shape("where", "condition", condition, x)
    return [condition, x, y], [x], aux_shapes


def _where_type(attrs: dict, in_types: list, aux_types: list) -> tuple[list, list, list]:
    # x and y share one dtype, the output's; the condition's is its own (MXNet leaves it unknown)
    condition, x, y = in_types
    if x is not None and y is not None and x != y:
        raise OperatorError(f"where: input 'y' has dtype {y}, expected {x} like input 'x'")
    value = x or y
    return [condition, value, value], [value], aux_types


def _backward_where_forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    xp = kctx.xp
    grad, condition = inputs
    mask = _condition(xp, condition, grad.ndim)
    zero = xp.zeros((), dtype=grad.dtype)
    outputs[0][...] = xp.where(mask, grad, zero)
    outputs[1][...] = xp.where(mask, zero, grad)


register(
    OpDef(
        "where",
        _where_forward,
        inputs=("condition", "x", "y"),
        infer_shape=_where_infer,
        infer_type=_where_type,
        gradient=lambda F, attrs, inputs, outputs, og: [None, *as_list(F._backward_where(og[0], inputs[0]), 2)],
        doc="``x`` where ``condition`` is non-zero, else ``y`` (condition: x's shape, or 1-D over the first axis).",
    )
)
register(
    OpDef(
        "_backward_where",
        _backward_where_forward,
        inputs=("out_grad", "condition"),
        outputs=("x_grad", "y_grad"),
        infer_shape=lambda attrs, s, a: (s, [s[0], s[0]], a),
        infer_type=lambda attrs, t, a: (t, [t[0], t[0]], a),
        doc="Gradient of ``where``: the output gradient routed to x or y.",
    )
)
