"""MXNet 1.x's contrib optimizer updates: AdamW (``_adamw_update``, ``_mp_adamw_update``,
``_multi_adamw_update``, ``_multi_mp_adamw_update``), the fused multi-tensor LAMB
(``_multi_lamb_update``, ``_multi_mp_lamb_update``) and ``_contrib_group_adagrad_update``.

They are registered under MXNet's internal names; ``mx.nd.contrib.adamw_update`` and the other
list-taking functions MXNet's ``contrib`` modules define are in :mod:`lazynd.ndarray.contrib_updates`.
AdamW takes ``rescale_grad`` as an input array of one element (a loss scaler's value, never read
by the caller): when it is 0, infinite or NaN the step is skipped, weights and states untouched.
The kernels are plain ``xp`` code, the same lines for NumPy and CuPy.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..errors import OperatorError, ShapeError
from .mp_optimizer_ops import _mp_types
from .multi_optimizer_ops import _MULTI_COMMON, group_layout
from .optimizer_ops import _COMMON
from .optimizer_ops_lamb import _PHASE1, _lamb_direction, _trust_ratio
from .params import Param, parse_float, parse_float_tuple, parse_positive_int, parse_shape
from .registry import OpDef, merge_shape, register


def _no_gradient(F: Any, attrs: dict, ins: list, outs: list, og: list) -> list:
    return [None] * len(ins)


# -- adamw -----------------------------------------------------------------------------------------
def _adamw_step(xp: Any, attrs: dict, lr: float, wd: float, eta: float, rescale: tuple, arrays: list) -> Any:
    """Update one weight's ``mean`` and ``var`` in place where the step runs; the new weight (a new
    array), from the float32 master copy where ``arrays`` = weight, grad, mean, var, weight32 has
    one.  ``rescale`` is :func:`_rescale_on_device`'s."""
    scale, runs = rescale
    grad, mean, var = arrays[1:4]
    master = arrays[4] if len(arrays) == 5 else arrays[0]
    beta1, beta2 = attrs["beta1"], attrs["beta2"]
    g = grad.astype(mean.dtype) * scale
    clip = attrs["clip_gradient"]
    if clip >= 0:
        xp.clip(g, -clip, clip, out=g)
    new_mean = mean * beta1
    new_mean += (1.0 - beta1) * g
    new_var = var * beta2
    new_var += (1.0 - beta2) * g * g
    mean[...] = xp.where(runs, new_mean, mean)
    var[...] = xp.where(runs, new_var, var)
    return master - eta * (lr * new_mean / (xp.sqrt(new_var) + attrs["epsilon"]) + wd * master)


def _rescale_on_device(xp: Any, rescale_grad: Any, dtype: Any) -> tuple[Any, Any]:
    """The one value of the ``rescale_grad`` input as a (1,) array of ``dtype`` (0 where the step is
    skipped, so no inf or NaN enters the arithmetic) and whether the step runs, a (1,) bool array:
    both on the device, never read on the host, where a read inside the kernel would keep an
    executor's pass from being captured into a CUDA graph (lazynd/backend/cuda/graphs.py)."""
    value = rescale_grad.reshape(-1)[:1].astype(dtype)
    runs = xp.isfinite(value) & (value != 0)
    return xp.where(runs, value, value.dtype.type(0)), runs


def _adamw_one(
    kctx: Any, attrs: dict, lr: float, wd: float, eta: float, rescale: tuple, arrays: list, out: Any
) -> None:
    """One parameter's AdamW step: ``arrays`` = weight, grad, mean, var[, weight32], written in place;
    where ``rescale`` says the step is skipped, all as they were."""
    xp = kctx.xp
    runs = rescale[1]
    new = _adamw_step(xp, attrs, lr, wd, eta, rescale, arrays)
    if len(arrays) == 5:
        arrays[4][...] = xp.where(runs, new, arrays[4])
    out[...] = xp.where(runs, new, arrays[0])  # skipped: the weight as it was (MXNet leaves out= unwritten)


_ADAMW = {
    "beta1": Param(parse_float, 0.9, "decay of the first moment"),
    "beta2": Param(parse_float, 0.999, "decay of the second moment"),
    "epsilon": Param(parse_float, 1e-8, "added to the denominator"),
    "clip_gradient": _COMMON["clip_gradient"],
}
_ADAMW_DOC = (
    "AdamW (Loshchilov & Hutter): g = clip(rescale_grad*grad); Adam's moments updated in place; "
    "weight -= eta*(lr*mean/(sqrt(var) + epsilon) + wd*weight); skipped where rescale_grad is 0, inf or NaN."
)


def _single_adamw(name: str, roles: tuple[str, ...]) -> None:
    stride = len(roles)

    def forward(kctx: Any, attrs: dict, ins: list, outs: list, aux: list) -> None:
        rescale = _rescale_on_device(kctx.xp, ins[-1], ins[2].dtype)
        _adamw_one(kctx, attrs, attrs["lr"], attrs["wd"], attrs["eta"], rescale, ins[:stride], outs[0])

    def infer_shape(attrs: dict, in_shapes: list, aux_shapes: list) -> tuple[list, list, list]:
        shape = None
        for role, given in zip(roles, in_shapes, strict=False):
            shape = merge_shape(name, role, given, shape)
        scale = merge_shape(name, "rescale_grad", in_shapes[stride], (1,))
        return [*[shape] * stride, scale], [shape], aux_shapes

    def infer_type(attrs: dict, in_types: list, aux_types: list) -> tuple[list, list, list]:
        rescale = in_types[stride] or "float32"
        if stride == 5:
            types, out = _mp_types(name, roles, in_types[:stride])
            return [*types, rescale], [out], aux_types
        known = [t for t in in_types[:stride] if t is not None]
        if any(t != known[0] for t in known):
            raise OperatorError(f"{name}: weight, grad, mean and var differ in dtype ({', '.join(map(str, in_types))})")
        dtype = known[0] if known else None
        return [*[dtype] * stride, rescale], [dtype], aux_types

    # MXNet's order, which its generated functions read positionally
    params = {
        "lr": Param(parse_float, doc="learning rate"),
        **{k: _ADAMW[k] for k in ("beta1", "beta2", "epsilon")},
        "wd": _COMMON["wd"],
        "eta": Param(parse_float, doc="the learning rate schedule's multiplier"),
        "clip_gradient": _ADAMW["clip_gradient"],
    }
    register(
        OpDef(
            name,
            forward,
            inputs=(*roles, "rescale_grad"),
            params=params,
            infer_shape=infer_shape,
            infer_type=infer_type,
            gradient=_no_gradient,
            inplace=((0, 0),),
            mutates=tuple(range(2, stride)),
            float_data=True,  # MXNet: "only support floating point types"
            doc=_ADAMW_DOC + (" Multi-precision: on the float32 master copy weight32." if stride == 5 else ""),
        )
    )


_ADAMW_ROLES = ("weight", "grad", "mean", "var")
_MP_ADAMW_ROLES = (*_ADAMW_ROLES, "weight32")
_single_adamw("_adamw_update", _ADAMW_ROLES)
_single_adamw("_mp_adamw_update", _MP_ADAMW_ROLES)


# -- the multi-tensor forms (AdamW and LAMB) -------------------------------------------------------
def _group_types(name: str, roles: tuple[str, ...], count: str, trailing: int) -> Callable:
    """Type rule of a multi-tensor update: each group as its single form's; ``trailing`` float32 inputs."""
    stride = len(roles)

    def infer_type(attrs: dict, in_types: list, aux_types: list) -> tuple[list, list, list]:
        types, out_types = [], []
        for i in range(attrs[count]):
            group = in_types[stride * i : stride * (i + 1)]
            if "weight32" in roles:
                group, out = _mp_types(name, roles, group)
            else:
                known = [t for t in group if t is not None]
                if any(t != known[0] for t in known):
                    raise OperatorError(f"{name}: tensor {i}'s weight, grad and states differ in dtype ({group})")
                out = known[0] if known else None
                group = [out] * stride
            types.extend(group)
            out_types.append(out)
        rest = [t or "float32" for t in in_types[stride * attrs[count] :]][:trailing]
        return [*types, *rest], out_types, aux_types

    return infer_type


def _register_multi(
    name: str, roles: tuple[str, ...], count: str, trailing: tuple, params: dict, forward: Callable, doc: str
) -> None:
    stride = len(roles)
    inputs, outputs, infer_shape = group_layout(name, roles, trailing, count)
    register(
        OpDef(
            name,
            forward,
            inputs=inputs,
            positional_params=False,  # MXNet's f(*data, **kwargs)
            outputs=outputs,
            params=params,
            infer_shape=infer_shape,
            infer_type=_group_types(name, roles, count, len(trailing)),
            gradient=_no_gradient,
            mutates=lambda attrs: [stride * i + k for i in range(attrs[count]) for k in range(2, stride)],
            float_data=True,  # MXNet: "only support floating point types"
            doc=doc,
        )
    )


def _multi_adamw(name: str, roles: tuple[str, ...]) -> None:
    stride = len(roles)

    def forward(kctx: Any, attrs: dict, ins: list, outs: list, aux: list) -> None:
        rescale = _rescale_on_device(kctx.xp, ins[-1], ins[2].dtype)
        rates = zip(attrs["lrs"], attrs["wds"], attrs["etas"], strict=True)
        for i, (lr, wd, eta) in enumerate(rates):
            _adamw_one(kctx, attrs, lr, wd, eta, rescale, ins[stride * i : stride * (i + 1)], outs[i])

    params = {
        "lrs": _MULTI_COMMON["lrs"],
        "wds": _MULTI_COMMON["wds"],
        "etas": Param(parse_float_tuple, doc="the learning rate schedule's multiplier of each weight"),
        **_ADAMW,
        "num_weights": _MULTI_COMMON["num_weights"],
    }
    doc = f"{name[len('_multi') :]} of num_weights parameters in one operation; rescale_grad the last input."
    _register_multi(name, roles, "num_weights", (("rescale_grad", 1),), params, forward, doc)


_multi_adamw("_multi_adamw_update", _ADAMW_ROLES)
_multi_adamw("_multi_mp_adamw_update", _MP_ADAMW_ROLES)


def _multi_lamb(name: str, roles: tuple[str, ...]) -> None:
    stride = len(roles)

    def forward(kctx: Any, attrs: dict, ins: list, outs: list, aux: list) -> None:
        xp = kctx.xp
        params = dict(attrs)
        rates = zip(attrs["learning_rates"], attrs["wds"], attrs["step_count"], strict=True)
        for i, (lr, wd, t) in enumerate(rates):
            weight, grad, mean, var, *master = ins[stride * i : stride * (i + 1)]
            params["wd"], params["t"], params["lr"] = wd, t, lr
            source = master[0] if master else weight
            g = _lamb_direction(xp, params, grad, mean, var, source)
            r1 = xp.sqrt(xp.sum(xp.square(source, dtype=np.float32)))
            r2 = xp.sqrt(xp.sum(xp.square(g, dtype=np.float32)))
            new = source - g * (lr * _trust_ratio(xp, params, r1, r2)).astype(g.dtype)
            if master:
                master[0][...] = new
            outs[i][...] = new

    params = {
        "learning_rates": Param(parse_float_tuple, doc="learning rate of each tensor"),
        "wds": _MULTI_COMMON["wds"],
        "step_count": Param(parse_shape, doc="update count of each tensor (>= 1)"),
        **{k: _PHASE1[k] for k in ("beta1", "beta2", "epsilon", "bias_correction", "rescale_grad", "clip_gradient")},
        "lower_bound": Param(parse_float, -1.0, "||weight|| is raised to at least this; < 0: no lower bound"),
        "upper_bound": Param(parse_float, -1.0, "||weight|| is lowered to at most this; < 0: no upper bound"),
        "num_tensors": Param(parse_positive_int, 1, "number of tensors updated"),
    }
    doc = (
        "LAMB of num_tensors tensors in one operation: lamb_update_phase1, the norms and lamb_update_phase2 of "
        "each" + (", on the float32 master copy weight32" if stride == 5 else "") + "."
    )
    _register_multi(name, roles, "num_tensors", (), params, forward, doc)


_multi_lamb("_multi_lamb_update", _ADAMW_ROLES)
_multi_lamb("_multi_mp_lamb_update", _MP_ADAMW_ROLES)


# -- group adagrad ---------------------------------------------------------------------------------
def _group_adagrad_forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    xp = kctx.xp
    weight, grad, history = inputs
    g = grad * attrs["rescale_grad"]
    if attrs["clip_gradient"] >= 0:
        xp.clip(g, -attrs["clip_gradient"], attrs["clip_gradient"], out=g)
    rows = weight.shape[0]
    # one accumulator per row: the mean of the row's squared gradients
    history += xp.mean(xp.square(g).reshape(rows, -1), axis=1).reshape(history.shape)
    scale = (attrs["lr"] / xp.sqrt(history.reshape(rows, -1) + attrs["epsilon"])).astype(weight.dtype)
    outputs[0][...] = weight - g * scale.reshape((rows,) + (1,) * (weight.ndim - 1))


def _group_adagrad_shapes(attrs: dict, in_shapes: list, aux_shapes: list) -> tuple[list, list, list]:
    name = "_contrib_group_adagrad_update"
    shape = merge_shape(name, "grad", in_shapes[1], in_shapes[0])
    history = in_shapes[2]
    if shape is not None:
        if len(shape) < 2:
            raise ShapeError(f"{name}: weight has shape {shape}, expected at least 2 dimensions (rows, ...)")
        if history is not None and tuple(history) not in ((shape[0],), (shape[0], 1)):
            raise ShapeError(f"{name}: input 'history' has shape {tuple(history)}, expected ({shape[0]}, 1)")
        history = history or (shape[0], 1)
    return [shape, shape, history], [shape], aux_shapes


register(
    OpDef(
        "_contrib_group_adagrad_update",
        _group_adagrad_forward,
        inputs=("weight", "grad", "history"),
        params={
            "lr": Param(parse_float, doc="learning rate"),
            "rescale_grad": _COMMON["rescale_grad"],
            "clip_gradient": _COMMON["clip_gradient"],
            "epsilon": Param(parse_float, 1e-5, "added inside the square root"),
        },
        infer_shape=_group_adagrad_shapes,
        gradient=_no_gradient,
        inplace=((0, 0),),
        mutates=(2,),
        float_data=True,  # MXNet: "only support floating point types"
        doc="AdaGrad with one accumulator per row: g = clip(rescale_grad*grad); history += mean(g^2 over the "
        "row); weight -= lr*g/sqrt(history + epsilon).  (No weight decay, as in MXNet.)",
    )
)
