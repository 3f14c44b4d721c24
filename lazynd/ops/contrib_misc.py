"""Small operators of MXNet 1.x's ``contrib`` namespace: ``allclose``, ``index_array``,
``gradientmultiplier``, ``round_ste`` and ``sign_ste``.

- ``allclose(a, b)`` is one 0-d ``uint8``: 1 when ``a == b`` or ``|a - b| <= atol + rtol * |b|``
  everywhere (NaNs equal when ``equal_nan``, MXNet's default); it has no gradient, as in MXNet.
- ``index_array(data, axes=None)`` gives, at each position of ``data``, its index along every
  axis (or along ``axes``, in that order) as ``int64``: shape ``data.shape + (len(axes),)``.
- ``gradientmultiplier(data, scalar)`` is the identity whose gradient is scaled by ``scalar``
  (a gradient reversal layer for ``scalar < 0``).
- ``round_ste`` / ``sign_ste`` round (half away from zero) / take the sign, and pass the
  gradient straight through (a gradient of one, where ``round``'s and ``sign``'s is zero).

Kernels are written once over ``kctx.xp``; gradients with registered operators.
"""

from __future__ import annotations

from typing import Any

from ..errors import OperatorError, ShapeError
from .params import Param, optional, parse_bool, parse_float, parse_shape
from .registry import OpDef, register, unify_shapes

ALLCLOSE = "_contrib_allclose"
INDEX_ARRAY = "_contrib_index_array"


# -- allclose -------------------------------------------------------------------------------------
def _allclose_infer(attrs: dict, in_shapes: list, aux_shapes: list) -> tuple[list, list, list]:
    shape = unify_shapes(ALLCLOSE, ["a", "b"], list(in_shapes))
    return [shape, shape], [()], list(aux_shapes)


def _allclose_type(attrs: dict, in_types: list, aux_types: list) -> tuple[list, list, list]:
    a, b = in_types
    if a is not None and b is not None and a != b:
        raise OperatorError(f"{ALLCLOSE}: 'b' has dtype {b}, expected {a} like 'a'")
    dtype = a or b
    return [dtype, dtype], ["uint8"], list(aux_types)


def _allclose_forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    xp = kctx.xp
    a, b = (x.astype("float64") for x in inputs)
    # equal values are close, equal infinities too (their difference is NaN), as in MXNet and NumPy
    close = (a == b) | (xp.abs(a - b) <= attrs["atol"] + attrs["rtol"] * xp.abs(b))
    if attrs["equal_nan"]:
        close |= xp.isnan(a) & xp.isnan(b)
    outputs[0][...] = bool(close.all())


register(
    OpDef(
        ALLCLOSE,
        _allclose_forward,
        inputs=("a", "b"),
        params={
            "rtol": Param(parse_float, 1e-05, "relative tolerance"),
            "atol": Param(parse_float, 1e-08, "absolute tolerance"),
            "equal_nan": Param(parse_bool, True, "whether NaNs in 'a' and 'b' at the same place compare equal"),
        },
        infer_shape=_allclose_infer,
        infer_type=_allclose_type,
        doc="1 (a 0-d uint8) when ``|a - b| <= atol + rtol * |b|`` everywhere, else 0 (``mx.nd.contrib.allclose``).",
    )
)


# -- index_array ----------------------------------------------------------------------------------
def _index_axes(attrs: dict, ndim: int) -> tuple[int, ...]:
    axes = attrs["axes"]
    if axes is None:
        return tuple(range(ndim))
    for axis in axes:
        if not -ndim <= axis < ndim:
            raise ShapeError(f"{INDEX_ARRAY}: axis {axis} in 'axes' is out of range for 'data' with {ndim} axes")
    return tuple(axis % ndim for axis in axes)


def _index_array_infer(attrs: dict, in_shapes: list, aux_shapes: list) -> tuple[list, list, list]:
    shape = in_shapes[0]
    if shape is None:
        return list(in_shapes), [None], list(aux_shapes)
    return list(in_shapes), [(*shape, len(_index_axes(attrs, len(shape))))], list(aux_shapes)


def _index_array_forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    xp, out = kctx.xp, outputs[0]
    shape = out.shape[:-1]
    for column, axis in enumerate(_index_axes(attrs, len(shape))):
        along = [1] * len(shape)
        along[axis] = shape[axis]
        out[..., column] = xp.arange(shape[axis], dtype="int64").reshape(along)


register(
    OpDef(
        INDEX_ARRAY,
        _index_array_forward,
        params={"axes": Param(optional(parse_shape), None, "the axes whose indices are given (default: all)")},
        infer_shape=_index_array_infer,
        infer_type=lambda attrs, in_types, aux_types: (list(in_types), ["int64"], list(aux_types)),
        gradient=lambda F, attrs, inputs, outputs, out_grads: [F.zeros_like(inputs[0])],
        shape_only_inputs=(0,),
        doc="The index of every position of 'data' along each of ``axes``, int64 (``mx.nd.contrib.index_array``).",
    )
)


# -- gradientmultiplier ---------------------------------------------------------------------------
def _copy_forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    if outputs[0] is not inputs[0]:
        outputs[0][...] = inputs[0]


register(
    OpDef(
        "_contrib_gradientmultiplier",
        _copy_forward,
        params={
            "scalar": Param(parse_float, 1.0, "the factor the gradient is multiplied by"),
            "is_int": Param(parse_bool, True, "accepted for MXNet compatibility; the factor is used as given"),
        },
        gradient=lambda F, attrs, inputs, outputs, out_grads: [F._mul_scalar(out_grads[0], scalar=attrs["scalar"])],
        inplace=((0, 0),),
        doc="The identity, whose gradient is multiplied by ``scalar`` (``mx.nd.contrib.gradientmultiplier``).",
    )
)


# -- round_ste / sign_ste -------------------------------------------------------------------------
def _straight_through(F: Any, attrs: dict, inputs: list, outputs: list, out_grads: list) -> list:
    return [F._copy(out_grads[0])]


def _round_forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    xp, x = kctx.xp, inputs[0]
    if x.dtype.kind != "f":
        _copy_forward(kctx, attrs, inputs, outputs, aux)
        return
    # half away from zero; the fraction x - trunc(x) is exact, floor(|x| + 0.5) is not (0.49999997)
    whole = xp.trunc(x)
    xp.copyto(outputs[0], xp.where(xp.abs(x - whole) >= 0.5, whole + xp.sign(x), whole))


def _sign_forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    kctx.xp.sign(inputs[0], out=outputs[0])


for _name, _kernel, _what in (("round_ste", _round_forward, "rounded"), ("sign_ste", _sign_forward, "sign of")):
    register(
        OpDef(
            f"_contrib_{_name}",
            _kernel,
            gradient=_straight_through,
            inplace=((0, 0),),
            takes_bool=False,
            doc=f"'data' {_what}, with the gradient passed straight through (``mx.nd.contrib.{_name}``).",
        )
    )
