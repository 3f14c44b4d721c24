"""Softmax family: ``softmax``, ``log_softmax``, ``softmin``, ``SoftmaxActivation``, with gradients.

All of them reduce one axis of an array seen as ``(outer, n, inner)``.  The
CPU path subtracts the maximum before exponentiating, so large inputs never
overflow; the GPU path runs ``lazynd_softmax_*`` from ``kernels/softmax.cu``
(laid out by :mod:`.softmax_gpu`) for float32/float64 and the same NumPy-style code through CuPy
for other dtypes.  ``softmax_output.py`` reuses :func:`softmax_into` for ``SoftmaxOutput``.

MXNet 1.x's ``dtype`` parameter gives the output another float dtype than the input's (float64
from float32, say); the gradient then comes back in the input's dtype.  Both are computed in the
wider of the two dtypes (MXNet computes in the input's).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..backend.cuda.sources import dtype_name
from ..errors import OperatorError
from .host_reduce import SHORT_AXIS, max_along, sum_along
from .params import (
    Param,
    describes,
    dtype_among,
    enum,
    optional,
    parse_bool,
    parse_finite_float,
    parse_int,
)
from .registry import OpDef, merge_shape, register, unify_shapes
from .softmax_gpu import softmax_gpu

_KERNEL_DTYPES = ("float32", "float64")  # the dtypes softmax.cu's kernels take
_OUTPUT_DTYPE = dtype_among("float16", "float32", "float64")  # the dtype parameter's choices, as MXNet's


def _normalize_axis(op: str, axis: int, ndim: int) -> int:
    if not -ndim <= axis < ndim:
        raise OperatorError(f"{op}: axis {axis} is out of range for an input with {ndim} dimension(s)")
    return axis % ndim


def _in_common_dtype(xp: Any, arrays: tuple, out: Any) -> tuple[list, Any]:
    """``arrays`` cast to the widest of their dtypes and ``out``'s, and a buffer of that dtype to
    compute into (``out`` itself when it has it): the kernels take one dtype for all their operands."""
    dtype = np.result_type(*(a.dtype for a in arrays), out.dtype)
    cast = [a.astype(dtype, copy=False) for a in arrays]
    return cast, out if out.dtype == dtype else xp.empty(out.shape, dtype)


def softmax_into(kctx: Any, x: Any, out: Any, axis: int, temperature: float = 1.0, log: bool = False) -> None:
    """Write ``softmax(x / temperature)`` (or its log) along ``axis`` into ``out``."""
    if x.size == 0:
        return  # a zero-size axis or batch: nothing to write (a max along an empty axis has no value)
    xp = kctx.xp
    if x.dtype != out.dtype:
        (x,), work = _in_common_dtype(xp, (x,), out)
        softmax_into(kctx, x, work, axis, temperature, log)
        if work is not out:
            out[...] = work
        return
    if xp is not np and dtype_name(x.dtype) in _KERNEL_DTYPES and x.size:
        softmax_gpu(kctx, x, out, axis, temperature, log)
        return
    if temperature != 1.0:
        xp.divide(x, temperature, out=out)
        x = out
    if not log and _softmax_of_short_rows(x, out, axis):
        return
    xp.subtract(x, max_along(x, axis), out=out)
    if log:
        e = xp.exp(out)
        out -= xp.log(sum_along(e, axis))
    else:
        xp.exp(out, out=out)
        out /= sum_along(out, axis)


def _softmax_of_short_rows(x: Any, out: Any, axis: int) -> bool:
    """Write ``softmax(x)`` along a short last axis of a contiguous host float array into ``out``
    (contiguous too) from a transposed copy, each class a contiguous row; False (nothing written)
    for any other.

    NumPy reduces a short last axis slowly (:mod:`.host_reduce`): MNIST's ``(128, 10)`` logits
    took a transposed copy for the maximum and a matrix-vector product for the sum, 9.6 us in
    all; in the transposed layout the maximum, the exponentials and the sum are each one
    vectorised pass, 7.6 us with the copy back.  The sum adds the classes in order, in the
    array's precision, as the product did (the last bit may differ).
    """
    if x.__class__ is not np.ndarray or out.__class__ is not np.ndarray or x.dtype.kind != "f":
        return False
    last = x.ndim - 1
    if axis != last:
        return False
    n = x.shape[last]
    if not (1 < n <= SHORT_AXIS and x.size >= 16 * n and x.flags.c_contiguous and out.flags.c_contiguous):
        return False
    lines = np.ascontiguousarray(x.reshape(-1, n).T)  # (n, rows)
    np.subtract(lines, np.maximum.reduce(lines, axis=0), out=lines)
    np.exp(lines, out=lines)
    np.divide(lines, np.add.reduce(lines, axis=0), out=lines)
    out.reshape(-1, n)[...] = lines.T
    return True


def softmax_grad_into(
    kctx: Any, dy: Any, y: Any, dx: Any, axis: int, temperature: float = 1.0, log: bool = False
) -> None:
    """Write the input gradient of softmax (or log-softmax) given the output ``y`` and head gradient ``dy``."""
    if y.size == 0:
        return
    xp = kctx.xp
    if not dy.dtype == y.dtype == dx.dtype:
        (dy, y), work = _in_common_dtype(xp, (dy, y), dx)
        softmax_grad_into(kctx, dy, y, work, axis, temperature, log)
        if work is not dx:
            dx[...] = work
        return
    if xp is not np and dtype_name(y.dtype) in _KERNEL_DTYPES and y.size:
        softmax_gpu(kctx, dy, dx, axis, temperature, log, y=y)
        return
    if log:
        xp.multiply(xp.exp(y), sum_along(dy, axis), out=dx)
        xp.subtract(dy, dx, out=dx)
    else:
        total = sum_along(dy * y, axis)
        xp.subtract(dy, total, out=dx)
        dx *= y
    if temperature != 1.0:
        dx /= temperature


def _check_temperature(op: str, temperature: float | None) -> float:
    return 1.0 if temperature is None else temperature


@describes("double")
def _finite_double(value: Any) -> float:
    """A temperature: any finite number, as MXNet 1.9.1 takes (0 and negatives too; not NaN or inf)."""
    return parse_finite_float(value)


def _axis_checked_shape(name: str, axis_of: Any) -> Any:
    """Same-shape inference that also rejects a bad axis at call time (not later inside the kernel)."""

    def infer(
        attrs: dict, in_shapes: list, aux_shapes: list, out_shapes: list | None = None
    ) -> tuple[list, list, list]:
        shape = unify_shapes(name, [f"input {i}" for i in range(len(in_shapes))], list(in_shapes))
        if out_shapes and out_shapes[0] is not None:  # a known output gives the input's shape, as in MXNet
            shape = merge_shape(name, "output", tuple(out_shapes[0]), shape)
        if shape is not None:
            axis_of(attrs, len(shape))
        return [shape] * len(in_shapes), [shape], aux_shapes

    return infer


def _length_mask(xp: Any, length: Any, shape: tuple, axis: int) -> Any:
    """True at the positions before each line's ``length`` along ``axis`` (length has ``shape``
    without ``axis``)."""
    positions = xp.arange(shape[axis]).reshape((-1,) + (1,) * (len(shape) - axis - 1))
    return positions < xp.expand_dims(length, axis)


def _softmax_length_infer(attrs: dict, in_shapes: list, aux_shapes: list) -> tuple[list, list, list]:
    """softmax with use_length: one length per line along ``axis``, the data's shape without it."""
    data, length = in_shapes
    if data is None:
        return in_shapes, [None], aux_shapes
    axis = _normalize_axis("softmax", attrs["axis"], len(data))
    length = merge_shape("softmax", "length", length, tuple(data[:axis]) + tuple(data[axis + 1 :]))
    return [tuple(data), length], [tuple(data)], aux_shapes


def _check_length_type(in_types: list) -> None:
    length = in_types[1]
    if length is not None and not length.startswith(("int", "uint")):
        raise OperatorError(f"softmax: input 'length' has dtype {length}, expected an integer dtype (as MXNet)")


def _output_type(attrs: dict, in_types: list, aux_types: list) -> tuple[list, list, list]:
    """The ``dtype`` parameter's, else the data's; a gradient's: that of its third input, the forward's
    data, when the forward had a ``dtype``, else its output's."""
    if attrs.get("use_length"):
        _check_length_type(in_types)
    given = attrs["dtype"]
    if given is None:
        return in_types, [in_types[0]], aux_types
    return in_types, [in_types[2] if len(in_types) == 3 else given], aux_types


def _make_softmax(name: str, log: bool, negate: bool = False) -> None:
    """Register ``name`` and its backward operator; ``negate``: of ``-data`` (softmin), which is
    the softmax at the temperature's negative, forward and backward alike."""

    def temperature_of(attrs: dict) -> float:
        temperature = _check_temperature(name, attrs["temperature"])
        return -temperature if negate else temperature

    def forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
        x = inputs[0]
        axis = _normalize_axis(name, attrs["axis"], x.ndim)
        mask = None
        if attrs.get("use_length"):
            # positions past a line's length take no part and come out 0, as in MXNet
            mask = _length_mask(kctx.xp, inputs[1], x.shape, axis)
            x = kctx.xp.where(mask, x, -np.inf).astype(x.dtype, copy=False)
        # a line of length 0 is all -inf: NaN, then 0 below
        softmax_into(kctx, x, outputs[0], axis, temperature_of(attrs), log)
        if mask is not None:
            outputs[0][...] = kctx.xp.where(mask, outputs[0], 0)

    def backward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
        dy, y = inputs[:2]  # a third input, the forward's data, gives only the gradient's dtype
        axis = _normalize_axis(name, attrs["axis"], y.ndim)
        softmax_grad_into(kctx, dy, y, outputs[0], axis, temperature_of(attrs), log)

    def gradient(F: Any, attrs: dict, inputs: list, outputs: list, out_grads: list) -> list:
        # masked positions have output 0, so the usual gradient is 0 there; the length has none
        backward_op = getattr(F, f"_backward_{name}")
        params = {"axis": attrs["axis"], "temperature": attrs["temperature"]}
        if attrs["dtype"] is None:
            grad = backward_op(out_grads[0], outputs[0], **params)
        else:  # the data comes along for its dtype, the gradient's
            grad = backward_op(out_grads[0], outputs[0], inputs[0], dtype=attrs["dtype"], **params)
        return [grad, None] if attrs.get("use_length") else [grad]

    params = {
        "axis": Param(parse_int, -1, "the axis to normalise over"),
        "temperature": Param(optional(_finite_double), None, "divide the input by this before the softmax"),
        "dtype": Param(optional(_OUTPUT_DTYPE), None, "the output's dtype; None for the data's"),
    }
    what = "log of the softmax" if log else ("softmax of the negative" if negate else "softmax")
    infer = _axis_checked_shape(name, lambda attrs, ndim: _normalize_axis(name, attrs["axis"], ndim))
    forward_params = dict(params)
    if not log and not negate:  # MXNet 1.x's softmax over the first ``length`` positions of each line
        forward_params["use_length"] = Param(optional(parse_bool), False, "take a second input, each line's length")

    def infer_shape(attrs: dict, in_shapes: list, aux_shapes: list, out_shapes: list | None = None) -> tuple:
        if attrs.get("use_length"):
            return _softmax_length_infer(attrs, in_shapes, aux_shapes)
        return infer(attrs, in_shapes, aux_shapes, out_shapes)

    register(
        OpDef(
            name,
            forward,
            inputs=lambda attrs: ("data", "length") if attrs.get("use_length") else ("data",),
            # MXNet lists length before the parameters for softmax (not log_softmax, softmin)
            positional_inputs=("data", "length") if not (log or negate) else ("data",),
            params=forward_params,
            infer_shape=infer_shape,
            infer_type=_output_type,
            float_data=True,
            gradient=gradient,
            doc=f"The {what} of ``data`` along ``axis``"
            + ("" if log or negate else "; with ``use_length``, of each line's first ``length`` positions (0 after)")
            + ".",
        )
    )
    register(
        OpDef(
            f"_backward_{name}",
            backward,
            inputs=lambda attrs: ("out_grad", "output") if attrs["dtype"] is None else ("out_grad", "output", "data"),
            params=dict(params),
            infer_shape=infer,
            infer_type=_output_type,
            doc=f"Input gradient of {name} (in the dtype of ``data``, the forward's input, when it had a ``dtype``).",
        )
    )


_make_softmax("softmax", log=False)
_make_softmax("log_softmax", log=True)
_make_softmax("softmin", log=False, negate=True)


# -- SoftmaxActivation ---------------------------------------------------------------------------
def _activation_axis(op: str, mode: str, ndim: int) -> int:
    if mode == "channel":
        if ndim < 2:
            raise OperatorError(f"{op}: mode='channel' needs an input with at least 2 dimensions, got {ndim}")
        return 1
    if ndim < 1:  # MXNet 1.9.1 refuses a 0-d input too: there is no axis to normalise over
        raise OperatorError(f"{op}: mode='instance' needs an input with at least 1 dimension, got a 0-d one")
    # mode='instance' is MXNet's softmax of the data viewed as 2-D (all but the last axis, the last):
    # over the last axis, whatever the rank (MXNet 1.9.1 and 0.9 alike; its documentation's "each
    # instance" reads as all but the batch axis, which only a 2-D input gives)
    return ndim - 1


def _activation_forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    x, out = inputs[0], outputs[0]
    softmax_into(kctx, x, out, _activation_axis("SoftmaxActivation", attrs["mode"], x.ndim))


def _activation_backward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    dy, y = inputs
    axis = _activation_axis("SoftmaxActivation", attrs["mode"], y.ndim)
    softmax_grad_into(kctx, dy, y, outputs[0], axis)


_MODE = {"mode": Param(enum("instance", "channel"), "instance", "instance: over the last axis; channel: over axis 1")}

register(
    OpDef(
        "SoftmaxActivation",
        _activation_forward,
        params=dict(_MODE),
        float_data=True,
        infer_shape=_axis_checked_shape(
            "SoftmaxActivation", lambda attrs, ndim: _activation_axis("SoftmaxActivation", attrs["mode"], ndim)
        ),
        gradient=lambda F, attrs, inputs, outputs, og: [
            F._backward_SoftmaxActivation(og[0], outputs[0], mode=attrs["mode"])
        ],
        doc="Softmax per instance (over the last axis, as MXNet computes it) or per channel (over axis 1).",
    )
)
register(
    OpDef(
        "_backward_SoftmaxActivation",
        _activation_backward,
        inputs=("out_grad", "output"),
        params=dict(_MODE),
        doc="Input gradient of SoftmaxActivation.",
    )
)
