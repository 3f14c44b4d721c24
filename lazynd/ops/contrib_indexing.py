"""Row indexing operators of MXNet 1.x's ``contrib`` namespace: ``index_copy`` and ``boolean_mask``.

``index_copy(old_tensor, index_vector, new_tensor)`` is ``old_tensor`` with row
``index_vector[i]`` replaced by ``new_tensor[i]``.  Its gradient sends the head gradient to
``old_tensor`` with the replaced rows zeroed, and the replaced rows of it to ``new_tensor``.
Positions outside ``old_tensor`` are refused (MXNet skips them silently).

``boolean_mask(data, index, axis=0)`` keeps the rows of ``data`` where ``index`` is nonzero.
The length of its output depends on the values of ``index``, which no shape rule can know
before they are computed: as in MXNet, it runs imperatively only (``mx.nd.contrib.boolean_mask``,
:func:`lazynd.ndarray.masking.boolean_mask`, which reads the mask and takes the rows);
the operator registered here gives ``mx.sym.contrib.boolean_mask`` a node whose shape
inference refuses it with that reason.
"""

from __future__ import annotations

from typing import Any

from ..errors import OperatorError, ShapeError
from .params import Param, parse_int
from .registry import OpDef, merge_shape, register

INDEX_COPY = "_contrib_index_copy"
BOOLEAN_MASK = "_contrib_boolean_mask"


# -- index_copy -----------------------------------------------------------------------------------
def _index_copy_infer(attrs: dict, in_shapes: list, aux_shapes: list) -> tuple[list, list, list]:
    old, index, new = in_shapes
    if index is not None and len(index) != 1:
        raise ShapeError(f"{INDEX_COPY}: 'index_vector' must be 1-D, got shape {tuple(index)}")
    if old is not None and not len(old):
        raise ShapeError(f"{INDEX_COPY}: 'old_tensor' must have at least one axis, got shape {tuple(old)}")
    rows = (index[0] if index is not None else 0) or (new[0] if new is not None and len(new) else 0)
    if new is not None and old is not None and len(new) != len(old):
        raise ShapeError(
            f"{INDEX_COPY}: 'new_tensor' has shape {tuple(new)}, expected {len(old)} axes like "
            f"'old_tensor' {tuple(old)} (one row per index)"
        )
    if old is not None:
        new = merge_shape(INDEX_COPY, "new_tensor", new, (rows, *old[1:]))
    elif new is not None:
        old = (0, *new[1:])
        new = merge_shape(INDEX_COPY, "new_tensor", new, (rows, *new[1:]))
    index = merge_shape(INDEX_COPY, "index_vector", index, (rows,)) if rows else index
    return [old, index, new], [old], list(aux_shapes)


def _index_copy_type(attrs: dict, in_types: list, aux_types: list) -> tuple[list, list, list]:
    old, index, new = in_types
    dtype = old or new
    if old is not None and new is not None and old != new:
        raise OperatorError(f"{INDEX_COPY}: 'new_tensor' has dtype {new}, expected {old} like 'old_tensor'")
    return [dtype, index or "float32", dtype], [dtype], list(aux_types)


def checked_positions(xp: Any, index: Any, length: int, op: str, arg: str) -> Any:
    """``index`` as int64 positions, each a whole number in [0, length) (raises otherwise)."""
    if index.size:
        low, high = float(index.min()), float(index.max())
        whole = bool((index == xp.trunc(index)).all()) if index.dtype.kind == "f" else True
        if low < 0 or high >= length or not whole:
            raise OperatorError(
                f"{op}: '{arg}' must hold whole numbers in [0, {length - 1}], got values in [{low:g}, {high:g}]"
            )
    return index.astype("int64")


def _index_copy_forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    old, index, new = inputs
    out = outputs[0]
    positions = checked_positions(kctx.xp, index, old.shape[0], INDEX_COPY, "index_vector")
    if out is not old:
        out[...] = old
    out[positions] = new


def _index_copy_gradient(F: Any, attrs: dict, inputs: list, outputs: list, out_grads: list) -> list:
    old, index, new = inputs
    head = out_grads[0]
    old_grad = F._contrib_index_copy(head, index, F.zeros_like(new))  # the replaced rows get nothing
    return [old_grad, None, F.take(head, index, axis=0)]


register(
    OpDef(
        INDEX_COPY,
        _index_copy_forward,
        inputs=("old_tensor", "index_vector", "new_tensor"),
        infer_shape=_index_copy_infer,
        infer_type=_index_copy_type,
        gradient=_index_copy_gradient,
        inplace=((0, 0),),
        doc="``old_tensor`` with rows ``index_vector[i]`` replaced by ``new_tensor[i]`` (``mx.nd.contrib.index_copy``).",
    )
)


# -- boolean_mask (a symbol node that is refused) ------------------------------------------------
def _boolean_mask_infer(attrs: dict, in_shapes: list, aux_shapes: list) -> tuple[list, list, list]:
    raise ShapeError(
        f"{BOOLEAN_MASK}: the output's length is the number of nonzero values of 'index', known only "
        "when they are computed, so the operator cannot be part of a symbol graph; call "
        "mx.nd.contrib.boolean_mask imperatively (as in MXNet, whose executors cannot bind it either)"
    )


def _boolean_mask_forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    raise OperatorError(f"{BOOLEAN_MASK}: runs imperatively only, through mx.nd.contrib.boolean_mask")


register(
    OpDef(
        BOOLEAN_MASK,
        _boolean_mask_forward,
        inputs=("data", "index"),
        params={"axis": Param(parse_int, 0, "the axis masked (MXNet supports 0 only)")},
        infer_shape=_boolean_mask_infer,
        doc="The rows of 'data' where 'index' is nonzero; imperative only (``mx.nd.contrib.boolean_mask``).",
    )
)
