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
transpose the batch in and out).

A stride s is taken by phases: the padded data's positions of each residue modulo s (per axis) make
a sub-image, which the kernel offsets of that residue read as a stride-1 convolution of their own
(a 3x3 kernel at stride 2: phase kernels 2x2, 2x1, 1x2, 1x1).  Each phase is laid out flat with the
sub-image's pitch, so the forward's columns are every phase's taps over one output span (the
phases' convolutions sum in the one product), and the backward gathers dy at each phase's taps
and writes the phase's data gradient back into every s-th position (its weight gradient per tap).
At stride 1 there is one phase, the padded plane itself.

All copies and products run over contiguous runs of a whole padded plane, however narrow
the rows, and a block's buffers stay in the cache between them.  float16 blocks are computed
in float32 (the copies convert), as NumPy's float16 products have no BLAS.
"""

from __future__ import annotations

import itertools
import math
from typing import Any, NamedTuple

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
#   (32, 256, 14, 14) 38.6 -> 45.1 in a layout whose columns spanned every input position (phases
#   now: figures below).
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
# Stride 2 in the earlier layout (its span held every stride-1 position; phases now, figures below):
# (16, 64, 56, 56) 12.6 -> 14.7, (16, 256, 14, 14) 4.1 -> 4.5, (16, 256, 7, 7) 1.0 -> 1.7.
DEPTHWISE_MIN_BATCH_LAST_POSITIONS = 100

# elements of a block's columns (K x multiplier x plane per channel and sample), ~1 MB in float32:
# a block's columns, its buffers and its products stay in a core's L2 cache
COLUMN_BLOCK_ELEMENTS = 1 << 18


# Strides by phases (see _phases), one thread, min of 5 CPU times x 2 turns (process_time; the shared
# 2-core machine at a load of 90-140: +-20% noise), 3x3 pad 1 float32 stride 2 unless said, MobileNet's
# channels, ms forward and backward, before (im2col or batch-last; conv_direct, or im2col at multiplier
# 2) -> here; MXNet 1.9.1 / PyTorch forward+backward beside:
#   batch 1:  112x112 out F 5.07 -> 4.12, B 20.6 -> 7.8 (MXNet 5.4, torch 5.8); 56x56 F 3.46 -> 2.71,
#     B 13.1 -> 4.6 (3.0, 2.9); 28x28 F 1.42 -> 1.47, B 4.14 -> 3.94 (1.1, 1.6); 14x14 F 0.96 -> 0.80,
#     B 1.57 -> 1.99; 7x7 F 0.60 -> 0.69, B 1.01 -> 1.73;
#   batch 16: 112x112 F 117 -> 94, B 438 -> 197 (MXNet 103, torch 310); 56x56 F 40 -> 30, B 159 -> 63
#     (45, 153); 28x28 F 23.5 -> 16.2, B 57 -> 32 (25, 40); 14x14 F 7.9 -> 8.9, B 23.2 -> 18.2; 7x7
#     F 3.9 -> 5.8, B 9.4 -> 12.6;
#   at 28x28 (batch 1 / 16): 5x5 F 2.2 -> 1.6 / 37 -> 26, B 6.0 -> 2.9 / 90 -> 46; pad 0 F 0.74 -> 1.02
#     / 13.3 -> 23.2, B 2.9 -> 1.9 / 66 -> 46; pad 2 F 1.1 -> 1.0 / 28 -> 16, B 2.9 -> 1.8 / 50 -> 32;
#     dilation 2 F 1.1 -> 0.6 / 31 -> 10, B 3.0 -> 1.1 / 50 -> 23; multiplier 2 F 1.0 -> 1.1 / 21 -> 19,
#     B 3.3 -> 2.5 / 72 -> 40; float64 F 1.5 -> 1.7 / 35 -> 29, B 6.0 -> 2.9 / 103 -> 61; float16 F
#     5.6 -> 1.7 / 87 -> 24, B 24 -> 3.1 / 403 -> 49; stride 3 F 1.4 -> 2.0 / 46 -> 44, B 7.7 -> 5.1 /
#     153 -> 130, 5x5 stride 3 F 2.8 -> 3.4 / 78 -> 47, B 12 -> 6.1 / 195 -> 98;
#   at 7x7 the phases' per-block overheads lose (float32 0.6-0.9x, at every pad, 5x5 and stride 3),
#     except in float16 (F 1.4 -> 0.7 / 22 -> 10, B 6.1 -> 1.3 / 101 -> 18).
# So a strided backward runs here from 28x28 output positions, a strided forward at stride 2 from 56x56
# (from 28x28 at 8 samples or more), and float16 at every size and stride.
DEPTHWISE_MIN_STRIDED_POSITIONS = 28 * 28
DEPTHWISE_MIN_STRIDED_FORWARD_POSITIONS = 56 * 56


def uses_depthwise_backward(
    xp: Any, channels: int, filters: int, groups: int, stride: tuple[int, ...], positions: int, dtype: Any
) -> bool:
    """Whether the backward of a convolution of ``channels`` input channels and ``filters`` filters in
    ``groups`` groups, moving by ``stride`` to ``positions`` output positions a sample, runs here: one
    input channel and at most :data:`DEPTHWISE_MAX_MULTIPLIER` filters per group, NumPy arrays (the
    GPU keeps its kernels), and with a stride at least :data:`DEPTHWISE_MIN_STRIDED_POSITIONS`
    positions unless float16.  The one place that routes a convolution's backward to this module
    (the figures above set its limits)."""
    if not (xp is np and channels == groups and filters <= DEPTHWISE_MAX_MULTIPLIER * groups):
        return False
    strided = any(s > 1 for s in stride)
    return not strided or np.dtype(dtype) == np.float16 or positions >= DEPTHWISE_MIN_STRIDED_POSITIONS


def uses_depthwise_forward(
    xp: Any, channels: int, filters: int, groups: int, stride: tuple[int, ...], batch: int, positions: int, dtype: Any
) -> bool:
    """Whether the forward of a convolution (``channels``, ``filters``, ``groups`` and ``stride`` as
    :func:`uses_depthwise_backward`'s; ``batch`` samples of ``positions`` output positions) runs here:
    a depthwise layer of multiplier up to :data:`DEPTHWISE_MAX_MULTIPLIER`, on NumPy arrays, in float16
    always (NumPy's float16 products have no BLAS); otherwise at stride 1 unless batch-last columns
    take it (:func:`~lazynd.ops.conv_columns.uses_batch_last`) with fewer than
    :data:`DEPTHWISE_MIN_BATCH_LAST_POSITIONS` positions, and at stride 2 from
    :data:`DEPTHWISE_MIN_STRIDED_FORWARD_POSITIONS` positions (from
    :data:`DEPTHWISE_MIN_STRIDED_POSITIONS` at 8 samples or more).  The one place that routes a
    convolution's forward to this module."""
    if not uses_depthwise_backward(xp, channels, filters, groups, (1,), positions, dtype):
        return False
    if np.dtype(dtype) == np.float16:
        return True
    if any(s > 1 for s in stride):
        least = DEPTHWISE_MIN_STRIDED_POSITIONS if batch >= 8 else DEPTHWISE_MIN_STRIDED_FORWARD_POSITIONS
        return max(stride) == 2 and positions >= least
    return not (positions < DEPTHWISE_MIN_BATCH_LAST_POSITIONS and uses_batch_last(xp, batch, positions))


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


class _Phase(NamedTuple):
    """One phase of a strided layout: the padded data's positions of one residue modulo the stride
    per axis, a sub-image read by the taps of that residue (a stride-1 convolution of its own)."""

    plane: int  # its plane in a buffer of phases (C order over the residues)
    taps: tuple[int, ...]  # its kernel offsets, flat indices of the kernel in C order
    tap_shape: tuple[int, ...]  # taps per axis
    first_tap: int  # the flat shift (sub-image pitch) of its first tap
    tap_strides: tuple[int, ...]  # the flat shift between neighbouring taps, per axis
    corner: tuple[int, ...]  # the sub-image position of its first data position, per axis
    sizes: tuple[int, ...]  # its data positions per axis
    source: tuple[slice, ...]  # those positions in the data


def _phases(g: Geometry, spatial: tuple[int, ...], pitch: list[int]) -> list[_Phase]:
    """The phases of a window moving by ``g.stride`` over ``spatial`` data (padded with ``g.pad``) laid
    out with the sub-image ``pitch``.  Kernel offset t of an axis reads padded position ``o * s + t *
    d`` = ``s * (o + q) + r``: residue r = ``t * d mod s`` and sub-image position ``o + q``; an axis's
    taps of one residue are every ``s / gcd(d, s)``-th offset, ``d / gcd(d, s)`` sub positions apart."""
    axes = []
    for k, d, s, p, size in zip(g.kernel, g.dilate, g.stride, g.pad, spatial, strict=True):
        axis = []
        for r in range(s):
            offsets = [t for t in range(k) if t * d % s == r]
            lo = -((r - p) // s)  # the first sub position at or after the pad: ceil((p - r) / s)
            count = max(0, (p + size - 1 - r) // s - lo + 1)
            start = r + s * lo - p
            axis.append(
                (offsets, (offsets[0] * d - r) // s if offsets else 0, d // math.gcd(d, s), lo, count, start, s)
            )
        axes.append(axis)
    kernel_pitch = [math.prod(g.kernel[i + 1 :]) for i in range(g.nd)]
    phases = []
    for index, per_axis in enumerate(itertools.product(*axes)):
        taps = tuple(
            sum(t * kp for t, kp in zip(offsets, kernel_pitch, strict=True))
            for offsets in itertools.product(*(a[0] for a in per_axis))
        )
        phases.append(
            _Phase(
                index,
                taps,
                tuple(len(a[0]) for a in per_axis),
                sum(a[1] * p for a, p in zip(per_axis, pitch, strict=True)),
                tuple(a[2] * p for a, p in zip(per_axis, pitch, strict=True)),
                tuple(a[3] for a in per_axis),
                tuple(a[4] for a in per_axis),
                tuple(slice(a[5], a[5] + a[6] * (a[4] - 1) + 1 if a[4] else a[5], a[6]) for a in per_axis),
            )
        )
    return phases


class _Planes:
    """The flat layout of one depthwise convolution's planes: the padded data split into its phases (one
    at stride 1), each phase's sub-image laid out flat, kernel shifts, blocks (of ``rows`` columns a
    channel), and the forward and backward walks over those blocks."""

    def __init__(self, x: np.ndarray, multiplier: int, out: tuple[int, ...], g: Geometry, rows: int) -> None:
        self.x, self.g, self.multiplier, self.rows = x, g, multiplier, rows
        n, channels = x.shape[:2]
        self.spatial, self.out = tuple(x.shape[2:]), out
        # each phase's sub-image: the padded size over the stride, rounded up (a phase short of it
        # keeps a row of zeros)
        self.sub = tuple(-(-(s + 2 * p) // st) for s, p, st in zip(self.spatial, g.pad, g.stride, strict=True))
        self.pitch = [math.prod(self.sub[i + 1 :]) for i in range(g.nd)]
        self.plane = math.prod(self.sub)
        every = _phases(g, self.spatial, self.pitch)
        self.phases = [phase for phase in every if phase.taps]
        self.idle = [phase for phase in every if not phase.taps]
        # the kernel offsets phase by phase: the columns' rows, and the weights' order to match them
        self.order = [t for phase in self.phases for t in phase.taps]
        # dy's buffer starts with the largest shift in zeros, so that every gathered position (data
        # position minus a shift) lies inside it
        self.front = max(
            phase.first_tap + sum((k - 1) * s for k, s in zip(phase.tap_shape, phase.tap_strides, strict=True))
            for phase in self.phases
        )
        self.dtype = np.dtype(np.float32) if x.dtype == np.float16 else x.dtype
        per_channel = rows * self.plane
        self.channels_per_block = max(1, min(channels, COLUMN_BLOCK_ELEMENTS // per_channel))
        whole = self.channels_per_block == channels
        self.samples_per_block = max(1, min(n, COLUMN_BLOCK_ELEMENTS // (per_channel * channels))) if whole else 1

    def _span(self, sizes: tuple[int, ...]) -> int:
        """The flat span from the first of ``sizes`` positions to the last."""
        return sum((size - 1) * p for size, p in zip(sizes, self.pitch, strict=True)) + 1

    def _first(self, phase: _Phase) -> int:
        """The flat sub-image position of ``phase``'s first data position."""
        return sum(c * p for c, p in zip(phase.corner, self.pitch, strict=True))

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

    def _shifted(self, buffer: np.ndarray, start: int, sign: int, length: int, phase: _Phase) -> np.ndarray:
        """``buffer[..., r, start + sign * shift_t + j]`` for every tap t of ``phase`` (C order, one axis
        per spatial axis, its shift relative to its first tap's) and ``j < length``: a view (N, C,
        rows, *taps, length)."""
        e = buffer.itemsize
        strides = (*buffer.strides[:3], *(sign * s * e for s in phase.tap_strides), e)
        shape = (*buffer.shape[:3], *phase.tap_shape, length)
        return as_strided(buffer[..., start:], shape, strides, writeable=False)

    def _place(self, buffer: np.ndarray, start: int, corner: tuple[int, ...], values: np.ndarray) -> None:
        """Write ``values`` (n, c, rows, *sizes) into the sub-image planes that start at flat position
        ``start`` of ``buffer``'s rows, from ``corner`` on (the rest keeps its zeros)."""
        n, c = values.shape[:2]
        planes = buffer[:n, :c, :, start : start + self.plane].reshape(n, c, buffer.shape[2], *self.sub)
        index = tuple(slice(first, first + size) for first, size in zip(corner, values.shape[3:], strict=True))
        planes[(slice(None), slice(None), slice(None), *index)] = values

    def _positions(self, flat: np.ndarray, sizes: tuple[int, ...]) -> np.ndarray:
        """The ``sizes`` positions of ``flat`` (n, c, rows, span) laid out with the sub-image pitch from
        its first element on: a view (n, c x rows, *sizes)."""
        e = flat.itemsize
        strides = (flat.strides[0], flat.strides[2], *(p * e for p in self.pitch))
        shape = (flat.shape[0], flat.shape[1] * flat.shape[2], *sizes)
        return as_strided(flat, shape, strides, writeable=False)

    def _place_data(self, x_buffer: np.ndarray, some: slice, block: slice) -> None:
        """The block's data, phase by phase, into ``x_buffer``'s planes (one a phase)."""
        for phase in self.phases:
            plane = x_buffer[:, :, phase.plane : phase.plane + 1]
            self._place(plane, 0, phase.corner, self.x[(some, block, *phase.source)][:, :, None])

    def forward(self, w: np.ndarray, bias: np.ndarray | None, y: np.ndarray) -> None:
        channels, m = self.x.shape[1], self.multiplier
        span = self._span(self.out)
        # each phase's sub-image; columns[t, j] = the phase of offset t at output position j (the
        # sub-image pitch) plus t's shift: the phases' stride-1 convolutions sum in one product
        x_buffer = self._buffer(math.prod(self.g.stride), self.plane)
        columns = np.empty((self.samples_per_block, self.channels_per_block, self.rows, span), self.dtype)
        result = np.empty((self.samples_per_block, self.channels_per_block, m, span), self.dtype)
        weights = w.reshape(channels, m, self.rows)[:, :, self.order].astype(self.dtype)  # (C, multiplier, K)
        biases = None if bias is None else bias.reshape(channels, m, 1).astype(self.dtype)
        for some, block in self._blocks():
            ns, cs = some.stop - some.start, block.stop - block.start
            self._place_data(x_buffer, some, block)
            cols = columns[:ns, :cs]
            row = 0
            for phase in self.phases:
                taps = len(phase.taps)
                shifted = self._shifted(
                    x_buffer[:ns, :cs, phase.plane : phase.plane + 1], phase.first_tap, 1, span, phase
                )
                cols[:, :, row : row + taps].reshape(ns, cs, *phase.tap_shape, span)[...] = shifted[:, :, 0]
                row += taps
            out = result[:ns, :cs]
            np.matmul(weights[block], cols, out=out)
            if biases is not None:
                out += biases[block]
            y[some, block.start * m : block.stop * m] = self._positions(out, self.out)

    def backward(self, w: np.ndarray, dy: np.ndarray, dx: np.ndarray | None, dw: np.ndarray | None) -> None:
        n, channels = self.x.shape[:2]
        m, samples, block_channels = self.multiplier, self.samples_per_block, self.channels_per_block
        # dy with the sub-image pitch, after `front` zeros; the data's phases
        dy_buffer = self._buffer(m, self.front + self.plane)
        x_buffer = self._buffer(math.prod(self.g.stride), self.plane) if dw is not None else None
        # a phase without data (all pad: a small image) adds nothing to the weight gradient
        spans = [self._span(phase.sizes) if all(phase.sizes) else 0 for phase in self.phases]
        columns = np.empty(samples * block_channels * self.rows * max(1, *spans), self.dtype)
        data_grad = np.empty(samples * block_channels * max(1, *spans), self.dtype)
        # per phase (C, multiplier x taps) weights and weight gradient sums, rows in the columns' order
        split = w.reshape(channels, m, -1).astype(self.dtype)
        weights = [split[:, None, :, list(phase.taps)].reshape(channels, 1, -1) for phase in self.phases]
        dw_sums = [np.zeros((channels, m * len(phase.taps), 1), self.dtype) for phase in self.phases]
        dy_split = dy.reshape(n, channels, m, *self.out)
        for some, block in self._blocks():
            ns, cs = some.stop - some.start, block.stop - block.start
            self._place(dy_buffer, self.front, (0,) * self.g.nd, dy_split[some, block])
            if x_buffer is not None:
                self._place_data(x_buffer, some, block)
            for phase, span, phase_weights, dw_sum in zip(self.phases, spans, weights, dw_sums, strict=True):
                if not span:
                    continue
                first = self._first(phase)
                # columns[t, j]: dy at the phase's data position j minus tap t's shift, over the phase's span
                rows = m * len(phase.taps)
                cols = columns[: ns * cs * rows * span].reshape(ns, cs, rows, span)
                gathered = self._shifted(dy_buffer[:ns, :cs], self.front + first - phase.first_tap, -1, span, phase)
                cols.reshape(ns, cs, m, *phase.tap_shape, span)[...] = gathered
                if x_buffer is not None:
                    # dw[c, t] sums x[j] * dy[j - shift_t]: the same columns times the phase's data
                    data = x_buffer[:ns, :cs, phase.plane, first : first + span, None]
                    dw_sum[block] += np.matmul(cols, data).sum(axis=0)
                if dx is not None:
                    grad = data_grad[: ns * cs * span].reshape(ns, cs, 1, span)
                    np.matmul(phase_weights[block], cols, out=grad)
                    dx[(some, block, *phase.source)] = self._positions(grad, phase.sizes)
            if dx is not None:
                for phase in self.idle:  # data no tap reads (a dilation that is a multiple of the stride)
                    dx[(some, block, *phase.source)] = 0
        if dw is not None:
            whole = np.empty((channels, m, self.rows // m), self.dtype)
            for phase, dw_sum in zip(self.phases, dw_sums, strict=True):
                whole[:, :, list(phase.taps)] = dw_sum.reshape(channels, m, -1)
            dw[...] = whole.reshape(dw.shape)
