"""LayerNorm (MXNet 1.x): normalise over one axis, then scale by gamma and shift by beta.

``out = (x - mean) / std * gamma + beta`` with ``std = sqrt(var + eps)``, the statistics taken
along ``axis`` (the last by default) and ``gamma``/``beta`` of that axis's length.  Its hidden
outputs are the mean and the std with ``axis`` kept as length 1, as MXNet's (visible with
``output_mean_var``).  One kernel for NumPy and CuPy.
"""

from __future__ import annotations

from typing import Any

from .params import Param, parse_bool, parse_float, parse_int
from .reduce import mean_keepdims
from .registry import OpDef, merge_shape, register
from .shape import normalize_axis

_PARAMS = {
    "axis": Param(parse_int, -1, "the axis normalised over"),
    "eps": Param(parse_float, 1e-5, "added to the variance"),
    "output_mean_var": Param(parse_bool, False, "also return the mean and the std"),
}


def _along(v: Any, ndim: int, axis: int) -> Any:
    """gamma or beta shaped to broadcast along ``axis`` of an ``ndim``-D array."""
    return v.reshape((1,) * axis + (-1,) + (1,) * (ndim - axis - 1))


def _statistics(xp: Any, x: Any, axis: int, eps: float) -> tuple[Any, Any, Any]:
    """``mean``, ``x - mean`` and ``std`` along ``axis`` (kept), float16 data taken in float32 as MXNet
    accumulates: rounding the mean of values near 100 to float16 (steps of 1/16) before centring
    them threw away most of the digits of the normalised output."""
    work = x.astype(xp.float32) if x.dtype == xp.float16 else x
    mean = mean_keepdims(xp, work, (axis,))
    centred = work - mean
    return mean, centred, xp.sqrt(mean_keepdims(xp, centred * centred, (axis,)) + eps)


def _forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    x, gamma, beta = inputs
    out, mean, std = outputs
    axis = normalize_axis("LayerNorm", attrs["axis"], x.ndim)
    work_mean, centred, work_std = _statistics(kctx.xp, x, axis, attrs["eps"])
    mean[...] = work_mean
    std[...] = work_std
    out[...] = centred / work_std * _along(gamma, x.ndim, axis) + _along(beta, x.ndim, axis)


def _backward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    # the statistics are taken again from x in the working precision (the mean and std inputs are
    # rounded to float16 for float16 data)
    dy, x, gamma, _mean, _std = inputs
    data_grad, gamma_grad, beta_grad = outputs
    axis = normalize_axis("LayerNorm", attrs["axis"], x.ndim)
    others = tuple(i for i in range(x.ndim) if i != axis)
    _, centred, std = _statistics(kctx.xp, x, axis, attrs["eps"])
    xhat = centred / std
    scaled = dy * _along(gamma, x.ndim, axis)
    mean_scaled = mean_keepdims(kctx.xp, scaled, (axis,))
    mean_scaled_xhat = mean_keepdims(kctx.xp, scaled * xhat, (axis,))
    data_grad[...] = (scaled - mean_scaled - xhat * mean_scaled_xhat) / std
    # summed over every other axis (the whole batch): accumulated in float64, as MXNet's safe
    # accumulation does, since float32 sums of thousands of rows drift by 1e-4 and more
    gamma_grad[...] = (dy * xhat).sum(axis=others, dtype=kctx.xp.float64)
    beta_grad[...] = dy.sum(axis=others, dtype=kctx.xp.float64)


def _infer(attrs: dict, in_shapes: list, aux_shapes: list) -> tuple[list, list, list]:
    data = in_shapes[0]
    if data is None:
        return in_shapes, [None, None, None], aux_shapes
    data = tuple(data)
    axis = normalize_axis("LayerNorm", attrs["axis"], len(data))
    for i, name in ((1, "gamma"), (2, "beta")):
        in_shapes[i] = merge_shape("LayerNorm", name, in_shapes[i], (data[axis],), complete=True)
    stats = data[:axis] + (1,) + data[axis + 1 :]
    return in_shapes, [data, stats, stats], aux_shapes


def _gradient(F: Any, attrs: dict, inputs: list, outputs: list, out_grads: list) -> list:
    return list(F._backward_LayerNorm(out_grads[0], inputs[0], inputs[1], outputs[1], outputs[2], **attrs))


register(
    OpDef(
        "LayerNorm",
        _forward,
        inputs=("data", "gamma", "beta"),
        outputs=("output", "mean", "std"),
        num_visible_outputs=lambda attrs: 3 if attrs["output_mean_var"] else 1,
        params=dict(_PARAMS),
        infer_shape=_infer,
        float_data=True,
        gradient=_gradient,
        doc="Normalise over ``axis`` (the last by default), then scale by gamma and shift by beta.",
    )
)
register(
    OpDef(
        "_backward_LayerNorm",
        _backward,
        inputs=("out_grad", "data", "gamma", "mean", "std"),
        outputs=("data_grad", "gamma_grad", "beta_grad"),
        params=dict(_PARAMS),
        infer_shape=lambda attrs, s, a: (s, [s[1], s[2], s[2]], a),
        doc="Gradients of LayerNorm with respect to data, gamma and beta.",
    )
)
