"""Pooling's CPU kernels (NumPy): max, avg and sum pooling and their gradients.

They loop over kernel offsets (never pixels), each step one vectorised NumPy operation
over strided slabs of the input.  When every window lies inside the input (no padding,
no extra window of the ``full`` convention) they take the batch a block of samples at
a time (:mod:`~lazynd.ops.cpu_blocks`), so that the slabs a block's steps read stay in
the cache, and read the input and write the gradient in place, with no padded copy.
Otherwise they work on a padded copy of the whole batch.

Max pooling's gradient goes to the first maximum of each window (in the order of
:meth:`~lazynd.ops.pooling.PoolGeometry.windows`), as the GPU kernel's does.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

import numpy as np

from .cpu_blocks import Scratch, sample_blocks

if TYPE_CHECKING:
    from .pooling import PoolGeometry


@functools.lru_cache(maxsize=64)
def avg_divisor(g: PoolGeometry, dtype: Any, include_pad: bool = True) -> np.ndarray:
    """The count of each average window: padding included (MXNet's default) or not.

    Counted once per geometry (read-only): a pass per kernel offset cost a global 7x7 average
    pooling a quarter of its time at every call."""
    # counted in float32 at least: a float16 count stops at 2048
    dtype = np.promote_types(dtype, np.float32)
    ones = np.zeros(g.padded(), dtype=dtype)
    if include_pad:
        ones[tuple(slice(0, s + 2 * p) for s, p in zip(g.spatial, g.pad, strict=True))] = 1
    else:
        ones[g.inner()[2:]] = 1
    count = np.zeros(g.out, dtype=dtype)
    for window in g.windows():
        count += ones[window[2:]]
    # a window past the padded input (the full convention's last, with a stride beyond the kernel)
    # holds nothing: it averages to 0 (its sum) rather than 0 / 0, as on the GPU
    np.maximum(count, 1, out=count)
    count.flags.writeable = False
    return count


def lowest(dtype: Any) -> Any:
    """Where max pooling starts, so what a window of padding alone gives: -inf for floats (NumPy's
    maximum of nothing, on both devices; MXNet 1.9.1 gives the lowest finite value), the smallest
    integer for integers, which hold no -inf."""
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        return -np.inf
    if dtype.kind == "b":
        return False
    return np.iinfo(dtype).min


def _inside(g: PoolGeometry) -> bool:
    """Every window lies inside the input: no padding, no extra window of the full convention."""
    return g.padded() == g.spatial


def _disjoint(g: PoolGeometry) -> bool:
    """No two windows share an element (stride at least the kernel on every axis)."""
    return all(st >= k for st, k in zip(g.stride, g.kernel, strict=True))


def _covered(g: PoolGeometry) -> bool:
    """The windows tile the input exactly: every element lies in one window."""
    return all(o * st == s and st == k for o, st, s, k in zip(g.out, g.stride, g.spatial, g.kernel, strict=True))


def _one_window(g: PoolGeometry) -> tuple | None:
    """The window, where each sample has a single one and it lies inside the input (global pooling,
    a kernel as large as the input); else None.  Such a window is one reduction over the spatial axes:
    looping over its offsets instead would take k*k passes over slabs of one element per channel."""
    if not _inside(g) or any(o != 1 for o in g.out):
        return None
    return (slice(None), slice(None)) + tuple(slice(0, k) for k in g.kernel)


def _per_sample(x: Any) -> int:
    return int(np.prod(x.shape[1:]))


def pool_forward(g: PoolGeometry, x: Any, out: Any, mode: str) -> None:
    """Max, avg or sum pooling of ``x`` into ``out``, both in (N, C, spatial...) order."""
    fill = lowest(x.dtype) if mode == "max" else 0
    if not _inside(g):
        source = np.full(x.shape[:2] + g.padded(), fill, dtype=x.dtype)
        source[g.inner()] = x
    else:
        # out= a view of the data: the accumulation below would overwrite it before reading it
        source = x.copy() if np.may_share_memory(x, out) else x
    combine = np.maximum if mode == "max" else np.add
    windows = list(g.windows())
    # accumulate straight into the output (no fill, no temporary), but sum float16 windows in
    # float32, as MXNet does: a float16 sum stops growing at 2048 times the step of its elements
    total = out if mode == "max" or out.dtype.itemsize >= 4 else np.empty(out.shape, np.float32)
    window = _one_window(g)
    if window is not None:
        spatial = tuple(range(2, x.ndim))
        if mode == "max":
            np.max(source[window], axis=spatial, keepdims=True, out=total)
        else:
            np.sum(source[window], axis=spatial, dtype=total.dtype, keepdims=True, out=total)
    else:
        for block in sample_blocks(x.shape[0], _per_sample(x)):
            part, read = total[block], source[block]
            if len(windows) == 1:
                part[...] = read[windows[0]]
            else:
                combine(read[windows[0]], read[windows[1]], out=part)
            for offset in windows[2:]:
                combine(part, read[offset], out=part)
    if mode == "avg":
        divisor = avg_divisor(g, x.dtype)
        first = divisor.flat[0]
        np.divide(total, first if (divisor == first).all() else divisor, out=total)
    if total is not out:
        out[...] = total


def pool_backward(g: PoolGeometry, x: Any, y: Any, dy: Any, dx: Any, mode: str) -> None:
    """The gradient ``dx`` of max, avg or sum pooling, all in (N, C, spatial...) order."""
    in_place = _inside(g) and not any(np.may_share_memory(dx, a) for a in (x, y, dy))
    # the in-place max gradient masks the head gradient by multiplying (0 * inf is NaN): where
    # windows overlap, a non-finite one takes the padded route, which selects (disjoint windows
    # have always multiplied: a window's non-finite gradient is NaN at its other elements)
    window = _one_window(g)
    if window is not None and in_place:
        _one_window_backward(window, x, y, dy, dx, mode, avg_divisor(g, x.dtype) if mode == "avg" else None)
        return
    if mode == "max" and in_place and (_disjoint(g) or np.isfinite(dy).all()):
        _max_pool_backward_in_place(g, x, y, dy, dx)
        return
    share = dy / avg_divisor(g, x.dtype) if mode == "avg" else dy
    if mode != "max" and in_place:
        dx[...] = 0
        for block in sample_blocks(x.shape[0], _per_sample(x)):
            for window in g.windows():
                dx[block][window] += share[block]
        return
    grad = np.zeros(x.shape[:2] + g.padded(), dtype=x.dtype)
    if mode == "max":
        padded = np.full(grad.shape, -np.inf, dtype=x.dtype)
        padded[g.inner()] = x
        unclaimed = np.ones(y.shape, dtype=bool)
        for window in g.windows():
            hit = unclaimed & (padded[window] == y)
            grad[window] += np.where(hit, dy, 0)
            unclaimed &= ~hit
    else:
        for window in g.windows():
            grad[window] += share
    dx[...] = grad[g.inner()]


def _one_window_backward(window: tuple, x: Any, y: Any, dy: Any, dx: Any, mode: str, divisor: Any) -> None:
    """The gradient of a pool with one window per sample (see :func:`_one_window`), in a few whole-array
    passes: the head gradient spread over the window (avg, sum), or put on the window's first maximum
    in row-major order, the order of the offsets the general loop takes (max), selected so that a
    non-finite head gradient leaves the window's other elements at 0 (global pooling's stride 1
    made the loop take its selecting route for those)."""
    if any(w.stop != n for w, n in zip(window[2:], x.shape[2:], strict=True)):
        dx[...] = 0  # elements outside the window
    region = dx[window]
    if mode != "max":
        region[...] = dy if divisor is None else dy / divisor
        return
    n, c = x.shape[:2]
    equal = x[window].reshape(n, c, -1) == y.reshape(n, c, 1)
    hit = np.zeros(equal.shape, dtype=bool)
    np.put_along_axis(hit, equal.argmax(axis=-1)[..., None], equal.any(axis=-1)[..., None], axis=-1)
    region[...] = np.where(hit, dy.reshape(n, c, 1), 0).reshape(region.shape)


def _max_pool_backward_in_place(g: PoolGeometry, x: Any, y: Any, dy: Any, dx: Any) -> None:
    """Max pooling's gradient when every window lies inside the input (no padding: LeNet's 2x2
    pools, overlapping 2x2 windows of stride 1; for overlapping ones, of a finite head gradient):
    written into ``dx`` a block of samples at a time, with no padded copy of ``x`` and no gradient buffer to copy back.
    Disjoint windows write their part once; overlapping ones add theirs to a zeroed gradient.
    A window's part is ``dy * hit`` (``hit``: its first maximum), the values ``where(hit, dy, 0)``
    gives for a finite ``dy`` (up to the sign of a zero, which adding to the gradient drops),
    at a fifth of the cost."""
    disjoint = _disjoint(g)
    if not (disjoint and _covered(g)):
        dx[...] = 0  # elements outside every window, or in several
    hits, unclaimed = Scratch(y.shape[0], y.shape[1:], np.dtype(bool)), Scratch(y.shape[0], y.shape[1:], np.dtype(bool))
    shares = None if disjoint else Scratch(y.shape[0], y.shape[1:], dx.dtype)
    for block in sample_blocks(x.shape[0], _per_sample(x)):
        read, top, head, grad = x[block], y[block], dy[block], dx[block]
        hit, free = hits.of(block), unclaimed.of(block)
        free.fill(True)
        for window in g.windows():
            np.equal(read[window], top, out=hit)
            hit &= free
            if shares is None:
                np.multiply(head, hit, out=grad[window])
            else:
                grad[window] += np.multiply(head, hit, out=shares.of(block))
            np.greater(free, hit, out=free)  # unclaimed and not hit
