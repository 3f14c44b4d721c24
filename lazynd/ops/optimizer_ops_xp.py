"""Fused updates written once with the array module: ``ftrl_update``, ``rmspropalex_update``,
``signsgd_update`` and ``signum_update``.

They follow the conventions of :mod:`lazynd.ops.optimizer_ops` (call them with
``out=weight``; states are updated in place and declared as written;
``clip_gradient < 0`` means no clipping) and MXNet's formulas, but their kernels
are plain ``xp`` code, the same lines for NumPy and CuPy: these rules are used
far less than SGD or Adam, so they do not carry CUDA kernels of their own.
"""

from __future__ import annotations

from typing import Any

from .optimizer_ops import _register, _scaled_gradient_into
from .params import Param, parse_float


def _clip_weights(xp: Any, out: Any, clip_weights: float) -> None:
    if clip_weights >= 0:
        xp.clip(out, -clip_weights, clip_weights, out=out)


# -- ftrl ------------------------------------------------------------------------------------------
def _ftrl_forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    xp = kctx.xp
    weight, grad, z, n = inputs
    lr = attrs["lr"]
    g = xp.empty_like(grad)
    _scaled_gradient_into(xp, grad, attrs, g, None)
    old_root = xp.sqrt(n)
    n += g * g
    new_root = xp.sqrt(n)
    # sigma * weight, sigma = (sqrt(n_new) - sqrt(n_old)) / lr: the step's share of the L2 centre
    z += g - (new_root - old_root) * weight / lr
    keep = xp.abs(z) > attrs["lamda1"]
    outputs[0][...] = (xp.sign(z) * attrs["lamda1"] - z) / ((attrs["beta"] + new_root) / lr + attrs["wd"]) * keep


# -- rmspropalex -----------------------------------------------------------------------------------
def _rmspropalex_forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    xp = kctx.xp
    weight, grad, n, mean_g, delta = inputs
    gamma1 = attrs["gamma1"]
    g = xp.empty_like(grad)
    _scaled_gradient_into(xp, grad, attrs, g, xp.empty_like(grad), weight)
    n *= gamma1
    n += (1.0 - gamma1) * g * g
    mean_g *= gamma1
    mean_g += (1.0 - gamma1) * g
    delta *= attrs["gamma2"]
    delta -= attrs["lr"] * g / xp.sqrt(n - mean_g * mean_g + attrs["epsilon"])
    out = outputs[0]
    xp.add(weight, delta, out=out)
    _clip_weights(xp, out, attrs["clip_weights"])


# -- signsgd and signum ----------------------------------------------------------------------------
def _signsgd_forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    xp = kctx.xp
    weight, grad = inputs
    lr = attrs["lr"]
    # the sign of the raw gradient: MXNet's signsgd applies neither rescale_grad nor clipping
    step = xp.sign(grad) * lr
    out = outputs[0]
    xp.multiply(weight, 1.0 - lr * attrs["wd"], out=out)
    out -= step


def _signum_forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    xp = kctx.xp
    weight, grad, mom = inputs
    momentum, lr = attrs["momentum"], attrs["lr"]
    # MXNet's sign convention: mom holds minus the running average of the gradient
    g = xp.empty_like(grad)
    _scaled_gradient_into(xp, grad, attrs, g, None)
    mom *= momentum
    mom -= (1.0 - momentum) * (g + attrs["wd"] * weight)
    step = xp.sign(mom) * lr
    out = outputs[0]
    xp.multiply(weight, 1.0 - lr * attrs["wd_lh"], out=out)
    out += step


_CLIP_WEIGHTS = Param(parse_float, -1.0, "clip the weights to [-c, c]; negative: no clipping")

_register(
    "ftrl_update",
    _ftrl_forward,
    ("weight", "grad", "z", "n"),
    {
        "lr": Param(parse_float, doc="learning rate (it divides: 0 gives infinities, as in MXNet)"),
        "lamda1": Param(parse_float, 0.01, "the L1 regularisation coefficient"),
        "beta": Param(parse_float, 1.0, "the per-coordinate learning rate's beta"),
    },
    "g = clip(rescale_grad*grad); z += g - (sqrt(n + g^2) - sqrt(n))*weight/lr; n += g^2; "
    "weight = (sign(z)*lamda1 - z) / ((beta + sqrt(n))/lr + wd) * (|z| > lamda1).",
)
_register(
    "rmspropalex_update",
    _rmspropalex_forward,
    ("weight", "grad", "n", "g", "delta"),
    {
        "gamma1": Param(parse_float, 0.95, "decay of the gradient averages"),
        "gamma2": Param(parse_float, 0.9, "decay of the step (momentum)"),
        "epsilon": Param(parse_float, 1e-8, "added inside the square root"),
        "clip_weights": _CLIP_WEIGHTS,
    },
    "Graves' centred RMSProp: g' = clip(rescale_grad*grad + wd*weight); n and g are decaying averages of "
    "g'^2 and g'; delta = gamma2*delta - lr*g'/sqrt(n - g^2 + epsilon); weight += delta.",
)
_register(
    "signsgd_update",
    _signsgd_forward,
    ("weight", "grad"),
    {},
    "weight = (1 - lr*wd)*weight - lr*sign(grad).",
)
_register(
    "signum_update",
    _signum_forward,
    ("weight", "grad", "mom"),
    {
        "momentum": Param(parse_float, 0.0, "decay of the momentum"),
        "wd_lh": Param(parse_float, 0.0, "decoupled weight decay, applied to the weight only"),
    },
    "mom = momentum*mom - (1-momentum)*(clip(rescale_grad*grad) + wd*weight); "
    "weight = (1 - lr*wd_lh)*weight + lr*sign(mom).",
)
