"""Unary elementwise operators that take parameters: ``smooth_l1`` (``scalar``, sigma), ``clip``
(``a_min``, ``a_max``) and ``Cast`` (``dtype``), with their gradients and backward operators.

``smooth_l1`` and its slope have their own generated CUDA family (``unary_scalar``); ``clip`` and
``Cast`` are one NumPy/CuPy call each.  The parameterless unary operators are the table of
:mod:`lazynd.ops.elemwise_unary`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from ..backend.cuda.elementwise import FLOAT_DTYPES, ElementwiseFamily
from ..errors import OperatorError
from .params import Param, parse_dtype, parse_float
from .registry import OpDef, merge_shape, register

# -- operators with scalar parameters: smooth_l1, clip -------------------------------------------
_SMOOTH_L1 = "((a < 0 ? -a : a) < 1 / (b * b) ? 0.5 * b * b * a * a : (a < 0 ? -a : a) - 0.5 / (b * b))"
_SMOOTH_L1_SLOPE = "((a < 0 ? -a : a) < 1 / (b * b) ? b * b * a : (a > 0 ? 1 : (a < 0 ? -1 : 0)))"
GPU_SCALAR = ElementwiseFamily(
    "unary_scalar",
    "binary",
    {"smooth_l1": _SMOOTH_L1, "_smooth_l1_slope": _SMOOTH_L1_SLOPE},
    {"smooth_l1": FLOAT_DTYPES, "_smooth_l1_slope": FLOAT_DTYPES},
)


def _over(numerator: float, s2: float) -> float:
    """``numerator / sigma**2`` as the GPU kernels (and MXNet's) compute it: infinite for sigma 0,
    where the quadratic part covers every x (Python's float division raised ZeroDivisionError)."""
    return math.inf if s2 == 0 else numerator / s2


def _smooth_l1_cpu(x: Any, sigma: float, out: Any) -> None:
    s2 = sigma * sigma
    if x.dtype.kind in "iu":
        # in float64, as MXNet computes it: |-128| and the squares wrap in int8 (smooth_l1(-128) gave 0)
        x = x.astype(np.float64)
    ax = np.abs(x)
    out[...] = np.where(ax < _over(1.0, s2), 0.5 * s2 * x * x, ax - _over(0.5, s2))


def _smooth_l1_slope_cpu(x: Any, sigma: float, out: Any) -> None:
    s2 = sigma * sigma
    out[...] = np.where(np.abs(x) < _over(1.0, s2), s2 * x, np.sign(x))


for _name, _cpu, _grad in (
    (
        "smooth_l1",
        _smooth_l1_cpu,
        lambda F, attrs, i, o, g: [F._mul(g[0], F._smooth_l1_slope(i[0], scalar=attrs["scalar"]))],
    ),
    ("_smooth_l1_slope", _smooth_l1_slope_cpu, None),
):

    def _forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list, _cpu: Callable = _cpu) -> None:
        _cpu(inputs[0], attrs["scalar"], outputs[0])

    def _forward_gpu(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list, _name: str = _name) -> None:
        x, out = inputs[0], outputs[0]
        if x.dtype.kind in "iu":  # the kernels are float-only: integers go through float64, as on the host
            x = x.astype("float64")
            out = kctx.xp.empty_like(x)
        GPU_SCALAR.scalar(kctx.device_id, _name, x, attrs["scalar"], out)
        if out is not outputs[0]:
            outputs[0][...] = out

    register(
        OpDef(
            _name,
            _forward,
            forward_gpu=_forward_gpu,
            params={"scalar": Param(parse_float, 1.0, "sigma: the quadratic part covers |x| < 1/sigma^2")},
            gradient=_grad or (lambda F, attrs, i, o, g: [None]),
            inplace=((0, 0),),
            takes_bool=False,
            doc="Smooth L1: 0.5 (sigma x)^2 where |x| < 1/sigma^2, else |x| - 0.5/sigma^2."
            if _name == "smooth_l1"
            else "Derivative of smooth_l1 with respect to its input.",
        )
    )


def _clip_bound(dtype: np.dtype, bound: float) -> Any:
    """A bound of ``clip`` in the input's dtype: truncated for integers, as MXNet casts it, and held
    to the dtype's range, where every element already is (``clip(uint8, -1, 2)`` clips at 0 and 2;
    an infinite bound clips nothing, as in MXNet)."""
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        if math.isinf(bound):
            return dtype.type(info.max if bound > 0 else info.min)
        return dtype.type(min(max(math.trunc(bound), info.min), info.max))
    with np.errstate(over="ignore"):  # past float16's range: an infinite bound, which clips nothing
        return dtype.type(bound)


def _clip_forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    # the same call on NumPy and CuPy; CuPy's clip is one elementwise kernel
    x = inputs[0]
    low, high = _clip_bound(x.dtype, attrs["a_min"]), _clip_bound(x.dtype, attrs["a_max"])
    kctx.xp.clip(x, low, high, out=outputs[0])


def _clip_gradient(F: Any, attrs: dict, inputs: list, outputs: list, out_grads: list) -> list:
    x = inputs[0]
    inside = F._mul(F._greater_equal_scalar(x, scalar=attrs["a_min"]), F._lesser_equal_scalar(x, scalar=attrs["a_max"]))
    return [F._mul(out_grads[0], inside)]


def _clip_infer_shape(
    attrs: dict, in_shapes: list, aux_shapes: list, out_shapes: list | None = None
) -> tuple[list, list, list]:
    for name in ("a_min", "a_max"):
        if math.isnan(attrs[name]):
            raise OperatorError(f"clip: {name}=nan is not a bound, expected a number (or -inf/inf for none)")
    if attrs["a_min"] > attrs["a_max"]:
        raise OperatorError(
            f"clip: a_min={attrs['a_min']} is greater than a_max={attrs['a_max']}, expected a_min <= a_max"
        )
    shape = in_shapes[0]
    if out_shapes and out_shapes[0] is not None:  # a known output gives the input's shape, as in MXNet
        shape = merge_shape("clip", "output", tuple(out_shapes[0]), shape)
    return [shape], [shape], aux_shapes


register(
    OpDef(
        "clip",
        _clip_forward,
        params={"a_min": Param(parse_float, doc="lower bound"), "a_max": Param(parse_float, doc="upper bound")},
        infer_shape=_clip_infer_shape,
        gradient=_clip_gradient,
        inplace=((0, 0),),
        doc="Clip values into [a_min, a_max].",
    )
)


# -- Cast ----------------------------------------------------------------------------------------
def _cast_forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    # assignment converts as it copies (NumPy and CuPy): no astype temporary
    outputs[0][...] = inputs[0]


def _backward_cast_type(attrs: dict, in_types: list, aux_types: list) -> tuple[list, list, list]:
    # the gradient of a cast has the dtype of the cast's input, whatever the output's
    return in_types, [in_types[1]], aux_types


register(
    OpDef(
        "Cast",
        _cast_forward,
        params={"dtype": Param(parse_dtype, doc="the output dtype")},
        infer_type=lambda attrs, t, a: (t, [attrs["dtype"]], a),
        gradient=lambda F, attrs, inputs, outputs, og: [F._backward_Cast(og[0], inputs[0])],
        aliases=("cast",),
        doc="Convert to ``dtype``.",
    )
)
register(
    OpDef(
        "_backward_Cast",
        _cast_forward,
        inputs=("out_grad", "data"),
        shape_only_inputs=(1,),  # data gives the gradient's dtype
        infer_shape=lambda attrs, s, a: ([s[0] or s[1], s[1] or s[0]], [s[1] or s[0]], a),
        infer_type=_backward_cast_type,
        doc="Gradient of Cast: the output gradient converted back to the dtype of the cast's input.",
    )
)
