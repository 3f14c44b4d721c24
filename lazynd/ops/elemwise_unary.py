"""Unary elementwise operators (math, activations), with NumPy and CUDA kernels and gradients."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from .cuda_elemwise import FLOAT_DTYPES, ElementwiseFamily
from .params import Param, parse_dtype
from .registry import OpDef, register

# name -> (NumPy kernel(x, out), C expression in x, gradient(F, x, out, og) or None, float-only)
UNARY: dict[str, tuple[Callable[[Any, Any], Any], str, Callable | None, bool]] = {
    "negative": (lambda x, out: np.negative(x, out=out), "-x", lambda F, x, y, g: F.negative(g), False),
    "abs": (lambda x, out: np.absolute(x, out=out), "(x < 0 ? -x : x)", lambda F, x, y, g: F._mul(g, F.sign(x)), False),
    "sign": (lambda x, out: np.sign(x, out=out), "(x > 0 ? 1 : (x < 0 ? -1 : 0))", None, False),
    "floor": (lambda x, out: np.floor(x, out=out), "floor((double)x)", None, False),
    "log": (lambda x, out: np.log(x, out=out), "log(x)", lambda F, x, y, g: F._div(g, x), True),
    "exp": (lambda x, out: np.exp(x, out=out), "exp(x)", lambda F, x, y, g: F._mul(g, y), True),
    "identity": (lambda x, out: np.copyto(out, x), "x", lambda F, x, y, g: g, False),
}
ALIASES = {"identity": ["_copy"]}


def _dtypes(float_only: bool) -> tuple[str, ...]:
    from .cuda_elemwise import ALL_DTYPES

    return FLOAT_DTYPES if float_only else ALL_DTYPES


GPU = ElementwiseFamily(
    "unary",
    "unary",
    {name: spec[1] for name, spec in UNARY.items()},
    {name: _dtypes(spec[3]) for name, spec in UNARY.items()},
)


def _make(name: str, kernel: Callable, grad: Callable | None) -> OpDef:
    def forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
        x, out = inputs[0], outputs[0]
        if out.dtype.kind in "iu" and x.dtype.kind in "iu" and name not in ("negative", "abs", "sign", "identity"):
            out[...] = kernel(x.astype(np.float64), None)
        else:
            kernel(x, out)

    def forward_gpu(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
        GPU.unary(kctx.device_id, name, inputs[0], outputs[0])

    gradient = None
    if grad is not None:

        def gradient(F: Any, attrs: dict, inputs: list, outputs: list, out_grads: list) -> list:
            return [grad(F, inputs[0], outputs[0], out_grads[0])]

    return OpDef(
        name,
        forward,
        forward_gpu=forward_gpu,
        gradient=gradient or (lambda F, attrs, inputs, outputs, og: [None]),
        inplace=((0, 0),),
        aliases=ALIASES.get(name, ()),
        doc=f"Elementwise {name}.",
    )


for _name, (_kernel, _expr, _grad, _float_only) in UNARY.items():
    register(_make(_name, _kernel, _grad))


# -- Cast ----------------------------------------------------------------------------------------
def _cast_forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    outputs[0][...] = inputs[0].astype(outputs[0].dtype, copy=False)


register(
    OpDef(
        "Cast",
        _cast_forward,
        params={"dtype": Param(parse_dtype, doc="the output dtype")},
        infer_type=lambda attrs, t, a: (t, [attrs["dtype"]], a),
        gradient=lambda F, attrs, inputs, outputs, og: [F.Cast(og[0], dtype=attrs["_in_dtype"])] if "_in_dtype" in attrs else [og[0]],
        aliases=("cast",),
        doc="Convert to ``dtype``.",
    )
)
