"""Reductions (``sum mean prod max min nansum nanprod norm``) with their gradients, and the axis rules
(:func:`reduced_axes`, :func:`reduced_shape`) that other reducing operators share.

Shapes follow MXNet: ``axis`` is an int, a tuple or None (all axes); ``exclude``
reduces over every axis *not* listed; a reduction to a scalar has shape ``(1,)``.
On the GPU, reducing the last axis of a contiguous float array uses our row
kernels (``kernels/reduce.cu``); other cases use CuPy's single-pass reductions.  The
arg-reductions and ``cumsum``, along one axis, are in :mod:`lazynd.ops.along_axis`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from ..backend.cuda.elementwise import unaliased
from ..backend.cuda.sources import dtype_name, load_file
from ..backend.fperr import quiet_kernel
from ..errors import OperatorError
from ..util import is_np_shape
from .params import Param, describes, enum, optional, parse_axis, parse_bool
from .registry import OpDef, register

_axes_memo: dict[tuple, tuple[int, ...]] = {}
_SOURCE = load_file("reduce.cu")  # read once; each kernel compiles on first use


def reduced_axes(op: str, attrs: dict, ndim: int) -> tuple[int, ...]:
    """The sorted, non-negative axes an operator with ``axis``/``exclude`` reduces over."""
    axis = attrs.get("axis")
    try:
        memo_key = (axis, attrs.get("exclude"), ndim)
        axes = _axes_memo.get(memo_key)
    except TypeError:  # an unhashable axis (a list): worked out below
        memo_key, axes = None, None
    if axes is not None:
        return axes
    axes = _reduced_axes(op, axis, attrs.get("exclude"), ndim)
    if memo_key is not None:  # only valid answers are kept: a bad axis raises every time
        if len(_axes_memo) > 1024:
            _axes_memo.clear()
        _axes_memo[memo_key] = axes
    return axes


def _reduced_axes(op: str, axis: Any, exclude: Any, ndim: int) -> tuple[int, ...]:
    if axis is None:
        axes: tuple[int, ...] = tuple(range(ndim))
    else:
        given = (axis,) if isinstance(axis, int) else tuple(axis)
        for a in given:
            if not -ndim <= a < ndim:
                raise OperatorError(f"{op}: axis {a} is out of range for an input of {ndim} dims")
        axes = tuple(sorted({a % ndim for a in given}))
        if len(axes) != len(given):
            raise OperatorError(f"{op}: axis {axis} names an axis twice")
    if exclude and axis is not None:
        # with no axis (or ``()``, read as None) MXNet reduces every axis whatever ``exclude`` says
        axes = tuple(a for a in range(ndim) if a not in axes)
    return axes


def reduced_shape(shape: tuple, axes: tuple[int, ...], keepdims: bool) -> tuple:
    if keepdims:
        return tuple(1 if i in axes else d for i, d in enumerate(shape))
    out = tuple(d for i, d in enumerate(shape) if i not in axes)
    return out or (1,)  # MXNet has no 0-d arrays


def _refuse_empty(name: str, shape: tuple, axes: tuple[int, ...], out_size: int) -> None:
    """max and min of no elements have no answer (an empty result has nothing to compute, NumPy's rule)."""
    if name in ("max", "min") and out_size and 0 in shape:
        raise OperatorError(f"{name}: cannot reduce an empty array of shape {shape} over axes {axes}")


def _infer(name: str) -> Callable:
    def infer(attrs: dict, in_shapes: list, aux_shapes: list) -> tuple[list, list, list]:
        data = in_shapes[0]
        if data is None:
            return in_shapes, [None], aux_shapes
        axes = reduced_axes(name, attrs, len(data))
        out = reduced_shape(tuple(data), axes, attrs.get("keepdims", False))
        if is_np_shape():  # a 0 is a size (an NDArray's call), not an unknown dimension: refuse at the call
            _refuse_empty(name, tuple(data), axes, math.prod(out))
        return in_shapes, [out], aux_shapes

    return infer


def _norm(xp: Any, x: Any, axis: tuple, keepdims: bool, ord: int) -> Any:
    if ord == 1:
        return xp.sum(xp.abs(x), axis=axis, keepdims=keepdims)
    if xp is np:
        if len(axis) == x.ndim and x.flags.c_contiguous and x.dtype.kind == "f":
            # the whole array: one BLAS dot, no squared temporary (as numpy.linalg.norm does)
            flat = x.reshape(-1)
            squares = np.dot(flat, flat)
            if squares_in_range(squares):
                total = np.sqrt(squares)
                return total.reshape((1,) * x.ndim) if keepdims else total
        else:
            squares = np.sum(np.square(x), axis=axis, keepdims=keepdims)
            if squares_in_range(squares):
                return np.sqrt(squares)
    # on a device the host cannot look at the squares without waiting for them: always scaled
    return _scaled_l2_norm(xp, x, axis, keepdims)


def squares_in_range(squares: Any) -> bool:
    """Whether a sum of squares is finite and far enough above the dtype's smallest normal number
    that no square lost to underflow can matter (so its root is the norm to the dtype's precision)."""
    if squares.size == 0:
        return True
    info = np.finfo(squares.dtype)
    return bool(np.isfinite(squares).all()) and float(squares.min()) >= float(info.tiny) / float(info.eps)


def _scaled_l2_norm(xp: Any, x: Any, axis: tuple, keepdims: bool) -> Any:
    """The 2-norm as ``m * sqrt(sum((x / m) ** 2))`` with ``m`` the largest magnitude, as MXNet
    computes it: the squares of float32 data beyond 1.8e19 overflow (the norm of ``[1e30]`` was
    inf) and those below 1e-19 underflow (the norm of ``[1e-30]`` was 0)."""
    if x.size == 0:
        return xp.sqrt(xp.sum(xp.square(x), axis=axis, keepdims=keepdims))
    scale = xp.max(xp.abs(x), axis=axis, keepdims=True)
    # no scaling where the largest is 0 (the norm is 0), inf (inf) or NaN (NaN)
    scale = xp.where((scale > 0) & xp.isfinite(scale), scale, xp.ones_like(scale))
    total = scale * xp.sqrt(xp.sum(xp.square(x / scale), axis=axis, keepdims=True))
    return total if keepdims else xp.squeeze(total, axis=axis)


# name -> reduction(xp, x, axes, attrs) returning keepdims=True results
REDUCERS: dict[str, Callable[..., Any]] = {
    "sum": lambda xp, x, axes, attrs: xp.sum(x, axis=axes, keepdims=True, dtype=_acc(x)),
    "mean": lambda xp, x, axes, attrs: mean_keepdims(xp, x, axes, dtype=_acc(x)),
    "prod": lambda xp, x, axes, attrs: xp.prod(x, axis=axes, keepdims=True, dtype=_acc(x)),
    "max": lambda xp, x, axes, attrs: xp.max(x, axis=axes, keepdims=True),
    "min": lambda xp, x, axes, attrs: xp.min(x, axis=axes, keepdims=True),
    "nansum": lambda xp, x, axes, attrs: xp.nansum(x, axis=axes, keepdims=True, dtype=_acc(x)),
    "nanprod": lambda xp, x, axes, attrs: xp.nanprod(x, axis=axes, keepdims=True, dtype=_acc(x)),
    "norm": lambda xp, x, axes, attrs: _norm(xp, x.astype(_norm_acc(x), copy=False), axes, True, attrs["ord"]),
}
ALIASES = {"sum": ("sum_axis",), "max": ("max_axis",), "min": ("min_axis",)}


def mean_keepdims(xp: Any, x: Any, axes: tuple[int, ...], dtype: Any = None) -> Any:
    """The mean over ``axes`` (non-negative), keeping them: every operator's mean (LayerNorm's,
    GroupNorm's and moments' too).  With nothing to average, float data gives NaN as NumPy does,
    without its "Mean of empty slice" warning (MXNet is silent; a kernel's quiet context turns off
    floating-point errors, not warnings), and integer (and bool) data gives 0, the project's answer
    to an integer division by zero (MXNet 1.9.1 dies of SIGFPE)."""
    if x.size:
        return xp.mean(x, axis=axes, keepdims=True, dtype=dtype)
    empty = 0 if x.dtype.kind in "iub" else np.nan
    return xp.full(reduced_shape(x.shape, axes, True), empty, dtype=x.dtype if dtype is None else dtype)


def _acc(x: Any) -> Any:
    """Accumulate float16 in float32 (as MXNet does); other dtypes in their own type."""
    return np.float32 if x.dtype == np.float16 else None


def _norm_acc(x: Any) -> Any:
    """``norm`` accumulates as the others do, and integers in float64, where their squares cannot
    overflow (``100 ** 2`` wraps to 16 in int8): the result is the exact norm, truncated."""
    return np.float64 if x.dtype.kind in "iub" else (_acc(x) or x.dtype)


# reductions that are one NumPy ufunc's ``reduce``: on the CPU they skip ``keepdims``, with which
# NumPy's reduction over a leading axis measured up to 30% slower.  The result is still copied:
# reducing straight into the output (``out=``) was as often slower as faster, with the output's
# alignment
_UFUNCS = {"sum": np.add, "prod": np.multiply, "max": np.maximum, "min": np.minimum}


def _reduce_forward(name: str) -> Callable:
    reducer = REDUCERS[name]
    ufunc = _UFUNCS.get(name)

    def reduce(xp: Any, x: Any, axes: tuple[int, ...], attrs: dict) -> Any:
        if ufunc is not None and xp is np and x.dtype.kind == "f" and _acc(x) is None:
            return ufunc.reduce(x, axis=axes)
        return reducer(xp, x, axes, attrs)

    def forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
        x, out = inputs[0], outputs[0]
        axes = reduced_axes(name, attrs, x.ndim)
        _refuse_empty(name, x.shape, axes, out.size)
        out[...] = reduce(kctx.xp, x, axes, attrs).reshape(out.shape)

    if name != "norm":
        return forward

    def norm_forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
        x = inputs[0]
        if (
            kctx.xp is np
            and x.dtype.char in "fd"
            and attrs["ord"] == 2
            and attrs["axis"] is None
            and x.flags.c_contiguous
        ):
            # the common ``mx.nd.norm(x)`` of a contiguous float32/float64 array on the host: one
            # BLAS dot, no squared temporary, none of the general path's bookkeeping (axes, error
            # state, keepdims reshapes: 5 us around a 61 us dot).  The square root of the float32
            # sum in double precision rounds to float32's own square root (double has more than
            # twice float32's digits); math.sqrt skips a ufunc call on a scalar
            flat = x.ravel()
            # an overflow is handled below
            squares = flat.dot(flat)
            if squares_in_range(squares):
                outputs[0].fill(math.sqrt(squares))
                return
        forward(kctx, attrs, inputs, outputs, aux)

    return norm_forward


_ROW_KERNELS = {"sum": "sum", "mean": "sum", "max": "max", "min": "min"}


def _reduce_forward_gpu(name: str) -> Callable:
    # the array-module kernel, run quiet as OpDef runs every CPU kernel, whichever array module
    # it is given: a float16 result past its range is inf, without a warning
    cpu_style = quiet_kernel(_reduce_forward(name))

    def forward_gpu(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
        x, out = inputs[0], outputs[0]
        axes = reduced_axes(name, attrs, x.ndim)
        kernel = _ROW_KERNELS.get(name)
        rows_last = x.ndim > 0 and axes == (x.ndim - 1,) and x.size > 0
        dtype = dtype_name(x.dtype)
        if kernel and x.flags.c_contiguous and out.flags.c_contiguous and dtype in _FLOAT_NAMES:
            x = unaliased(x, out)  # out= a view of x: the kernel must not read what it already wrote
            if rows_last and (x.ndim > 1 or x.size < _WHOLE_MIN):
                cols = x.shape[-1]
                scale = 1.0 / cols if name == "mean" else 1.0
                _launch_row_reduction(kctx.device_id, kernel, x, out, x.size // cols, cols, x.size, scale)
                return
            if len(axes) == x.ndim and x.size >= _WHOLE_MIN and dtype != "float16":
                # every axis of a large array: pieces reduced by one block each, then their results
                blocks = min(_WHOLE_BLOCKS, -(-x.size // _WHOLE_MIN))
                chunk = -(-x.size // blocks)
                blocks = -(-x.size // chunk)
                partial = kctx.xp.empty(blocks, x.dtype)
                _launch_row_reduction(kctx.device_id, kernel, x, partial, blocks, chunk, x.size, 1.0)
                scale = 1.0 / x.size if name == "mean" else 1.0
                _launch_row_reduction(kctx.device_id, kernel, partial, out, 1, blocks, blocks, scale)
                return
        cpu_style(kctx, attrs, inputs, outputs, aux)

    return forward_gpu


_FLOAT_NAMES = ("float32", "float64", "float16")
_WHOLE_MIN = 1 << 16  # whole-array reductions of this many elements or more use reduce.cu (two launches)
_WHOLE_BLOCKS = 1024  # at most this many pieces, each of at least _WHOLE_MIN elements


def _launch_row_reduction(
    device_id: int, kind: str, x: Any, out: Any, rows: int, cols: int, total: int, scale: float
) -> None:
    threads = 32
    while threads < 256 and threads < cols:
        threads *= 2
    grid = (min(rows, 65535 * 8),)
    scale_value = np.float64(scale) if x.dtype == np.float64 else np.float32(scale)
    kernel = _SOURCE.function(device_id, f"lazynd_reduce_last_{kind}_{dtype_name(x.dtype)}")
    kernel(grid, (threads,), (x, out, np.int64(rows), np.int64(cols), np.int64(total), scale_value))


# -- gradients -----------------------------------------------------------------------------------
def _backward_forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    xp = kctx.xp
    og, x, y = inputs
    grad = outputs[0]
    name = attrs["reducer"]
    axes = reduced_axes(name, attrs, x.ndim)
    keep = reduced_shape(x.shape, axes, True)
    og, y = og.reshape(keep), y.reshape(keep)
    local: Any
    if name == "sum":
        local = 1
    elif name == "mean":
        local = 1.0 / max(int(np.prod([x.shape[a] for a in axes])), 1)
    elif name in ("prod", "nanprod"):
        local = xp.where(xp.isnan(x), 0, y / x) if name == "nanprod" else y / x
    elif name in ("max", "min"):
        local = x == y
    elif name == "nansum":
        local = ~xp.isnan(x)
    elif name == "norm":
        local = xp.sign(x) if attrs["ord"] == 1 else xp.where(y == 0, 0, x / y)
    else:
        raise OperatorError(f"_backward_reduce: unknown reducer {name!r}")
    grad[...] = xp.broadcast_to(og * local, x.shape)


_REDUCE_PARAMS = {
    "axis": Param(parse_axis, None, "axes to reduce (int or tuple); None reduces all"),
    "keepdims": Param(parse_bool, False, "keep reduced axes with size 1"),
    "exclude": Param(parse_bool, False, "reduce over the axes NOT in axis"),
}


@describes("int", quoted=True)
def _parse_ord(value: Any) -> int:
    text = str(value).strip()
    if text not in ("1", "2"):
        raise ValueError("expected 1 or 2")
    return int(text)


def _backward_reduce_shape_only(attrs: dict) -> tuple[int, ...]:
    """The inputs ``(out_grad, data, output)`` of ``_backward_reduce`` read only for their shape:
    the local derivative of a sum or a mean is a constant; nansum reads data for its NaNs, an
    L1 norm for its signs; the others read both."""
    name = attrs["reducer"]
    if name in ("sum", "mean"):
        return (1, 2)
    if name == "nansum" or (name == "norm" and attrs["ord"] == 1):
        return (2,)
    return ()


def _backward_reduce_gradient(F: Any, attrs: dict, inputs: list, outputs: list, out_grads: list) -> list:
    """The gradient of a sum's or a mean's backward (second-order gradients through ``sum`` and
    ``mean``): linear in its output gradient, which it spreads over the reduced axes, so its own
    gradient reduces the incoming one the same way; its other inputs are read only for their shape."""
    name = attrs["reducer"]
    if name not in ("sum", "mean"):
        raise OperatorError(
            f"_backward_reduce: the gradient of {name}'s backward is not implemented (second-order "
            "gradients go through sum and mean); compute that part outside record(), or detach() its input"
        )
    reduced = getattr(F, name)(out_grads[0], axis=attrs["axis"], keepdims=attrs["keepdims"], exclude=attrs["exclude"])
    return [reduced, None, None]


_NORM_PARAMS = {
    "ord": Param(_parse_ord, 2, "1 (sum of magnitudes) or 2 (Euclidean)"),
    "axis": _REDUCE_PARAMS["axis"],
    "out_dtype": Param(
        optional(enum("float16", "float32", "float64", "int32", "int64", "int8")),
        None,
        "dtype of the output (None: the input's), as MXNet 1.x",
    ),
    "keepdims": _REDUCE_PARAMS["keepdims"],
}


def _norm_infer_type(attrs: dict, in_types: list, aux_types: list) -> tuple[list, list, list]:
    return in_types, [attrs["out_dtype"] or in_types[0]], aux_types


register(
    OpDef(
        "_backward_reduce",
        _backward_forward,
        inputs=("out_grad", "data", "output"),
        shape_only_inputs=_backward_reduce_shape_only,
        params={
            "reducer": Param(enum(*REDUCERS), doc="the forward reduction"),
            "ord": Param(_parse_ord, 2, "norm order"),
            **_REDUCE_PARAMS,
        },
        infer_shape=lambda attrs, s, a: (s, [s[1]], a),
        infer_type=lambda attrs, t, a: (t, [t[1]], a),
        gradient=_backward_reduce_gradient,
        doc="Gradient of a reduction with respect to its input.",
    )
)


def _reduce_gradient(name: str) -> Callable:
    def gradient(F: Any, attrs: dict, inputs: list, outputs: list, out_grads: list) -> list:
        params = {"axis": attrs["axis"], "keepdims": attrs["keepdims"], "exclude": attrs.get("exclude", False)}
        if name == "norm":
            params["ord"] = attrs["ord"]
        return [F._backward_reduce(out_grads[0], inputs[0], outputs[0], reducer=name, **params)]

    return gradient


for _name in REDUCERS:
    register(
        OpDef(
            _name,
            _reduce_forward(_name),
            forward_gpu=_reduce_forward_gpu(_name),
            params=dict(_NORM_PARAMS if _name == "norm" else _REDUCE_PARAMS),
            infer_shape=_infer(_name),
            infer_type=_norm_infer_type if _name == "norm" else None,
            gradient=_reduce_gradient(_name),
            aliases=ALIASES.get(_name, ()),
            doc=f"The {_name} over ``axis`` (all axes by default).",
        )
    )
