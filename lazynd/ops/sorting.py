"""Sorting along an axis: topk, sort and argsort (MXNet semantics and defaults).

Indices come out as floats by default (``dtype='float32'``), as in MXNet.  Only the values
of ``topk`` (``ret_typ='value'`` or ``'both'``) have a gradient: the output gradient
scattered back to the positions the values came from.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..errors import OperatorError
from .params import Param, dtype_among, enum, optional, parse_bool, parse_int
from .partial_shapes import dim_is_known
from .registry import OpDef, register
from .shape import normalize_axis

# MXNet 1.9.1's choices for the indices' dtype
_INDEX_DTYPE = dtype_among("float16", "float32", "float64", "int32", "int64", "uint8")


def _stable_argsort(xp: Any, x: Any, axis: int) -> Any:
    # CuPy's sort is always stable and takes no ``kind``
    return xp.argsort(x, axis=axis, kind="stable") if xp.__name__ == "numpy" else xp.argsort(x, axis=axis)


def _argsort(xp: Any, x: Any, axis: int, ascend: bool) -> Any:
    """Sort order with equal values kept in their original order in both directions, as MXNet does."""
    if ascend:
        return _stable_argsort(xp, x, axis)
    # ascending order of the reversed array, read backwards, is descending with ties still first-come
    backwards = xp.flip(_stable_argsort(xp, xp.flip(x, axis=axis), axis), axis=axis)
    return x.shape[axis] - 1 - backwards


def _layout(op: str, attrs: dict, x: Any) -> tuple[Any, int]:
    """The array to sort and the axis; ``axis=None`` sorts the flattened array."""
    if attrs["axis"] is None:
        return x.reshape(-1), 0
    return x, normalize_axis(op, attrs["axis"], x.ndim)


def _k(attrs: dict, n: int) -> int:
    k = attrs["k"]
    if k > n:
        raise OperatorError(f"topk: k={k} is larger than the {n} elements along the axis")
    # MXNet: k < 1 means all elements
    return n if k < 1 else k


def _topk_order(kctx: Any, attrs: dict, x: Any) -> tuple[Any, Any, int]:
    xp = kctx.xp
    data, axis = _layout("topk", attrs, x)
    k = _k(attrs, data.shape[axis])
    rows = xp.moveaxis(data, axis, -1)
    top = _top_rows(xp, rows.reshape(-1, rows.shape[-1]), k, attrs["is_ascend"])
    return data, xp.moveaxis(top.reshape(rows.shape[:-1] + (k,)), -1, axis), axis


def _top_rows(xp: Any, rows: Any, k: int, ascend: bool) -> Any:
    """The positions of each row's ``k`` first elements in the stable order of :func:`_argsort`.

    On the host, sorting whole rows for a few of their elements cost ``topk(k=10)`` of 512 rows
    of 10000 33x MXNet's time.  A partition finds each row's k-th value in linear time; the elements on
    the right side of it (a superset of the top k: it also holds every tie with the k-th value,
    and NaNs, which compare false) are taken in their original order, so ties keep it, into
    rows as long as the longest such set, padded at the end with a value that comes last
    (stable, so after real ones equal to it); only those rows are sorted."""
    n = rows.shape[-1]
    if k == n or rows.size == 0 or xp is not np:
        # (on a device the candidates' count would be read back to the host at every call: a GPU
        # sorts whole rows, on its stream)
        return _argsort(xp, rows, 1, ascend)[:, :k]
    # NaN is the largest value for NumPy's and CuPy's sorts and partitions
    kth = xp.partition(rows, k - 1 if ascend else n - k, axis=1)[:, k - 1 if ascend else n - k]
    candidate = ~(rows > kth[:, None]) if ascend else ~(rows < kth[:, None])
    # one flat search (a 2-D ``nonzero`` takes eight times as long), rows and columns from its positions
    row, column = xp.divmod(xp.flatnonzero(candidate), n)
    counts = xp.bincount(row, minlength=rows.shape[0])
    starts = xp.cumsum(counts) - counts
    width = int(counts.max())
    place = xp.arange(row.size) - starts[row]
    positions = xp.zeros((rows.shape[0], width), dtype=column.dtype)
    values = xp.full((rows.shape[0], width), _last_value(rows.dtype, ascend), dtype=rows.dtype)
    positions[row, place] = column
    values[row, place] = rows[row, column]
    order = _argsort(xp, values, 1, ascend)[:, :k]
    return xp.take_along_axis(positions, order, axis=1)


def _last_value(dtype: Any, ascend: bool) -> Any:
    """A value that sorts last in the stable order (or with the last, which it follows)."""
    if dtype.kind == "f":
        return float("nan") if ascend else float("-inf")
    if dtype.kind == "b":
        return ascend
    info = np.iinfo(dtype)
    return info.max if ascend else info.min


def _topk_forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    xp = kctx.xp
    data, top, axis = _topk_order(kctx, attrs, inputs[0])
    ret = attrs["ret_typ"]
    if ret == "mask":
        mask = xp.zeros(data.shape, dtype=outputs[0].dtype)
        _put(xp, mask, top, 1, axis)
        outputs[0][...] = mask.reshape(outputs[0].shape)
        return
    values = xp.take_along_axis(data, top, axis=axis)
    if ret == "value":
        outputs[0][...] = values
    elif ret == "indices":
        outputs[0][...] = top
    else:
        outputs[0][...] = values
        outputs[1][...] = top


def _put(xp: Any, target: Any, index: Any, value: Any, axis: int) -> None:
    # open grids, one broadcastable arange per axis (``indices(sparse=True)`` is NumPy-only)
    ndim = index.ndim
    grids: list[Any] = [
        xp.arange(n).reshape((1,) * d + (n,) + (1,) * (ndim - d - 1)) for d, n in enumerate(index.shape)
    ]
    grids[axis] = index
    target[tuple(grids)] = value


def _topk_shape(attrs: dict, shape: tuple) -> tuple:
    """The shape of the picked values; ``k`` is checked against the axis wherever its size is known.
    A 0 is an unknown dim to a symbol's shape pass but a zero-size axis in an imperative call: there
    ``k=1`` of nothing is refused at the call, as ``k`` past any other axis is (it was let through
    to fail in the kernel, or for ``ret_typ='mask'`` to give an empty mask)."""
    if attrs["axis"] is None:
        n = math.prod(shape)
        known = all(dim_is_known(d) for d in shape)
        return (_k(attrs, n) if known else max(attrs["k"], 0),)
    axis = normalize_axis("topk", attrs["axis"], len(shape))
    k = _k(attrs, shape[axis]) if dim_is_known(shape[axis]) else max(attrs["k"], 0)
    return shape[:axis] + (k,) + shape[axis + 1 :]


def _topk_infer(attrs: dict, in_shapes: list, aux_shapes: list) -> tuple[list, list, list]:
    data = in_shapes[0]
    n_out = 2 if attrs["ret_typ"] == "both" else 1
    if data is None:
        return in_shapes, [None] * n_out, aux_shapes
    data = tuple(data)
    picked = _topk_shape(attrs, data)  # checks k for every ret_typ
    out = data if attrs["ret_typ"] == "mask" else picked
    return in_shapes, [out] * n_out, aux_shapes


def _topk_types(attrs: dict, in_types: list, aux_types: list) -> tuple[list, list, list]:
    ret = attrs["ret_typ"]
    if ret == "both":
        return in_types, [in_types[0], attrs["dtype"]], aux_types
    return in_types, [attrs["dtype"] if ret == "indices" else in_types[0]], aux_types


def _topk_gradient(F: Any, attrs: dict, inputs: list, outputs: list, out_grads: list) -> list:
    if attrs["ret_typ"] not in ("value", "both"):
        return [None]
    # with 'both', the values (the first output) carry the gradient, as in MXNet
    return [F._backward_topk(out_grads[0], inputs[0], **{**attrs, "ret_typ": "value"})]


def _backward_topk_forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    xp = kctx.xp
    grad, x = inputs
    data, top, axis = _topk_order(kctx, attrs, x)
    target = xp.zeros(data.shape, dtype=outputs[0].dtype)
    _put(xp, target, top, grad.reshape(top.shape), axis)
    outputs[0][...] = target.reshape(outputs[0].shape)


def _topk_output_names(attrs: dict) -> list[str]:
    """MXNet 1.9.1's names: ``output0``/``output1`` where its kernel has two outputs (values and
    indices, the indices hidden unless ``ret_typ='both'``), ``output`` where it has one."""
    if attrs.get("ret_typ") == "both":
        return ["output0", "output1"]
    return ["output0"] if attrs.get("ret_typ") == "value" else ["output"]


_TOPK_PARAMS = {
    "axis": Param(optional(parse_int), -1, "the axis to search; None flattens the input"),
    "k": Param(parse_int, 1, "how many elements (k < 1: all)"),
    "ret_typ": Param(enum("indices", "value", "both", "mask"), "indices", "what to return"),
    "is_ascend": Param(parse_bool, False, "take the smallest instead of the largest"),
    "dtype": Param(_INDEX_DTYPE, "float32", "dtype of returned indices"),
}
register(
    OpDef(
        "topk",
        _topk_forward,
        params=dict(_TOPK_PARAMS),
        outputs=_topk_output_names,
        infer_shape=_topk_infer,
        infer_type=_topk_types,
        gradient=_topk_gradient,
        doc="The k largest (or smallest) elements along ``axis``: their indices, values, both, or a mask.",
    )
)
register(
    OpDef(
        "_backward_topk",
        _backward_topk_forward,
        inputs=("out_grad", "data"),
        params=dict(_TOPK_PARAMS),
        infer_shape=lambda attrs, s, a: (s, [s[1]], a),
        infer_type=lambda attrs, t, a: (t, [t[0]], a),
        doc="Gradient of ``topk``'s values: scatter the gradient to the chosen positions.",
    )
)


def _sort_shape(attrs: dict, in_shapes: list, aux_shapes: list) -> tuple[list, list, list]:
    data = in_shapes[0]
    if data is None:
        return in_shapes, [None], aux_shapes
    data = tuple(data)
    if attrs["axis"] is None:
        size = 1
        for d in data:
            size *= d
        return in_shapes, [(size,)], aux_shapes
    normalize_axis("sort", attrs["axis"], len(data))
    return in_shapes, [data], aux_shapes


def _sort_forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    # equal values are indistinguishable, so sorted values need no stable order and no gather; the
    # sort runs on a copy (CuPy sorts no non-contiguous array in place, and ``out`` may be a view)
    xp = kctx.xp
    data, axis = _layout("sort", attrs, inputs[0])
    ordered = xp.sort(data, axis=axis)
    outputs[0][...] = (ordered if attrs["is_ascend"] else xp.flip(ordered, axis=axis)).reshape(outputs[0].shape)


def _argsort_forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    data, axis = _layout("argsort", attrs, inputs[0])
    outputs[0][...] = _argsort(kctx.xp, data, axis, attrs["is_ascend"])


def _sort_gradient(F: Any, attrs: dict, inputs: list, outputs: list, out_grads: list) -> list:
    """Each sorted value's gradient goes back to the position it came from (``topk`` of every element)."""
    order = {"axis": attrs["axis"], "is_ascend": attrs["is_ascend"]}
    return [F._backward_topk(out_grads[0], inputs[0], k=0, ret_typ="value", **order)]


_SORT_PARAMS = {
    "axis": Param(optional(parse_int), -1, "the axis to sort; None flattens the input"),
    "is_ascend": Param(parse_bool, True, "ascending (True) or descending order"),
}
register(
    OpDef(
        "sort",
        _sort_forward,
        params=dict(_SORT_PARAMS),
        # MXNet's sort also has a hidden indices output, hence its single visible output's name
        outputs=("output0",),
        infer_shape=_sort_shape,
        gradient=_sort_gradient,
        doc="Sorted copy along ``axis``.",
    )
)
register(
    OpDef(
        "argsort",
        _argsort_forward,
        params={**_SORT_PARAMS, "dtype": Param(_INDEX_DTYPE, "float32", "dtype of the indices")},
        infer_shape=_sort_shape,
        infer_type=lambda attrs, t, a: (t, [attrs["dtype"]], a),
        gradient=lambda F, attrs, inputs, outputs, og: [None],
        doc="Indices that sort the input along ``axis``.",
    )
)
