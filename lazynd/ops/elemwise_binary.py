"""Binary elementwise operators: same-shape, broadcasting and scalar forms, with gradients."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..backend.cuda.elementwise import ElementwiseFamily
from ..errors import OperatorError, ShapeError
from . import registry
from .broadcast_like import reduced_like
from .host_arithmetic import OWN_RULES, cpu_apply, fits_int64, scalar_as
from .opdef import _same_type_infer, refuse_bool_inputs
from .params import Param, parse_float
from .partial_shapes import dim_is_known
from .registry import OpDef, register

# name -> (NumPy ufunc, C expression in a and b)
ARITHMETIC = {
    "plus": (np.add, "a + b"),
    "minus": (np.subtract, "a - b"),
    "mul": (np.multiply, "a * b"),
    "div": (np.divide, "lazynd_divide(a, b)"),
    "mod": (np.mod, "lazynd_mod(a, b)"),
    "power": (np.power, "lazynd_pow(a, b)"),
    "maximum": (np.maximum, "(a > b || a != a ? a : b)"),  # NaN wins, as in NumPy
    "minimum": (np.minimum, "(a < b || a != a ? a : b)"),
    "hypot": (np.hypot, "sqrt((double)a * a + (double)b * b)"),
    "equal": (np.equal, "(a == b ? 1 : 0)"),
    "not_equal": (np.not_equal, "(a != b ? 1 : 0)"),
    "greater": (np.greater, "(a > b ? 1 : 0)"),
    "greater_equal": (np.greater_equal, "(a >= b ? 1 : 0)"),
    "lesser": (np.less, "(a < b ? 1 : 0)"),
    "lesser_equal": (np.less_equal, "(a <= b ? 1 : 0)"),
    # any value but 0 is true, NaN included (as in C and MXNet); no gradient, as comparisons
    "logical_and": (np.logical_and, "(a != 0 && b != 0 ? 1 : 0)"),
    "logical_or": (np.logical_or, "(a != 0 || b != 0 ? 1 : 0)"),
    "logical_xor": (np.logical_xor, "((a != 0) != (b != 0) ? 1 : 0)"),
}
BROADCAST_NAMES = {"plus": "add", "minus": "sub"}
REFLECTED = {"minus", "div", "mod", "power"}


def legacy_name(name: str, scalar: bool = False, reflected: bool = False) -> str:
    """MXNet 0.8's name of an operator here, which its JSON files still carry (``_Plus``, ``_Not_Equal``,
    ``_MulScalar``, ``_RMinusScalar``) and MXNet 1.x keeps as an alias."""
    words = [word.capitalize() for word in name.split("_")]
    if not scalar:
        return "_" + "_".join(words)
    return "_" + ("R" if reflected else "") + "".join(words) + "Scalar"


GPU = ElementwiseFamily("binary", "binary", {name: expr for name, (_, expr) in ARITHMETIC.items()})


def _binary_forward(name: str) -> tuple[Callable, Callable]:
    ufunc = ARITHMETIC[name][0]

    if ufunc in OWN_RULES:
        plain = ufunc is not np.mod  # a float modulo has MXNet's rule for a zero divisor

        def forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
            out = outputs[0]
            if plain and out.dtype.kind == "f":  # the common case, without a second call
                ufunc(inputs[0], inputs[1], out=out)
            else:
                cpu_apply(ufunc, inputs[0], inputs[1], out)

    else:

        def forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
            # one NumPy call for every dtype (``cpu_apply``'s rule for these): a result that
            # NumPy computes in another type (a comparison's bool) is cast into the output's
            ufunc(inputs[0], inputs[1], out=outputs[0], casting="unsafe")

    def forward_gpu(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
        GPU.binary(kctx.device_id, name, inputs[0], inputs[1], outputs[0])

    return forward, forward_gpu


def _unsigned_to_negative_power(name: str, reflected: bool, x: Any, scalar: float) -> bool:
    """Whether the call is ``x ** scalar`` with unsigned ``x`` and a negative exponent, which the
    exponent's cast to ``x``'s dtype would turn into a large positive one (-3 -> 253 for uint8)."""
    return name == "power" and not reflected and x.dtype.kind == "u" and scalar < 0


def _unsigned_negative_power(x: Any, scalar: float, out: Any) -> None:
    """``out = x ** scalar`` for unsigned ``x`` and ``scalar < 0`` on either device: ``1 / x ** n``
    truncated toward zero, as MXNet and the signed dtypes give: 1 where ``x`` is 1, else 0 (and
    ``x ** 0``, 1, for an exponent above -1, which truncates to 0 as MXNet casts it)."""
    out[...] = (x == 1) if int(scalar) else 1


def _scalar_infer_type(op_name: str) -> Callable:
    """The array's dtype, but a bool array counts as int64 (``mask + 1``, ``mask > 0``), as in MXNet 1.9.1;
    a NaN or infinite scalar with an integer (or bool) array is refused here, at the call, as it has no
    value in the array's dtype (MXNet computes with garbage: ``INT_MIN``)."""

    def infer(attrs: dict, in_types: list, aux_types: list) -> tuple[list, list, list]:
        dtype = None if in_types[0] is None else np.dtype(in_types[0])
        out = "int64" if dtype == np.bool_ else in_types[0]
        scalar = attrs.get("scalar")
        if dtype is not None and dtype.kind in "iub" and scalar is not None and not fits_int64(scalar):
            # past int64 the cast in the kernel raised OverflowError inside an EngineError at the wait
            raise OperatorError(
                f"{op_name}: the scalar {scalar} has no value in an array of {dtype.name} (expected a finite "
                "number within int64's range, or cast the array to a float dtype first)"
            )
        return in_types, [out], aux_types

    return infer


def _scalar_forward(name: str, reflected: bool) -> tuple[Callable, Callable]:
    ufunc = ARITHMETIC[name][0]
    plain = ufunc is not np.mod  # a float modulo has MXNet's rule for a zero divisor
    squares = name == "power" and not reflected  # x ** 2 is exactly x * x: np.square

    def forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
        x, out = inputs[0], outputs[0]
        s = attrs["scalar"]
        if plain and x.dtype.kind == "f":  # the common case (the output has x's dtype)
            # a Python float: NumPy computes in a float array's own dtype (NEP 50)
            if reflected:
                ufunc(s, x, out=out)
            elif squares and s == 2:  # (np.power with an array exponent has no such fast path)
                np.square(x, out=out)
            else:
                ufunc(x, s, out=out)
            return
        if _unsigned_to_negative_power(name, reflected, x, s):
            _unsigned_negative_power(x, s, out)
            return
        if x.dtype.kind != "f":
            x = x.astype(out.dtype) if x.dtype.kind == "b" else x  # as int64 (see _scalar_infer_type)
            s = scalar_as(x.dtype, s)
        if reflected:
            cpu_apply(ufunc, s, x, out)
        else:
            cpu_apply(ufunc, x, s, out)

    def forward_gpu(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
        x, out = inputs[0], outputs[0]
        x = x.astype(out.dtype) if x.dtype.kind == "b" else x
        if _unsigned_to_negative_power(name, reflected, x, attrs["scalar"]):
            _unsigned_negative_power(x, attrs["scalar"], out)
            return
        GPU.scalar(kctx.device_id, name, x, scalar_as(x.dtype, attrs["scalar"]), out, reflected)

    return forward, forward_gpu


def broadcast_shape(op: str, lhs: tuple | None, rhs: tuple | None) -> tuple | None:
    """NumPy broadcasting of two partial shapes (0 = unknown dim; a size of 0 under NumPy shape
    semantics, as in an imperative call, which broadcasts with 1 only)."""
    if lhs is None or rhs is None:
        return None
    ndim = max(len(lhs), len(rhs))
    a = (1,) * (ndim - len(lhs)) + tuple(lhs)
    b = (1,) * (ndim - len(rhs)) + tuple(rhs)
    out = []
    for x, y in zip(a, b, strict=True):
        if x == y or y == 1:
            out.append(x)
        elif x == 1:
            out.append(y)
        elif not (dim_is_known(x) and dim_is_known(y)):
            out.append(x or y)
        else:
            raise ShapeError(f"{op}: shapes {tuple(lhs)} and {tuple(rhs)} cannot be broadcast together")
    return tuple(out)


def _broadcast_infer(op: str) -> Callable:
    def infer(attrs: dict, in_shapes: list, aux_shapes: list) -> tuple[list, list, list]:
        return in_shapes, [broadcast_shape(op, in_shapes[0], in_shapes[1])], aux_shapes

    return infer


# -- gradients (written with operators of the namespace F) ---------------------------------------
def _grads(name: str, F: Any, a: Any, b: Any, out: Any, og: Any) -> list:
    if name == "plus":
        return [og, og]
    if name == "minus":
        return [og, F.negative(og)]
    if name == "mul":
        return [F._mul(og, b), F._mul(og, a)]
    if name == "div":
        return [F._div(og, b), F.negative(F._div(F._mul(og, out), b))]
    if name == "mod":
        return [og, F.negative(F._mul(og, F.floor(F._div(a, b))))]
    if name == "power":
        return [F._mul(og, F._mul(b, F._power(a, F._minus_scalar(b, scalar=1.0)))), F._mul(og, F._mul(out, F.log(a)))]
    if name == "maximum":
        return [F._mul(og, F._greater_equal(a, b)), F._mul(og, F._lesser(a, b))]
    if name == "minimum":
        return [F._mul(og, F._lesser_equal(a, b)), F._mul(og, F._greater(a, b))]
    if name == "hypot":
        return [F._mul(og, F._div(a, out)), F._mul(og, F._div(b, out))]
    return [None, None]  # comparisons and logical operators have no gradient


def _elementwise_gradient(name: str) -> Callable:
    def gradient(F: Any, attrs: dict, inputs: list, outputs: list, out_grads: list) -> list:
        return _grads(name, F, inputs[0], inputs[1], outputs[0], out_grads[0])

    return gradient


def _broadcast_gradient(name: str) -> Callable:
    def gradient(F: Any, attrs: dict, inputs: list, outputs: list, out_grads: list) -> list:
        a, b = inputs
        out, og = outputs[0], out_grads[0]
        if name in ("mul", "div", "power", "maximum", "minimum", "hypot", "mod"):
            # the elementwise rules need operands of the output's shape
            a_full, b_full = F.broadcast_like(a, out), F.broadcast_like(b, out)
            ga, gb = _grads(name, F, a_full, b_full, out, og)
        else:
            ga, gb = _grads(name, F, a, b, out, og)
        return [reduced_like(F, ga, a), reduced_like(F, gb, b)]

    return gradient


def _scalar_gradient(name: str, reflected: bool) -> Callable:
    def gradient(F: Any, attrs: dict, inputs: list, outputs: list, out_grads: list) -> list:
        x, out, og, s = inputs[0], outputs[0], out_grads[0], attrs["scalar"]
        if name in ("plus",) or (name in ("minus", "mod") and not reflected):
            return [og]
        if name == "minus":
            return [F.negative(og)]
        if name == "mul":
            return [F._mul_scalar(og, scalar=s)]
        if name == "div":
            return [F._div_scalar(og, scalar=s)] if not reflected else [F.negative(F._div(F._mul(og, out), x))]
        if name == "power":
            if reflected:
                return [F._mul_scalar(F._mul(og, out), scalar=float(np.log(s)))]
            return [F._mul(og, F._mul_scalar(F._power_scalar(x, scalar=s - 1.0), scalar=s))]
        if name == "maximum":
            return [F._mul(og, F._greater_equal_scalar(x, scalar=s))]
        if name == "minimum":
            return [F._mul(og, F._lesser_equal_scalar(x, scalar=s))]
        if name == "hypot":
            return [F._mul(og, F._div(x, out))]
        if name == "mod":
            return [F.negative(F._mul(og, F.floor(F._rdiv_scalar(x, scalar=s))))]
        return [None]

    return gradient


def _numeric_infer_type(op_name: str) -> Callable:
    """The operator's same-dtype rule, refusing bool arrays by name as MXNet 1.9.1 does."""

    def infer(attrs: dict, in_types: list, aux_types: list) -> tuple[list, list, list]:
        refuse_bool_inputs(op_name, "binary operators", ("lhs", "rhs"), in_types)
        return _same_type_infer(registry.get(op_name), attrs, in_types, aux_types)

    return infer


_INPLACE = ((0, 0),)
for _name in ARITHMETIC:
    _fwd, _fwd_gpu = _binary_forward(_name)
    _aliases = [f"elemwise_{_name}"] if _name in ("plus", "minus", "mul", "div") else []
    if _name == "plus":
        _aliases += ["_add", "elemwise_add"]
        _aliases.remove("elemwise_plus")
    if _name == "minus":
        _aliases += ["_sub", "elemwise_sub"]
        _aliases.remove("elemwise_minus")
    _aliases.append(legacy_name(_name))
    register(
        OpDef(
            f"_{_name}",
            _fwd,
            forward_gpu=_fwd_gpu,
            inputs=("lhs", "rhs"),
            infer_type=_numeric_infer_type(f"_{_name}"),
            gradient=_elementwise_gradient(_name),
            inplace=_INPLACE,
            aliases=_aliases,
            doc=f"Elementwise {_name} of two arrays of the same shape.",
        )
    )
    _bname = f"broadcast_{BROADCAST_NAMES.get(_name, _name)}"
    register(
        OpDef(
            _bname,
            _fwd,
            forward_gpu=_fwd_gpu,
            inputs=("lhs", "rhs"),
            infer_shape=_broadcast_infer(_bname),
            infer_type=_numeric_infer_type(_bname),
            gradient=_broadcast_gradient(_name),
            aliases=["broadcast_plus"] if _name == "plus" else (["broadcast_minus"] if _name == "minus" else []),
            doc=f"Elementwise {_name} with NumPy broadcasting.",
        )
    )
    for _reflected in (False, True) if _name in REFLECTED else (False,):
        _sfwd, _sfwd_gpu = _scalar_forward(_name, _reflected)
        _sname = f"_{'r' if _reflected else ''}{_name}_scalar"
        register(
            OpDef(
                _sname,
                _sfwd,
                forward_gpu=_sfwd_gpu,
                params={"scalar": Param(parse_float, doc="the scalar operand")},
                infer_type=_scalar_infer_type(_sname),
                gradient=_scalar_gradient(_name, _reflected),
                inplace=_INPLACE,
                aliases=[legacy_name(_name, scalar=True, reflected=_reflected)],
                doc=f"Elementwise {_name} of an array and a scalar{' (scalar on the left)' if _reflected else ''}.",
            )
        )


# -- _grad_add: one link of the chain the gradient pass sums many gradient terms in ---------------
# MXNet's operator of that name (lazynd_sym.passes.gradient_sum).  An operator of its own rather
# than an alias of _plus, so that elementwise fusion and the backward's step order can tell a link
# from a user's add: fused, the chain would become one kernel reading every term at once.
_fwd, _fwd_gpu = _binary_forward("plus")
register(
    OpDef(
        "_grad_add",
        _fwd,
        forward_gpu=_fwd_gpu,
        inputs=("lhs", "rhs"),
        infer_type=_numeric_infer_type("_grad_add"),
        gradient=_elementwise_gradient("plus"),
        inplace=((0, 0), (1, 0)),
        doc="Elementwise sum of two arrays of the same shape: a link of a gradient sum.",
    )
)
