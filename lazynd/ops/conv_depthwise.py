"""The forward and backward of a depthwise convolution (one input channel per group) on the CPU, by shifted flat columns.

With one input channel per group every product of im2col's backward is a GEMV of one
channel's few kernel offsets, and NumPy spends its time on the column copies, which run
along one output row at a time, and on col2im's passes.  Here each channel's plane is
handled as one flat vector laid out with the *padded* row pitch: a kernel offset is then a
constant shift of that vector (``offset * dilate`` rows and columns of the pitch), and the
windows of all offsets are views of one buffer at ``K`` shifts.  A block of channels
(of one or more samples) is copied into such padded buffers, and

- the data gradient gathers: the output's gradient, placed at its positions in a
  zero buffer (every ``stride``-th pitch position), seen at the ``K`` shifts, copied into
  contiguous columns ``(multiplier x K, plane)`` in one copy and multiplied by the channel's weights
  (``(1, multiplier x K) @ (multiplier x K, plane)``): one fused multiply-add pass, where a
  scatter of ``dy * w[offset]`` into shifted windows takes a product and a sum per offset;
- the weight gradient reads the same columns: ``dw[k]`` sums ``x[j] * dy[j - shift_k]`` over the
  data's positions ``j``, one ``(multiplier x K, plane) @ (plane, 1)`` product a channel, summed over
  the block's samples (the pad positions inside the span hold zeros of x).

The forward reads the same layout the other way: the padded data seen at the ``K`` shifts is
copied into columns ``(K, output span)`` and each channel's ``(multiplier, K)`` weights multiply
them (one GEMV a channel), where im2col copies one output row at a time (or batch-last columns
transpose the batch in and out).  With a stride, the span holds every stride-1 position and the
output keeps every ``stride``-th (the kernel takes it; the route does not: 4x the work at stride 2).

All copies and products run over contiguous runs of a whole padded plane, however narrow
the rows, and a block's buffers stay in the cache between them.  float16 blocks are computed
in float32 (the copies convert), as NumPy's float16 products have no BLAS.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.lib.stride_tricks import as_strided

from .conv_columns import Geometry, uses_batch_last

# The backward (data and weight gradients) of a 3x3, pad 1 float32 depthwise convolution, one thread,
# min of 5 in turns on the project's shared 2-core Xeon (under others' heavy load: the ratios hold, the
# times are 2-3x a quiet machine's),
# ms before (conv_direct's groups-last loop, or im2col for a multiplier) -> here:
#   (16, 64, 56, 56) 158.8 -> 55.0 (data gradient alone 113.8 -> 45.3, weight gradient 48.0 -> 23.3);
#   (16, 64, 28, 28) 19.1 -> 9.2; (32, 256, 14, 14) 31.7 -> 13.7; (32, 256, 7, 7) 6.9 -> 4.7;
#   (4, 32, 112, 112) 30.3 -> 13.7; (32, 4, 16, 16) 1.5 -> 0.4; pad 0 118.9 -> 46.8; dilation 2 143.6
#   -> 60.8; 5x5 350 -> 159; float64 465 -> 199; float16 2301 -> 100 (NumPy's float16 einsum);
#   multiplier 2 (56x56) 253 -> 94, (32, 64, 16, 16) 104 -> 31; but multiplier 4 31.1 -> 33.2, and
#   LeNet's first layer (one channel, 20 filters, 5x5) 12.5 -> 46.1: the columns grow with the
#   multiplier while im2col's products only get wider; stride 2 65.8 -> 72.6 and 5x5 stride 2 of
#   (32, 256, 14, 14) 38.6 -> 45.1: the columns span every input position, 4x the outputs.
# A weight gradient alone (a first layer's) is slower here on small images ((32, 256, 7, 7)
# 2.1 -> 3.5): it pays the column copy that the data gradient shares when both are asked for.
DEPTHWISE_MAX_MULTIPLIER = 2

# The forward, 3x3, pad 1, float32 unless said, one thread, min of 5-7 CPU times (process_time: the
# shared machine ran at a load of 30-130) in turns, ms before (im2col, or batch-last for 8 samples or
# more of up to 256 positions) -> here:
#   (16, 64, 56, 56) 27.1 -> 17.1 (another run 21.4 -> 13.6); (16, 128, 28, 28) 16.0 -> 11.8;
#   (16, 64, 28, 28) 7.1 -> 4.1; (16, 512, 14, 14) 14.4 -> 10.0; (16, 32, 112, 112) 57.6 -> 41.6;
#   batch 1: (1, 64, 56, 56) 1.60 -> 0.98, (1, 32, 112, 112) 4.8 -> 3.1, (1, 256, 7, 7) 0.45 -> 0.28,
#   5x5 1.04 -> 0.65, (1, 128, 28, 28) 1.21 -> 1.14; at (16, 64, 56, 56): pad 0 20.6 -> 16.0,
#   dilation 2 27.3 -> 15.1, 5x5 74.4 -> 32.4, multiplier 2 31.2 -> 19.9, float64 57.7 -> 40.5,
#   float16 189 -> 30.2 (NumPy's float16 matmul; here the copies convert to float32).
# Batch-last columns hold their own on small images of 16 samples: (16, 256, 14, 14) 8.6-9.3 ->
# 6.7-9.5, pad 0 4.9-7.0 -> 3.9-4.7, 5x5 15.0-16.8 -> 11.3-13.7, (16, 256, 10, 10) 4.8-5.8 ->
# 4.3-6.1, but (16, 256, 7, 7) 2.1-2.4 -> 1.9-2.1, pad 0 1.6 -> 2.0-2.5, 5x5 4.5-5.2 -> 5.5-7.2 (the
# padded pitch wastes a quarter to half of a 7-wide row); float16 there 12.9 -> 2.8 all the same.
# Stride 2 (the span holds every stride-1 position): (16, 64, 56, 56) 12.6 -> 14.7, (16, 256, 14, 14)
# 4.1 -> 4.5, (16, 256, 7, 7) 1.0 -> 1.7, (1, 32, 112, 112) 1.74 -> 2.33, so strides keep their routes.
DEPTHWISE_MIN_BATCH_LAST_POSITIONS = 100

# elements of a block's columns (K x multiplier x plane per channel and sample), ~1 MB in float32:
# a block's columns, its buffers and its products stay in a core's L2 cache
COLUMN_BLOCK_ELEMENTS = 1 << 18


def uses_depthwise_backward(xp: Any, channels: int, filters: int, groups: int, stride: tuple[int, ...]) -> bool:
    """Whether the backward of a convolution of ``channels`` input channels and ``filters`` filters in
    ``groups`` groups, moving by ``stride``, runs here: one input channel and at most
    :data:`DEPTHWISE_MAX_MULTIPLIER` filters per group, stride 1, NumPy arrays (the GPU keeps its
    kernels).  The one place that routes a convolution's backward to this module (the figures above
    set its limits)."""
    return (
        xp is np and channels == groups and filters <= DEPTHWISE_MAX_MULTIPLIER * groups and all(s == 1 for s in stride)
    )


def uses_depthwise_forward(
    xp: Any, channels: int, filters: int, groups: int, stride: tuple[int, ...], batch: int, positions: int, dtype: Any
) -> bool:
    """Whether the forward of a convolution (``channels``, ``filters``, ``groups`` and ``stride`` as
    :func:`uses_depthwise_backward`'s; ``batch`` samples of ``positions`` output positions) runs here:
    a stride-1 depthwise layer of multiplier up to :data:`DEPTHWISE_MAX_MULTIPLIER`, on NumPy arrays,
    unless batch-last columns take it (:func:`~lazynd.ops.conv_columns.uses_batch_last`) with fewer
    than :data:`DEPTHWISE_MIN_BATCH_LAST_POSITIONS` positions; float16 always (NumPy's float16
    products have no BLAS).  The one place that routes a convolution's forward to this module."""
    if not uses_depthwise_backward(xp, channels, filters, groups, stride):
        return False
    small = positions < DEPTHWISE_MIN_BATCH_LAST_POSITIONS and uses_batch_last(xp, batch, positions)
    return np.dtype(dtype) == np.float16 or not small


def conv_forward_depthwise(x: np.ndarray, w: np.ndarray, bias: np.ndarray | None, y: np.ndarray, g: Geometry) -> None:
    """Convolution's output ``y`` (N, F, *out) of data ``x`` (N, C, *spatial) and weight ``w`` (F, 1,
    *kernel) in ``groups`` = C groups (filter ``c * multiplier + j`` reads channel c), plus ``bias``
    (F,) when given, in NC order (views of channel-last arrays work as they are).  A stride computes
    every position of the stride-1 output's span and keeps every ``stride``-th."""
    if y.size:
        _Planes(x, w.shape[0] // x.shape[1], tuple(y.shape[2:]), g, math.prod(g.kernel)).forward(w, bias, y)


def conv_backward_depthwise(x: np.ndarray, w: np.ndarray, dy: np.ndarray, g: Geometry, grads: list) -> None:
    """Convolution's gradients for a depthwise convolution (``groups`` = channels of ``x``, any
    multiple of them as filters) given the output's gradient ``dy`` (N, F, *out), data ``x`` (N, C,
    *spatial) and weight ``w`` (F, 1, *kernel), in NC order (views of channel-last arrays work as they
    are), written into ``grads`` = [data, weight, bias] (the bias left out without one); a gradient
    given as None (nobody reads it) is not computed."""
    dx, dw = grads[0], grads[1]
    db = grads[2] if len(grads) > 2 else None
    if dx is not None or dw is not None:
        multiplier = w.shape[0] // x.shape[1]
        _Planes(x, multiplier, tuple(dy.shape[2:]), g, multiplier * math.prod(g.kernel)).backward(w, dy, dx, dw)
    if db is not None:
        db[...] = dy.sum(axis=(0, *range(2, dy.ndim)))


class _Planes:
    """The flat layout of one depthwise convolution's planes: padded pitches, kernel shifts, blocks
    (of ``rows`` columns a channel), and the forward and backward walks over those blocks."""

    def __init__(self, x: np.ndarray, multiplier: int, out: tuple[int, ...], g: Geometry, rows: int) -> None:
        self.x, self.g, self.multiplier, self.rows = x, g, multiplier, rows
        n, channels = x.shape[:2]
        self.spatial, self.out = tuple(x.shape[2:]), out
        self.padded = tuple(s + 2 * p for s, p in zip(self.spatial, g.pad, strict=True))
        self.pitch = [math.prod(self.padded[i + 1 :]) for i in range(g.nd)]
        self.plane = math.prod(self.padded)
        # offset k's flat shift, and the largest one: dy's buffer starts with that many zeros, so that
        # every gathered position (plane position minus a shift) lies inside it
        self.shift_strides = [d * p for d, p in zip(g.dilate, self.pitch, strict=True)]
        self.front = sum((k - 1) * s for k, s in zip(g.kernel, self.shift_strides, strict=True))
        # the flat span from the first data position to the last: the columns of both gradients
        self.first = sum(p * s for p, s in zip(g.pad, self.pitch, strict=True))
        self.data_span = self._span(self.spatial, (1,) * g.nd)
        self.dtype = np.dtype(np.float32) if x.dtype == np.float16 else x.dtype
        per_channel = rows * self.plane
        self.channels_per_block = max(1, min(channels, COLUMN_BLOCK_ELEMENTS // per_channel))
        whole = self.channels_per_block == channels
        self.samples_per_block = max(1, min(n, COLUMN_BLOCK_ELEMENTS // (per_channel * channels))) if whole else 1

    def _span(self, sizes: tuple[int, ...], step: tuple[int, ...]) -> int:
        """The flat span from the first of ``sizes`` positions, every ``step``-th, to the last."""
        return sum((size - 1) * s * p for size, s, p in zip(sizes, step, self.pitch, strict=True)) + 1

    def _blocks(self) -> list[tuple[slice, slice]]:
        n, channels = self.x.shape[:2]
        samples, block_channels = self.samples_per_block, self.channels_per_block
        return [
            (slice(n0, min(n0 + samples, n)), slice(c0, min(c0 + block_channels, channels)))
            for n0 in range(0, n, samples)
            for c0 in range(0, channels, block_channels)
        ]

    def _buffer(self, rows: int, length: int) -> np.ndarray:
        return np.zeros((self.samples_per_block, self.channels_per_block, rows, length), self.dtype)

    def _shifted(self, buffer: np.ndarray, start: int, sign: int, length: int) -> np.ndarray:
        """``buffer[..., r, start + sign * shift_k + j]`` for every kernel offset k (C order, one axis
        per spatial axis) and ``j < length``: a view (N, C, rows, *kernel, length)."""
        e = buffer.itemsize
        strides = (*buffer.strides[:3], *(sign * s * e for s in self.shift_strides), e)
        return as_strided(buffer[..., start:], (*buffer.shape[:3], *self.g.kernel, length), strides, writeable=False)

    def _place(
        self, buffer: np.ndarray, start: int, corner: tuple[int, ...], step: tuple[int, ...], values: np.ndarray
    ) -> None:
        """Write ``values`` (n, c, rows, *sizes) into the padded planes that start at flat position ``start``
        of ``buffer``'s rows, from ``corner`` on, every ``step``-th position per axis (the rest keeps its zeros)."""
        n, c = values.shape[:2]
        planes = buffer[:n, :c, :, start : start + self.plane].reshape(n, c, buffer.shape[2], *self.padded)
        index = tuple(
            slice(first, first + size * s, s) for first, size, s in zip(corner, values.shape[3:], step, strict=True)
        )
        planes[(slice(None), slice(None), slice(None), *index)] = values

    def _positions(self, flat: np.ndarray, sizes: tuple[int, ...], step: tuple[int, ...]) -> np.ndarray:
        """The ``sizes`` positions, every ``step``-th, of ``flat`` (n, c, rows, span) laid out with the
        padded pitch from its first element on: a view (n, c x rows, *sizes)."""
        e = flat.itemsize
        strides = (flat.strides[0], flat.strides[2], *(s * p * e for s, p in zip(step, self.pitch, strict=True)))
        shape = (flat.shape[0], flat.shape[1] * flat.shape[2], *sizes)
        return as_strided(flat, shape, strides, writeable=False)

    def forward(self, w: np.ndarray, bias: np.ndarray | None, y: np.ndarray) -> None:
        channels, m, kernel = self.x.shape[1], self.multiplier, self.g.kernel
        span = self._span(self.out, self.g.stride)
        # x padded; columns[k, j] = x at output position j (padded pitch) plus offset k's shift
        x_buffer = self._buffer(1, self.plane)
        columns = np.empty((self.samples_per_block, self.channels_per_block, self.rows, span), self.dtype)
        result = np.empty((self.samples_per_block, self.channels_per_block, m, span), self.dtype)
        weights = w.reshape(channels, m, self.rows).astype(self.dtype)  # (C, multiplier, K)
        biases = None if bias is None else bias.reshape(channels, m, 1).astype(self.dtype)
        for some, block in self._blocks():
            ns, cs = some.stop - some.start, block.stop - block.start
            self._place(x_buffer, 0, self.g.pad, (1,) * self.g.nd, self.x[some, block, None])
            cols = columns[:ns, :cs]
            cols.reshape(ns, cs, *kernel, span)[...] = self._shifted(x_buffer[:ns, :cs], 0, 1, span)[:, :, 0]
            out = result[:ns, :cs]
            np.matmul(weights[block], cols, out=out)
            if biases is not None:
                out += biases[block]
            y[some, block.start * m : block.stop * m] = self._positions(out, self.out, self.g.stride)

    def backward(self, w: np.ndarray, dy: np.ndarray, dx: np.ndarray | None, dw: np.ndarray | None) -> None:
        n, channels = self.x.shape[:2]
        samples, block_channels = self.samples_per_block, self.channels_per_block
        # dy with the padded pitch, after `front` zeros, at every stride-th pitch position; x padded
        dy_buffer = self._buffer(self.multiplier, self.front + self.plane)
        x_buffer = self._buffer(1, self.plane) if dw is not None else None
        columns = np.empty((samples, block_channels, self.rows, self.data_span), self.dtype)
        data_grad = np.empty((samples, block_channels, 1, self.data_span), self.dtype) if dx is not None else None
        dw_sum = np.zeros((channels, self.rows, 1), self.dtype)
        # (C, 1, multiplier x K) weights, each channel's a row of the data gradient's product
        weights = w.reshape(channels, self.rows).astype(self.dtype)[:, None, :]
        dy_split = dy.reshape(n, channels, self.multiplier, *self.out)
        no_corner = (0,) * self.g.nd
        for some, block in self._blocks():
            ns, cs = some.stop - some.start, block.stop - block.start
            self._place(dy_buffer, self.front, no_corner, self.g.stride, dy_split[some, block])
            # columns[k, j]: dy at data position j minus offset k's shift, for the data's span
            cols = columns[:ns, :cs]
            gathered = self._shifted(dy_buffer[:ns, :cs], self.front + self.first, -1, self.data_span)
            cols.reshape(ns, cs, self.multiplier, *self.g.kernel, self.data_span)[...] = gathered
            if dw is not None and x_buffer is not None:
                # dw[c, k] sums x[j] * dy[j - shift_k]: the same columns times the data over its span
                self._place(x_buffer, 0, self.g.pad, (1,) * self.g.nd, self.x[some, block, None])
                data = x_buffer[:ns, :cs, 0, self.first : self.first + self.data_span, None]
                dw_sum[block] += np.matmul(cols, data).sum(axis=0)
            if dx is not None and data_grad is not None:
                grad = data_grad[:ns, :cs]
                np.matmul(weights[block], cols, out=grad)
                # the data's positions within the span: its corner at 0, rows the padded pitch apart
                dx[some, block] = self._positions(grad, self.spatial, (1,) * self.g.nd)
        if dw is not None:
            dw[...] = dw_sum.reshape(dw.shape)
