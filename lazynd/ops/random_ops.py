"""Random sampling operators (usable in graphs): uniform, normal, randint."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..errors import OperatorError
from .params import Param, optional, parse_context, parse_dtype, parse_float, parse_int, parse_shape
from .registry import OpDef, register


def _creation_params(dtype: str = "float32") -> dict[str, Param]:
    return {
        "shape": Param(parse_shape, (1,), "output shape"),
        "ctx": Param(optional(parse_context), None, "context of the output (imperative use)"),
        "dtype": Param(parse_dtype, dtype, "output dtype"),
    }


def _infer_creation(attrs: dict, in_shapes: list, aux_shapes: list) -> tuple[list, list, list]:
    return in_shapes, [tuple(attrs["shape"])], aux_shapes


def _infer_creation_type(attrs: dict, in_types: list, aux_types: list) -> tuple[list, list, list]:
    return in_types, [attrs["dtype"]], aux_types


def _gpu_draw_dtype(out: Any) -> str:
    """CuPy draws float32 or float64: float64 for a float64 output (all its bits random), float32
    for the rest (cast on store)."""
    return "float64" if out.dtype == np.float64 else "float32"


def _checked(check: Callable[[dict], None]) -> Callable[..., tuple[list, list, list]]:
    """The creation shape rule, after ``check`` of the parameters: a bad one fails at the call."""

    def infer(attrs: dict, in_shapes: list, aux_shapes: list) -> tuple[list, list, list]:
        check(attrs)
        return _infer_creation(attrs, in_shapes, aux_shapes)

    return infer


def _check_uniform(attrs: dict) -> None:
    if attrs["high"] < attrs["low"]:
        raise OperatorError(f"uniform: high ({attrs['high']}) must be >= low ({attrs['low']})")


def _check_normal(attrs: dict) -> None:
    if attrs["scale"] < 0:
        raise OperatorError(f"normal: scale must be >= 0, got {attrs['scale']}")


def _check_randint(attrs: dict) -> None:
    if attrs["high"] <= attrs["low"]:
        raise OperatorError(f"randint: high ({attrs['high']}) must be > low ({attrs['low']})")


def _uniform(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    out = outputs[0]
    low, high = attrs["low"], attrs["high"]
    if kctx.xp is np:
        out[...] = kctx.rng.uniform(low, high, out.shape)
    else:
        out[...] = kctx.rng.uniform(low, high, out.shape, dtype=_gpu_draw_dtype(out))


def _normal(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    out = outputs[0]
    if kctx.xp is np:
        out[...] = kctx.rng.normal(attrs["loc"], attrs["scale"], out.shape)
    else:
        out[...] = kctx.rng.normal(attrs["loc"], attrs["scale"], out.shape, dtype=_gpu_draw_dtype(out))


def _randint(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    out = outputs[0]
    low, high = attrs["low"], attrs["high"]
    if kctx.xp is np:
        out[...] = kctx.rng.integers(low, high, out.shape)
    else:
        out[...] = kctx.rng.randint(low, high, out.shape)


_NO_GRAD: Callable[..., list] = lambda F, attrs, inputs, outputs, og: []  # noqa: E731 - no inputs, nothing to differentiate

register(
    OpDef(
        "_random_uniform",
        _uniform,
        inputs=(),
        params={"low": Param(parse_float, 0.0), "high": Param(parse_float, 1.0), **_creation_params()},
        infer_shape=_checked(_check_uniform),
        infer_type=_infer_creation_type,
        gradient=_NO_GRAD,
        needs_random=True,
        creates_output=True,
        aliases=("uniform", "random_uniform"),
        doc="Samples from a uniform distribution on [low, high).",
    )
)
register(
    OpDef(
        "_random_normal",
        _normal,
        inputs=(),
        params={"loc": Param(parse_float, 0.0), "scale": Param(parse_float, 1.0), **_creation_params()},
        infer_shape=_checked(_check_normal),
        infer_type=_infer_creation_type,
        gradient=_NO_GRAD,
        needs_random=True,
        creates_output=True,
        aliases=("normal", "random_normal"),
        doc="Samples from a normal distribution N(loc, scale^2).",
    )
)
register(
    OpDef(
        "_random_randint",
        _randint,
        inputs=(),
        params={"low": Param(parse_int), "high": Param(parse_int), **_creation_params("int32")},
        infer_shape=_checked(_check_randint),
        infer_type=_infer_creation_type,
        gradient=_NO_GRAD,
        needs_random=True,
        creates_output=True,
        aliases=("random_randint",),
        doc="Integers drawn uniformly from [low, high).",
    )
)
