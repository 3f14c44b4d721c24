"""Normalisations within each sample, with no batch statistics: InstanceNorm, L2Normalization, LRN.

Each is written once with ``xp`` and runs on both backends; BatchNorm, which keeps
moving statistics and has its own CUDA kernels, is in :mod:`~lazynd.ops.norm`.
"""

from __future__ import annotations

from typing import Any

from ..errors import OperatorError, ShapeError
from .params import Param, enum, parse_float, parse_int
from .registry import OpDef, merge_shape, register


# -- InstanceNorm ----------------------------------------------------------------------------------
def _instance_stats(xp: Any, x: Any, eps: float) -> tuple[Any, Any]:
    axes = tuple(range(2, x.ndim))
    mean = x.mean(axis=axes, keepdims=True)
    inv = 1.0 / xp.sqrt(((x - mean) ** 2).mean(axis=axes, keepdims=True) + eps)
    return (x - mean) * inv, inv


def _channel(v: Any, ndim: int) -> Any:
    return v.reshape((1, -1) + (1,) * (ndim - 2))


def _instance_forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    x, gamma, beta = inputs
    xhat, _ = _instance_stats(kctx.xp, x, attrs["eps"])
    outputs[0][...] = xhat * _channel(gamma, x.ndim) + _channel(beta, x.ndim)


def _instance_backward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    dy, x, gamma = inputs
    xhat, inv = _instance_stats(kctx.xp, x, attrs["eps"])
    axes = tuple(range(2, x.ndim))
    dxhat = dy * _channel(gamma, x.ndim)
    mean_d = dxhat.mean(axis=axes, keepdims=True)
    mean_dx = (dxhat * xhat).mean(axis=axes, keepdims=True)
    outputs[0][...] = inv * (dxhat - mean_d - xhat * mean_dx)
    outputs[1][...] = (dy * xhat).sum(axis=(0, *axes))
    outputs[2][...] = dy.sum(axis=(0, *axes))


def _instance_infer(attrs: dict, in_shapes: list, aux_shapes: list) -> tuple[list, list, list]:
    data = in_shapes[0]
    if data is None:
        return in_shapes, [None], aux_shapes
    if len(data) < 3:
        raise ShapeError(f"InstanceNorm: data must have at least 3 axes (N, C, spatial...), got {tuple(data)}")
    for i, name in ((1, "gamma"), (2, "beta")):
        in_shapes[i] = merge_shape("InstanceNorm", name, in_shapes[i], (data[1],))
    return in_shapes, [tuple(data)], aux_shapes


_EPS = {"eps": Param(parse_float, 1e-3, "added to the variance")}
register(
    OpDef(
        "InstanceNorm",
        _instance_forward,
        inputs=("data", "gamma", "beta"),
        params=dict(_EPS),
        infer_shape=_instance_infer,
        gradient=lambda F, attrs, i, o, og: list(F._backward_InstanceNorm(og[0], i[0], i[1], **attrs)),
        doc="Normalise each (sample, channel) over its spatial axes, then scale by gamma and shift by beta.",
    )
)
register(
    OpDef(
        "_backward_InstanceNorm",
        _instance_backward,
        inputs=("out_grad", "data", "gamma"),
        outputs=("data_grad", "gamma_grad", "beta_grad"),
        params=dict(_EPS),
        infer_shape=lambda attrs, s, a: (s, [s[1], s[2], s[2]], a),
        doc="Gradients of InstanceNorm.",
    )
)


# -- L2Normalization -------------------------------------------------------------------------------
_L2_PARAMS = {
    "eps": Param(parse_float, 1e-10, "added to the sum of squares"),
    "mode": Param(enum("instance", "channel", "spatial"), "instance", "which axes one norm covers"),
}


def _l2_axes(mode: str, ndim: int) -> tuple[int, ...]:
    if mode == "instance":
        return tuple(range(1, ndim))
    if ndim < 2 or (mode == "spatial" and ndim < 3):
        raise ShapeError(f"L2Normalization: mode {mode} needs more axes than {ndim}")
    return (1,) if mode == "channel" else tuple(range(2, ndim))


def _l2_norm(xp: Any, x: Any, attrs: dict) -> Any:
    return xp.sqrt((x * x).sum(axis=_l2_axes(attrs["mode"], x.ndim), keepdims=True) + attrs["eps"])


def _l2_forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    x = inputs[0]
    outputs[0][...] = x / _l2_norm(kctx.xp, x, attrs)


def _l2_backward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    dy, x = inputs
    norm = _l2_norm(kctx.xp, x, attrs)
    y = x / norm
    dot = (dy * y).sum(axis=_l2_axes(attrs["mode"], x.ndim), keepdims=True)
    outputs[0][...] = (dy - y * dot) / norm


def _l2_infer(attrs: dict, in_shapes: list, aux_shapes: list) -> tuple[list, list, list]:
    if in_shapes[0] is not None:
        _l2_axes(attrs["mode"], len(in_shapes[0]))  # a mode the data has too few axes for fails at the call
    return in_shapes, [in_shapes[0]], aux_shapes


register(
    OpDef(
        "L2Normalization",
        _l2_forward,
        params=dict(_L2_PARAMS),
        infer_shape=_l2_infer,
        gradient=lambda F, attrs, i, o, og: [F._backward_L2Normalization(og[0], i[0], **attrs)],
        doc="Divide by the L2 norm over each instance, each channel vector or each spatial map.",
    )
)
register(
    OpDef(
        "_backward_L2Normalization",
        _l2_backward,
        inputs=("out_grad", "data"),
        params=dict(_L2_PARAMS),
        infer_shape=lambda attrs, s, a: (s, [s[1]], a),
        doc="Gradient of L2Normalization.",
    )
)


# -- LRN (across channels) -------------------------------------------------------------------------
_LRN_PARAMS = {
    "alpha": Param(parse_float, 1e-4, "scale of the sum of squares"),
    "beta": Param(parse_float, 0.75, "exponent"),
    "knorm": Param(parse_float, 2.0, "additive constant"),
    "nsize": Param(parse_int, doc="number of neighbouring channels summed (odd)"),
}


def _window_sum(xp: Any, a: Any, nsize: int) -> Any:
    """Sum over channels c - nsize//2 .. c + nsize//2 (clipped at the edges), by a cumulative sum."""
    half = nsize // 2
    pad = [(0, 0)] * a.ndim
    pad[1] = (half + 1, half)
    csum = xp.cumsum(xp.pad(a, pad), axis=1)
    channels = a.shape[1]
    return csum[:, nsize : nsize + channels] - csum[:, :channels]


def _lrn_scale(xp: Any, x: Any, attrs: dict) -> Any:
    return attrs["knorm"] + attrs["alpha"] / attrs["nsize"] * _window_sum(xp, x * x, attrs["nsize"])


def _lrn_infer(attrs: dict, in_shapes: list, aux_shapes: list) -> tuple[list, list, list]:
    # an even window has no centre channel; MXNet takes one, but its result follows no window of
    # the channels around each one, so lazynd refuses it (at the call)
    if attrs["nsize"] <= 0 or attrs["nsize"] % 2 == 0:
        raise OperatorError(f"LRN: nsize must be a positive odd number, got {attrs['nsize']}")
    data = in_shapes[0]
    if data is not None and len(data) < 2:
        raise ShapeError(f"LRN: data of shape {tuple(data)} has no channel axis (axis 1), expected at least 2 dims")
    return in_shapes, [data, data], aux_shapes


def _lrn_forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    x = inputs[0]
    outputs[1][...] = _lrn_scale(kctx.xp, x, attrs)
    outputs[0][...] = x * outputs[1] ** -attrs["beta"]


def _lrn_backward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    xp = kctx.xp
    dy, x = inputs
    scale = _lrn_scale(xp, x, attrs)
    b = attrs["beta"]
    spread = _window_sum(xp, dy * x * scale ** (-b - 1), attrs["nsize"])
    outputs[0][...] = dy * scale**-b - 2 * attrs["alpha"] * b / attrs["nsize"] * x * spread


register(
    OpDef(
        "LRN",
        _lrn_forward,
        # MXNet's LRN keeps each element's scale as a hidden second output, so a symbol's JSON
        # counts two outputs (node_row_ptr) and files written by either library agree
        outputs=("output", "tmp_norm"),
        num_visible_outputs=1,
        params=dict(_LRN_PARAMS),
        infer_shape=_lrn_infer,
        gradient=lambda F, attrs, i, o, og: [F._backward_LRN(og[0], i[0], **attrs)],
        doc="Local response normalisation across nsize neighbouring channels.",
    )
)
register(
    OpDef(
        "_backward_LRN",
        _lrn_backward,
        inputs=("out_grad", "data"),
        params=dict(_LRN_PARAMS),
        infer_shape=lambda attrs, s, a: (s, [s[1]], a),
        doc="Gradient of LRN.",
    )
)
