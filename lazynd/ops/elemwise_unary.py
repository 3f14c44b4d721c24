"""Unary elementwise operators (math, rounding, trigonometry, activations), with NumPy and CUDA kernels and gradients.

Each operator is one row of a table: its NumPy kernel, its C expression for the
generated CUDA family, and its gradient written with operators of ``F``.  The
activations' gradients are small fused backward operators (``_backward_relu``...)
so the GPU runs them in one kernel.  The unary operators that take parameters
(``smooth_l1``, ``clip``, ``Cast``) are in :mod:`lazynd.ops.elemwise_unary_params`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

from ..backend.cuda.elementwise import ALL_DTYPES, FLOAT_DTYPES, ElementwiseFamily
from . import _special
from .cpu_blocks import times_factor_in_blocks
from .opdef import refuse_bool_inputs
from .registry import OpDef, register


class Unary(NamedTuple):
    kernel: Callable[[Any, Any], Any]  # (x, out) -> None, NumPy
    expr: str  # C expression in x
    grad: Callable | None  # (F, x, y, og) -> input gradient
    float_only: bool  # integer inputs are computed in float64 and stored back truncated, on both devices


def _ufunc(f: np.ufunc) -> Callable[[Any, Any], Any]:
    def kernel(x: Any, out: Any) -> None:
        if out.dtype.kind in "iub":
            # computed in floating point, stored back as the GPU kernel does ((int)rint(x))
            f(x, out=out, casting="unsafe")
        else:
            f(x, out=out)

    return kernel


def _special_kernel(f: Callable[[np.ndarray], np.ndarray]) -> Callable[[Any, Any], Any]:
    def kernel(x: Any, out: Any) -> None:
        out[...] = f(x)

    return kernel


def _round_half_away(x: Any, out: Any) -> None:
    if x.dtype.kind in "iub":
        np.copyto(out, x)
        return
    # MXNet's round is C's: halves go away from zero (NumPy's goes to even). The fraction
    # x - trunc(x) is exact; floor(|x| + 0.5) is not (0.49999997 + 0.5 rounds up to 1 in float32).
    whole = np.trunc(x)
    np.copyto(out, np.where(np.abs(x - whole) >= 0.5, whole + np.sign(x), whole))


def _rint_half_down(x: Any, out: Any) -> None:
    if x.dtype.kind in "iub":
        np.copyto(out, x)
        return
    # MXNet's rint takes the floor unless the ceiling is strictly nearer: halves go down
    low, high = np.floor(x), np.ceil(x)
    np.copyto(out, np.where(x - low <= high - x, low, high))


def _sigmoid(x: Any, out: Any) -> None:
    np.negative(x, out=out)
    np.exp(out, out=out)
    out += 1
    np.reciprocal(out, out=out)


def _softrelu(x: Any, out: Any) -> None:
    # log(1 + e^x) without overflow: NumPy's logaddexp(0, x); the CUDA row switches to x above 20
    np.logaddexp(0, x, out=out)


def _softsign(x: Any, out: Any) -> None:
    np.divide(x, 1 + np.abs(x), out=out)


def _rcbrt(x: Any, out: Any) -> None:
    np.cbrt(x, out=out)
    np.reciprocal(out, out=out)


def _logical_not(x: Any, out: Any) -> None:
    # NaN counts as true (it is not 0), as in C and MXNet
    np.copyto(out, np.equal(x, 0), casting="unsafe")


def _rsqrt(x: Any, out: Any) -> None:
    np.sqrt(x, out=out)
    np.reciprocal(out, out=out)


def _scale(factor: float) -> Callable:
    return lambda F, x, y, g: F._mul_scalar(g, scalar=factor)


def _inv_sqrt(F: Any, v: Any) -> Any:
    return F.rsqrt(v)


# every gradient is (F, x, y, og) -> input gradient
UNARY: dict[str, Unary] = {
    "negative": Unary(_ufunc(np.negative), "-x", lambda F, x, y, g: F.negative(g), False),
    "identity": Unary(lambda x, out: np.copyto(out, x), "x", lambda F, x, y, g: g, False),
    # 0 - x: the magnitude of -0.0 is +0.0, as NumPy gives (-x would keep its sign)
    "abs": Unary(_ufunc(np.absolute), "(x <= 0 ? 0 - x : x)", lambda F, x, y, g: F._mul(g, F.sign(x)), False),
    "sign": Unary(
        # NaN (neither > 0, < 0 nor == 0) stays NaN, as NumPy's sign gives
        _ufunc(np.sign),
        "(x > 0 ? 1 : (x < 0 ? -1 : (x == 0 ? 0 : x)))",
        lambda F, x, y, g: F._mul_scalar(g, scalar=0.0),
        False,
    ),
    "round": Unary(_round_half_away, "round((double)x)", None, False),
    "ceil": Unary(_ufunc(np.ceil), "ceil((double)x)", None, False),
    "floor": Unary(_ufunc(np.floor), "floor((double)x)", None, False),
    "rint": Unary(
        _rint_half_down,
        "(((double)x - floor((double)x)) <= (ceil((double)x) - (double)x) ? floor((double)x) : ceil((double)x))",
        None,
        False,
    ),
    "fix": Unary(_ufunc(np.trunc), "trunc((double)x)", None, False),
    "square": Unary(_ufunc(np.square), "x * x", lambda F, x, y, g: F._mul(g, F._mul_scalar(x, scalar=2.0)), False),
    "sqrt": Unary(_ufunc(np.sqrt), "sqrt(x)", lambda F, x, y, g: F._div(g, F._mul_scalar(y, scalar=2.0)), True),
    "rsqrt": Unary(
        _rsqrt,
        "rsqrt(x)",
        lambda F, x, y, g: F._mul(g, F._mul_scalar(F._power_scalar(y, scalar=3.0), scalar=-0.5)),
        True,
    ),
    "exp": Unary(_ufunc(np.exp), "exp(x)", lambda F, x, y, g: F._mul(g, y), True),
    "log": Unary(_ufunc(np.log), "log(x)", lambda F, x, y, g: F._div(g, x), True),
    "log10": Unary(
        _ufunc(np.log10), "log10(x)", lambda F, x, y, g: F._div(g, F._mul_scalar(x, scalar=math.log(10))), True
    ),
    "log2": Unary(_ufunc(np.log2), "log2(x)", lambda F, x, y, g: F._div(g, F._mul_scalar(x, scalar=math.log(2))), True),
    "log1p": Unary(_ufunc(np.log1p), "log1p(x)", lambda F, x, y, g: F._div(g, F._plus_scalar(x, scalar=1.0)), True),
    "expm1": Unary(_ufunc(np.expm1), "expm1(x)", lambda F, x, y, g: F._mul(g, F.exp(x)), True),
    "sin": Unary(_ufunc(np.sin), "sin(x)", lambda F, x, y, g: F._mul(g, F.cos(x)), True),
    "cos": Unary(_ufunc(np.cos), "cos(x)", lambda F, x, y, g: F.negative(F._mul(g, F.sin(x))), True),
    "tan": Unary(_ufunc(np.tan), "tan(x)", lambda F, x, y, g: F._mul(g, F._plus_scalar(F.square(y), scalar=1.0)), True),
    "arcsin": Unary(
        _ufunc(np.arcsin),
        "asin(x)",
        lambda F, x, y, g: F._mul(g, _inv_sqrt(F, F._rminus_scalar(F.square(x), scalar=1.0))),
        True,
    ),
    "arccos": Unary(
        _ufunc(np.arccos),
        "acos(x)",
        lambda F, x, y, g: F.negative(F._mul(g, _inv_sqrt(F, F._rminus_scalar(F.square(x), scalar=1.0)))),
        True,
    ),
    "arctan": Unary(
        _ufunc(np.arctan), "atan(x)", lambda F, x, y, g: F._div(g, F._plus_scalar(F.square(x), scalar=1.0)), True
    ),
    "sinh": Unary(_ufunc(np.sinh), "sinh(x)", lambda F, x, y, g: F._mul(g, F.cosh(x)), True),
    "cosh": Unary(_ufunc(np.cosh), "cosh(x)", lambda F, x, y, g: F._mul(g, F.sinh(x)), True),
    "tanh": Unary(_ufunc(np.tanh), "tanh(x)", lambda F, x, y, g: F._backward_tanh(g, y), True),
    "arcsinh": Unary(
        _ufunc(np.arcsinh),
        "asinh(x)",
        lambda F, x, y, g: F._mul(g, _inv_sqrt(F, F._plus_scalar(F.square(x), scalar=1.0))),
        True,
    ),
    "arccosh": Unary(
        _ufunc(np.arccosh),
        "acosh(x)",
        lambda F, x, y, g: F._mul(g, _inv_sqrt(F, F._minus_scalar(F.square(x), scalar=1.0))),
        True,
    ),
    "arctanh": Unary(
        _ufunc(np.arctanh), "atanh(x)", lambda F, x, y, g: F._div(g, F._rminus_scalar(F.square(x), scalar=1.0)), True
    ),
    "degrees": Unary(_ufunc(np.degrees), "x * (180.0 / 3.14159265358979323846)", _scale(180.0 / math.pi), True),
    "radians": Unary(_ufunc(np.radians), "x * (3.14159265358979323846 / 180.0)", _scale(math.pi / 180.0), True),
    "relu": Unary(
        lambda x, out: np.maximum(x, 0, out=out),
        "(x > 0 || x != x ? x : 0)",
        lambda F, x, y, g: F._backward_relu(g, y),
        False,
    ),
    "sigmoid": Unary(_sigmoid, "1 / (1 + exp(-x))", lambda F, x, y, g: F._backward_sigmoid(g, y), True),
    "softsign": Unary(_softsign, "x / (1 + (x < 0 ? -x : x))", lambda F, x, y, g: F._backward_softsign(g, x), True),
    "softrelu": Unary(_softrelu, "(x > 20 ? x : log1p(exp(x)))", lambda F, x, y, g: F._backward_softrelu(g, y), True),
    "gamma": Unary(
        _special_kernel(_special.gamma), _special.GAMMA_C, lambda F, x, y, g: F._mul(g, F._mul(y, F._digamma(x))), True
    ),
    "gammaln": Unary(_special_kernel(_special.gammaln), "lgamma(x)", lambda F, x, y, g: F._mul(g, F._digamma(x)), True),
    "_digamma": Unary(_special_kernel(_special.digamma), _special.DIGAMMA_C, None, True),
    "reciprocal": Unary(_ufunc(np.reciprocal), "1 / x", lambda F, x, y, g: F.negative(F._mul(g, F.square(y))), True),
    "cbrt": Unary(
        _ufunc(np.cbrt), "cbrt(x)", lambda F, x, y, g: F._div(g, F._mul_scalar(F.square(y), scalar=3.0)), True
    ),
    # d/dx x^(-1/3) = -y / (3 x); 1 / cbrt rather than CUDA's rcbrt, which C lacks (the emulator's host)
    "rcbrt": Unary(_rcbrt, "1 / cbrt(x)", lambda F, x, y, g: F._div(F._mul(g, y), F._mul_scalar(x, scalar=-3.0)), True),
    "erf": Unary(
        _special_kernel(lambda x: _special.erf(np, x)),
        "erf(x)",
        lambda F, x, y, g: F._mul(g, F._mul_scalar(F.exp(F.negative(F.square(x))), scalar=2 / math.sqrt(math.pi))),
        True,
    ),
    "erfinv": Unary(
        _special_kernel(lambda x: _special.erfinv(np, x)),
        _special.ERFINV_C,
        lambda F, x, y, g: F._mul(g, F._mul_scalar(F.exp(F.square(y)), scalar=math.sqrt(math.pi) / 2)),
        True,
    ),
    # 1 where x is 0, else 0 (NaN included), in x's dtype; no gradient, as in MXNet
    "logical_not": Unary(_logical_not, "(x == 0 ? 1 : 0)", None, False),
}
ALIASES = {"identity": ("_copy",), "fix": ("trunc",)}

GPU = ElementwiseFamily(
    "unary",
    "unary",
    {name: spec.expr for name, spec in UNARY.items()},
    {name: FLOAT_DTYPES if spec.float_only else ALL_DTYPES for name, spec in UNARY.items()},
)


def _make(name: str, spec: Unary) -> OpDef:
    def forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
        x, out = inputs[0], outputs[0]
        if spec.float_only and x.dtype.kind in "iub":
            out[...] = _float64_result(np, spec.kernel, x)
        else:
            spec.kernel(x, out)

    def forward_gpu(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
        x, out = inputs[0], outputs[0]
        if x.dtype.kind == "b":  # only the copy takes bools (see infer_type); the family has no bool
            out[...] = x
            return
        if spec.float_only and x.dtype.kind in "iu":  # the family has these in floating point only
            out[...] = _float64_result(kctx.xp, lambda v, r: GPU.unary(kctx.device_id, name, v, r), x)
            return
        GPU.unary(kctx.device_id, name, x, out)

    def infer_type(attrs: dict, in_types: list, aux_types: list) -> tuple[list, list, list]:
        # MXNet 1.9.1 refuses bool arrays in every unary operator but the copy ("Unknown type enum 7");
        # ``-mask`` is ``mask * -1`` there and here (int64), not ``negative``
        if name != "identity":
            refuse_bool_inputs(name, "unary operators", ("data",), in_types)
        return in_types, [in_types[0]], aux_types

    grad = spec.grad

    def gradient(F: Any, attrs: dict, inputs: list, outputs: list, out_grads: list) -> list:
        if grad is None:
            return [None]
        return [grad(F, inputs[0], outputs[0], out_grads[0])]

    return OpDef(
        name,
        forward,
        forward_gpu=forward_gpu,
        infer_type=infer_type,
        gradient=gradient,
        inplace=((0, 0),),
        aliases=ALIASES.get(name, ()),
        doc=f"Elementwise {name.lstrip('_')}.",
    )


def _float64_result(xp: Any, kernel: Callable, x: Any) -> Any:
    """A float-only function of an integer array, computed in float64 (MXNet's integers truncate
    the result when it is stored back, as NumPy's and CuPy's casts do)."""
    result = xp.empty(x.shape, dtype=xp.float64)
    kernel(x.astype(xp.float64), result)
    return result


for _name, _spec in UNARY.items():
    register(_make(_name, _spec))


# -- fused activation gradients: (out_grad, y or x) -> input gradient ---------------------------
def _backward_relu(g: Any, y: Any, out: Any) -> None:
    # MXNet's g * relu_grad(y), relu_grad 1 above 0, 0 at and below, NaN for NaN (np.heaviside says
    # the same in one pass, but runs 4x slower than these two)
    np.multiply(g, y > 0, out=out)
    np.copyto(out, y, where=np.isnan(y))


def _sigmoid_slope(y: np.ndarray, into: np.ndarray) -> None:
    np.subtract(1, y, out=into)  # y * (1 - y), in the order of the GPU's expression
    np.multiply(y, into, out=into)


def _tanh_slope(y: np.ndarray, into: np.ndarray) -> None:
    np.multiply(y, y, out=into)  # 1 - y * y
    np.subtract(1, into, out=into)


BACKWARD = {
    # g * relu_grad(y), MXNet's product: a NaN input gives a NaN gradient (a diverged value is not
    # hidden as a zero), and an infinite gradient of an unit that is off gives NaN (inf * 0)
    "_backward_relu": (_backward_relu, "a * (b > 0 ? 1 : (b != b ? b : 0))"),
    "_backward_sigmoid": (lambda g, y, out: times_factor_in_blocks(g, y, out, _sigmoid_slope), "a * b * (1 - b)"),
    "_backward_tanh": (lambda g, y, out: times_factor_in_blocks(g, y, out, _tanh_slope), "a * (1 - b * b)"),
    "_backward_softsign": (
        lambda g, x, out: np.divide(g, np.square(1 + np.abs(x)), out=out),
        "a / ((1 + (b < 0 ? -b : b)) * (1 + (b < 0 ? -b : b)))",
    ),
    # in terms of the output y: softrelu' = 1 - e^-y, softsign' = (1 - |y|)^2
    "_backward_softrelu": (lambda g, y, out: np.multiply(g, -np.expm1(-y), out=out), "a * -expm1(-b)"),
    "_backward_softsign_of_output": (
        lambda g, y, out: np.multiply(g, np.square(1 - np.abs(y)), out=out),
        "a * (1 - (b < 0 ? -b : b)) * (1 - (b < 0 ? -b : b))",
    ),
}

# the slope of each backward row in its second input: d/db of f'(b), written with F
# (b is the output y, or the input x for _backward_softsign)
BACKWARD_SLOPES: dict[str, Callable[[Any, Any], Any] | None] = {
    "_backward_relu": None,  # f'(y) = [y > 0]: flat wherever it is defined, as MXNet's
    "_backward_sigmoid": lambda F, y: F._rminus_scalar(F._mul_scalar(y, scalar=2.0), scalar=1.0),  # 1 - 2y
    "_backward_tanh": lambda F, y: F._mul_scalar(y, scalar=-2.0),  # -2y
    # -2 sign(x) / (1 + |x|)^3
    "_backward_softsign": lambda F, x: F._div(
        F._mul_scalar(F.sign(x), scalar=-2.0), F._power_scalar(F._plus_scalar(F.abs(x), scalar=1.0), scalar=3.0)
    ),
    "_backward_softrelu": lambda F, y: F.exp(F.negative(y)),  # e^-y
    # -2 sign(y) (1 - |y|)
    "_backward_softsign_of_output": lambda F, y: F._mul(
        F._mul_scalar(F.sign(y), scalar=-2.0), F._rminus_scalar(F.abs(y), scalar=1.0)
    ),
}


def backward_gradient(name: str) -> Callable[..., list]:
    """The gradient rule of backward row ``name``, ``a * f'(b)``: the incoming gradient ``h`` times
    ``f'(b)`` (the row itself) for ``a``, and ``h * a * f''`` (its slope) for ``b``: what second-order
    gradients (``autograd.grad(..., create_graph=True)``) flow through."""
    slope = BACKWARD_SLOPES[name]

    def gradient(F: Any, attrs: dict, inputs: list, outputs: list, out_grads: list) -> list:
        out_grad, data = inputs
        incoming = out_grads[0]
        of_out_grad = getattr(F, name)(incoming, data)
        if slope is None:
            return [of_out_grad, F.zeros_like(data)]
        return [of_out_grad, F._mul(F._mul(incoming, out_grad), slope(F, data))]

    return gradient


# Activation(act_type=...): the unary row of its forward, and the backward row in (out_grad, output)
# -- the one table that the Activation operator, both devices and kernel fusion read
ACTIVATIONS = {
    "relu": ("relu", "_backward_relu"),
    "sigmoid": ("sigmoid", "_backward_sigmoid"),
    "tanh": ("tanh", "_backward_tanh"),
    "softrelu": ("softrelu", "_backward_softrelu"),
    "softsign": ("softsign", "_backward_softsign_of_output"),
}
GPU_BACKWARD = ElementwiseFamily(
    "unary_backward",
    "binary",
    {name: expr for name, (_, expr) in BACKWARD.items()},
    {name: FLOAT_DTYPES for name in BACKWARD},
)


def _make_backward(name: str, kernel: Callable) -> OpDef:
    def forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
        kernel(inputs[0], inputs[1], outputs[0])

    def forward_gpu(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
        GPU_BACKWARD.binary(kctx.device_id, name, inputs[0], inputs[1], outputs[0])

    return OpDef(
        name,
        forward,
        forward_gpu=forward_gpu,
        inputs=("out_grad", "data"),
        inplace=((0, 0),),
        gradient=backward_gradient(name),
        doc=f"Gradient of {name[10:]}.",
    )


for _name, (_kernel, _expr) in BACKWARD.items():
    register(_make_backward(_name, _kernel))
