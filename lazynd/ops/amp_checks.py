"""The checks and resets MXNet 1.x's mixed-precision training runs over whole lists of gradients.

- ``multi_sum_sq(a_0, ..., num_arrays=n)``: the sum of squares of each array, as ``(n,)`` float32
  (the squared norms LARS and gradient-norm clipping need), accumulated in float32 for float16 data;
- ``all_finite(data, init_output=True)`` and ``multi_all_finite(a_0, ..., num_arrays=n,
  init_output=True)``: a ``(1,)`` float32 flag, 1 when every element is finite.  With
  ``init_output=False`` the flag is not set first: the output keeps its value and only drops to
  0 on a NaN or infinity, so one flag accumulates over several calls (``out=`` the same array);
- ``reset_arrays(a_0, ..., num_arrays=n)``: sets every array to zero, in place; no outputs.

All four take floating-point arrays only, as MXNet's do.  The kernels are array-module code,
the same lines for NumPy and CuPy, and never wait for the device: the flag is computed on it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import OperatorError
from .params import REQUIRED, Param, parse_bool, parse_positive_int
from .registry import FLOAT_TYPES, OpDef, register


def _array_names(attrs: dict) -> list[str]:
    n = attrs.get("num_arrays")
    return [f"array_{i}" for i in range(n if isinstance(n, int) and n > 0 else 1)]


def _check_float(name: str, names: list[str], in_types: list) -> None:
    for arg, t in zip(names, in_types, strict=True):
        if t is not None and t not in FLOAT_TYPES:
            raise OperatorError(
                f"{name}: input '{arg}' has dtype {t}, expected one of {', '.join(FLOAT_TYPES)} "
                "(floating-point arrays only, as in MXNet)"
            )


def _no_gradient(F: Any, attrs: dict, inputs: list, outputs: list, out_grads: list) -> list:
    return [None] * len(inputs)


def _flag_shape(attrs: dict, in_shapes: list, aux_shapes: list) -> tuple[list, list, list]:
    return in_shapes, [(1,)], aux_shapes


def _flag_type(name: str) -> Any:
    def infer_type(attrs: dict, in_types: list, aux_types: list) -> tuple[list, list, list]:
        _check_float(name, _array_names(attrs) if name.startswith("multi") else ["data"], in_types)
        return in_types, ["float32"], aux_types

    return infer_type


def _all_finite_forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    xp, flag = kctx.xp, outputs[0]
    finite = xp.stack([xp.isfinite(x).all() for x in inputs]).all() if inputs else xp.asarray(True)
    if attrs["init_output"]:
        flag[...] = finite
    else:
        # keep the flag as it is where everything is finite, 0 otherwise (also over a NaN flag)
        flag[...] = xp.where(finite, flag, xp.zeros_like(flag))


_INIT_OUTPUT = {"init_output": Param(parse_bool, True, "set the flag to 1 first (else it only drops to 0)")}

register(
    OpDef(
        "all_finite",
        _all_finite_forward,
        params=dict(_INIT_OUTPUT),
        infer_shape=_flag_shape,
        infer_type=_flag_type("all_finite"),
        gradient=_no_gradient,
        doc="A (1,) float32 flag: 1 when every element of data is finite, else 0.",
    )
)
register(
    OpDef(
        "multi_all_finite",
        _all_finite_forward,
        inputs=_array_names,
        positional_params=False,  # MXNet's f(*data, **kwargs)
        params={"num_arrays": Param(parse_positive_int, 1, "number of arrays"), **_INIT_OUTPUT},
        infer_shape=_flag_shape,
        infer_type=_flag_type("multi_all_finite"),
        gradient=_no_gradient,
        doc="A (1,) float32 flag: 1 when every element of every array is finite, else 0.",
    )
)


# -- multi_sum_sq ----------------------------------------------------------------------------------
def _sum_sq_shape(attrs: dict, in_shapes: list, aux_shapes: list) -> tuple[list, list, list]:
    return in_shapes, [(attrs["num_arrays"],)], aux_shapes


def _sum_sq_type(attrs: dict, in_types: list, aux_types: list) -> tuple[list, list, list]:
    names = _array_names(attrs)
    _check_float("multi_sum_sq", names, in_types)
    known = [(n, t) for n, t in zip(names, in_types, strict=True) if t is not None]
    for arg, t in known[1:]:
        if t != known[0][1]:
            raise OperatorError(
                f"multi_sum_sq: input '{arg}' has dtype {t}, expected {known[0][1]} like '{known[0][0]}' "
                "(one dtype for every array, as in MXNet)"
            )
    dtype = known[0][1] if known else None
    return [dtype] * len(in_types), ["float32"], aux_types


def _sum_sq_forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    xp, out = kctx.xp, outputs[0]
    for i, x in enumerate(inputs):
        # float16 is accumulated in float32; float64 in float64, then stored as float32
        flat = x.reshape(-1).astype(np.float64 if x.dtype == np.float64 else np.float32)
        out[i] = xp.dot(flat, flat)


register(
    OpDef(
        "multi_sum_sq",
        _sum_sq_forward,
        inputs=_array_names,
        positional_params=False,  # MXNet's f(*data, **kwargs)
        params={"num_arrays": Param(parse_positive_int, REQUIRED, "number of arrays")},
        infer_shape=_sum_sq_shape,
        infer_type=_sum_sq_type,
        gradient=_no_gradient,
        doc="The sum of the squares of each of num_arrays arrays, as a (num_arrays,) float32 array.",
    )
)


# -- reset_arrays ----------------------------------------------------------------------------------
def _reset_forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    for x in inputs:
        x[...] = 0


def _reset_type(attrs: dict, in_types: list, aux_types: list) -> tuple[list, list, list]:
    _check_float("reset_arrays", _array_names(attrs), in_types)
    return in_types, [], aux_types


class _ResetArrays(OpDef):
    """``reset_arrays``: an operation of side effects only, so no symbol of it is made."""

    def specialize(self, attrs: dict) -> OpDef:
        # called at symbol creation: a node without outputs is never run by an executor, which
        # would leave the arrays as they are without a word (binding one crashes MXNet 1.9.1)
        raise OperatorError(
            "reset_arrays: the operator has no outputs, so a symbol of it would never run; "
            "call mx.nd.reset_arrays on the arrays instead"
        )


register(
    _ResetArrays(
        "reset_arrays",
        _reset_forward,
        inputs=_array_names,
        positional_params=False,  # MXNet's f(*data, **kwargs)
        outputs=(),
        params={"num_arrays": Param(parse_positive_int, REQUIRED, "number of arrays")},
        infer_shape=lambda attrs, in_shapes, aux_shapes: (in_shapes, [], aux_shapes),
        infer_type=_reset_type,
        gradient=_no_gradient,
        mutates=lambda attrs: range(attrs["num_arrays"]),
        doc="Set each of num_arrays arrays to zero, in place (no outputs).",
    )
)
