"""The backward of a convolution with few input channels per group (depthwise above all), on the CPU.

With one input channel per group, the im2col backward's products are tiny GEMMs (one per
sample and group) and its column copies and col2im dominate.  Here the gradients are sums
over kernel offsets instead.  At each offset, the window of the padded data that the
offset meets is one strided view, ``x[n, g, c, p * stride + offset * dilate]``, and

- the weight gradient at that offset is ``dy`` contracted with the view over the batch and
  the positions: ``dw[g, f, c, offset] = sum(dy[n, g, f, p] * view[n, g, c, p])``;
- the data gradient adds ``dy`` times that offset's weights back into the same view of a
  padded buffer: ``dx_padded[view] += sum_f(dy[n, g, f, p] * w[g, f, c, offset])``;

one ``einsum`` over whole arrays per offset, without a loop over groups.  The batch is
walked a block of samples at a time (:mod:`~lazynd.ops.cpu_blocks`), so that a block's
padded buffer and temporaries stay in cache across the offsets.  The forward keeps
im2col's GEMM, which is faster here too (see :data:`DIRECT_MAX_CHANNELS_PER_GROUP`).
NumPy only: the GPU keeps its kernels.  A stride-1 depthwise backward (multiplier up to 2) takes
:mod:`~lazynd.ops.conv_depthwise` instead, 2-3x faster there (and strided ones from 28x28 outputs);
this path keeps strided ones on small images.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .conv_columns import Geometry
from .cpu_blocks import samples_per_block

# The backward of a convolution of N, C, H, W data, 3x3, pad 1, float32 on the project's 2-core Xeon,
# im2col's (ms) -> this one's (ms), channels per group x filters per group (multiplier):
#   1 x 1: (32, 64, 16, 16) 15.7 -> 5.9, stride 2 6.2 -> 2.9; (4, 64, 16, 16) 2.9 -> 0.8;
#          (16, 32, 32, 32) 19.8 -> 6.1; (32, 256, 4, 4) 8.8 -> 1.8; (8, 16, 16, 16) 1.5 -> 0.6;
#          (8, 8, 32, 32) 2.7 -> 1.3; but 4 groups (32, 4, 16, 16) 0.97 -> 1.13;
#   1 x 2: 64 groups (32, 64, 16, 16) 16.9 -> 9.9, but 16 to 32 groups 0.7 -> 0.9, 5.2 -> 5.4;
#   1 x 4: 14.0 -> 14.6;  1 x 20 (LeNet's first layer) 4.0 -> 27;
#   2 x 2: (32, 64, 16, 16) 15.7 -> 14.7, (4, 64, 16, 16) 1.2 -> 1.9;  4 x 4: 8.6 -> 27.8.
# The groups are the innermost loop here: the path pays with one channel and one filter per group
# and enough groups.  A direct forward (the same loop) lost to im2col's GEMM at every one of these
# shapes (depthwise (32, 64, 16, 16): 4.8 against 2.6 ms), so the forward stays im2col's.
# Tried again (2026-11-28, one thread, float32, best of 10 in turns with im2col's, 3x3 pad 1 unless
# said): the same loop with each offset's weights repeated along the output row, so that at stride 1
# a product runs one inner loop along a whole window row (OW x groups) rather than one per position.
# im2col's ms -> direct's: (16, 64, 56, 56) 23.3 -> 29.6 (one run 19.6), stride 2 9.7 -> 10.9,
# 5x5 48.4 -> 58.1; (32, 256, 7, 7) 2.9 -> 4.5; (32, 256, 14, 14) 11.8 -> 11.1, 5x5 stride 2
# 8.7 -> 12.5; (4, 32, 112, 112) 9.2 -> 16.2; (32, 64, 16, 16) 3.5 -> 6.1; multiplier 2 2.8 -> 10.2;
# float16 2.6-2.8x slower everywhere.  NumPy cannot fuse the multiply and the add: two passes per
# offset over the output, where im2col makes one copy per offset and one GEMV (MKL) reads them all.
DIRECT_MAX_CHANNELS_PER_GROUP = 1
DIRECT_MAX_FILTERS_PER_GROUP = 1
DIRECT_MIN_GROUPS = 8


def uses_direct_backward(xp: Any, channels: int, filters: int, groups: int) -> bool:
    """Whether the backward of a convolution of ``channels`` input channels and ``filters`` filters in
    ``groups`` groups runs here: the one place that routes a convolution to this module (NumPy
    arrays only; the measurements above set its limits)."""
    return (
        xp is np
        and groups >= DIRECT_MIN_GROUPS
        and channels // groups <= DIRECT_MAX_CHANNELS_PER_GROUP
        and filters // groups <= DIRECT_MAX_FILTERS_PER_GROUP
    )


def conv_backward_direct(x: np.ndarray, w: np.ndarray, dy: np.ndarray, g: Geometry, groups: int, grads: list) -> None:
    """Convolution's gradients given the output's gradient ``dy`` (N, F, *out), for data ``x`` (N, C, *spatial)
    and weight ``w`` (F, C // groups, *kernel), all in NC order (views of channel-last arrays work as
    they are), written into ``grads`` = [data, weight, bias] (the bias left out without one); a
    gradient given as None (nobody reads it) is not computed.

    Inside, a block's arrays are channel-last with the groups innermost, ``(n, *spatial, channels
    per group, groups)``: the innermost loop of every step runs over the groups (or whole rows of
    them) rather than along one output row, which is short in the late layers of a network."""
    dx, dw = grads[0], grads[1]
    db = grads[2] if len(grads) > 2 else None
    n, p = x.shape[0], "xyz"[: g.nd]  # einsum's letters for the spatial axes
    spatial, positions = tuple(x.shape[2:]), tuple(dy.shape[2:])
    padded = (*(s + 2 * pad for s, pad in zip(spatial, g.pad, strict=True)), x.shape[1] // groups, groups)
    step = samples_per_block(math.prod(padded))
    # (kernel size, F // G, C // G, G): each offset's weights contiguous, groups innermost
    weights = np.ascontiguousarray(w.reshape(groups, w.shape[0] // groups, w.shape[1], -1).transpose(3, 1, 2, 0))
    dy_block = np.empty((min(step, n), *positions, w.shape[0] // groups, groups), dy.dtype)
    # data (dw) and data gradient (dx) of a block, padded; only the data's interior is ever written
    data = np.zeros((min(step, n), *padded), x.dtype) if dw is not None else None
    data_grad = np.empty((min(step, n), *padded), x.dtype) if dx is not None else None
    term = np.empty((min(step, n), *positions, *padded[-2:]), x.dtype) if dx is not None else None
    dw_sum = np.zeros(weights.shape, w.dtype)
    interior = (slice(None), *g.interior(spatial))
    for start in range(0, n, step):
        block = slice(start, min(start + step, n))
        size = block.stop - block.start
        dyb = dy_block[:size]
        dyb[...] = _groups_last(dy[block], groups)
        if data is not None:
            data[:size][interior] = _groups_last(x[block], groups)
        if data_grad is not None:
            data_grad[:size].fill(0)
        for i, offset in enumerate(g.offsets()):
            window = (slice(None), *g.window(offset, positions))
            if data is not None:
                dw_sum[i] += np.einsum(f"n{p}fg,n{p}cg->fcg", dyb, data[:size][window])
            if data_grad is not None and term is not None:
                if weights.shape[1] == 1:  # one filter per group: a broadcast product, 10% faster than einsum
                    np.multiply(dyb, weights[i], out=term[:size])
                else:
                    np.einsum(f"n{p}fg,fcg->n{p}cg", dyb, weights[i], out=term[:size])
                data_grad[:size][window] += term[:size]
        if data_grad is not None and dx is not None:
            _groups_last(dx[block], groups)[...] = data_grad[:size][interior]
    if dw is not None:
        dw[...] = dw_sum.transpose(3, 1, 2, 0).reshape(dw.shape)
    if db is not None:
        db[...] = dy.sum(axis=(0, *range(2, dy.ndim)))


def _groups_last(a: np.ndarray, groups: int) -> np.ndarray:
    """A view of ``a`` (N, C, *spatial) as (N, *spatial, C // groups, groups): channel ``k * (C // groups) + c``
    at ``[..., c, k]`` (splitting an axis in two is always a view, so it may be written through)."""
    moved = np.moveaxis(a, 1, -1)
    return moved.reshape(*moved.shape[:-1], groups, moved.shape[-1] // groups).swapaxes(-1, -2)
