"""BatchNorm's CPU kernels: passes over blocks of samples, no temporary of the data's size.

The data is seen as (outer, C, inner) (see :mod:`~lazynd.ops.norm`).  Each pass walks
blocks of whole samples (rows ``outer``, see :mod:`~lazynd.ops.cpu_blocks`) small enough
for their temporaries to stay in the cache, so a step costs one read of its inputs (and
one write of its output) instead of several passes through freshly allocated arrays of the data's size, whose
page faults cost as much as the arithmetic.  A per-channel vector enters the arithmetic
repeated to one sample's layout (C * inner), so that NumPy runs each step as a
contiguous loop over two arrays, about 1.5x faster than over a broadcast (C, 1) column.

The arithmetic is the formula's, in the same order and dtypes: each per-channel sum is
the sum of every (sample, channel) row over ``inner`` followed by the sum of those rows
over the samples, in order, which is the order NumPy's ``sum(axis=(0, 2))`` takes, so
float32 and float64 results are bitwise those of the plain formula.  (float16 data
sums in float32, as before, through casting buffers of another length: the same values
up to float32 rounding.)
"""

from __future__ import annotations

import numpy as np

from .cpu_blocks import Scratch, sample_blocks


def _per_element(vector: np.ndarray, inner: int) -> np.ndarray:
    """A per-channel ``vector`` repeated to one sample's layout, (C * inner,)."""
    return np.repeat(vector, inner)


def _row_sums(block: np.ndarray, inner: int, dtype: np.dtype, out: np.ndarray) -> None:
    """The sum of each (sample, channel) row of ``block`` (samples, C * inner) into ``out`` (samples, C)."""
    np.add.reduce(block.reshape(out.shape + (inner,)), axis=2, dtype=dtype, out=out)


def _channel_means(rows: np.ndarray, count: int, out: np.ndarray) -> None:
    """``rows`` (outer, C) of per-row sums, summed over the samples in order, divided by ``count``."""
    np.divide(np.add.reduce(rows, axis=0), count, out=out, casting="unsafe")


def _writable(target: np.ndarray, shape: tuple[int, int], read_later: np.ndarray | None = None) -> np.ndarray:
    """``target`` seen as ``shape`` to write into; a new array (copied back by :func:`_finish`)
    when ``target`` is not contiguous, so that a reshape would copy it, or overlaps
    ``read_later``, an input a block reads after writing its result."""
    if target.flags.c_contiguous and (read_later is None or not np.may_share_memory(target, read_later)):
        return target.reshape(shape)
    return np.empty(shape, target.dtype)


def _finish(result: np.ndarray, target: np.ndarray) -> None:
    if not np.may_share_memory(result, target):
        target[...] = result.reshape(target.shape)


def batch_moments(x: np.ndarray, mean: np.ndarray, var: np.ndarray) -> None:
    """Per-channel mean and biased variance (the mean of the squared deviations) of ``x``
    (outer, C, inner) into ``mean`` and ``var``: the values of ``x.mean(axis=(0, 2))`` and
    ``np.square(x - mean).mean(axis=(0, 2))`` (float16 data summed in float32, as ``mean`` does)."""
    outer, channels, inner = x.shape
    x2 = x.reshape(outer, channels * inner)
    accumulate = np.promote_types(x.dtype, np.float32)
    rows = np.empty((outer, channels), accumulate)
    for block in sample_blocks(*x2.shape):
        _row_sums(x2[block], inner, accumulate, rows[block])
    _channel_means(rows, outer * inner, mean)
    centre = _per_element(mean, inner)
    deviation = np.result_type(x, mean)
    rows = rows.astype(deviation, copy=False)
    scratch = Scratch(outer, x2.shape[1:], deviation)
    for block in sample_blocks(*x2.shape):
        part = np.subtract(x2[block], centre, out=scratch.of(block))
        np.square(part, out=part)
        _row_sums(part, inner, deviation, rows[block])
    _channel_means(rows, outer * inner, var)


def scale_shift(x: np.ndarray, scale: np.ndarray, shift: np.ndarray, out: np.ndarray) -> None:
    """``out = x * scale + shift`` per channel, ``x`` (outer, C, inner), rounded once into
    ``out``'s dtype (float16 output from the float32 result)."""
    outer, channels, inner = x.shape
    x2 = x.reshape(outer, channels * inner)
    y = _writable(out, x2.shape)
    scale, shift = _per_element(scale, inner), _per_element(shift, inner)
    computed = np.result_type(x, scale, shift)
    scratch = None if y.dtype == computed else Scratch(outer, x2.shape[1:], computed)
    for block in sample_blocks(*x2.shape):
        part = np.multiply(x2[block], scale, out=y[block] if scratch is None else scratch.of(block))
        part += shift
        if scratch is not None:
            y[block] = part
    _finish(y, out)


def _normalised(x: np.ndarray, centre: np.ndarray, invstd: np.ndarray, out: np.ndarray) -> np.ndarray:
    """``(x - centre) * invstd`` of one block, into ``out``."""
    np.subtract(x, centre, out=out)
    out *= invstd
    return out


def batch_norm_backward(
    dy: np.ndarray,
    x: np.ndarray,
    mean: np.ndarray,
    invstd: np.ndarray,
    coef: np.ndarray,
    global_stats: bool,
    dx: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """BatchNorm's data gradient into ``dx`` and the per-channel sums ``(sum(dy), sum(dy * xhat))``
    (in float32 at least) that give beta's and gamma's, ``x`` and ``dy`` (outer, C, inner).

    With batch statistics ``dx = (dy - sum(dy) / m - xhat * sum(dy * xhat) / m) * coef``, with the
    moving ones ``dx = dy * coef`` (``coef`` is gamma times the inverse std, ``m`` the count per
    channel); ``xhat = (x - mean) * invstd`` is recomputed per block rather than stored."""
    outer, channels, inner = x.shape
    x2, dy2 = x.reshape(outer, channels * inner), dy.reshape(outer, channels * inner)
    accumulate = np.promote_types(dy.dtype, np.float32)
    centre, inv = _per_element(mean, inner), _per_element(invstd, inner)
    rows_dy = np.empty((outer, channels), accumulate)
    rows_dy_xhat = np.empty((outer, channels), accumulate)
    xhat_scratch = Scratch(outer, x2.shape[1:], np.result_type(x, centre, inv))
    for block in sample_blocks(*x2.shape):
        _row_sums(dy2[block], inner, accumulate, rows_dy[block])
        product = _normalised(x2[block], centre, inv, xhat_scratch.of(block))
        product *= dy2[block]
        _row_sums(product, inner, accumulate, rows_dy_xhat[block])
    sum_dy, sum_dy_xhat = rows_dy.sum(axis=0), rows_dy_xhat.sum(axis=0)
    result = _writable(dx, x2.shape, read_later=x)
    count = outer * inner
    coef = _per_element(coef, inner)
    mean_dy, mean_dy_xhat = _per_element(sum_dy / count, inner), _per_element(sum_dy_xhat / count, inner)
    # the block's result straight into the gradient when it has the dtype the arithmetic gives
    computed = np.result_type(dy, coef) if global_stats else np.result_type(dy, mean_dy, coef)
    scratch = None if computed == result.dtype else Scratch(outer, x2.shape[1:], computed)
    for block in sample_blocks(*x2.shape):
        part = result[block] if scratch is None else scratch.of(block)
        if global_stats:
            np.multiply(dy2[block], coef, out=part)
        else:
            np.subtract(dy2[block], mean_dy, out=part)
            xhat = _normalised(x2[block], centre, inv, xhat_scratch.of(block))
            xhat *= mean_dy_xhat
            part -= xhat
            part *= coef
        if scratch is not None:
            result[block] = part
    _finish(result, dx)
    return sum_dy, sum_dy_xhat
