"""The backward of a depthwise convolution (one input channel per group) on the CPU, by shifted flat columns.

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

All copies and products run over contiguous runs of a whole padded plane, however narrow
the rows, and a block's buffers stay in the cache between them.  float16 blocks are computed
in float32 (the copies convert), as NumPy's float16 products have no BLAS.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.lib.stride_tricks import as_strided

from .conv_columns import Geometry

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


def conv_backward_depthwise(x: np.ndarray, w: np.ndarray, dy: np.ndarray, g: Geometry, grads: list) -> None:
    """Convolution's gradients for a depthwise convolution (``groups`` = channels of ``x``, any
    multiple of them as filters) given the output's gradient ``dy`` (N, F, *out), data ``x`` (N, C,
    *spatial) and weight ``w`` (F, 1, *kernel), in NC order (views of channel-last arrays work as they
    are), written into ``grads`` = [data, weight, bias] (the bias left out without one); a gradient
    given as None (nobody reads it) is not computed."""
    dx, dw = grads[0], grads[1]
    db = grads[2] if len(grads) > 2 else None
    if dx is not None or dw is not None:
        _Planes(x, w, dy, g).run(dx, dw)
    if db is not None:
        db[...] = dy.sum(axis=(0, *range(2, dy.ndim)))


class _Planes:
    """The flat layout of one convolution's planes: padded pitches, kernel shifts, blocks."""

    def __init__(self, x: np.ndarray, w: np.ndarray, dy: np.ndarray, g: Geometry) -> None:
        self.x, self.dy, self.g = x, dy, g
        n, channels = x.shape[:2]
        self.multiplier = w.shape[0] // channels
        self.spatial, self.out = tuple(x.shape[2:]), tuple(dy.shape[2:])
        self.padded = tuple(s + 2 * p for s, p in zip(self.spatial, g.pad, strict=True))
        self.pitch = [math.prod(self.padded[i + 1 :]) for i in range(g.nd)]
        self.plane = math.prod(self.padded)
        # offset k's flat shift, and the largest one: dy's buffer starts with that many zeros, so that
        # every gathered position (plane position minus a shift) lies inside it
        self.shift_strides = [d * p for d, p in zip(g.dilate, self.pitch, strict=True)]
        self.front = sum((k - 1) * s for k, s in zip(g.kernel, self.shift_strides, strict=True))
        # the flat span from the first data position to the last: the columns of both gradients
        self.first = sum(p * s for p, s in zip(g.pad, self.pitch, strict=True))
        self.data_span = sum((s - 1) * p for s, p in zip(self.spatial, self.pitch, strict=True)) + 1
        self.dtype = np.dtype(np.float32) if x.dtype == np.float16 else x.dtype
        kernel_size = math.prod(g.kernel)
        per_channel = kernel_size * self.multiplier * self.plane
        self.channels_per_block = max(1, min(channels, COLUMN_BLOCK_ELEMENTS // per_channel))
        whole = self.channels_per_block == channels
        self.samples_per_block = max(1, min(n, COLUMN_BLOCK_ELEMENTS // (per_channel * channels))) if whole else 1
        # (C, multiplier, K) weights, each channel's a row of the data gradient's product
        self.weights = w.reshape(channels, self.multiplier * kernel_size).astype(self.dtype)[:, None, :]

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

    def run(self, dx: np.ndarray | None, dw: np.ndarray | None) -> None:
        n, channels = self.x.shape[:2]
        rows = self.multiplier * math.prod(self.g.kernel)
        samples, block_channels = self.samples_per_block, self.channels_per_block
        # dy with the padded pitch, after `front` zeros, at every stride-th pitch position; x padded
        dy_buffer = self._buffer(self.multiplier, self.front + self.plane)
        x_buffer = self._buffer(1, self.plane) if dw is not None else None
        columns = np.empty((samples, block_channels, rows, self.data_span), self.dtype)
        data_grad = np.empty((samples, block_channels, 1, self.data_span), self.dtype) if dx is not None else None
        dw_sum = np.zeros((channels, rows, 1), self.dtype)
        dy_split = self.dy.reshape(n, channels, self.multiplier, *self.out)
        no_corner = (0,) * self.g.nd
        for n0 in range(0, n, samples):
            for c0 in range(0, channels, block_channels):
                some, block = slice(n0, min(n0 + samples, n)), slice(c0, min(c0 + block_channels, channels))
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
                    np.matmul(self.weights[block], cols, out=grad)
                    # the data's positions within the span: its corner at 0, rows the padded pitch apart
                    e = grad.itemsize
                    strides = (*grad.strides[:2], *(p * e for p in self.pitch))
                    dx[some, block] = as_strided(grad, (ns, cs, *self.spatial), strides, writeable=False)
        if dw is not None:
            dw[...] = dw_sum.reshape(dw.shape)
