"""GroupNorm (MXNet 1.x): normalise each group of channels of each sample, then scale and shift.

The channels (axis 1) of each sample are cut into ``num_groups`` groups; each group is
normalised over its channels and spatial positions, ``(x - mean) / std`` with
``std = sqrt(var + eps)``.  As in MXNet 1.9.1, ``gamma`` and ``beta`` hold one value per
*group* (shape ``(num_groups,)``), and the hidden outputs are the mean and the std of shape
``(batch, num_groups)`` (visible with ``output_mean_var``).  One kernel for NumPy and CuPy.
"""

from __future__ import annotations

import math
from typing import Any

from ..errors import OperatorError, ShapeError
from .params import Param, parse_bool, parse_float, parse_int
from .reduce import mean_keepdims
from .registry import OpDef, merge_shape, register

_PARAMS = {
    "num_groups": Param(parse_int, 1, "number of channel groups"),
    "eps": Param(parse_float, 1e-5, "added to the variance"),
    "output_mean_var": Param(parse_bool, False, "also return the mean and the std"),
}


def _check(attrs: dict, data: tuple) -> None:
    groups = attrs["num_groups"]
    if groups <= 0:
        raise OperatorError(f"GroupNorm: num_groups={groups}, expected a positive integer")
    if len(data) < 3:
        raise ShapeError(f"GroupNorm: data has shape {data}, expected at least 3-D (batch, channel, spatial...)")
    if data[1] and data[1] % groups:
        raise ShapeError(
            f"GroupNorm: data has {data[1]} channels, expected a multiple of num_groups={groups} (shape {data})"
        )


def _grouped(xp: Any, x: Any, groups: int) -> Any:
    """``x`` as (batch, groups, rest), float16 widened to float32 as MXNet accumulates."""
    work = x.astype(xp.float32) if x.dtype == xp.float16 else x
    return work.reshape(x.shape[0], groups, math.prod(x.shape[1:]) // groups)  # (an empty batch names its sizes)


def _statistics(xp: Any, x: Any, attrs: dict) -> tuple[Any, Any, Any]:
    """``mean``, ``x - mean`` and ``std`` of each group, as (batch, groups, 1) and (batch, groups, rest)."""
    grouped = _grouped(xp, x, attrs["num_groups"])
    mean = mean_keepdims(xp, grouped, (2,))
    centred = grouped - mean
    return mean, centred, xp.sqrt(mean_keepdims(xp, centred * centred, (2,)) + attrs["eps"])


def _forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    x, gamma, beta = inputs
    out, mean, std = outputs
    _check(attrs, x.shape)
    group_mean, centred, group_std = _statistics(kctx.xp, x, attrs)
    mean[...] = group_mean[..., 0]
    std[...] = group_std[..., 0]
    normalised = centred / group_std * gamma[None, :, None] + beta[None, :, None]
    out[...] = normalised.reshape(x.shape)


def _backward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    # the statistics are taken again from x in the working precision, as LayerNorm's backward does
    dy, x, gamma, _mean, _std = inputs
    data_grad, gamma_grad, beta_grad = outputs
    _, centred, std = _statistics(kctx.xp, x, attrs)
    xhat = centred / std
    dy = _grouped(kctx.xp, dy, attrs["num_groups"])
    scaled = dy * gamma[None, :, None]
    mean_scaled = mean_keepdims(kctx.xp, scaled, (2,))
    mean_scaled_xhat = mean_keepdims(kctx.xp, scaled * xhat, (2,))
    if data_grad is not None:
        data_grad[...] = ((scaled - mean_scaled - xhat * mean_scaled_xhat) / std).reshape(x.shape)
    if gamma_grad is not None:
        gamma_grad[...] = (dy * xhat).sum(axis=(0, 2))
    if beta_grad is not None:
        beta_grad[...] = dy.sum(axis=(0, 2))


def _infer(attrs: dict, in_shapes: list, aux_shapes: list) -> tuple[list, list, list]:
    groups = attrs["num_groups"]
    data = in_shapes[0]
    if data is not None:
        _check(attrs, tuple(data))
    for i, name in ((1, "gamma"), (2, "beta")):
        try:
            in_shapes[i] = merge_shape("GroupNorm", name, in_shapes[i], (groups,))
        except ShapeError as error:
            raise ShapeError(f"{error} (MXNet 1.x GroupNorm has one {name} per group, not per channel)") from None
    if data is None:
        return in_shapes, [None, None, None], aux_shapes
    data = tuple(data)
    stats = (data[0], groups)
    return in_shapes, [data, stats, stats], aux_shapes


def _gradient(F: Any, attrs: dict, inputs: list, outputs: list, out_grads: list) -> list:
    return list(F._backward_GroupNorm(out_grads[0], inputs[0], inputs[1], outputs[1], outputs[2], **attrs))


register(
    OpDef(
        "GroupNorm",
        _forward,
        inputs=("data", "gamma", "beta"),
        outputs=("output", "mean", "std"),
        num_visible_outputs=lambda attrs: 3 if attrs["output_mean_var"] else 1,
        params=dict(_PARAMS),
        infer_shape=_infer,
        float_data=True,
        gradient=_gradient,
        doc="Normalise each of ``num_groups`` groups of channels per sample, then scale by gamma and "
        "shift by beta (one value per group, as MXNet 1.x).",
    )
)
register(
    OpDef(
        "_backward_GroupNorm",
        _backward,
        inputs=("out_grad", "data", "gamma", "mean", "std"),
        outputs=("data_grad", "gamma_grad", "beta_grad"),
        params=dict(_PARAMS),
        optional_outputs=True,
        infer_shape=lambda attrs, s, a: (s, [s[1], s[2], s[2]], a),
        doc="Gradients of GroupNorm with respect to data, gamma and beta.",
    )
)
