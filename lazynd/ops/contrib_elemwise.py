"""Elementwise operators of MXNet 1.x's ``contrib`` namespace.

``isfinite``, ``isnan`` and ``isinf`` give 1 where the test holds and 0 elsewhere, in the data's
dtype (MXNet writes them as comparisons, whose gradient is zero); ``div_sqrt_dim`` divides by the
square root of the last axis's length (scaled dot-product attention); ``quadratic`` is
``a x^2 + b x + c``; ``arange_like`` counts along the data's shape (or one axis of it).

Each kernel is written once over ``kctx.xp``, so NumPy and CuPy share it; gradients are written
with registered operators.
"""

from __future__ import annotations

import math
from typing import Any

from ..errors import OperatorError, ShapeError
from .params import Param, optional, parse_float, parse_int
from .registry import OpDef, dim_is_known, register, zero_gradient

# -- isfinite / isnan / isinf ---------------------------------------------------------------------
_TESTS = {"isfinite": "isfinite", "isnan": "isnan", "isinf": "isinf"}


def _test_forward(test: str) -> Any:
    def forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
        x, out = inputs[0], outputs[0]
        out[...] = getattr(kctx.xp, test)(x)

    return forward


for _name, _test in _TESTS.items():
    register(
        OpDef(
            f"_contrib_{_name}",
            _test_forward(_test),
            gradient=zero_gradient,
            doc=f"1 where ``{_test}(data)`` holds, else 0, in the data's dtype (``mx.nd.contrib.{_name}``).",
        )
    )


# -- div_sqrt_dim ---------------------------------------------------------------------------------
def _div_sqrt_dim_forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    x, out = inputs[0], outputs[0]
    if not x.ndim or not x.shape[-1]:
        raise OperatorError(f"_contrib_div_sqrt_dim: 'data' needs a last axis of nonzero length, got shape {x.shape}")
    # a division, not a product with 1 / sqrt(d): MXNet's rounding; integer data divides by the
    # truncated root, truncating toward zero (C's integer division, as MXNet: [5, -3] / sqrt(5) is [2, -1])
    divisor = x.dtype.type(math.sqrt(x.shape[-1]))
    if x.dtype.kind == "f":
        kctx.xp.divide(x, divisor, out=out)
    else:
        floor = x // divisor
        out[...] = floor + ((x < 0) & (floor * divisor != x))


def _div_sqrt_dim_gradient(F: Any, attrs: dict, inputs: list, outputs: list, out_grads: list) -> list:
    return [F._contrib_div_sqrt_dim(out_grads[0])]


register(
    OpDef(
        "_contrib_div_sqrt_dim",
        _div_sqrt_dim_forward,
        gradient=_div_sqrt_dim_gradient,
        inplace=((0, 0),),
        doc="``data / sqrt(data.shape[-1])`` (``mx.nd.contrib.div_sqrt_dim``).",
    )
)


# -- quadratic ------------------------------------------------------------------------------------
def _quadratic_forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    x, out = inputs[0], outputs[0]
    a, b, c = attrs["a"], attrs["b"], attrs["c"]
    if x.dtype.kind == "f":
        t = x.dtype.type
        out[...] = (t(a) * x + t(b)) * x + t(c)
    else:  # integer data: computed in float64 and truncated, as MXNet casts its float parameters' result
        wide = x.astype("float64")
        out[...] = ((a * wide + b) * wide + c).astype(x.dtype)


def _quadratic_gradient(F: Any, attrs: dict, inputs: list, outputs: list, out_grads: list) -> list:
    slope = F._plus_scalar(F._mul_scalar(inputs[0], scalar=2.0 * attrs["a"]), scalar=attrs["b"])
    return [F._mul(out_grads[0], slope)]


register(
    OpDef(
        "_contrib_quadratic",
        _quadratic_forward,
        params={
            "a": Param(parse_float, 0.0, "coefficient of the quadratic term"),
            "b": Param(parse_float, 0.0, "coefficient of the linear term"),
            "c": Param(parse_float, 0.0, "constant term"),
        },
        gradient=_quadratic_gradient,
        inplace=((0, 0),),
        doc="``a * data**2 + b * data + c``, elementwise (``mx.nd.contrib.quadratic``).",
    )
)


# -- arange_like ----------------------------------------------------------------------------------
def _arange_axis(attrs: dict, shape: tuple[int, ...]) -> int | None:
    axis = attrs["axis"]
    if axis is None:
        return None
    if not -len(shape) <= axis < len(shape):
        raise ShapeError(f"_contrib_arange_like: axis {axis} is out of range for 'data' of shape {tuple(shape)}")
    return axis % len(shape)


def _arange_like_infer(attrs: dict, in_shapes: list, aux_shapes: list) -> tuple[list, list, list]:
    shape = in_shapes[0]
    if shape is None:
        return list(in_shapes), [None], list(aux_shapes)
    axis = _arange_axis(attrs, shape)
    out = tuple(shape) if axis is None else (shape[axis],)
    return list(in_shapes), [out if all(dim_is_known(dim) for dim in out) else None], list(aux_shapes)


def _arange_like_forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    xp, out = kctx.xp, outputs[0]
    if attrs["repeat"] < 1:
        raise OperatorError(f"_contrib_arange_like: repeat must be at least 1, got {attrs['repeat']}")
    start, step = attrs["start"], attrs["step"]
    if out.dtype.kind in "iu":  # MXNet casts start and step to the data's type first (truncating them)
        start, step = int(start), int(step)
    # start + step * (i // repeat), in float64, then cast
    steps = xp.arange(out.size, dtype="float64") // attrs["repeat"]
    out[...] = (start + step * steps).reshape(out.shape).astype(out.dtype)


register(
    OpDef(
        "_contrib_arange_like",
        _arange_like_forward,
        params={
            "start": Param(parse_float, 0.0, "the first value"),
            "step": Param(parse_float, 1.0, "the distance between values"),
            "repeat": Param(parse_int, 1, "how many times each value repeats"),
            "ctx": Param(str, "", "ignored: the output is on the data's context"),
            "axis": Param(optional(parse_int), None, "count along this axis only (default: the whole shape)"),
        },
        infer_shape=_arange_like_infer,
        infer_type=lambda attrs, in_types, aux_types: (list(in_types), [in_types[0]], list(aux_types)),
        gradient=zero_gradient,
        shape_only_inputs=(0,),
        doc="``start + step * (i // repeat)`` shaped as 'data' (or its ``axis``) (``mx.nd.contrib.arange_like``).",
    )
)
