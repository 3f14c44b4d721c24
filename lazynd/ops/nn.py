"""Dense layers and activations: FullyConnected, Activation, LeakyReLU, Dropout, Embedding.

FullyConnected is one GEMM written straight into the output (it dominates MLP
training); its backward op runs three GEMM/reductions into its outputs.  The forward
GEMM is ``x @ W.T`` on the weight as stored: the BLAS reads the transposed operand
itself.  (A transposed copy of the weight per call, made by OpenCV, was measured on
the MNIST MLP's first layer, Intel Xeon, 2 cores: 227 against 220 us with one BLAS
thread, 319 against 163 us with the default two, where the copy's fresh 400 KB
buffer and OpenCV's thread pool meet the BLAS's threads.)
Activation gradients use only the output, so memory planning may run them in
place.  GPU activations come from ``kernels/activation.cu``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..errors import OperatorError, ShapeError
from . import _special, elemwise_unary
from .host_reduce import column_sum_into
from .params import Param, enum, parse_bool, parse_dtype, parse_float, parse_int, parse_shape
from .registry import BackwardOpGradient, OpDef, merge_shape, register

# -- FullyConnected ------------------------------------------------------------------------------
FC_PARAMS = {
    "num_hidden": Param(parse_int, doc="number of output units"),
    "no_bias": Param(parse_bool, False, "leave out the bias"),
    "flatten": Param(parse_bool, True, "flatten all axes after the first (else apply to the last axis)"),
}


def _fc_inputs(attrs: dict) -> tuple[str, ...]:
    return ("data", "weight") if attrs["no_bias"] else ("data", "weight", "bias")


def _as_2d(x: Any, flatten: bool) -> Any:
    # sizes written out, not -1: a batch of 0 rows has no size to infer a -1 from
    if flatten:
        return x.reshape(x.shape[0], math.prod(x.shape[1:]))
    return x.reshape(math.prod(x.shape[:-1]), x.shape[-1])


def _fc_forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    x2d = _as_2d(inputs[0], attrs["flatten"])
    out = outputs[0]
    out2d = out.reshape(x2d.shape[0], attrs["num_hidden"])  # a copy when out's layout has no such view (a strided out=)
    kctx.backend.matmul(x2d, inputs[1].T, out2d)
    if not attrs["no_bias"]:
        out2d += inputs[2]
    if not out.flags.c_contiguous:  # reshape may have copied: write the result back
        out[...] = out2d.reshape(out.shape)


def _fc_infer(
    attrs: dict, in_shapes: list, aux_shapes: list, out_shapes: list | None = None
) -> tuple[list, list, list]:
    hidden = attrs["num_hidden"]
    if hidden <= 0:
        raise OperatorError(f"FullyConnected: num_hidden must be positive, got {hidden}")
    data = in_shapes[0]
    out_known = out_shapes[0] if out_shapes else None
    if data is not None and len(data) > 1 and not data[0] and out_known:
        # the batch from the output, as MXNet's rule (an RNN cell's begin state is zeros of shape (0, H))
        data = in_shapes[0] = (out_known[0], *data[1:])
    in_dim = 0
    if data is not None:
        if len(data) == 0:
            raise ShapeError("FullyConnected: data must have at least one axis, got shape ()")
        rest = data[1:] if attrs["flatten"] else data[-1:]
        in_dim = int(np.prod(rest)) if all(rest) else 0
    in_shapes[1] = merge_shape("FullyConnected", "weight", in_shapes[1], (hidden, in_dim))
    if not attrs["no_bias"]:
        in_shapes[2] = merge_shape("FullyConnected", "bias", in_shapes[2], (hidden,))
    if data is None:
        return in_shapes, [None], aux_shapes
    out = (data[0], hidden) if attrs["flatten"] else (*data[:-1], hidden)
    return in_shapes, [out], aux_shapes


def _fc_backward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    # an executor passes None for a gradient nobody reads (the data gradient of a first layer)
    matmul = kctx.backend.matmul
    out_grad, data, weight = inputs
    x2d = _as_2d(data, attrs["flatten"])
    g2d = out_grad.reshape(x2d.shape[0], attrs["num_hidden"])
    data_grad = outputs[0]
    if data_grad is not None:
        grad2d = data_grad.reshape(x2d.shape)  # a copy when the buffer's layout has no such view
        matmul(g2d, weight, grad2d)
        if not data_grad.flags.c_contiguous:
            data_grad[...] = grad2d.reshape(data_grad.shape)
    if outputs[1] is not None:
        matmul(g2d.T, x2d, outputs[1])
    if not attrs["no_bias"] and outputs[2] is not None:
        column_sum_into(g2d, outputs[2])


def _grad_names(attrs: dict) -> tuple[str, ...]:
    return ("data_grad", "weight_grad") if attrs["no_bias"] else ("data_grad", "weight_grad", "bias_grad")


def _fc_backward_infer(attrs: dict, in_shapes: list, aux_shapes: list) -> tuple[list, list, list]:
    outs = [in_shapes[1], in_shapes[2]] + ([] if attrs["no_bias"] else [(attrs["num_hidden"],)])
    return in_shapes, outs, aux_shapes


register(
    OpDef(
        "FullyConnected",
        _fc_forward,
        inputs=_fc_inputs,
        params=dict(FC_PARAMS),
        infer_shape=_fc_infer,
        gradient=BackwardOpGradient("_backward_FullyConnected", 2),
        doc="Dense layer: ``data @ weight.T + bias``.",
    )
)
register(
    OpDef(
        "_backward_FullyConnected",
        _fc_backward,
        inputs=("out_grad", "data", "weight"),
        outputs=_grad_names,
        params=dict(FC_PARAMS),
        infer_shape=_fc_backward_infer,
        optional_outputs=True,
        doc="Gradients of FullyConnected with respect to data, weight and bias.",
    )
)


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
    outputs[0][...] = xp.where(x > 0, dy, dy * slope)
    if kind == "prelu":
        # sum over every axis the slope is broadcast along: all but the channel, or all for one slope
        slope_shape = _channel_view(outputs[1], x.ndim).shape
        axes = tuple(i for i, n in enumerate(slope_shape) if n == 1)
        outputs[1][...] = xp.where(x > 0, 0, dy * x).sum(axis=axes).reshape(outputs[1].shape)


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


register(
    OpDef(
        "LeakyReLU",
        _leaky_forward,
        inputs=_leaky_inputs,
        outputs=_leaky_outputs,
        num_visible_outputs=1,
        params=dict(LEAKY_PARAMS),
        infer_shape=_leaky_infer,
        gradient=_leaky_gradient,
        needs_random=lambda attrs: attrs["act_type"] == "rrelu",  # rrelu draws its slopes in training
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


# -- Dropout -------------------------------------------------------------------------------------
def _dropout_forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    x, out, mask = inputs[0], outputs[0], outputs[1]
    p = attrs["p"]
    if not (kctx.is_train or attrs["mode"] == "always") or p == 0:
        mask[...] = 1
        out[...] = x
        return
    if p >= 1:
        mask[...] = 0
    else:
        # the mask holds the kept units already scaled by 1/(1-p), so backward is one multiply;
        # along ``axes`` one draw is shared (MXNet's variational dropout)
        drawn = tuple(1 if axis in attrs["axes"] else n for axis, n in enumerate(x.shape))
        keep = kctx.rng.uniform(0.0, 1.0, drawn) >= p
        mask[...] = keep * (1.0 / (1.0 - p))
    kctx.xp.multiply(x, mask, out=out)


def _dropout_infer(attrs: dict, in_shapes: list, aux_shapes: list) -> tuple[list, list, list]:
    if not 0 <= attrs["p"] <= 1:
        raise OperatorError(f"Dropout: p must lie in [0, 1], got {attrs['p']}")
    data = in_shapes[0]
    if data is not None and any(not 0 <= axis < len(data) for axis in attrs["axes"]):
        raise ShapeError(f"Dropout: axes={attrs['axes']} must be axes of the {len(data)}-D input (0..{len(data) - 1})")
    return in_shapes, [in_shapes[0], in_shapes[0]], aux_shapes


register(
    OpDef(
        "Dropout",
        _dropout_forward,
        outputs=("output", "mask"),
        num_visible_outputs=1,
        params={
            "p": Param(parse_float, 0.5, "fraction of units dropped in training"),
            "mode": Param(enum("training", "always"), "training", "drop only in training, or always"),
            "axes": Param(parse_shape, (), "axes along which one draw is shared (variational dropout)"),
            "cudnn_off": Param(parse_bool, False, "accepted for MXNet compatibility"),
        },
        infer_shape=_dropout_infer,
        gradient=lambda F, attrs, i, o, og: [F._mul(og[0], o[1])],
        needs_random=True,
        doc="Zero a random fraction p of the units in training (scaling the rest by 1/(1-p)); identity otherwise.",
    )
)


# -- Embedding -----------------------------------------------------------------------------------
EMBED_PARAMS = {
    "input_dim": Param(parse_int, doc="vocabulary size"),
    "output_dim": Param(parse_int, doc="embedding size"),
    "dtype": Param(parse_dtype, "float32", "dtype of the weight"),
    "sparse_grad": Param(parse_bool, False, "accepted for MXNet compatibility"),
}


def _indices(xp: Any, data: Any, input_dim: int) -> Any:
    # out-of-range indices are clipped, as MXNet does
    return xp.clip(data.astype("int64"), 0, input_dim - 1)


def _embed_forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    xp = kctx.xp
    idx = _indices(xp, inputs[0], attrs["input_dim"]).reshape(-1)
    out = outputs[0]
    rows = out.reshape(idx.size, attrs["output_dim"])  # a copy when out's layout has no such view (a strided out=)
    xp.take(inputs[1], idx, axis=0, out=rows)
    if not out.flags.c_contiguous:  # reshape may have copied: write the result back
        out[...] = rows.reshape(out.shape)


def _embed_infer(attrs: dict, in_shapes: list, aux_shapes: list) -> tuple[list, list, list]:
    in_dim, out_dim = attrs["input_dim"], attrs["output_dim"]
    if in_dim <= 0 or out_dim <= 0:
        raise OperatorError(f"Embedding: input_dim and output_dim must be positive, got {in_dim}, {out_dim}")
    in_shapes[1] = merge_shape("Embedding", "weight", in_shapes[1], (in_dim, out_dim))
    data = in_shapes[0]
    return in_shapes, [None if data is None else (*data, out_dim)], aux_shapes


def _embed_backward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    xp = kctx.xp
    dy, data = inputs
    idx = _indices(xp, data, attrs["input_dim"]).reshape(-1)
    grad = outputs[0]
    grad[...] = 0
    rows = dy.reshape(idx.size, attrs["output_dim"])
    kctx.backend.scatter_add(grad, idx, rows)


register(
    OpDef(
        "Embedding",
        _embed_forward,
        inputs=("data", "weight"),
        params=dict(EMBED_PARAMS),
        infer_shape=_embed_infer,
        infer_type=lambda attrs, t, a: ([t[0], t[1] or attrs["dtype"]], [t[1] or attrs["dtype"]], a),
        gradient=lambda F, attrs, i, o, og: [None, F._backward_Embedding(og[0], i[0], **attrs)],
        doc="Look up rows of ``weight`` (input_dim, output_dim) for the integer indices in ``data``.",
    )
)
register(
    OpDef(
        "_backward_Embedding",
        _embed_backward,
        inputs=("out_grad", "data"),
        params=dict(EMBED_PARAMS),
        infer_shape=lambda attrs, s, a: (s, [(attrs["input_dim"], attrs["output_dim"])], a),
        infer_type=lambda attrs, t, a: (t, [t[0]], a),
        doc="Gradient of Embedding with respect to its weight (rows summed per index).",
    )
)
