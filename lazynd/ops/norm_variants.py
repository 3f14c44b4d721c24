"""Operators that are BatchNorm under other names and parameter sets: MXNet 0.9's ``BatchNorm_v1``,
and MXNet 1.x's ``contrib`` ``SyncBatchNorm`` and ``BatchNormWithReLU``.

Each runs :mod:`~lazynd.ops.norm`'s kernels and shape rules with its parameters completed by
BatchNorm's defaults (channel axis 1).  The differences are MXNet's:

- ``BatchNorm_v1`` and ``SyncBatchNorm`` give the **variance** as their ``var`` output (the
  batch's in training, the moving one otherwise), where BatchNorm gives the inverse standard
  deviation; their gradients recover that from the variance.
- ``SyncBatchNorm`` takes ``ndev`` and ``key`` (the devices whose batches are pooled, and the
  layer's rendezvous name).  On one device it is BatchNorm; ``ndev`` above 1 is refused, since
  nothing here pools statistics across devices (MXNet would wait for the other devices).
- ``BatchNormWithReLU`` is ``relu(BatchNorm(...))``, its ``var`` the inverse std as BatchNorm's;
  the ReLU's mask (output > 0) is applied to the head gradient before BatchNorm's gradient.
  Like BatchNorm, it accepts ``min_calib_range``/``max_calib_range`` (quantisation calibration), unused.
"""

from __future__ import annotations

from typing import Any

from ..errors import OperatorError
from .norm import BN_PARAMS, BN_STRUCTURE, _bn_forward, _bn_infer, _bn_types
from .params import Param, parse_int, parse_str
from .registry import OpDef, register

_V1_NAMES = ("eps", "momentum", "fix_gamma", "use_global_stats", "output_mean_var")
V1_PARAMS = {name: BN_PARAMS[name] for name in _V1_NAMES}
SYNC_PARAMS = {
    **V1_PARAMS,
    "ndev": Param(parse_int, 1, "the number of devices whose batches are pooled (1 here)"),
    "key": Param(parse_str, doc="the layer's synchronisation key"),
}
RELU_PARAMS = dict(BN_PARAMS)


def batch_norm_attrs(attrs: dict) -> dict:
    """BatchNorm's parameters for a variant's ``attrs`` (those it lacks take BatchNorm's defaults)."""
    return {name: attrs.get(name, param.default) for name, param in BN_PARAMS.items()}


def _check_devices(name: str, attrs: dict) -> None:
    if attrs.get("ndev", 1) != 1:
        raise OperatorError(
            f"{name}: ndev={attrs['ndev']}, but lazynd pools no batch statistics across devices; "
            "expected ndev=1 (one device, where it is BatchNorm)"
        )


def _variant(
    name: str,
    params: dict[str, Param],
    *,
    variance_out: bool,
    relu: bool,
    doc: str,
    positional_inputs: tuple[str, ...] | None = None,
) -> OpDef:
    def infer_shape(attrs: dict, in_shapes: list, aux_shapes: list) -> tuple[list, list, list]:
        _check_devices(name, attrs)
        return _bn_infer(batch_norm_attrs(attrs), in_shapes, aux_shapes, name)

    def forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
        bn = batch_norm_attrs(attrs)
        _bn_forward(kctx, bn, inputs, outputs, aux)
        out, _, var = outputs
        if relu:
            kctx.xp.maximum(out, out.dtype.type(0), out=out)
        if variance_out:  # BatchNorm's kernel leaves 1 / sqrt(variance + eps) there
            var[...] = 1.0 / (var * var) - var.dtype.type(bn["eps"])

    def gradient(F: Any, attrs: dict, inputs: list, outputs: list, out_grads: list) -> list:
        bn = batch_norm_attrs(attrs)
        head, mean, var = out_grads[0], outputs[1], outputs[2]
        if relu:
            head = F._mul(head, F._greater_scalar(outputs[0], scalar=0.0))
        invstd = F.rsqrt(F._plus_scalar(var, scalar=bn["eps"])) if variance_out else var
        return list(F._backward_BatchNorm(head, inputs[0], inputs[1], mean, invstd, **bn))

    return OpDef(
        name,
        forward,
        **BN_STRUCTURE,
        params=dict(params),
        infer_shape=infer_shape,
        infer_type=lambda attrs, in_types, aux_types: _bn_types(batch_norm_attrs(attrs), in_types, aux_types, name),
        gradient=gradient,
        positional_inputs=positional_inputs,
        doc=doc,
    )


register(
    _variant(
        "BatchNorm_v1",
        V1_PARAMS,
        variance_out=True,
        relu=False,
        positional_inputs=("data", "gamma", "beta"),  # MXNet's legacy operator: eps follows them
        doc="MXNet 0.9's BatchNorm (channel axis 1; ``var`` is the variance).",
    )
)
register(
    _variant(
        "_contrib_SyncBatchNorm",
        SYNC_PARAMS,
        variance_out=True,
        relu=False,
        doc="BatchNorm over the batches of ``ndev`` devices: BatchNorm on one (``mx.nd.contrib.SyncBatchNorm``).",
    )
)
register(
    _variant(
        "_contrib_BatchNormWithReLU",
        RELU_PARAMS,
        variance_out=False,
        relu=True,
        doc="``relu(BatchNorm(...))`` (``mx.nd.contrib.BatchNormWithReLU``).",
    )
)
