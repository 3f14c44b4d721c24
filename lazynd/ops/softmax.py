"""Softmax family: ``softmax``, ``log_softmax``, ``SoftmaxActivation``, with gradients.

All of them reduce one axis of an array seen as ``(outer, n, inner)``.  The
CPU path subtracts the maximum before exponentiating, so large inputs never
overflow; the GPU path runs ``lazynd_softmax_*`` from ``kernels/softmax.cu``
(one launch) for float32/float64 and the same NumPy-style code through CuPy
for other dtypes.  ``loss.py`` reuses :func:`softmax_into` for ``SoftmaxOutput``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..backend.cuda.sources import launch_config, load_file
from ..errors import OperatorError
from .host_reduce import max_along, sum_along
from .params import Param, enum, optional, parse_float, parse_int
from .registry import OpDef, register, unify_shapes

_KERNEL_DTYPES = ("float32", "float64")


def _normalize_axis(op: str, axis: int, ndim: int) -> int:
    if not -ndim <= axis < ndim:
        raise OperatorError(f"{op}: axis {axis} is out of range for an input with {ndim} dimension(s)")
    return axis % ndim


def _lines(shape: tuple[int, ...], axis: int) -> tuple[int, int, int]:
    outer = int(np.prod(shape[:axis], dtype=np.int64))
    inner = int(np.prod(shape[axis + 1 :], dtype=np.int64))
    return outer, shape[axis], inner


def softmax_into(kctx: Any, x: Any, out: Any, axis: int, temperature: float = 1.0, log: bool = False) -> None:
    """Write ``softmax(x / temperature)`` (or its log) along ``axis`` into ``out``."""
    xp = kctx.xp
    if xp is not np and x.dtype.name in _KERNEL_DTYPES and x.size:
        _softmax_gpu(kctx, x, out, axis, temperature, log)
        return
    if temperature != 1.0:
        xp.divide(x, temperature, out=out)
        x = out
    xp.subtract(x, max_along(x, axis), out=out)
    if log:
        e = xp.exp(out)
        out -= xp.log(sum_along(e, axis))
    else:
        xp.exp(out, out=out)
        out /= sum_along(out, axis)


def softmax_grad_into(
    kctx: Any, dy: Any, y: Any, dx: Any, axis: int, temperature: float = 1.0, log: bool = False
) -> None:
    """Write the input gradient of softmax (or log-softmax) given the output ``y`` and head gradient ``dy``."""
    xp = kctx.xp
    if xp is not np and y.dtype.name in _KERNEL_DTYPES and y.size:
        _softmax_gpu(kctx, dy, dx, axis, temperature, log, y=y)
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


ROW_THREADS = 256  # LAZYND_ROW_THREADS in softmax.cu


def _softmax_gpu(kctx: Any, x: Any, out: Any, axis: int, temperature: float, log: bool, y: Any = None) -> None:
    xp = kctx.xp
    source = load_file("softmax.cu")
    dtype = out.dtype.name
    outer, n, inner = _lines(out.shape, axis)
    target = out if out.flags.c_contiguous else xp.empty(out.shape, out.dtype)
    inv_temp = out.dtype.type(1.0 / temperature)
    x = xp.ascontiguousarray(x)
    if inner == 1:
        # the last axis: one block of ROW_THREADS per row (coalesced reads, shared-memory reductions)
        grid, block = (min(outer, 1 << 16),), (ROW_THREADS,)
        lines = (np.int64(outer), np.int64(n), inv_temp, np.int32(log))
        if y is None:
            source.function(kctx.device_id, f"lazynd_softmax_rows_{dtype}")(grid, block, (x, target, *lines))
        else:
            y = xp.ascontiguousarray(y)
            source.function(kctx.device_id, f"lazynd_softmax_grad_rows_{dtype}")(grid, block, (x, y, target, *lines))
        if target is not out:
            out[...] = target
        return
    grid, block = launch_config(outer * inner)
    if y is None:
        fn = source.function(kctx.device_id, f"lazynd_softmax_{dtype}")
        fn(grid, block, (x, target, np.int64(outer), np.int64(n), np.int64(inner), inv_temp, np.int32(log)))
    else:
        fn = source.function(kctx.device_id, f"lazynd_softmax_grad_{dtype}")
        y = xp.ascontiguousarray(y)
        fn(grid, block, (x, y, target, np.int64(outer), np.int64(n), np.int64(inner), inv_temp, np.int32(log)))
    if target is not out:
        out[...] = target


def _check_temperature(op: str, temperature: float | None) -> float:
    return 1.0 if temperature is None else temperature


def _positive(value: Any) -> float:
    number = parse_float(value)
    if not number > 0:
        raise ValueError("expected a number > 0")
    return number


def _axis_checked_shape(name: str, axis_of: Any) -> Any:
    """Same-shape inference that also rejects a bad axis at call time (not later inside the kernel)."""

    def infer(attrs: dict, in_shapes: list, aux_shapes: list) -> tuple[list, list, list]:
        shape = unify_shapes(name, [f"input {i}" for i in range(len(in_shapes))], list(in_shapes))
        if shape is not None:
            axis_of(attrs, len(shape))
        return [shape] * len(in_shapes), [shape], aux_shapes

    return infer


def _make_softmax(name: str, log: bool) -> None:
    def forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
        x = inputs[0]
        axis = _normalize_axis(name, attrs["axis"], x.ndim)
        softmax_into(kctx, x, outputs[0], axis, _check_temperature(name, attrs["temperature"]), log)

    def backward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
        dy, y = inputs
        axis = _normalize_axis(name, attrs["axis"], y.ndim)
        softmax_grad_into(kctx, dy, y, outputs[0], axis, _check_temperature(name, attrs["temperature"]), log)

    def gradient(F: Any, attrs: dict, inputs: list, outputs: list, out_grads: list) -> list:
        backward_op = getattr(F, f"_backward_{name}")
        return [backward_op(out_grads[0], outputs[0], axis=attrs["axis"], temperature=attrs["temperature"])]

    params = {
        "axis": Param(parse_int, -1, "the axis to normalise over"),
        "temperature": Param(optional(_positive), None, "divide the input by this before the softmax"),
    }
    what = "log of the softmax" if log else "softmax"
    infer = _axis_checked_shape(name, lambda attrs, ndim: _normalize_axis(name, attrs["axis"], ndim))
    register(
        OpDef(
            name,
            forward,
            params=params,
            infer_shape=infer,
            gradient=gradient,
            doc=f"The {what} of ``data`` along ``axis``.",
        )
    )
    register(
        OpDef(
            f"_backward_{name}",
            backward,
            inputs=("out_grad", "output"),
            params=dict(params),
            infer_shape=infer,
            doc=f"Input gradient of {name}.",
        )
    )


_make_softmax("softmax", log=False)
_make_softmax("log_softmax", log=True)


# -- SoftmaxActivation ---------------------------------------------------------------------------
def _activation_axis(op: str, mode: str, ndim: int) -> int:
    if mode == "channel":
        if ndim < 2:
            raise OperatorError(f"{op}: mode='channel' needs an input with at least 2 dimensions, got {ndim}")
        return 1
    return ndim - 1 if ndim < 2 else 1


def _flatten_instance(x: Any, mode: str) -> Any:
    # mode='instance' normalises over everything but the batch axis
    return x.reshape(x.shape[0], -1) if mode == "instance" and x.ndim > 2 else x


def _activation_forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    x, out = inputs[0], outputs[0]
    mode = attrs["mode"]
    axis = _activation_axis("SoftmaxActivation", mode, x.ndim)
    flat_x, flat_out = _flatten_instance(x, mode), _flatten_instance(out, mode)
    softmax_into(kctx, flat_x, flat_out, axis)
    if not out.flags.c_contiguous:  # reshape copied: write the result back
        out[...] = flat_out.reshape(out.shape)


def _activation_backward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    dy, y = inputs
    dx = outputs[0]
    mode = attrs["mode"]
    axis = _activation_axis("SoftmaxActivation", mode, y.ndim)
    flat_dx = _flatten_instance(dx, mode)
    softmax_grad_into(kctx, _flatten_instance(dy, mode), _flatten_instance(y, mode), flat_dx, axis)
    if not dx.flags.c_contiguous:
        dx[...] = flat_dx.reshape(dx.shape)


_MODE = {"mode": Param(enum("instance", "channel"), "instance", "instance: over all but axis 0; channel: over axis 1")}

register(
    OpDef(
        "SoftmaxActivation",
        _activation_forward,
        params=dict(_MODE),
        infer_shape=_axis_checked_shape(
            "SoftmaxActivation", lambda attrs, ndim: _activation_axis("SoftmaxActivation", attrs["mode"], ndim)
        ),
        gradient=lambda F, attrs, inputs, outputs, og: [
            F._backward_SoftmaxActivation(og[0], outputs[0], mode=attrs["mode"])
        ],
        doc="Softmax per instance (over all but the batch axis) or per channel (over axis 1).",
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
