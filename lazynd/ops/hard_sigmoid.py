"""hard_sigmoid (MXNet 1.x): ``clip(alpha * x + beta, 0, 1)``, a piecewise-linear sigmoid.

One kernel for NumPy and CuPy (``kctx.xp``: a multiply-add and a clip, both elementwise kernels
on the GPU); the gradient is written with registered operators.
"""

from __future__ import annotations

from typing import Any

from .params import Param, parse_float
from .registry import OpDef, register


def _forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    x, out = inputs[0], outputs[0]
    # the parameters in the data's dtype: float16 data stays float16, as in MXNet
    alpha, beta = x.dtype.type(attrs["alpha"]), x.dtype.type(attrs["beta"])
    kctx.xp.multiply(x, alpha, out=out)
    out += beta
    kctx.xp.clip(out, x.dtype.type(0), x.dtype.type(1), out=out)


def _gradient(F: Any, attrs: dict, inputs: list, outputs: list, out_grads: list) -> list:
    # alpha where the line is inside (0, 1), zero where it is clipped (at the corners too, as MXNet)
    y = outputs[0]
    inside = F._mul(F._greater_scalar(y, scalar=0.0), F._lesser_scalar(y, scalar=1.0))
    return [F._mul(out_grads[0], F._mul_scalar(inside, scalar=attrs["alpha"]))]


register(
    OpDef(
        "hard_sigmoid",
        _forward,
        params={
            "alpha": Param(parse_float, 0.2, "slope of the line"),
            "beta": Param(parse_float, 0.5, "offset of the line"),
        },
        gradient=_gradient,
        inplace=((0, 0),),
        float_data=True,
        doc="Hard sigmoid: ``max(0, min(1, alpha * x + beta))``, elementwise.",
    )
)
