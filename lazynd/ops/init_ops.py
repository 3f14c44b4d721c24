"""Operators that fill a new array (usable in graphs): ``_zeros``, ``_ones``, ``_full``, ``_arange``,
``_eye`` / ``eye``, ``_linspace`` / ``linspace``, and ``zeros_like`` / ``ones_like`` (the shape and
dtype of their input).

``mx.sym.zeros``/``ones``/``arange`` build them; ``mx.nd.zeros`` and friends allocate directly.
MXNet 1.x's symbol JSON holds ``_full`` (``mx.sym.full``) and the ``*_like`` nodes.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..errors import OperatorError
from ..util import is_np_shape
from .params import (
    Param,
    optional,
    parse_bool,
    parse_context,
    parse_dtype,
    parse_float,
    parse_int,
    parse_long,
    parse_shape,
)
from .registry import OpDef, register


def _creation_params() -> dict[str, Param]:
    return {
        "shape": Param(parse_shape, (), "output shape"),
        "ctx": Param(optional(parse_context), None, "context of the output (imperative use)"),
        "dtype": Param(parse_dtype, "float32", "output dtype"),
    }


def _infer_given_shape(attrs: dict, in_shapes: list, aux_shapes: list) -> tuple[list, list, list]:
    """The ``shape`` parameter; outside ``mx.np_shape`` a -1 in it is an unknown dimension (as a 0 is),
    which the graph fills from the shapes around it (``sym.ones(shape=(-1, -1)) + x``), as MXNet 1.9.1 does."""
    shape = tuple(attrs["shape"])
    if not is_np_shape():
        shape = tuple(max(d, 0) for d in shape)
    return in_shapes, [shape], aux_shapes


def _infer_given_type(attrs: dict, in_types: list, aux_types: list) -> tuple[list, list, list]:
    return in_types, [attrs["dtype"]], aux_types


def _fill(value: float) -> Any:
    def forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
        outputs[0][...] = value

    return forward


def _no_gradient(F: Any, attrs: dict, inputs: list, outputs: list, out_grads: list) -> list:
    return []


for _name, _value in (("_zeros", 0.0), ("_ones", 1.0)):
    register(
        OpDef(
            _name,
            _fill(_value),
            inputs=(),
            params=_creation_params(),
            infer_shape=_infer_given_shape,
            infer_type=_infer_given_type,
            gradient=_no_gradient,
            creates_output=True,
            doc=f"An array of the given shape filled with {int(_value)}.",
        )
    )


def arange_length(start: float, stop: float | None, step: float, repeat: int) -> int:
    """The number of elements of ``arange(start, stop, step)`` with each repeated ``repeat`` times."""
    if step == 0:
        raise OperatorError("_arange: step must not be 0")
    if repeat < 1:
        raise OperatorError(f"_arange: repeat must be >= 1, got {repeat}")
    if stop is None:
        start, stop = 0.0, start
    steps = (stop - start) / step
    if math.isnan(steps) or math.isinf(steps):  # NaN or inf among the bounds: no count at all
        raise OperatorError(
            f"_arange: start, stop and step must be finite numbers, got start={start}, stop={stop}, step={step}"
        )
    count = max(0, math.ceil(steps)) * repeat
    if count > np.iinfo(np.int64).max:
        raise OperatorError(f"_arange: {count} elements (repeat={repeat}) are more than an array holds")
    return count


def arange_values(xp: Any, start: float, step: float, count: int, dtype: Any) -> Any:
    """``start + i * step`` for ``i < count``, as MXNet computes them: in the output dtype, so an
    integer dtype truncates ``start`` and ``step`` toward zero first (``arange(1.3, 10, 1.3)`` as
    int32 is 1, 2, 3, ..., as NumPy's too); float dtypes are computed in float64.

    Examples
    --------
    >>> import numpy as np
    >>> arange_values(np, -3.7, 2.6, 4, "int32").tolist()
    [-3, -1, 1, 3]
    """
    if np.dtype(dtype).kind in "iu":
        return int(start) + int(step) * xp.arange(count, dtype="int64")
    return start + step * xp.arange(count, dtype="float64")


def _full(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    outputs[0][...] = attrs["value"]


register(
    OpDef(
        "_full",
        _full,
        inputs=(),
        params={**_creation_params(), "value": Param(parse_float, doc="the fill value")},
        infer_shape=_infer_given_shape,
        infer_type=_infer_given_type,
        gradient=_no_gradient,
        creates_output=True,
        doc="An array of the given shape filled with ``value``.",
    )
)

for _name, _value in (("zeros_like", 0.0), ("ones_like", 1.0)):
    register(
        OpDef(
            _name,
            _fill(_value),
            shape_only_inputs=(0,),
            # the input gives only its shape and dtype: no gradient reaches it
            gradient=lambda F, attrs, inputs, outputs, out_grads: [None],
            doc=f"An array of the shape and dtype of ``data`` filled with {int(_value)}.",
        )
    )


def _arange_shape(attrs: dict, in_shapes: list, aux_shapes: list, out_shapes: list | None = None) -> tuple:
    if attrs["infer_range"] and attrs["stop"] is None:
        # MXNet 1.x: the length comes from the shape the graph infers for the output, values from start
        known = next((s for s in out_shapes or [] if s is not None and all(d > 0 for d in s)), None)
        return in_shapes, [known], aux_shapes
    return in_shapes, [(arange_length(attrs["start"], attrs["stop"], attrs["step"], attrs["repeat"]),)], aux_shapes


def _arange(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    xp = kctx.xp
    start, stop = attrs["start"], attrs["stop"]
    if stop is None and not attrs["infer_range"]:
        start, stop = 0.0, start
    values = arange_values(xp, start, attrs["step"], outputs[0].size // attrs["repeat"], outputs[0].dtype)
    outputs[0][...] = xp.repeat(values, attrs["repeat"])


register(
    OpDef(
        "_arange",
        _arange,
        inputs=(),
        params={
            "start": Param(parse_float, doc="first value (the end when stop is None)"),
            "stop": Param(optional(parse_float), None, "end, excluded"),
            "step": Param(parse_float, 1.0, "spacing"),
            "repeat": Param(parse_int, 1, "times each value is repeated"),
            # MXNet 1.x writes it into every _arange node of its symbol JSON; with stop given, it changes nothing
            "infer_range": Param(parse_bool, False, "with stop None: the length is the output's inferred shape"),
            "ctx": Param(optional(parse_context), None, "context of the output (imperative use)"),
            "dtype": Param(parse_dtype, "float32", "output dtype"),
        },
        infer_shape=_arange_shape,
        infer_type=_infer_given_type,
        gradient=_no_gradient,
        creates_output=True,
        doc="Evenly spaced values in [start, stop), each repeated ``repeat`` times.",
    )
)


def _dtype_or_float32(value: Any) -> str:
    """A dtype parameter where None means float32, as MXNet's ``nd.eye(..., dtype=None)``."""
    return "float32" if value is None else parse_dtype(value)


def _count(value: Any) -> int:
    number = parse_long(value)
    if number < 0:
        raise ValueError("expected a count >= 0")
    return number


def _eye_shape(attrs: dict, in_shapes: list, aux_shapes: list) -> tuple[list, list, list]:
    return in_shapes, [(attrs["N"], attrs["M"] or attrs["N"])], aux_shapes


def _eye(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    out = outputs[0]
    out[...] = kctx.xp.eye(out.shape[0], out.shape[1], attrs["k"], dtype=out.dtype)


register(
    OpDef(
        "_eye",
        _eye,
        inputs=(),
        params={
            "N": Param(_count, doc="number of rows"),
            "M": Param(_count, 0, "number of columns; 0 for N"),
            "k": Param(parse_long, 0, "the diagonal of ones: 0 the main one, > 0 above it, < 0 below"),
            "ctx": Param(optional(parse_context), None, "context of the output (imperative use)"),
            "dtype": Param(_dtype_or_float32, "float32", "output dtype"),
        },
        infer_shape=_eye_shape,
        infer_type=_infer_given_type,
        gradient=_no_gradient,
        creates_output=True,
        aliases=("eye",),
        doc="An N x M array (M = 0: N x N) with ones on diagonal ``k`` and zeros elsewhere.",
    )
)


def _linspace(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    # start + i * step in float64, then converted (an integer dtype truncates, as MXNet's kernel)
    out = outputs[0]
    num, start = attrs["num"], attrs["start"]
    intervals = num - 1 if attrs["endpoint"] else num
    step = (attrs["stop"] - start) / intervals if intervals > 0 else 0.0
    out[...] = start + step * kctx.xp.arange(num, dtype="float64")


register(
    OpDef(
        "_linspace",
        _linspace,
        inputs=(),
        params={
            "start": Param(parse_float, doc="the first value"),
            "stop": Param(parse_float, doc="the last value (with endpoint), else the end, excluded"),
            "num": Param(_count, doc="number of values"),
            "endpoint": Param(parse_bool, True, "whether stop is the last value"),
            "ctx": Param(optional(parse_context), None, "context of the output (imperative use)"),
            "dtype": Param(_dtype_or_float32, "float32", "output dtype"),
        },
        infer_shape=lambda attrs, in_shapes, aux_shapes: (in_shapes, [(attrs["num"],)], aux_shapes),
        infer_type=_infer_given_type,
        gradient=_no_gradient,
        creates_output=True,
        aliases=("linspace",),
        doc="``num`` evenly spaced values from ``start`` to ``stop`` (included with ``endpoint``).",
    )
)
