"""Operators along one axis, or over the flattened array when ``axis`` is None: the arg-reductions
``argmax``, ``argmin`` and ``argmax_channel`` (indices, in the input's dtype) and the running sum
``cumsum``, with its gradient.

Unlike the reductions of :mod:`lazynd.ops.reduce`, these take one optional integer ``axis`` and
no ``exclude``; the arg-reductions share its axis and shape rules (:func:`reduced_axes`,
:func:`reduced_shape`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from ..errors import OperatorError
from ..util import is_np_shape
from .params import Param, optional, parse_bool, parse_dtype, parse_int
from .reduce import reduced_axes, reduced_shape
from .registry import OpDef, register


# -- arg-reductions: indices in the input's dtype, as MXNet returns them --------------
def _arg_forward(name: str) -> Callable:
    largest = name in ("argmax", "argmax_channel")

    def forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
        x, out = inputs[0], outputs[0]
        axis = _channel_axis(x.ndim) if name == "argmax_channel" else attrs["axis"]
        if x.size == 0:
            _refuse_empty(name, x.shape, axis)
            return
        # the array's own methods: NumPy's np.argmax and np.reshape wrappers cost 1.4 us more a call
        index = (x.argmax if largest else x.argmin)(axis=axis)
        out[...] = index.reshape(out.shape)

    return forward


def _refuse_empty(name: str, shape: tuple, axis: int | None) -> None:
    """An empty reduced axis has no answer; another empty axis gives an empty result (NumPy's rule)."""
    if axis is None and 0 in shape:
        raise OperatorError(f"{name}: cannot take the {name} of an empty array of shape {shape}")
    if axis is not None and not shape[axis]:
        raise OperatorError(f"{name}: cannot take the {name} along axis {axis}, empty in shape {shape}")


def _arg_infer(name: str) -> Callable:
    def infer(attrs: dict, in_shapes: list, aux_shapes: list) -> tuple[list, list, list]:
        data = in_shapes[0]
        if data is None:
            return in_shapes, [None], aux_shapes
        if is_np_shape() and 0 in data:  # a 0 is a size (an NDArray's call): refuse at the call, as max does
            axis = _channel_axis(len(data)) if name == "argmax_channel" else attrs["axis"]
            _refuse_empty(name, tuple(data), None if axis is None else axis % len(data))
        if name == "argmax_channel":
            axis = _channel_axis(len(data))
            return in_shapes, [tuple(data[:axis]) + tuple(data[axis + 1 :]) or (1,)], aux_shapes
        axis = attrs["axis"]
        if axis is None:
            return in_shapes, [(1,) * len(data) if attrs["keepdims"] else (1,)], aux_shapes
        axes = reduced_axes(name, {"axis": axis}, len(data))
        return in_shapes, [reduced_shape(tuple(data), axes, attrs["keepdims"])], aux_shapes

    return infer


def _channel_axis(ndim: int) -> int:
    """The axis ``argmax_channel`` reduces: the channels, axis 1 (the only axis of a 1-d input)."""
    return 1 if ndim > 1 else 0


def _arg_type(attrs: dict, in_types: list, aux_types: list) -> tuple[list, list, list]:
    # MXNet gives the indices the input's dtype, integer inputs included
    return in_types, [in_types[0]], aux_types


for _name in ("argmax", "argmin", "argmax_channel"):
    register(
        OpDef(
            _name,
            _arg_forward(_name),
            params={}
            if _name == "argmax_channel"
            else {
                "axis": Param(optional(parse_int), None, "the axis; None searches the flattened array"),
                "keepdims": Param(parse_bool, False, "keep the reduced axis with size 1"),
            },
            infer_shape=_arg_infer(_name),
            infer_type=_arg_type,
            gradient=lambda F, attrs, inputs, outputs, og: [None],
            doc=f"Indices of the {_name.replace('arg', '').replace('_channel', '')} along an axis"
            + (" (axis 1, the channels)" if _name == "argmax_channel" else "")
            + ".",
        )
    )


# -- cumsum: running sums along one axis, or over the flattened array --------------------------------
def _cumsum_axis(attrs: dict, ndim: int) -> int | None:
    from .shape import normalize_axis

    axis = attrs["axis"]
    return None if axis is None else normalize_axis("cumsum", axis, ndim)


def _cumsum_forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    # the input is converted first (1.5 summed as int32 is 1), as MXNet does
    x, out = inputs[0], outputs[0]
    x, axis = x.astype(out.dtype, copy=False), _cumsum_axis(attrs, x.ndim)
    if axis is None:  # CuPy checks `out` against the unflattened input's shape: flatten it first
        x, axis = x.reshape(-1), 0
    kctx.xp.cumsum(x, axis=axis, out=out)


def _cumsum_infer(attrs: dict, in_shapes: list, aux_shapes: list) -> tuple[list, list, list]:
    data = in_shapes[0]
    if data is None:
        return in_shapes, [None], aux_shapes
    if _cumsum_axis(attrs, len(data)) is None:
        return in_shapes, [(math.prod(data),)], aux_shapes
    return in_shapes, [tuple(data)], aux_shapes


def _cumsum_gradient(F: Any, attrs: dict, inputs: list, outputs: list, out_grads: list) -> list:
    # each input element feeds every running sum from its position on: the reversed running sum
    axis = 0 if attrs["axis"] is None else attrs["axis"]
    grad = F.flip(F.cumsum(F.flip(out_grads[0], axis=axis), axis=axis), axis=axis)
    if attrs["axis"] is None:
        grad = F.reshape_like(grad, inputs[0])
    if attrs["dtype"] is not None:  # back to the input's dtype
        grad = F._backward_Cast(grad, inputs[0])
    return [grad]


register(
    OpDef(
        "cumsum",
        _cumsum_forward,
        inputs=("a",),
        params={
            "axis": Param(optional(parse_int), None, "the axis to sum along (None: the flattened array)"),
            "dtype": Param(optional(parse_dtype), None, "the output's dtype (None: the input's)"),
        },
        infer_shape=_cumsum_infer,
        infer_type=lambda attrs, t, a: (t, [attrs["dtype"] or t[0]], a),
        gradient=_cumsum_gradient,
        aliases=("_np_cumsum",),
        doc="The running sums of ``a`` along ``axis`` (over the flattened array when None), as MXNet 1.x's "
        "``nd.cumsum`` (its symbol JSON names the node ``_np_cumsum``).",
    )
)
