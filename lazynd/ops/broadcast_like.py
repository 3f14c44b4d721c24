"""Broadcasting one array to another's shape, and its gradient: ``broadcast_like`` (with MXNet 1.x's
``lhs_axes``/``rhs_axes``) and ``_reduce_to_like``, which sums a broadcast gradient back to the shape it
came from (the broadcasting operators' gradients use it)."""

from __future__ import annotations

from typing import Any

from ..errors import OperatorError, ShapeError
from .params import Param, optional, parse_shape
from .registry import OpDef, dims_differ, merge_shape, register
from .shape import normalize_axis


# -- helpers for broadcast gradients -------------------------------------------------------------
def _reduce_to_like_forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    xp = kctx.xp
    grad, out = inputs[0], outputs[0]
    target = out.shape
    lead = grad.ndim - len(target)
    axes = tuple(range(lead)) + tuple(lead + i for i, d in enumerate(target) if d == 1 and grad.shape[lead + i] != 1)
    summed = grad.sum(axis=axes, keepdims=False) if axes else grad
    out[...] = xp.reshape(summed, target)


def reduced_like(F: Any, grad: Any, like: Any) -> Any:
    """The gradient rule's ``_reduce_to_like(grad, like)``: ``grad`` summed over the axes ``like`` was
    broadcast along, or ``grad`` itself where an array ``like`` has its shape already (a bias add's
    data: no copy of an activation-sized gradient); None stays None.  A symbol's shape is not known
    when the gradient pass runs its rules: it always gets the operator, which copies where nothing
    was broadcast."""
    if grad is None:
        return None
    shape = getattr(like, "shape", None)  # an NDArray's (autograd); a Symbol has none
    if shape is not None and shape == grad.shape:
        return grad
    return F._reduce_to_like(grad, like)


def _reduce_to_like_infer(attrs: dict, in_shapes: list, aux_shapes: list) -> tuple[list, list, list]:
    """The output has ``like``'s shape, which must broadcast to ``data``'s (the sum undoes that)."""
    data, like = in_shapes
    if data is not None and like is not None:
        _check_broadcast(like, data, "_reduce_to_like", ("like", "data"))
    return in_shapes, [like], aux_shapes


register(
    OpDef(
        "_reduce_to_like",
        _reduce_to_like_forward,
        inputs=("data", "like"),
        shape_only_inputs=(1,),
        infer_shape=_reduce_to_like_infer,
        infer_type=lambda attrs, t, a: (t, [t[0]], a),
        gradient=lambda F, attrs, inputs, outputs, og: [F.broadcast_like(og[0], inputs[0]), None],
        doc="Sum ``data`` over the axes broadcast to reach it from ``like``'s shape (gradient of broadcasting).",
    )
)


def _broadcast_like_forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    outputs[0][...] = kctx.xp.broadcast_to(inputs[0], outputs[0].shape)


def _broadcast_like_infer(attrs: dict, in_shapes: list, aux_shapes: list) -> tuple[list, list, list]:
    lhs, rhs = in_shapes
    lhs_axes, rhs_axes = attrs["lhs_axes"], attrs["rhs_axes"]
    if lhs_axes is None or rhs_axes is None:  # as MXNet, both or neither: rhs's whole shape
        if lhs is not None and rhs is not None:
            _check_broadcast(lhs, rhs, "broadcast_like", ("lhs", "rhs"))
        return in_shapes, [merge_shape("broadcast_like", "rhs", rhs, None)], aux_shapes
    if not lhs_axes:  # MXNet refuses it too; an empty pair would silently return lhs unchanged
        raise OperatorError(
            f"broadcast_like: lhs_axes={tuple(lhs_axes)} is empty; give at least one axis, "
            "or neither lhs_axes nor rhs_axes to broadcast to the whole shape of rhs"
        )
    if len(lhs_axes) != len(rhs_axes):
        raise OperatorError(f"broadcast_like: lhs_axes={lhs_axes} and rhs_axes={rhs_axes} must have one entry each")
    if lhs is None or rhs is None:
        return in_shapes, [None], aux_shapes
    target = list(lhs)
    for lhs_axis, rhs_axis in zip(lhs_axes, rhs_axes, strict=True):
        i = normalize_axis("broadcast_like", lhs_axis, len(lhs), "lhs_axes")
        j = normalize_axis("broadcast_like", rhs_axis, len(rhs), "rhs_axes")
        if lhs[i] != 1:
            raise ShapeError(f"broadcast_like: axis {i} of lhs {tuple(lhs)} has size {lhs[i]}, expected 1 to broadcast")
        target[i] = rhs[j]
    return in_shapes, [tuple(target)], aux_shapes


def _check_broadcast(lhs: tuple, rhs: tuple, op: str, names: tuple[str, str]) -> None:
    """``lhs`` broadcasts to ``rhs``: no more axes, each (aligned from the last) equal or 1 (see
    ``dims_differ``); ``op`` and ``names`` (of lhs and rhs) are what the message names."""
    fits = len(lhs) <= len(rhs) and all(
        a == 1 or not dims_differ(a, b) for a, b in zip(lhs[::-1], rhs[::-1], strict=False)
    )
    if not fits:
        raise ShapeError(f"{op}: {names[0]} {tuple(lhs)} cannot be broadcast to {names[1]} {tuple(rhs)}")


register(
    OpDef(
        "broadcast_like",
        _broadcast_like_forward,
        inputs=("lhs", "rhs"),
        shape_only_inputs=(1,),
        params={
            "lhs_axes": Param(optional(parse_shape), None, "axes of lhs (of size 1) to broadcast"),
            "rhs_axes": Param(optional(parse_shape), None, "the axes of rhs whose sizes they take"),
        },
        infer_shape=_broadcast_like_infer,
        infer_type=lambda attrs, t, a: (t, [t[0]], a),
        gradient=lambda F, attrs, inputs, outputs, og: [reduced_like(F, og[0], inputs[0]), None],
        doc="Broadcast ``lhs`` to the shape of ``rhs``, or only its ``lhs_axes`` to the sizes of ``rhs_axes``.",
    )
)
