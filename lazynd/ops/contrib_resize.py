"""``BilinearResize2D`` and ``AdaptiveAvgPooling2D`` of MXNet 1.x's ``contrib`` namespace.

Both map each (height, width) plane of (batch, channels, height, width) data linearly, one axis
at a time.  On the host the map is two weight-matrix products, ``out = rows @ plane @ cols.T``
(BLAS), kept when the result is finite; a product multiplies every input by every weight, so an
inf or NaN input (0 * inf) makes whole rows and columns NaN, and then, as always on a GPU, each
output is gathered from the inputs it reads (MXNet 1.9.1's answer: bilinear reads two taps per
axis, the second even at weight 0; pooling sums its bins).  Gradients follow the same rule with the
transposed maps, ``rows.T @ out_grad @ cols`` while finite, else each output's gradient scattered to
the inputs it read.  The tables are built on the host once and kept on the device.

``BilinearResize2D`` interpolates bilinearly to ``height`` x ``width`` (``scale_height`` and
``scale_width``, when ``scale_height`` is given, scale the input's instead, truncated), with ``mode='like'`` to
the size of a second input ``like``, with ``mode='odd_scale'`` to the scaled size where an odd
input size ``n`` gives ``(n - 1) * scale + 1``, and with ``mode='to_even_down'`` (``to_even_up``,
``to_odd_down``, ``to_odd_up``) to the input's size moved by one to an even (odd) one.  With ``align_corners`` (the default), the corners of input
and output coincide; without, pixel centres are scaled, as MXNet 1.9.1 computes both.
``AdaptiveAvgPooling2D`` averages bins ``[floor(i * in / out), ceil((i + 1) * in / out))``;
``output_size`` is one size for both axes, two, or none (1 x 1).
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np

from ..errors import OperatorError, ShapeError
from .params import Param, enum, optional, parse_bool, parse_finite_float, parse_int, parse_shape
from .products import product
from .registry import OpDef, dim_is_known, register

RESIZE = "_contrib_BilinearResize2D"
POOL = "_contrib_AdaptiveAvgPooling2D"


def interpolation_taps(size: int, out_size: int, align_corners: bool) -> tuple[np.ndarray, np.ndarray]:
    """The two input rows (columns) each output row (column) reads along one axis, as (2, out_size)
    indices, and their (2, out_size) weights.  The second is the next one, kept even where its weight is
    0 (clamped at the last), as MXNet 1.9.1 reads it: a non-finite value there makes the output NaN."""
    index = np.arange(out_size)
    source: np.ndarray
    # a single output row (column) reads the first input row in both modes, as MXNet 1.9.1
    if out_size == 1:
        source = np.zeros(1)
    elif align_corners:
        source = (size - 1) / (out_size - 1) * index
    else:
        source = np.maximum(size / out_size * (index + 0.5) - 0.5, 0.0)
    low = source.astype(np.int64)
    high = np.where(low < size - 1, low + 1, low)
    fraction = source - low
    return np.stack([low, high]), np.stack([1.0 - fraction, fraction])


def interpolation_weights(size: int, out_size: int, align_corners: bool) -> np.ndarray:
    """(out_size, size) bilinear weights along one axis (for the gradient, a matrix product)."""
    weights = np.zeros((out_size, size))
    taps, tap_weights = interpolation_taps(size, out_size, align_corners)
    for tap, weight in zip(taps, tap_weights, strict=True):
        np.add.at(weights, (np.arange(out_size), tap), weight)
    return weights


@functools.lru_cache(maxsize=256)
def average_bins(size: int, out_size: int) -> tuple[np.ndarray, np.ndarray]:
    """The input rows (columns) of each output's bin along one axis, as (out_size, longest bin)
    indices padded with ``size`` (a zero row the kernel appends), and each bin's 1 / length."""
    bounds = [((i * size) // out_size, math.ceil((i + 1) * size / out_size)) for i in range(out_size)]
    longest = max(end - start for start, end in bounds)
    rows = np.full((out_size, longest), size, np.int64)
    for i, (start, end) in enumerate(bounds):
        rows[i, : end - start] = np.arange(start, end)
    return rows, np.array([1.0 / (end - start) for start, end in bounds])


def average_weights(size: int, out_size: int) -> np.ndarray:
    """(out_size, size) weights of adaptive average pooling along one axis (for the gradient)."""
    weights = np.zeros((out_size, size + 1))  # the last column, the padding, is dropped
    rows, inverse_lengths = average_bins(size, out_size)
    weights[np.arange(out_size)[:, None], rows] = inverse_lengths[:, None]
    return weights[:, :size]


def _weights(kctx: Any, kind: str, size: int, out_size: int, align_corners: bool, dtype: Any) -> Any:
    """The (out_size, size) weights of ``kind`` ("bilinear" or "average") on ``kctx``'s device, made
    once (on the host with np.add.at, then copied to the device: a wait at every call before)."""
    if kind == "bilinear":
        return kctx.backend.constant(
            (RESIZE, size, out_size, align_corners), lambda: interpolation_weights(size, out_size, align_corners), dtype
        )
    return kctx.backend.constant((POOL, size, out_size), lambda: average_weights(size, out_size), dtype)


def _taps(kctx: Any, kind: str, size: int, out_size: int, align_corners: bool, dtype: Any) -> tuple[Any, Any]:
    """The input indices each output reads along one axis and their weights (bilinear taps, or
    average bins and their 1 / length) on ``kctx``'s device, made once."""
    key = (kind, size, out_size, align_corners)
    if kind == "bilinear":
        taps = lambda: interpolation_taps(size, out_size, align_corners)  # noqa: E731
    else:
        taps = lambda: average_bins(size, out_size)  # noqa: E731
    return (
        kctx.backend.constant((RESIZE, "taps", *key), lambda: taps()[0], np.int64),
        kctx.backend.constant((RESIZE, "weights", *key), lambda: taps()[1], dtype),
    )


def _apply(kctx: Any, data: Any, left: Any, right: Any, out: Any, transpose: bool = False) -> None:
    """``out = left @ data @ right.T`` per plane (``left.T @ data @ right`` with ``transpose``)."""
    if transpose:
        out[...] = product(kctx, product(kctx, left.T, data), right)
    else:
        out[...] = product(kctx, product(kctx, left, data), right.T)


def _products_are_finite(kctx: Any, kind: str, source: Any, target: Any, align_corners: bool, transpose: bool) -> bool:
    """On the host, ``target`` from the weight-matrix products (BLAS: the fast way) and whether it is
    all finite; then it is the answer.  A product multiplies every value by every weight, so one inf or
    NaN makes whole rows and columns NaN (0 * inf): the caller then gathers (or, for a gradient,
    scatters), each value to and from the pixels it pairs with (MXNet's answer), as it always does on
    a GPU (no wait there for the check)."""
    if kctx.xp is not np:
        return False
    data, out = (target, source) if transpose else (source, target)
    rows, cols = _pair(kctx, kind, data.shape[2:], out.shape[2:], align_corners, data.dtype)
    _apply(kctx, source, rows, cols, target, transpose)
    return bool(np.isfinite(target).all())


def _scatter_axis(kctx: Any, kind: str, out_grad: Any, size: int, align_corners: bool, axis: int) -> Any:
    """The gradient of the gather along ``axis`` (2 or 3) of an input of ``size``: each output's
    gradient times each of its taps' weights, summed into the tap's pixel (a bilinear tap of weight 0
    too: 0 * inf is NaN there, as in MXNet 1.9.1); an average bin's padding lands in a slot dropped."""
    xp, out_size = kctx.xp, out_grad.shape[axis]
    taps, weights = _taps(kctx, kind, size, out_size, align_corners, out_grad.dtype)
    if kind == "average":  # (out, longest) bins, one 1 / length each: as (longest, out) taps
        taps, weights = taps.T, xp.broadcast_to(weights, taps.T.shape)
    shape = list(out_grad.shape)
    shape[axis] = size + 1
    grad = xp.zeros(tuple(shape), out_grad.dtype)
    where = (slice(None),) * axis
    for tap, weight in zip(taps, weights, strict=True):
        scaled = out_grad * (weight[:, None] if axis == 2 else weight)
        kctx.backend.scatter_add(grad, (*where, tap), scaled)
    return grad[:, :, :size] if axis == 2 else grad[..., :size]


def _map_gradient(kctx: Any, kind: str, out_grad: Any, data_grad: Any, align_corners: bool) -> None:
    """``data_grad`` of a resize (or pooling) from ``out_grad``: the transposed weight products while
    finite, else each output's gradient scattered to the pixels it read (the forward's rule)."""
    if _products_are_finite(kctx, kind, out_grad, data_grad, align_corners, transpose=True):
        return
    grad = out_grad
    for axis in (3, 2):
        grad = _scatter_axis(kctx, kind, grad, data_grad.shape[axis], align_corners, axis)
    data_grad[...] = grad


def _check_4d(op: str, name: str, shape: Any) -> None:
    if shape is not None and len(shape) != 4:
        raise ShapeError(f"{op}: '{name}' must be 4-D (batch, channels, height, width), got shape {tuple(shape)}")


# -- BilinearResize2D -----------------------------------------------------------------------------
# the modes that round each input axis to an even or odd size (MXNet 1.9.1's rules, one axis each)
_PARITY_MODES = {
    "to_even_down": lambda n: n - n % 2,
    "to_even_up": lambda n: n + n % 2,
    "to_odd_down": lambda n: n - 1 + n % 2,
    "to_odd_up": lambda n: n + 1 - n % 2,
}


def _resize_inputs(attrs: dict) -> list[str]:
    return ["data", "like"] if attrs["mode"] == "like" else ["data"]


def _odd_scale(size: int, scale: float) -> int:
    """``mode='odd_scale'``: an even size is scaled; an odd one keeps its end pixels on the grid."""
    return int(size * scale) if size % 2 == 0 else int((size - 1) * scale) + 1


def _resize_size(attrs: dict, data: tuple, like: Any) -> tuple[int, int]:
    mode = attrs["mode"]
    scales = attrs["scale_height"], attrs["scale_width"]
    if mode == "like":
        return (like[2], like[3]) if like is not None else (0, 0)
    if mode in _PARITY_MODES:
        height, width = (_PARITY_MODES[mode](n) for n in data[2:4])
    elif mode == "odd_scale":
        if None in scales:
            raise OperatorError(f"{RESIZE}: mode 'odd_scale' needs scale_height and scale_width, got {scales}")
        height, width = _odd_scale(data[2], scales[0]), _odd_scale(data[3], scales[1])
    elif scales[0] is not None:  # MXNet 1.9.1 scales both sides when scale_height is given, and only then
        if scales[1] is None:
            raise OperatorError(f"{RESIZE}: scale_height {scales[0]} needs scale_width too (as in MXNet 1.9.1)")
        height, width = int(data[2] * scales[0]), int(data[3] * scales[1])
    else:  # a scale_width alone is not read, as in MXNet 1.9.1
        height, width = attrs["height"], attrs["width"]
    if height < 1 or width < 1:
        raise ShapeError(f"{RESIZE}: the output size must be positive, got height {height}, width {width}")
    return height, width


def _resize_infer(attrs: dict, in_shapes: list, aux_shapes: list) -> tuple[list, list, list]:
    for name, shape in zip(_resize_inputs(attrs), in_shapes, strict=True):
        _check_4d(RESIZE, name, shape)
    data = in_shapes[0]
    like = in_shapes[1] if len(in_shapes) > 1 else None
    if data is None:
        return list(in_shapes), [None], list(aux_shapes)
    height, width = _resize_size(attrs, data, like)
    out = (data[0], data[1], height, width)
    return list(in_shapes), [out if all(dim_is_known(dim) for dim in out) else None], list(aux_shapes)


def _pair(kctx: Any, kind: str, size: tuple, out_size: tuple, align_corners: bool, dtype: Any) -> tuple[Any, Any]:
    """The row and column weights of a resize (or pooling) of planes of ``size`` to ``out_size``."""
    return (
        _weights(kctx, kind, size[0], out_size[0], align_corners, dtype),
        _weights(kctx, kind, size[1], out_size[1], align_corners, dtype),
    )


def _resize_forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    data, out = inputs[0], outputs[0]
    if data.shape[2:] == out.shape[2:]:  # MXNet 1.9.1 copies, in both alignments
        out[...] = data
        return
    if _products_are_finite(kctx, "bilinear", data, out, attrs["align_corners"], transpose=False):
        return
    (row_taps, row_weights), (col_taps, col_weights) = (
        _taps(kctx, "bilinear", size, out_size, attrs["align_corners"], data.dtype)
        for size, out_size in zip(data.shape[2:], out.shape[2:], strict=True)
    )
    take = kctx.xp.take
    rows = take(data, row_taps[0], axis=2) * row_weights[0][:, None]
    rows += take(data, row_taps[1], axis=2) * row_weights[1][:, None]
    out[...] = take(rows, col_taps[0], axis=3) * col_weights[0]
    out += take(rows, col_taps[1], axis=3) * col_weights[1]


def _resize_backward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    out_grad, data_grad = inputs[0], outputs[0]
    if out_grad.shape[2:] == data_grad.shape[2:]:  # the forward copied
        data_grad[...] = out_grad
    else:
        _map_gradient(kctx, "bilinear", out_grad, data_grad, attrs["align_corners"])
    if len(outputs) > 1:  # 'like' gives only its size
        outputs[1][...] = 0


_RESIZE_PARAMS = {
    "height": Param(parse_int, 1, "output height (mode 'size', without scale_height)"),
    "width": Param(parse_int, 1, "output width (mode 'size', without scale_height)"),
    "scale_height": Param(optional(parse_finite_float), None, "output height as a multiple of the input's"),
    "scale_width": Param(
        optional(parse_finite_float), None, "output width as a multiple of the input's (with scale_height)"
    ),
    "mode": Param(
        enum("size", "like", "odd_scale", "to_even_down", "to_even_up", "to_odd_down", "to_odd_up"),
        "size",
        "how the output size is chosen: height/width or scales ('size'), the second input's ('like'), the "
        "scaled size keeping odd sizes odd ('odd_scale') or the input's rounded to even or odd ('to_*')",
    ),
    "align_corners": Param(parse_bool, True, "the corner pixels of input and output coincide"),
}

register(
    OpDef(
        RESIZE,
        _resize_forward,
        nonempty_axes={"data": (-2, -1)},
        inputs=_resize_inputs,
        positional_inputs=("data", "like"),  # MXNet lists like before the parameters, whatever mode
        params=_RESIZE_PARAMS,
        infer_shape=_resize_infer,
        infer_type=lambda attrs, in_types, aux_types: (
            [in_types[0]] * len(in_types),
            [in_types[0]],
            list(aux_types),
        ),
        gradient=lambda F, attrs, inputs, outputs, out_grads: (
            list(F._backward_contrib_BilinearResize2D(out_grads[0], *inputs, **attrs))
            if attrs["mode"] == "like"
            else [F._backward_contrib_BilinearResize2D(out_grads[0], inputs[0], **attrs)]
        ),
        float_data=True,
        doc="Bilinear resizing of (N, C, H, W) data (``mx.nd.contrib.BilinearResize2D``).",
    )
)
register(
    OpDef(
        "_backward_contrib_BilinearResize2D",
        _resize_backward,
        inputs=lambda attrs: ["out_grad", *_resize_inputs(attrs)],
        outputs=lambda attrs: ["data_grad", "like_grad"] if attrs["mode"] == "like" else ["data_grad"],
        params=_RESIZE_PARAMS,
        infer_shape=lambda attrs, s, a: (s, list(s[1:]), a),
        infer_type=lambda attrs, t, a: (t, [t[0]] * (len(t) - 1), a),
        shape_only_inputs=lambda attrs: (1, 2) if attrs["mode"] == "like" else (1,),
        doc="Gradient of BilinearResize2D: the transposed interpolation.",
    )
)


# -- AdaptiveAvgPooling2D -------------------------------------------------------------------------
def _pool_size(attrs: dict) -> tuple[int, int]:
    size = attrs["output_size"]
    if len(size) > 2 or any(s < 1 for s in size):
        raise ShapeError(f"{POOL}: output_size must be one or two positive sizes, got {size}")
    return (1, 1) if not size else (size[0], size[-1])


def _pool_infer(attrs: dict, in_shapes: list, aux_shapes: list) -> tuple[list, list, list]:
    data = in_shapes[0]
    _check_4d(POOL, "data", data)
    height, width = _pool_size(attrs)
    out = None if data is None else (data[0], data[1], height, width)
    known = out is not None and all(dim_is_known(dim) for dim in out)
    return list(in_shapes), [out if known else None], list(aux_shapes)


def _average_axis(xp: Any, data: Any, bins: Any, scale: Any, axis: int, padded: bool) -> Any:
    """The average of each bin of ``data`` along ``axis`` (2 or 3), summed from the gathered rows
    (columns); with ``padded`` (bins of two lengths) a zero is appended for the padding to read."""
    if padded:
        shape = list(data.shape)
        shape[axis] = 1
        data = xp.concatenate([data, xp.zeros(tuple(shape), data.dtype)], axis=axis)
    summed = xp.take(data, bins, axis=axis).sum(axis=axis + 1)
    return summed * (scale[:, None] if axis == 2 else scale)


def _pool_forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    data, out = inputs[0], outputs[0]
    if _products_are_finite(kctx, "average", data, out, False, transpose=False):
        return
    pooled = data
    for axis in (2, 3):
        size, out_size = data.shape[axis], out.shape[axis]
        bins, scale = _taps(kctx, "average", size, out_size, False, data.dtype)
        padded = int(average_bins(size, out_size)[0].max()) == size  # host tables, cached
        pooled = _average_axis(kctx.xp, pooled, bins, scale, axis, padded)
    out[...] = pooled


def _pool_backward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    _map_gradient(kctx, "average", inputs[0], outputs[0], False)


_POOL_PARAMS = {"output_size": Param(parse_shape, (), "(height, width) of the output; one size for both; () is 1 x 1")}

register(
    OpDef(
        POOL,
        _pool_forward,
        nonempty_axes={"data": (-2, -1)},
        params=_POOL_PARAMS,
        infer_shape=_pool_infer,
        gradient=lambda F, attrs, inputs, outputs, out_grads: [
            F._backward_contrib_AdaptiveAvgPooling2D(out_grads[0], inputs[0], **attrs)
        ],
        float_data=True,
        doc="Adaptive average pooling of (N, C, H, W) data to output_size (``mx.nd.contrib.AdaptiveAvgPooling2D``).",
    )
)
register(
    OpDef(
        "_backward_contrib_AdaptiveAvgPooling2D",
        _pool_backward,
        inputs=("out_grad", "data"),
        params=_POOL_PARAMS,
        infer_shape=lambda attrs, s, a: (s, [s[1]], a),
        infer_type=lambda attrs, t, a: (t, [t[0]], a),
        shape_only_inputs=(1,),
        doc="Gradient of AdaptiveAvgPooling2D: each output gradient spread evenly over its bin.",
    )
)
