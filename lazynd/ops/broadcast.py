"""Broadcasting to a shape (``broadcast_to``, ``broadcast_axis``) and the variadic sum ``ElementWiseSum``."""

from __future__ import annotations

from typing import Any

from ..errors import OperatorError, ShapeError
from .broadcast_like import reduced_like
from .params import Param, parse_axis, parse_shape
from .registry import OpDef, dim_is_known, register, unify_shapes


def _broadcast_forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    # copyto broadcasts by itself: ~4 us less per call than building a broadcast_to view first
    kctx.xp.copyto(outputs[0], inputs[0])


def _broadcast_gradient(F: Any, attrs: dict, inputs: list, outputs: list, out_grads: list) -> list:
    return [reduced_like(F, out_grads[0], inputs[0])]


def _broadcast_to_infer(attrs: dict, in_shapes: list, aux_shapes: list) -> tuple[list, list, list]:
    data, target = in_shapes[0], attrs["shape"]
    if data is None:
        return in_shapes, [None], aux_shapes
    if len(target) != len(data):
        raise ShapeError(
            f"broadcast_to: shape {target} has {len(target)} dims, the input {tuple(data)} has {len(data)}"
        )
    out = []
    for axis, (d, t) in enumerate(zip(data, target, strict=True)):
        if t == 0:  # 0 keeps the input's size, as in MXNet
            out.append(d)
        elif d in (1, t) or not dim_is_known(d):
            out.append(t)
        else:
            raise ShapeError(
                f"broadcast_to: cannot broadcast axis {axis} of size {d} to {t} (input {tuple(data)}, shape {target}); "
                "only axes of size 1 can grow"
            )
    return in_shapes, [tuple(out)], aux_shapes


register(
    OpDef(
        "broadcast_to",
        _broadcast_forward,
        params={"shape": Param(parse_shape, doc="the target shape; 0 keeps the input's size on that axis")},
        infer_shape=_broadcast_to_infer,
        gradient=_broadcast_gradient,
        doc="Broadcast axes of size 1 to ``shape``.",
    )
)


def _axes_and_sizes(attrs: dict, ndim: int) -> list[tuple[int, int]]:
    axes = attrs["axis"]
    axes = () if axes is None else ((axes,) if isinstance(axes, int) else tuple(axes))
    sizes = attrs["size"]
    if len(axes) != len(sizes):
        raise OperatorError(
            f"broadcast_axis: {len(axes)} axes {axes} but {len(sizes)} sizes {sizes}; expected one size per axis"
        )
    pairs = []
    for axis, size in zip(axes, sizes, strict=True):
        if not -ndim <= axis < ndim:
            raise OperatorError(f"broadcast_axis: axis {axis} is out of range for an input of {ndim} dims")
        pairs.append((axis % ndim, size))
    return pairs


def _broadcast_axis_infer(attrs: dict, in_shapes: list, aux_shapes: list) -> tuple[list, list, list]:
    data = in_shapes[0]
    if data is None:
        return in_shapes, [None], aux_shapes
    out = list(data)
    for axis, size in _axes_and_sizes(attrs, len(data)):
        if data[axis] != 1 and dim_is_known(data[axis]):
            raise ShapeError(
                f"broadcast_axis: axis {axis} of the input {tuple(data)} has size {data[axis]}, expected 1"
            )
        out[axis] = size
    return in_shapes, [tuple(out)], aux_shapes


register(
    OpDef(
        "broadcast_axis",
        _broadcast_forward,
        params={
            "axis": Param(parse_axis, (), "the axes (of size 1) to broadcast"),
            "size": Param(parse_shape, (), "the new size of each axis"),
        },
        infer_shape=_broadcast_axis_infer,
        gradient=_broadcast_gradient,
        aliases=("broadcast_axes",),
        doc="Broadcast the given axes of size 1 to the given sizes.",
    )
)


# -- ElementWiseSum ------------------------------------------------------------------------------
def _sum_forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    out = outputs[0]
    if not inputs:
        out[...] = 0
        return
    xp = kctx.xp
    if len(inputs) == 1:
        out[...] = inputs[0]
        return
    if any(xp.may_share_memory(x, out) for x in inputs[1:]):
        # out aliases a later input (add_n(a, a, out=a)): accumulating into it would change that input
        total = inputs[0] + inputs[1]
        for x in inputs[2:]:
            total += x
        out[...] = total
        return
    # the output may be input 0's buffer (in place): it is read by the first add before anything is written
    xp.add(inputs[0], inputs[1], out=out)
    for x in inputs[2:]:
        xp.add(out, x, out=out)


def _sum_infer(attrs: dict, in_shapes: list, aux_shapes: list) -> tuple[list, list, list]:
    if not in_shapes:
        raise OperatorError("ElementWiseSum: expected at least one input, got none")
    names = [f"arg{i}" for i in range(len(in_shapes))]
    shape = unify_shapes("ElementWiseSum", names, list(in_shapes))
    return [shape] * len(in_shapes), [shape], aux_shapes


register(
    OpDef(
        "ElementWiseSum",
        _sum_forward,
        variadic=True,
        infer_shape=_sum_infer,
        gradient=lambda F, attrs, inputs, outputs, out_grads: [out_grads[0]] * len(inputs),
        inplace=((0, 0),),
        aliases=("add_n",),
        doc="The elementwise sum of any number of same-shaped arrays.",
    )
)
