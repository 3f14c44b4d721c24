"""Activations: ``Activation`` and ``LeakyReLU`` (leaky, prelu, elu, selu, gelu, rrelu).

``Activation``'s functions are rows of the elementwise table.  Activation
gradients use only the output, so memory planning may run them in place.  GPU
activations come from ``kernels/activation.cu`` through
:mod:`~lazynd.ops.elemwise_unary`; LeakyReLU is written once with ``xp``.
"""

from __future__ import annotations

import math
from typing import Any

from ..errors import OperatorError
from . import _special, elemwise_unary
from .params import Param, enum, parse_float
from .registry import OpDef, merge_shape, register

# -- Activation: rows of the elementwise table (elemwise_unary.ACTIVATIONS) ------------------------
ACT_TYPES = tuple(elemwise_unary.ACTIVATIONS)
_ACT_PARAMS = {"act_type": Param(enum(*ACT_TYPES), doc="the activation function")}


def _act_forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    elemwise_unary.UNARY[elemwise_unary.ACTIVATIONS[attrs["act_type"]][0]].kernel(inputs[0], outputs[0])


def _act_forward_gpu(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    name = elemwise_unary.ACTIVATIONS[attrs["act_type"]][0]
    elemwise_unary.GPU.unary(kctx.device_id, name, inputs[0], outputs[0])


def _act_backward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    kernel = elemwise_unary.BACKWARD[elemwise_unary.ACTIVATIONS[attrs["act_type"]][1]][0]
    kernel(inputs[0], inputs[1], outputs[0])


def _act_backward_gpu(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    name = elemwise_unary.ACTIVATIONS[attrs["act_type"]][1]
    elemwise_unary.GPU_BACKWARD.binary(kctx.device_id, name, inputs[0], inputs[1], outputs[0])


register(
    OpDef(
        "Activation",
        _act_forward,
        forward_gpu=_act_forward_gpu,
        params=dict(_ACT_PARAMS),
        inplace=((0, 0),),
        float_data=True,
        gradient=lambda F, attrs, i, o, og: [F._backward_Activation(og[0], o[0], **attrs)],
        doc="Elementwise activation: relu, sigmoid, tanh, softrelu (softplus) or softsign.",
    )
)
register(
    OpDef(
        "_backward_Activation",
        _act_backward,
        forward_gpu=_act_backward_gpu,
        inputs=("out_grad", "output"),
        params=dict(_ACT_PARAMS),
        inplace=((0, 0), (1, 0)),
        # second-order gradients: the rule of the act_type's backward row (same inputs)
        gradient=lambda F, attrs, i, o, og: elemwise_unary.backward_gradient(
            elemwise_unary.ACTIVATIONS[attrs["act_type"]][1]
        )(F, attrs, i, o, og),
        doc="Gradient of Activation, computed from the output alone.",
    )
)


# -- LeakyReLU -----------------------------------------------------------------------------------
LEAKY_PARAMS = {
    "act_type": Param(
        enum("leaky", "prelu", "elu", "selu", "gelu", "rrelu"),
        "leaky",
        "leaky, prelu (learned slope gamma: one per channel, or one shared), elu, selu, gelu (the erf form) "
        "or rrelu (random slope in training)",
    ),
    "slope": Param(parse_float, 0.25, "negative slope (leaky) or scale (elu)"),
    "lower_bound": Param(parse_float, 0.125, "rrelu: lowest random slope"),
    "upper_bound": Param(parse_float, 0.334, "rrelu: highest random slope"),
}


def _leaky_inputs(attrs: dict) -> tuple[str, ...]:
    return ("data", "gamma") if attrs["act_type"] == "prelu" else ("data",)


def _leaky_outputs(attrs: dict) -> tuple[str, ...]:
    # rrelu keeps each element's slope for the gradient, as MXNet's hidden ``mask`` output
    return ("output", "mask") if attrs["act_type"] == "rrelu" else ("output",)


def _channel_view(gamma: Any, ndim: int) -> Any:
    return gamma.reshape((1, -1) + (1,) * (ndim - 2)) if ndim > 1 else gamma


def _rrelu_slopes(kctx: Any, attrs: dict, x: Any, mask: Any) -> None:
    """Random slopes in [lower_bound, upper_bound) in training, their mean at inference."""
    low, high = attrs["lower_bound"], attrs["upper_bound"]
    if kctx.is_train:
        mask[...] = kctx.rng.uniform(low, high, x.shape)
    else:
        mask.fill((low + high) / 2)


# SELU's constants (Klambauer et al., 2017), as MXNet's
_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_LAMBDA = 1.0507009873554804934193349852946


def _gelu_parts(xp: Any, x: Any) -> tuple[Any, Any]:
    """``Phi(x)`` and ``x phi(x)`` (the standard normal's cdf and x times its density), in float64."""
    x = x.astype(xp.float64)
    cdf = 0.5 * (1.0 + _special.erf(xp, x / math.sqrt(2.0)))
    return cdf, x * xp.exp(-0.5 * x * x) / math.sqrt(2.0 * math.pi)


def _leaky_forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    xp = kctx.xp
    x, out = inputs[0], outputs[0]
    kind = attrs["act_type"]
    if kind == "elu":
        out[...] = xp.where(x > 0, x, attrs["slope"] * xp.expm1(xp.minimum(x, 0)))
        return
    if kind == "selu":
        out[...] = _SELU_LAMBDA * xp.where(x > 0, x, _SELU_ALPHA * xp.expm1(xp.minimum(x, 0)))
        return
    if kind == "gelu":  # x Phi(x), as MXNet's erf form
        out[...] = x * _gelu_parts(xp, x)[0]
        return
    if kind == "rrelu":
        _rrelu_slopes(kctx, attrs, x, outputs[1])
        slope = outputs[1]
    else:
        slope = _channel_view(inputs[1], x.ndim) if kind == "prelu" else attrs["slope"]
        if kind == "leaky" and 0 < slope <= 1 and x.dtype.kind == "f":
            # max(x, slope * x): the same values, zeros' signs and NaNs as the select (a slope of 0
            # would make inf * 0 a NaN where the select keeps inf), in two passes with one
            # temporary (a select makes three temporaries: 8 ms against 1.3 ms for a
            # (16, 32, 32, 112) float32 batch, a text recogniser's activation).  Integer data
            # takes the select: its float64 slope * x cannot go into an integer ``out``
            xp.maximum(x, x * slope, out=out)
            return
    out[...] = xp.where(x > 0, x, x * slope)


def _leaky_backward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    xp = kctx.xp
    dy, x = inputs[0], inputs[1]
    kind = attrs["act_type"]
    if kind == "elu":
        outputs[0][...] = xp.where(x > 0, dy, dy * attrs["slope"] * xp.exp(xp.minimum(x, 0)))
        return
    if kind == "selu":
        # the derivative; MXNet 1.9.1's kernel gives lambda * (selu(x) + alpha) for x <= 0 instead
        outputs[0][...] = dy * _SELU_LAMBDA * xp.where(x > 0, 1, _SELU_ALPHA * xp.exp(xp.minimum(x, 0)))
        return
    if kind == "gelu":
        cdf, x_density = _gelu_parts(xp, x)
        outputs[0][...] = dy * (cdf + x_density)
        return
    if kind == "rrelu":
        slope = inputs[2]
    else:
        slope = _channel_view(inputs[2], x.ndim) if kind == "prelu" else attrs["slope"]
        if kind == "leaky" and 0 <= slope <= 1 and x.dtype.kind == "f":
            # dy times a factor of exactly 1 or slope, max(x > 0, slope): the select's values in two
            # passes (8 ms against 1.6 ms for the batch above); the factor goes into the output
            # unless that is dy's buffer.  Integer data takes the select: its dtype holds no slope
            out = outputs[0]
            factor = xp.maximum(x > 0, x.dtype.type(slope), out=None if _shares(xp, out, dy) else out)
            xp.multiply(factor, dy, out=out)
            return
    outputs[0][...] = xp.where(x > 0, dy, dy * slope)
    if kind == "prelu":
        # sum over every axis the slope is broadcast along: all but the channel, or all for one slope
        slope_shape = _channel_view(outputs[1], x.ndim).shape
        axes = tuple(i for i, n in enumerate(slope_shape) if n == 1)
        outputs[1][...] = xp.where(x > 0, 0, dy * x).sum(axis=axes).reshape(outputs[1].shape)


def _shares(xp: Any, a: Any, b: Any) -> bool:
    """Whether ``a`` and ``b`` may overlap in memory (host or device arrays)."""
    return bool(xp.may_share_memory(a, b))


def _leaky_infer(attrs: dict, in_shapes: list, aux_shapes: list) -> tuple[list, list, list]:
    if attrs["act_type"] == "rrelu" and attrs["lower_bound"] > attrs["upper_bound"]:
        raise OperatorError(
            f"LeakyReLU: rrelu draws slopes in [lower_bound, upper_bound], so lower_bound must not exceed "
            f"upper_bound, got lower_bound={attrs['lower_bound']}, upper_bound={attrs['upper_bound']}"
        )
    data = in_shapes[0]
    # prelu's gamma holds one slope per channel, or (as MXNet allows) one slope shared by all
    if attrs["act_type"] == "prelu" and data is not None and tuple(in_shapes[1] or ()) != (1,):
        in_shapes[1] = merge_shape("LeakyReLU", "gamma", in_shapes[1], (data[1] if len(data) > 1 else data[0],))
    return in_shapes, [data] * len(_leaky_outputs(attrs)), aux_shapes


def _leaky_gradient(F: Any, attrs: dict, inputs: list, outputs: list, out_grads: list) -> list:
    if attrs["act_type"] == "prelu":
        return list(F._backward_LeakyReLU(out_grads[0], *inputs, **attrs))
    if attrs["act_type"] == "rrelu":
        return [F._backward_LeakyReLU(out_grads[0], inputs[0], outputs[1], **attrs)]
    return [F._backward_LeakyReLU(out_grads[0], inputs[0], **attrs)]


def _leaky_backward_inputs(attrs: dict) -> tuple[str, ...]:
    return ("out_grad",) + _leaky_inputs(attrs) + (("mask",) if attrs["act_type"] == "rrelu" else ())


PRELU_GAMMA_INIT = '["Constant", {"value": 0.25}]'


register(
    OpDef(
        "LeakyReLU",
        _leaky_forward,
        inputs=_leaky_inputs,
        positional_inputs=("data", "gamma"),  # MXNet lists gamma before the parameters, whatever act_type
        outputs=_leaky_outputs,
        num_visible_outputs=1,
        params=dict(LEAKY_PARAMS),
        infer_shape=_leaky_infer,
        gradient=_leaky_gradient,
        needs_random=lambda attrs: attrs["act_type"] == "rrelu",  # rrelu draws its slopes in training
        # as MXNet's, prelu's slopes start at 0.25, an initialiser its gamma variable carries (and JSON keeps)
        input_attrs=lambda attrs: {"gamma": {"__init__": PRELU_GAMMA_INIT}} if attrs["act_type"] == "prelu" else {},
        doc="Leaky rectifier: fixed slope (leaky), learned per-channel slope (prelu), elu, or a random "
        "slope in [lower_bound, upper_bound) in training and their mean at inference (rrelu).",
    )
)
register(
    OpDef(
        "_backward_LeakyReLU",
        _leaky_backward,
        inputs=_leaky_backward_inputs,
        outputs=lambda attrs: ("data_grad", "gamma_grad") if attrs["act_type"] == "prelu" else ("data_grad",),
        params=dict(LEAKY_PARAMS),
        infer_shape=lambda attrs, s, a: (s, list(s[1 : 1 + len(_leaky_inputs(attrs))]), a),
        doc="Gradient of LeakyReLU.",
    )
)
