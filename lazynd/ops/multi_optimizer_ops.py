"""Multi-parameter optimizer updates: one operation updates a whole list of parameters.

MXNet 1.x names and parameters::

    nd.multi_sgd_update(w0, g0, w1, g1, ..., out=[w0, w1, ...], lrs=(...), wds=(...), num_weights=n)
    nd.multi_sgd_mom_update(w0, g0, m0, w1, g1, m1, ..., out=[w0, ...], lrs=..., wds=..., momentum=0.9, num_weights=n)

Weights, gradients (and momenta) are interleaved; ``lrs`` and ``wds`` hold one value per
weight; ``rescale_grad`` and ``clip_gradient`` are shared.  Each weight gets exactly the
update of ``sgd_update`` / ``sgd_mom_update`` (the same block kernels): what the fused form
saves is the per-call cost, one engine operation and one dispatch for the whole list
instead of one per parameter, which dominates for the small layers of an MLP.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..errors import OperatorError
from .optimizer_ops import (
    _COMMON,
    _gpu_ready,
    _launch,
    _run_blocked,
    _sgd_block,
    _sgd_mom_block,
    sgd_on_host,
)
from .params import Param, parse_float, parse_float_tuple, parse_positive_int
from .registry import OpDef, merge_shape, register

# A parameter of at most SMALL_BYTES (a bias, a small layer) is updated whole with two fresh
# scratch arrays: the blocked walk's bookkeeping costs more than the update itself (about
# 3.5 us against 1.8 us for a bias of 128 floats).  Larger ones take the blocked walk and its
# reused scratch: fresh scratch of hundreds of KiB may come from mmap and fault in every page.
SMALL_BYTES = 1 << 15


_MULTI_COMMON = {
    "lrs": Param(parse_float_tuple, doc="learning rate of each weight"),
    "wds": Param(parse_float_tuple, doc="weight decay of each weight"),
    "rescale_grad": _COMMON["rescale_grad"],
    "clip_gradient": _COMMON["clip_gradient"],
    "num_weights": Param(parse_positive_int, 1, "number of weights updated"),
}


#: The parameters of a multi-weight update that hold one value per weight (``step_count``: >= 1).
PER_WEIGHT = ("lrs", "wds", "etas", "learning_rates", "step_count")


def _check_per_weight(name: str, attrs: dict, count: str = "num_weights") -> None:
    """The per-weight parameters the update has hold one value per weight, each >= 0."""
    n = attrs[count]
    for key in PER_WEIGHT:
        if key not in attrs:
            continue
        values = attrs[key]
        if len(values) != n:
            raise OperatorError(f"{name}: {key} has {len(values)} value(s), expected {count}={n}")
        low = 1 if key == "step_count" else 0
        bad = [v for v in values if not v >= low]
        if bad:
            raise OperatorError(f"{name}: {key} must be >= {low}, got {bad[0]}")


def infer_group_shapes(name: str, names: list[str], stride: int, in_shapes: list) -> tuple[list, list]:
    """Shapes of interleaved groups of ``stride`` inputs (a weight, its gradient and states), one
    shape per group: the inputs' shapes filled in, and the outputs' (one per group)."""
    out_shapes = []
    for i in range(len(names) // stride):
        shape = in_shapes[stride * i]
        for k in range(1, stride):
            shape = merge_shape(name, names[stride * i + k], in_shapes[stride * i + k], shape)
        in_shapes[stride * i : stride * (i + 1)] = [shape] * stride
        out_shapes.append(shape)
    return in_shapes, out_shapes


def _plain_sgd_on_host(attrs: dict, ins: list, outs: list) -> None:
    """multi_sgd_update on the CPU without gradient clipping: :func:`~.optimizer_ops.sgd_on_host`
    of each weight, as ``sgd_update`` runs it."""
    rescale = attrs["rescale_grad"]
    for weight, grad, out, lr, wd in zip(ins[0::2], ins[1::2], outs, attrs["lrs"], attrs["wds"], strict=True):
        sgd_on_host(weight, grad, out, lr, wd, rescale)


def group_layout(
    name: str,
    roles: tuple[str, ...],
    trailing: tuple[tuple[str, int | None], ...] = (),
    count: str = "num_weights",
) -> tuple[Callable, Callable, Callable]:
    """The input names, output names and shape rule of the multi-weight update ``name``, whose
    inputs are ``roles`` (weight, grad, states...) for each of ``attrs[count]`` weights in turn, then
    the ``trailing`` inputs, each of the given length (``None``: one value per weight), as the
    ``lrs`` and ``wds`` of MXNet's ``preloaded_multi_*`` updates or the ``rescale_grad`` of its AdamW."""
    stride = len(roles)

    def inputs(attrs: dict) -> list[str]:
        names = [f"{role}_{i}" for i in range(attrs[count]) for role in roles]
        return [*names, *(key for key, _ in trailing)]

    def outputs(attrs: dict) -> list[str]:
        return [f"output_{i}" for i in range(attrs[count])]

    def infer_shape(attrs: dict, in_shapes: list, aux_shapes: list) -> tuple[list, list, list]:
        n = attrs[count]
        _check_per_weight(name, attrs, count)
        extra = [
            merge_shape(name, key, given, (n if length is None else length,))
            for (key, length), given in zip(trailing, in_shapes[stride * n :], strict=True)
        ]
        in_shapes, out_shapes = infer_group_shapes(name, inputs(attrs)[: stride * n], stride, in_shapes[: stride * n])
        return [*in_shapes, *extra], out_shapes, aux_shapes

    return inputs, outputs, infer_shape


#: The trailing inputs of a preloaded update: each weight's learning rate and weight decay.
PRELOADED_RATES = ("lrs", "wds")
_PRELOADED_LAYOUT: tuple[tuple[str, int | None], ...] = (("lrs", None), ("wds", None))


def preloaded_params(params: dict[str, Param]) -> dict[str, Param]:
    """A multi-weight update's parameters less ``lrs`` and ``wds``, which its preloaded twin takes as inputs."""
    return {key: param for key, param in params.items() if key not in PRELOADED_RATES}


def preloaded_types(infer_type: Callable) -> Callable:
    """The type rule of a preloaded twin: ``infer_type`` for the weights' groups; ``lrs`` and ``wds``
    are float32 unless given."""

    def rule(attrs: dict, in_types: list, aux_types: list) -> tuple[list, list, list]:
        groups, out_types, aux_types = infer_type(attrs, in_types[:-2], aux_types)
        return [*groups, *[t or "float32" for t in in_types[-2:]]], out_types, aux_types

    return rule


#: ``on_device(kctx, attrs, weights' inputs, outputs, lrs, wds) -> bool``: a preloaded twin's GPU
#: launches with each weight's rates read by its kernel from the float32 arrays ``lrs`` and ``wds``;
#: False, having launched nothing, where its kernels cannot take the arrays
OnDevice = Callable[[Any, dict, list, list, Any, Any], bool]


def preloaded_forward(forward: Callable, on_device: OnDevice | None = None) -> Callable:
    """The kernel of a preloaded twin: ``on_device`` where it takes the call, else ``forward`` with
    ``lrs`` and ``wds`` read from the last two inputs on the host.  On a GPU that read is a wait
    for the device at every call, and it keeps an executor's pass from being captured into a CUDA
    graph (lazynd/backend/cuda/graphs.py): ``on_device`` leaves the rates where they are."""

    def run(kctx: Any, attrs: dict, ins: list, outs: list, aux: list) -> None:
        lrs, wds = ins[-2:]
        if (
            on_device is not None
            and kctx.xp is not np
            and all(r.dtype == np.float32 and r.flags.c_contiguous for r in (lrs, wds))
            and on_device(kctx, attrs, ins[:-2], outs, lrs, wds)
        ):
            return
        host_lrs, host_wds = (tuple(float(v) for v in array.reshape(-1).tolist()) for array in (lrs, wds))
        forward(kctx, {**attrs, "lrs": host_lrs, "wds": host_wds}, ins[:-2], outs, aux)

    return run


def register_group_update(
    name: str,
    forward: Callable,
    roles: tuple[str, ...],
    params: dict[str, Param],
    type_rule: Callable[[str], Callable],
    mutates: Callable,
    doc: str,
    on_device: OnDevice | None = None,
) -> None:
    """Register the multi-weight update ``name`` and its twin ``preloaded_<name>`` (``lrs`` and ``wds``
    given as arrays after the weights' groups; ``on_device``: see :func:`preloaded_forward`).
    ``type_rule(op_name)`` is the weights' groups' type rule of the operator registered as
    ``op_name``: its errors name the operator the user called, the twin included."""
    for preloaded in (False, True):
        op_name = f"preloaded_{name}" if preloaded else name
        inputs, outputs, infer_shape = group_layout(op_name, roles, _PRELOADED_LAYOUT if preloaded else ())
        register(
            OpDef(
                op_name,
                preloaded_forward(forward, on_device) if preloaded else forward,
                inputs=inputs,
                positional_params=False,  # MXNet's f(*data, **kwargs)
                outputs=outputs,
                params=preloaded_params(params) if preloaded else params,
                infer_shape=infer_shape,
                infer_type=preloaded_types(type_rule(op_name)) if preloaded else type_rule(op_name),
                gradient=lambda F, attrs, ins, outs, og: [None] * len(ins),
                mutates=mutates,
                float_data=True,  # MXNet: "only support floating point types"
                doc=doc
                + (" Preloaded: lrs and wds are the last two inputs, arrays of num_weights." if preloaded else ""),
            )
        )


def _make(
    name: str, per_weight: tuple[str, ...], block: Any, kernel: str, scalar_names: tuple[str, ...], doc: str
) -> None:
    stride = len(per_weight)
    inputs = group_layout(name, per_weight)[0]

    def type_rule(op_name: str) -> Callable:
        def infer_type(attrs: dict, in_types: list, aux_types: list) -> tuple[list, list, list]:
            names = inputs(attrs)
            out_types = []
            for i in range(attrs["num_weights"]):
                group = in_types[stride * i : stride * (i + 1)]
                known = [t for t in group if t is not None]
                if any(t != known[0] for t in known):
                    given = ", ".join(f"{names[stride * i + k]}={t}" for k, t in enumerate(group))
                    raise OperatorError(f"{op_name}: weight {i} and its gradient/state differ in dtype ({given})")
                dtype = known[0] if known else None
                in_types[stride * i : stride * (i + 1)] = [dtype] * stride
                out_types.append(dtype)
            return in_types, out_types, aux_types

        return infer_type

    def forward(kctx: Any, attrs: dict, ins: list, outs: list, aux: list) -> None:
        # lrs and wds were checked against num_weights by infer_shape; one dict serves every weight
        on_host = kctx.xp is np
        if on_host and stride == 2 and attrs["clip_gradient"] < 0:
            _plain_sgd_on_host(attrs, ins, outs)
            return
        params = {k: attrs[k] for k in ("rescale_grad", "clip_gradient", "momentum") if k in attrs}
        for i, (lr, wd) in enumerate(zip(attrs["lrs"], attrs["wds"], strict=True)):
            params["lr"], params["wd"] = lr, wd
            arrays = [*ins[stride * i : stride * (i + 1)], outs[i]]
            if on_host and arrays[0].nbytes <= SMALL_BYTES:
                weight = arrays[0]
                block(np, params, *arrays, np.empty_like(weight), np.empty_like(weight))
            elif _gpu_ready(kctx, arrays):
                _launch(kctx, kernel, arrays, [params[k] for k in scalar_names])
            else:
                _run_blocked(kctx, block, params, arrays)

    def on_device(kctx: Any, attrs: dict, ins: list, outs: list, lrs: Any, wds: Any) -> bool:
        groups = [[*ins[stride * i : stride * (i + 1)], outs[i]] for i in range(attrs["num_weights"])]
        if not all(_gpu_ready(kctx, arrays) for arrays in groups):
            return False
        scalars = [attrs[k] for k in scalar_names if k not in ("lr", "wd")]
        for i, arrays in enumerate(groups):
            _launch(kctx, kernel, arrays, scalars, (lrs, wds, i))
        return True

    extra = {"momentum": Param(parse_float, 0.0, "momentum")} if stride == 3 else {}
    register_group_update(
        name,
        forward,
        per_weight,
        {**_MULTI_COMMON, **extra},
        type_rule,
        # every momentum is updated in place: scheduled as a write
        lambda attrs: range(2, stride * attrs["num_weights"], stride) if stride == 3 else (),
        doc,
        on_device,
    )


_make(
    "multi_sgd_update",
    ("weight", "grad"),
    _sgd_block,
    "sgd_update",
    ("lr", "wd", "rescale_grad", "clip_gradient"),
    "sgd_update of num_weights parameters in one operation; inputs weight_i, grad_i interleaved, lrs/wds per weight.",
)
_make(
    "multi_sgd_mom_update",
    ("weight", "grad", "mom"),
    _sgd_mom_block,
    "sgd_mom_update",
    ("lr", "momentum", "wd", "rescale_grad", "clip_gradient"),
    "sgd_mom_update of num_weights parameters in one operation; inputs weight_i, grad_i, mom_i interleaved.",
)
