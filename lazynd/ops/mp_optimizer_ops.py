"""Multi-precision optimizer updates: a float16 weight trained through a float32 master copy.

MXNet 1.x's names and signatures, as its optimizers call them for ``multi_precision=True``::

    nd.mp_sgd_update(weight, grad, weight32, out=weight, lr=0.1, wd=1e-4)
    nd.mp_sgd_mom_update(weight, grad, mom, weight32, out=weight, lr=0.1, momentum=0.9)
    nd.mp_nag_mom_update(weight, grad, mom, weight32, out=weight, lr=0.1, momentum=0.9)
    nd.multi_mp_sgd_update(w0, g0, w32_0, w1, g1, w32_1, ..., out=[w0, w1, ...], lrs=..., wds=..., num_weights=n)
    nd.multi_mp_sgd_mom_update(w0, g0, m0, w32_0, ..., out=[w0, ...], lrs=..., wds=..., momentum=0.9, num_weights=n)

The update is computed in float32 on ``weight32`` (and ``mom``, float32 too), both written in
place; the output is ``weight32`` rounded to the weight's dtype.  The weight's own values are
never read.  ``weight`` and ``grad`` share a dtype (float16 usually; float32 and float64 work).
The formulas are those of ``sgd_update``, ``sgd_mom_update`` and ``nag_mom_update``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..backend.cuda.elementwise import unaliased
from ..backend.cuda.sources import dtype_name, launch_config, load_file
from ..errors import OperatorError
from .multi_optimizer_ops import _MULTI_COMMON, group_layout, register_group_update
from .optimizer_ops import _LAZY_UPDATE, _register
from .params import Param, parse_float

_GPU_WEIGHT_DTYPES = ("float16", "float32")  # optimizer.cu's mp kernels
_SOURCE = load_file("optimizer.cu")  # read once; each kernel compiles on first use
_MOMENTUM = {"momentum": Param(parse_float, 0.0, "momentum")}


def _mp_types(name: str, roles: tuple[str, ...], types: list) -> tuple[list, Any]:
    """Type rule of one parameter's inputs ``roles`` (weight, grad, then float32 states):
    grad takes the weight's dtype, the states are float32; returns the types and the output's."""
    weight = types[0] if types[0] is not None else types[1]
    if types[0] is not None and types[1] is not None and types[0] != types[1]:
        raise OperatorError(f"{name}: input '{roles[1]}' has dtype {types[1]}, expected {types[0]} like '{roles[0]}'")
    for role, t in zip(roles[2:], types[2:], strict=True):
        if t is not None and t != "float32":
            raise OperatorError(f"{name}: input '{role}' has dtype {t}, expected float32 (a float32 state)")
    return [weight, weight] + ["float32"] * (len(roles) - 2), weight


def _scaled_float32_gradient(xp: Any, grad: Any, attrs: dict, lr: float) -> Any:
    """``lr * clip(rescale_grad * grad)`` in float32 (a new array)."""
    g = grad.astype(np.float32)
    g *= lr * attrs["rescale_grad"]
    clip = attrs["clip_gradient"]
    if clip >= 0:
        xp.clip(g, -lr * clip, lr * clip, out=g)
    return g


def _update_sgd(xp: Any, attrs: dict, grad: Any, weight32: Any) -> None:
    lr, wd = attrs["lr"], attrs["wd"]
    g = _scaled_float32_gradient(xp, grad, attrs, lr)
    if wd:
        weight32 *= 1.0 - lr * wd
    weight32 -= g


def _update_sgd_mom(xp: Any, attrs: dict, grad: Any, mom: Any, weight32: Any) -> None:
    lr, wd = attrs["lr"], attrs["wd"]
    g = _scaled_float32_gradient(xp, grad, attrs, lr)
    mom *= attrs["momentum"]
    mom -= g
    if wd:
        mom -= weight32 * (lr * wd)
    weight32 += mom


def _update_nag_mom(xp: Any, attrs: dict, grad: Any, mom: Any, weight32: Any) -> None:
    # the order of nag_mom_update (optimizer_ops._nag_mom_block): mom's decay term takes the new weight
    lr, wd, momentum = attrs["lr"], attrs["wd"], attrs["momentum"]
    g = _scaled_float32_gradient(xp, grad, attrs, lr)
    mom *= momentum
    step = g + weight32 * (lr * wd) if wd else g
    weight32 += mom * momentum
    weight32 -= step * (1.0 + momentum)
    mom -= g
    if wd:
        mom -= weight32 * (lr * wd)


_UPDATES: dict[str, Callable[..., None]] = {
    "mp_sgd_update": _update_sgd,
    "mp_sgd_mom_update": _update_sgd_mom,
    "mp_nag_mom_update": _update_nag_mom,
}
_SCALARS = {
    "mp_sgd_update": ("lr", "wd", "rescale_grad", "clip_gradient"),
    "mp_sgd_mom_update": ("lr", "momentum", "wd", "rescale_grad", "clip_gradient"),
    "mp_nag_mom_update": ("lr", "momentum", "wd", "rescale_grad", "clip_gradient"),
}


def _on_gpu_kernel(kctx: Any, arrays: list, out: Any) -> bool:
    """Whether optimizer.cu's mp kernels take ``arrays`` (weight, grad, states) and ``out``."""
    weight, grad, *states = arrays
    return (
        kctx.xp is not np
        and dtype_name(weight.dtype) in _GPU_WEIGHT_DTYPES
        and all(a.flags.c_contiguous for a in (grad, *states, out))
    )


def _update_one(kctx: Any, kernel: str, attrs: dict, arrays: list, out: Any, rates: tuple = ()) -> None:
    """One parameter's update: ``arrays`` = weight, grad, states (weight32 last); writes ``out``.
    ``rates`` = ``(lrs, wds, k)``: the ``preloaded_`` kernel, reading lr and wd from float32
    device arrays at ``k`` (where :func:`_on_gpu_kernel` holds)."""
    weight, grad, *states = arrays
    xp = kctx.xp
    if _on_gpu_kernel(kctx, arrays, out):
        buffers = [unaliased(grad, out), *states, out]
        name = f"lazynd_preloaded_{kernel}_" if rates else f"lazynd_{kernel}_"
        fn = _SOURCE.function(kctx.device_id, name + dtype_name(weight.dtype))
        grid, block = launch_config(out.size)
        names = [k for k in _SCALARS[kernel] if not (rates and k in ("lr", "wd"))]
        rate_args = (rates[0], rates[1], np.int64(rates[2])) if rates else ()
        fn(grid, block, (*buffers, np.int64(out.size), *rate_args, *[np.float32(attrs[k]) for k in names]))
        return
    _UPDATES[kernel](xp, attrs, grad, *states)
    out[...] = states[-1]


def _single(name: str, roles: tuple[str, ...], extra: dict[str, Param], doc: str) -> None:
    def forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
        _update_one(kctx, name, attrs, inputs, outputs[0])

    def infer_type(attrs: dict, in_types: list, aux_types: list) -> tuple[list, list, list]:
        types, out = _mp_types(name, roles, in_types)
        return types, [out], aux_types

    _register(name, forward, roles, extra, doc, infer_type=infer_type)


_single(
    "mp_sgd_update",
    ("weight", "grad", "weight32"),
    {**_LAZY_UPDATE},
    "weight32 = (1 - lr*wd)*weight32 - lr*clip(rescale_grad*grad) in float32; weight = weight32 in its dtype.",
)
_single(
    "mp_sgd_mom_update",
    ("weight", "grad", "mom", "weight32"),
    {**_MOMENTUM, **_LAZY_UPDATE},
    "mom = momentum*mom - lr*wd*weight32 - lr*clip(rescale_grad*grad); weight32 += mom (float32); "
    "weight = weight32 in its dtype.",
)
_single(
    "mp_nag_mom_update",
    ("weight", "grad", "mom", "weight32"),
    {**_MOMENTUM},
    "nag_mom_update on the float32 master copy weight32 (and float32 mom); weight = weight32 in its dtype.",
)


def _multi(name: str, single: str, roles: tuple[str, ...], extra: dict[str, Param], doc: str) -> None:
    stride = len(roles)
    inputs = group_layout(name, roles)[0]

    def type_rule(op_name: str) -> Callable:
        def infer_type(attrs: dict, in_types: list, aux_types: list) -> tuple[list, list, list]:
            names = inputs(attrs)
            out_types = []
            for i in range(attrs["num_weights"]):
                group = slice(stride * i, stride * (i + 1))
                in_types[group], out = _mp_types(op_name, tuple(names[group]), in_types[group])
                out_types.append(out)
            return in_types, out_types, aux_types

        return infer_type

    def forward(kctx: Any, attrs: dict, ins: list, outs: list, aux: list) -> None:
        params = {k: attrs[k] for k in ("rescale_grad", "clip_gradient", "momentum") if k in attrs}
        for i, (lr, wd) in enumerate(zip(attrs["lrs"], attrs["wds"], strict=True)):
            params["lr"], params["wd"] = lr, wd
            _update_one(kctx, single, params, ins[stride * i : stride * (i + 1)], outs[i])

    def on_device(kctx: Any, attrs: dict, ins: list, outs: list, lrs: Any, wds: Any) -> bool:
        groups = [ins[stride * i : stride * (i + 1)] for i in range(attrs["num_weights"])]
        if single == "mp_nag_mom_update" or not all(
            _on_gpu_kernel(kctx, g, o) for g, o in zip(groups, outs, strict=True)
        ):
            return False
        params = {k: attrs[k] for k in ("rescale_grad", "clip_gradient", "momentum") if k in attrs}
        for i, (arrays, out) in enumerate(zip(groups, outs, strict=True)):
            _update_one(kctx, single, params, arrays, out, (lrs, wds, i))
        return True

    register_group_update(
        name,
        forward,
        roles,
        {**_MULTI_COMMON, **extra},
        type_rule,
        # each weight's float32 states (mom, weight32) are updated in place
        lambda attrs: [stride * i + k for i in range(attrs["num_weights"]) for k in range(2, stride)],
        doc,
        on_device,
    )


_multi(
    "multi_mp_sgd_update",
    "mp_sgd_update",
    ("weight", "grad", "weight32"),
    {},
    "mp_sgd_update of num_weights parameters in one operation; inputs weight_i, grad_i, weight32_i interleaved.",
)
_multi(
    "multi_mp_sgd_mom_update",
    "mp_sgd_mom_update",
    ("weight", "grad", "mom", "weight32"),
    {**_MOMENTUM},
    "mp_sgd_mom_update of num_weights parameters in one operation; inputs weight_i, grad_i, mom_i, weight32_i "
    "interleaved.",
)
