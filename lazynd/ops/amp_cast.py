"""The casts MXNet 1.x's automatic mixed precision inserts: ``amp_cast`` and ``amp_multicast``.

Both are casts that autograd passes through: a gradient comes back in its input's dtype
(``_backward_Cast``).  They differ from ``Cast`` in what they leave alone, as MXNet's do:
``amp_cast`` converts float16 and float32 data only (float64 and integer data keep their dtype), and
``amp_multicast`` brings its float16 and float32 inputs to one of those two types (float32, or
float16 with ``cast_narrow``), leaving float64 and integer inputs as they are.
"""

from __future__ import annotations

from typing import Any

from ..errors import OperatorError
from .params import REQUIRED, Param, enum, parse_bool, parse_count, parse_dtype
from .registry import OpDef, register

_AMP_DTYPES = ("float16", "float32", "float64", "int32", "int64", "int8", "uint8")
_MIXED = ("float16", "float32")  # the types amp_multicast brings together


def _cast_forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    # assignment converts as it copies (NumPy and CuPy)
    for source, target in zip(inputs, outputs, strict=True):
        target[...] = source


def _cast_back(F: Any, attrs: dict, inputs: list, outputs: list, out_grads: list) -> list:
    return [F._backward_Cast(g, x) for g, x in zip(out_grads, inputs, strict=True)]


def _amp_cast_type(attrs: dict, in_types: list, aux_types: list) -> tuple[list, list, list]:
    data = in_types[0]
    if data is None:
        return in_types, [None], aux_types
    return in_types, [attrs["dtype"] if data in _MIXED else data], aux_types


register(
    OpDef(
        "amp_cast",
        _cast_forward,
        params={"dtype": Param(lambda v: enum(*_AMP_DTYPES)(parse_dtype(v)), REQUIRED, "the target dtype")},
        infer_type=_amp_cast_type,
        gradient=_cast_back,
        doc="Convert float16 and float32 data to ``dtype`` (other data passes unchanged); gradients convert back.",
    )
)


def _multicast_count(attrs: dict) -> int:
    n = attrs.get("num_outputs")
    return n if isinstance(n, int) and n > 0 else 1  # unparsed (documentation) or refused by the shape rule


def _multicast_shape(attrs: dict, in_shapes: list, aux_shapes: list) -> tuple[list, list, list]:
    if attrs["num_outputs"] < 1:
        raise OperatorError(f"amp_multicast: num_outputs={attrs['num_outputs']} must be at least 1 (one per input)")
    return in_shapes, list(in_shapes), aux_shapes


def _multicast_type(attrs: dict, in_types: list, aux_types: list) -> tuple[list, list, list]:
    mixed = {t for t in in_types if t in _MIXED}
    if attrs["cast_narrow"]:
        target = "float16" if "float16" in mixed else "float32"
    else:
        target = "float32" if "float32" in mixed else "float16"
    return in_types, [target if t in _MIXED else t for t in in_types], aux_types


register(
    OpDef(
        "amp_multicast",
        _cast_forward,
        inputs=lambda attrs: [f"data{i}" for i in range(_multicast_count(attrs))],
        positional_params=False,  # MXNet's amp_multicast(*data, **kwargs)
        outputs=lambda attrs: [f"output{i}" for i in range(_multicast_count(attrs))],
        params={
            "num_outputs": Param(parse_count, REQUIRED, "number of inputs (and outputs)"),
            "cast_narrow": Param(parse_bool, False, "cast to the narrowest of the types instead of the widest"),
        },
        infer_shape=_multicast_shape,
        infer_type=_multicast_type,
        gradient=_cast_back,
        doc="Bring float16 and float32 inputs to one type (float32, or float16 with ``cast_narrow``).",
    )
)
