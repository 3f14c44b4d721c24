"""moments (MXNet 1.x): the mean and the (population) variance of the data along ``axes``.

Two outputs, ``mean`` and ``var``, of the reduced shape (``axes`` kept as length 1 with
``keepdims``; a reduction over every axis without it gives shape ``(1,)``, as MXNet's).  As in
MXNet 1.9.1, ``axes`` must be given: global moments pass every axis.  Float16 data is
accumulated in float32, integer data in float64: the exact mean and variance, truncated
toward zero into the outputs (MXNet 1.9.1 takes the variance about its truncated mean, so
``[1, 3, 1, 2]`` has variance 1 there, 0 here).  One kernel for NumPy and CuPy.
"""

from __future__ import annotations

from typing import Any

from ..errors import OperatorError
from .params import Param, optional, parse_bool, parse_shape
from .reduce import mean_keepdims
from .registry import OpDef, register
from .shape import as_axes, unary_infer

_PARAMS = {
    "axes": Param(optional(parse_shape), None, "the axes reduced (required in practice, as in MXNet)"),
    "keepdims": Param(parse_bool, False, "keep the reduced axes as length 1"),
}


def reduced_axes(attrs: dict, ndim: int) -> tuple[int, ...]:
    """The sorted non-negative axes ``moments`` reduces over; OperatorError/ShapeError for bad ones."""
    if not attrs["axes"]:
        raise OperatorError(
            f"moments: axes={attrs['axes']}, expected the axes to reduce over "
            f"(for global moments pass every axis, e.g. axes={tuple(range(ndim))})"
        )
    return tuple(sorted(as_axes("moments", attrs["axes"], ndim)))


def _reduced_shape(attrs: dict, shape: tuple) -> tuple:
    axes = reduced_axes(attrs, len(shape))
    if attrs["keepdims"]:
        return tuple(1 if i in axes else d for i, d in enumerate(shape))
    kept = tuple(d for i, d in enumerate(shape) if i not in axes)
    return kept or (1,)


def _infer(attrs: dict, in_shapes: list, aux_shapes: list) -> tuple[list, list, list]:
    in_shapes, (out,), aux_shapes = unary_infer(_reduced_shape)(attrs, in_shapes, aux_shapes)
    return in_shapes, [out, out], aux_shapes


def _work(xp: Any, x: Any) -> Any:
    """``x`` in the precision its statistics are taken in."""
    if x.dtype.kind in "iub":
        return x.astype(xp.float64)
    return x.astype(xp.float32) if x.dtype == xp.float16 else x


def _forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    x = _work(kctx.xp, inputs[0])
    axes = reduced_axes(attrs, x.ndim)
    mean = mean_keepdims(kctx.xp, x, axes)
    centred = x - mean
    var = mean_keepdims(kctx.xp, centred * centred, axes)
    outputs[0][...] = mean.reshape(outputs[0].shape)
    outputs[1][...] = var.reshape(outputs[1].shape)


def _backward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    # d/dx of sum(hm * mean + hv * var) = hm / n + hv * 2 (x - mean) / n, the heads broadcast back
    mean_grad, var_grad, data = inputs
    x = _work(kctx.xp, data)
    axes = reduced_axes(attrs, x.ndim)
    kept = tuple(1 if i in axes else d for i, d in enumerate(x.shape))
    count = 1
    for a in axes:
        count *= x.shape[a]
    centred = x - mean_keepdims(kctx.xp, x, axes)
    grad = (mean_grad.reshape(kept) + 2 * var_grad.reshape(kept) * centred) / count
    outputs[0][...] = grad


def _gradient(F: Any, attrs: dict, inputs: list, outputs: list, out_grads: list) -> list:
    return [F._backward_moments(out_grads[0], out_grads[1], inputs[0], **attrs)]


register(
    OpDef(
        "moments",
        _forward,
        outputs=("output0", "output1"),
        params=dict(_PARAMS),
        infer_shape=_infer,
        gradient=_gradient,
        doc="The mean and the variance of the data along ``axes``.",
    )
)
register(
    OpDef(
        "_backward_moments",
        _backward,
        inputs=("mean_grad", "var_grad", "data"),
        params=dict(_PARAMS),
        infer_shape=lambda attrs, s, a: (s, [s[2]], a),
        infer_type=lambda attrs, t, a: (t, [t[2]], a),
        doc="Gradient of moments with respect to the data.",
    )
)
