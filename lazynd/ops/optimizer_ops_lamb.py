"""MXNet 1.x's layer-wise and follow-the-moving-leader updates: ``ftml_update``, the two phases of
LAMB (``lamb_update_phase1``/``lamb_update_phase2`` and their multi-precision ``mp_`` forms) and
``multi_lars`` (LARS's per-layer learning rates).

LAMB is split in two as in MXNet: phase 1 updates the moments in place and returns the step
direction ``g``; the caller takes the norms ``r1 = ||weight||`` and ``r2 = ||g||`` (arrays of
one element, so nothing waits for the device), and phase 2 steps ``weight - lr * r1/r2 * g``.
The kernels are plain ``xp`` code, the same lines for NumPy and CuPy.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import OperatorError, ShapeError
from .mp_optimizer_ops import _mp_types
from .optimizer_ops import _COMMON
from .params import FRACTION, Param, parse_bool, parse_float, parse_int
from .registry import OpDef, dim_is_known, merge_shape, register


def _update_count(value: Any) -> int:
    number = parse_int(value)
    if number < 1:
        raise ValueError("expected an update count >= 1 (the bias corrections divide by 1 - beta**t)")
    return number


def _scaled_gradient(xp: Any, grad: Any, attrs: dict, clip_key: str = "clip_gradient", plus: Any = None) -> Any:
    """``clip(rescale_grad * grad [+ plus])`` as a new float array of ``grad``'s (or float32's) dtype."""
    g = grad.astype(np.float32) if grad.dtype == np.float16 else grad * 1
    g *= attrs["rescale_grad"]
    if plus is not None:
        g += plus
    clip = attrs[clip_key]
    if clip >= 0:
        xp.clip(g, -clip, clip, out=g)
    return g


# -- ftml ------------------------------------------------------------------------------------------
def _ftml_forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    xp = kctx.xp
    weight, grad, d, v, z = inputs
    beta1, beta2, t = attrs["beta1"], attrs["beta2"], attrs["t"]
    # MXNet adds the weight decay before clipping, under the name clip_grad
    g = _scaled_gradient(xp, grad, attrs, "clip_grad", plus=attrs["wd"] * weight)
    v *= beta2
    v += (1.0 - beta2) * g * g
    with np.errstate(divide="ignore", invalid="ignore"):  # lr = 0, which MXNet takes: infinities
        step = np.float64(1.0 - beta1**t) / attrs["lr"]
    d_new = (xp.sqrt(v / (1.0 - beta2**t)) + attrs["epsilon"]) * step
    z *= beta1
    z += (1.0 - beta1) * g - (d_new - beta1 * d) * weight
    d[...] = d_new
    xp.divide(-z, d_new, out=outputs[0])


_BETA1 = Param(parse_float, 0.9, "decay of the first moment")
_BETA2 = Param(parse_float, 0.999, "decay of the second moment")

register(
    OpDef(
        "ftml_update",
        _ftml_forward,
        inputs=("weight", "grad", "d", "v", "z"),
        params={
            "lr": Param(parse_float, doc="learning rate (it divides: 0 gives infinities, as in MXNet)"),
            "beta1": Param(FRACTION, 0.6, "decay of z (generally close to 0.5)"),
            "beta2": Param(FRACTION, 0.999, "decay of v (generally close to 1)"),
            "epsilon": Param(parse_float, 1e-8, "added to the root of v"),
            "t": Param(_update_count, doc="the update count (>= 1)"),
            "wd": _COMMON["wd"],
            "rescale_grad": _COMMON["rescale_grad"],
            "clip_grad": Param(parse_float, -1.0, "clip the gradient (weight decay included) to [-c, c]; < 0: no"),
        },
        gradient=lambda F, attrs, ins, outs, og: [None] * len(ins),
        inplace=((0, 0),),
        mutates=(2, 3, 4),
        float_data=True,  # MXNet: "only support floating point types"
        doc="Follow the Moving Leader (Zheng & Kwok, 2017): g = clip(rescale_grad*grad + wd*weight); "
        "v = beta2*v + (1-beta2)*g^2; d' = (1-beta1^t)/lr*(sqrt(v/(1-beta2^t)) + epsilon); "
        "z = beta1*z + (1-beta1)*g - (d' - beta1*d)*weight; d = d'; weight = -z/d.",
    )
)


# -- lamb, phase 1 ---------------------------------------------------------------------------------
def _bias_correction(beta: float, t: int) -> float:
    """``1 - beta**t``; a power past the float range is infinite, as MXNet's ``pow`` gives it (a beta
    above 1 is MXNet's to take), where Python's ``**`` raises OverflowError."""
    with np.errstate(over="ignore"):
        return float(1.0 - np.power(np.float64(beta), t))


def _lamb_direction(xp: Any, attrs: dict, grad: Any, mean: Any, var: Any, weight: Any) -> Any:
    """Update ``mean`` and ``var`` in place; the step direction ``g`` (a new array)."""
    beta1, beta2, t = attrs["beta1"], attrs["beta2"], attrs["t"]
    g = _scaled_gradient(xp, grad, attrs)
    mean *= beta1
    mean += (1.0 - beta1) * g
    var *= beta2
    var += (1.0 - beta2) * g * g
    if attrs["bias_correction"]:
        direction = (mean / _bias_correction(beta1, t)) / (xp.sqrt(var / _bias_correction(beta2, t)) + attrs["epsilon"])
    else:
        direction = mean / (xp.sqrt(var) + attrs["epsilon"])
    direction += attrs["wd"] * weight
    return direction


def _lamb_phase1_forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    weight, grad, mean, var = inputs
    outputs[0][...] = _lamb_direction(kctx.xp, attrs, grad, mean, var, weight)


def _mp_lamb_phase1_forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    # the weight decay takes the float32 master copy; the float16 weight is not read
    weight, grad, mean, var, weight32 = inputs
    outputs[0][...] = _lamb_direction(kctx.xp, attrs, grad, mean, var, weight32)


_PHASE1 = {
    "beta1": _BETA1,
    "beta2": _BETA2,
    "epsilon": Param(parse_float, 1e-6, "added to the denominator"),
    "t": Param(_update_count, doc="the update count (>= 1)"),
    "bias_correction": Param(parse_bool, True, "divide the moments by 1 - beta**t"),
    "wd": Param(parse_float, doc="weight decay (added to the direction, as in the LAMB paper)"),
    "rescale_grad": _COMMON["rescale_grad"],
    "clip_gradient": _COMMON["clip_gradient"],
}
_PHASE1_DOC = (
    "g = clip(rescale_grad*grad); mean, var: Adam's moments, updated in place; "
    "output mean^/(sqrt(var^) + epsilon) + wd*weight (^: divided by 1 - beta**t when bias_correction)."
)


def _mp_phase1_types(attrs: dict, in_types: list, aux_types: list) -> tuple[list, list, list]:
    roles = ("weight", "grad", "mean", "var", "weight32")
    types, _ = _mp_types("mp_lamb_update_phase1", roles, in_types)
    return types, ["float32"], aux_types


register(
    OpDef(
        "lamb_update_phase1",
        _lamb_phase1_forward,
        inputs=("weight", "grad", "mean", "var"),
        params=_PHASE1,
        gradient=lambda F, attrs, ins, outs, og: [None] * len(ins),
        mutates=(2, 3),
        float_data=True,  # MXNet: "only support floating point types"
        doc=_PHASE1_DOC,
    )
)
register(
    OpDef(
        "mp_lamb_update_phase1",
        _mp_lamb_phase1_forward,
        inputs=("weight", "grad", "mean", "var", "weight32"),
        params=_PHASE1,
        infer_type=_mp_phase1_types,
        gradient=lambda F, attrs, ins, outs, og: [None] * len(ins),
        mutates=(2, 3),
        doc=_PHASE1_DOC + " Multi-precision: float16 weight and grad, float32 states; g is float32.",
    )
)


# -- lamb, phase 2 ---------------------------------------------------------------------------------
def _trust_ratio(xp: Any, attrs: dict, r1: Any, r2: Any) -> Any:
    """``r1 / r2`` with r1 held within the bounds (each applied when >= 0, the lower first); 1 where
    either norm is 0.  One element, kept on the device."""
    r1 = r1.reshape(()).astype(np.float32)
    r2 = r2.reshape(()).astype(np.float32)
    if attrs["lower_bound"] >= 0:
        r1 = xp.maximum(r1, np.float32(attrs["lower_bound"]))
    if attrs["upper_bound"] >= 0:
        r1 = xp.minimum(r1, np.float32(attrs["upper_bound"]))
    degenerate = (r1 == 0) | (r2 == 0)
    return xp.where(degenerate, np.float32(1.0), r1 / xp.where(degenerate, np.float32(1.0), r2))


def _lamb_phase2_forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    weight, g, r1, r2 = inputs
    step = g * (attrs["lr"] * _trust_ratio(kctx.xp, attrs, r1, r2)).astype(g.dtype)
    kctx.xp.subtract(weight, step, out=outputs[0])


def _mp_lamb_phase2_forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    weight, g, r1, r2, weight32 = inputs
    weight32 -= g * (attrs["lr"] * _trust_ratio(kctx.xp, attrs, r1, r2))
    outputs[0][...] = weight32


def _phase2_shapes(name: str, roles: tuple[str, ...]) -> Any:
    def infer_shape(attrs: dict, in_shapes: list, aux_shapes: list) -> tuple[list, list, list]:
        shape = in_shapes[0]
        for i in (1, *range(4, len(roles))):
            shape = merge_shape(name, roles[i], in_shapes[i], shape)
        for i in (2, 3):
            given = in_shapes[i]
            # (a 0 is an unknown dim, except in an imperative call's shapes, where it is a size: no element)
            if given is not None and all(map(dim_is_known, given)) and int(np.prod(given)) != 1:
                raise ShapeError(f"{name}: input '{roles[i]}' has shape {tuple(given)}, expected one element (1,)")
        in_shapes = [shape, shape, in_shapes[2] or (1,), in_shapes[3] or (1,), *[shape] * (len(roles) - 4)]
        return in_shapes, [shape], aux_shapes

    return infer_shape


def _mp_phase2_types(attrs: dict, in_types: list, aux_types: list) -> tuple[list, list, list]:
    weight = in_types[0]
    for i, role in ((1, "g"), (4, "weight32")):
        if in_types[i] is not None and in_types[i] != "float32":
            raise OperatorError(f"mp_lamb_update_phase2: input '{role}' has dtype {in_types[i]}, expected float32")
    return [weight, "float32", in_types[2] or "float32", in_types[3] or "float32", "float32"], [weight], aux_types


def _phase2_types(attrs: dict, in_types: list, aux_types: list) -> tuple[list, list, list]:
    dtype = in_types[0] if in_types[0] is not None else in_types[1]
    if in_types[0] is not None and in_types[1] is not None and in_types[0] != in_types[1]:
        raise OperatorError(f"lamb_update_phase2: input 'g' has dtype {in_types[1]}, expected {in_types[0]}")
    return [dtype, dtype, in_types[2] or dtype, in_types[3] or dtype], [dtype], aux_types


_BOUNDS = {
    "lr": Param(parse_float, doc="learning rate"),
    "lower_bound": Param(parse_float, -1.0, "r1 is raised to at least this; < 0: no lower bound"),
    "upper_bound": Param(parse_float, -1.0, "r1 is lowered to at most this; < 0: no upper bound"),
}
_PHASE2_DOC = "weight -= lr * (r1/r2) * g, r1 (||weight||) within the bounds; the ratio is 1 where r1 or r2 is 0."
_PHASE2_ROLES = ("weight", "g", "r1", "r2")
register(
    OpDef(
        "lamb_update_phase2",
        _lamb_phase2_forward,
        inputs=_PHASE2_ROLES,
        params=_BOUNDS,
        infer_shape=_phase2_shapes("lamb_update_phase2", _PHASE2_ROLES),
        infer_type=_phase2_types,
        gradient=lambda F, attrs, ins, outs, og: [None] * len(ins),
        inplace=((0, 0),),
        float_data=True,  # MXNet: "only support floating point types"
        doc=_PHASE2_DOC,
    )
)
register(
    OpDef(
        "mp_lamb_update_phase2",
        _mp_lamb_phase2_forward,
        inputs=(*_PHASE2_ROLES, "weight32"),
        params=_BOUNDS,
        infer_shape=_phase2_shapes("mp_lamb_update_phase2", (*_PHASE2_ROLES, "weight32")),
        infer_type=_mp_phase2_types,
        gradient=lambda F, attrs, ins, outs, og: [None] * len(ins),
        # MXNet 1.9.1's kernel only reads weight32, so its LAMB's per-parameter multi-precision path
        # never moves the master copy; here it takes the new value, as in multi_mp_lamb_update
        mutates=(4,),
        doc=_PHASE2_DOC + " Multi-precision: computed on the float32 master copy weight32 (updated in place); "
        "the output is weight32 in the weight's dtype.",
    )
)


# -- multi_lars ------------------------------------------------------------------------------------
def _multi_lars_forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    xp = kctx.xp
    lrs, weights_sum_sq, grads_sum_sq, wds = inputs
    w_norm = xp.sqrt(weights_sum_sq)
    g_norm = xp.sqrt(grads_sum_sq) * abs(attrs["rescale_grad"])
    valid = (w_norm > 0) & (g_norm > 0)
    denominator = g_norm + wds * w_norm + attrs["eps"]
    scaled = lrs * attrs["eta"] * w_norm / xp.where(valid, denominator, 1)
    outputs[0][...] = xp.where(valid, scaled, lrs)


def _multi_lars_shapes(attrs: dict, in_shapes: list, aux_shapes: list) -> tuple[list, list, list]:
    shape = None
    for name, given in zip(("lrs", "weights_sum_sq", "grads_sum_sq", "wds"), in_shapes, strict=True):
        shape = merge_shape("multi_lars", name, given, shape)
        if shape is not None and len(shape) != 1:
            raise ShapeError(f"multi_lars: input '{name}' has shape {tuple(shape)}, expected (num_layers,)")
    return [shape] * 4, [shape], aux_shapes


register(
    OpDef(
        "multi_lars",
        _multi_lars_forward,
        inputs=("lrs", "weights_sum_sq", "grads_sum_sq", "wds"),
        params={
            "eta": Param(parse_float, doc="LARS's trust coefficient"),
            "eps": Param(parse_float, doc="added to the denominator"),
            "rescale_grad": _COMMON["rescale_grad"],
        },
        infer_shape=_multi_lars_shapes,
        gradient=lambda F, attrs, ins, outs, og: [None] * len(ins),
        float_data=True,
        doc="Layer-wise learning rates: lr*eta*||w|| / (||rescale_grad*g|| + wd*||w|| + eps) where both norms "
        "are > 0, else lr (norms from the sums of squares, e.g. multi_sum_sq's).",
    )
)
