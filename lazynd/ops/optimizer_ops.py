"""Fused optimizer updates: one call per parameter, writing the weight and its states in place.

Call them as MXNet does, with ``out=weight``::

    nd.sgd_mom_update(weight, grad, mom, out=weight, lr=0.1, momentum=0.9, wd=1e-4)

States (``mom``, ``mean``, ``var``, ``n``) are declared in ``mutates`` so the
engine schedules them as writes.  The CPU kernels work in place with NumPy
``out=`` and at most two temporaries (as fast as the update written by hand);
the GPU kernels (``kernels/optimizer.cu``) do the whole update in one launch.
``clip_gradient < 0`` means no clipping.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ..backend.cuda_kernels import launch_config, load_file
from .params import Param, parse_float
from .registry import OpDef, register

_KERNEL_DTYPES = ("float32", "float64")


def _in_range(low: float, high: float, high_open: bool = True) -> Callable[[Any], float]:
    def parse(value: Any) -> float:
        number = parse_float(value)
        if not (low <= number < high if high_open else low <= number <= high):
            raise ValueError(f"expected a number in [{low}, {high}{')' if high_open else ']'}")
        return number

    parse.__name__ = "float"
    return parse


def _non_negative(value: Any) -> float:
    number = parse_float(value)
    if not number >= 0:
        raise ValueError("expected a number >= 0")
    return number


_COMMON = {
    "lr": Param(_non_negative, doc="learning rate"),
    "wd": Param(_non_negative, 0.0, "weight decay"),
    "rescale_grad": Param(parse_float, 1.0, "multiply the gradient by this first"),
    "clip_gradient": Param(parse_float, -1.0, "clip the gradient to [-c, c]; negative: no clipping"),
}


def _scaled_gradient(xp: Any, grad: Any, attrs: dict, weight: Any = None) -> Any:
    """A new array ``clip(rescale * grad [+ wd * weight])``: the one temporary most updates need."""
    g = xp.multiply(grad, grad.dtype.type(attrs["rescale_grad"]))
    if weight is not None and attrs["wd"]:
        g += weight * weight.dtype.type(attrs["wd"])
    clip = attrs["clip_gradient"]
    if clip >= 0:
        xp.clip(g, -clip, clip, out=g)
    return g


def _gpu_ready(kctx: Any, arrays: list) -> bool:
    return kctx.xp is not np and arrays[0].dtype.name in _KERNEL_DTYPES and all(a.flags.c_contiguous for a in arrays)


def _launch(kctx: Any, kernel: str, arrays: list, scalars: list) -> None:
    dtype = arrays[0].dtype
    fn = load_file("optimizer.cu").function(kctx.device_id, f"lazynd_{kernel}_{dtype.name}")
    grid, block = launch_config(arrays[0].size)
    fn(grid, block, (*arrays, np.int64(arrays[0].size), *[dtype.type(s) for s in scalars]))


# -- sgd -------------------------------------------------------------------------------------------
def _sgd_forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    weight, grad = inputs
    out = outputs[0]
    lr, wd = attrs["lr"], attrs["wd"]
    if _gpu_ready(kctx, [weight, grad, out]):
        _launch(kctx, "sgd_update", [weight, grad, out], [lr, wd, attrs["rescale_grad"], attrs["clip_gradient"]])
        return
    xp = kctx.xp
    g = _scaled_gradient(xp, grad, attrs)
    g *= g.dtype.type(lr)
    if wd:
        xp.multiply(weight, weight.dtype.type(1 - lr * wd), out=out)
        out -= g
    else:
        xp.subtract(weight, g, out=out)


def _sgd_mom_forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    weight, grad, mom = inputs
    out = outputs[0]
    lr, wd, momentum = attrs["lr"], attrs["wd"], attrs["momentum"]
    if _gpu_ready(kctx, [weight, grad, mom, out]):
        scalars = [lr, momentum, wd, attrs["rescale_grad"], attrs["clip_gradient"]]
        _launch(kctx, "sgd_mom_update", [weight, grad, mom, out], scalars)
        return
    xp = kctx.xp
    g = _scaled_gradient(xp, grad, attrs)
    g *= g.dtype.type(lr)
    mom *= mom.dtype.type(momentum)
    mom -= g
    if wd:
        xp.multiply(weight, weight.dtype.type(lr * wd), out=g)
        mom -= g
    xp.add(weight, mom, out=out)


# -- adam ------------------------------------------------------------------------------------------
def _adam_forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    weight, grad, mean, var = inputs
    out = outputs[0]
    beta1, beta2 = attrs["beta1"], attrs["beta2"]
    if _gpu_ready(kctx, [weight, grad, mean, var, out]):
        scalars = [attrs["lr"], beta1, beta2, attrs["epsilon"], attrs["wd"], attrs["rescale_grad"], attrs["clip_gradient"]]
        _launch(kctx, "adam_update", [weight, grad, mean, var, out], scalars)
        return
    xp = kctx.xp
    kind = weight.dtype.type
    g = _scaled_gradient(xp, grad, attrs, weight)
    mean *= kind(beta1)
    mean += g * kind(1 - beta1)
    xp.square(g, out=g)
    g *= kind(1 - beta2)
    var *= kind(beta2)
    var += g
    xp.sqrt(var, out=g)
    g += kind(attrs["epsilon"])
    xp.divide(mean, g, out=g)
    g *= kind(attrs["lr"])
    xp.subtract(weight, g, out=out)


# -- rmsprop ---------------------------------------------------------------------------------------
def _rmsprop_forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    weight, grad, state = inputs
    out = outputs[0]
    gamma1, clip_weights = attrs["gamma1"], attrs["clip_weights"]
    if _gpu_ready(kctx, [weight, grad, state, out]):
        scalars = [attrs["lr"], gamma1, attrs["epsilon"], attrs["wd"], attrs["rescale_grad"], attrs["clip_gradient"], clip_weights]
        _launch(kctx, "rmsprop_update", [weight, grad, state, out], scalars)
        return
    xp = kctx.xp
    kind = weight.dtype.type
    g = _scaled_gradient(xp, grad, attrs, weight)
    state *= kind(gamma1)
    state += xp.square(g) * kind(1 - gamma1)
    step = state + kind(attrs["epsilon"])
    xp.sqrt(step, out=step)
    xp.divide(g, step, out=g)
    g *= kind(attrs["lr"])
    xp.subtract(weight, g, out=out)
    if clip_weights >= 0:
        xp.clip(out, -clip_weights, clip_weights, out=out)


def _register(name: str, forward: Callable, inputs: tuple[str, ...], extra: dict[str, Param], doc: str) -> None:
    register(
        OpDef(
            name,
            forward,
            inputs=inputs,
            params={**_COMMON, **extra},
            gradient=lambda F, attrs, ins, outs, og: [None] * len(ins),
            inplace=((0, 0),),
            mutates=tuple(range(2, len(inputs))),
            doc=doc,
        )
    )


_register("sgd_update", _sgd_forward, ("weight", "grad"), {}, "weight = (1 - lr*wd) * weight - lr * clip(rescale_grad * grad).")
_register(
    "sgd_mom_update",
    _sgd_mom_forward,
    ("weight", "grad", "mom"),
    {"momentum": Param(_in_range(0.0, 1.0, high_open=False), 0.0, "momentum")},
    "mom = momentum*mom - lr*wd*weight - lr*clip(rescale_grad*grad); weight += mom (mom updated in place).",
)
_register(
    "adam_update",
    _adam_forward,
    ("weight", "grad", "mean", "var"),
    {
        "beta1": Param(_in_range(0.0, 1.0), 0.9, "decay of the first moment"),
        "beta2": Param(_in_range(0.0, 1.0), 0.999, "decay of the second moment"),
        "epsilon": Param(_non_negative, 1e-8, "added to the denominator"),
    },
    "g = clip(rescale_grad*grad + wd*weight); Adam moments updated in place; weight -= lr*mean/(sqrt(var)+epsilon).",
)
_register(
    "rmsprop_update",
    _rmsprop_forward,
    ("weight", "grad", "n"),
    {
        "gamma1": Param(_in_range(0.0, 1.0), 0.95, "decay of the squared-gradient average"),
        "epsilon": Param(_non_negative, 1e-8, "added inside the square root"),
        "clip_weights": Param(parse_float, -1.0, "clip the weights to [-c, c]; negative: no clipping"),
    },
    "n = (1-gamma1)*g^2 + gamma1*n; weight -= lr*g/sqrt(n+epsilon), g = clip(rescale_grad*grad + wd*weight).",
)
