"""The CPU column copies of conv_columns, bit for bit against plain loops over windows.

im2col and col2im (batch-first and batch-last) copy and add each kernel offset's slab clipped to
the unpadded data; these tests compare every element's bits with a reference that pads the data
and visits every (kernel offset, output position) pair, for strides, dilations, paddings, 1-D to
3-D kernels, channel-last and other non-contiguous inputs, batch 1 and three float dtypes.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import lazynd as mx
from lazynd.ops import conv_columns
from lazynd.ops.conv_columns import Geometry
from lazynd.runtime.device_push import kernel_context

KCTX = kernel_context(mx.cpu())

# (shape (N, C, *spatial), kernel, stride, dilate, pad)
GEOMETRIES = [
    ((2, 3, 9), (3,), (1,), (1,), (1,)),
    ((2, 2, 11), (3,), (2,), (2,), (2,)),
    ((1, 3, 1), (5,), (1,), (1,), (2,)),  # offsets that read nothing but padding
    ((2, 3, 6, 7), (3, 3), (1, 1), (1, 1), (1, 1)),
    ((3, 2, 7, 8), (3, 2), (2, 1), (1, 2), (0, 2)),
    ((1, 4, 9, 9), (3, 3), (2, 2), (2, 2), (2, 1)),
    ((2, 2, 5, 6), (5, 5), (1, 1), (1, 1), (0, 0)),
    ((2, 2, 4, 5), (1, 1), (1, 1), (1, 1), (0, 0)),  # pointwise
    ((2, 2, 4, 5), (1, 1), (2, 1), (1, 1), (1, 0)),
    ((2, 2, 4, 5, 6), (2, 3, 3), (1, 2, 1), (2, 1, 1), (1, 0, 2)),
]
DTYPES = [np.float16, np.float32, np.float64]


def _geometry(kernel, stride, dilate, pad) -> Geometry:
    return Geometry("Convolution", {"kernel": kernel, "stride": stride, "dilate": dilate, "pad": pad})


def _out_size(spatial, kernel, stride, dilate, pad):
    return tuple(
        (s + 2 * p - d * (k - 1) - 1) // st + 1
        for s, k, st, d, p in zip(spatial, kernel, stride, dilate, pad, strict=True)
    )


def _windows(spatial, kernel, stride, dilate, pad):
    """Every (kernel offset, output position, index into the padded data), offsets in row-major order."""
    out = _out_size(spatial, kernel, stride, dilate, pad)
    for offset in itertools.product(*[range(k) for k in kernel]):
        for pos in itertools.product(*[range(o) for o in out]):
            yield offset, pos, tuple(o * st + k * d for o, st, k, d in zip(pos, stride, offset, dilate, strict=True))


def reference_im2col(x, kernel, stride, dilate, pad):
    """(N, C, *spatial) -> (N, C, *kernel, *out), one element at a time from the padded data."""
    padded = np.pad(x, [(0, 0), (0, 0)] + [(p, p) for p in pad])
    out = _out_size(x.shape[2:], kernel, stride, dilate, pad)
    col = np.empty((*x.shape[:2], *kernel, *out), x.dtype)
    for offset, pos, index in _windows(x.shape[2:], kernel, stride, dilate, pad):
        col[(slice(None), slice(None), *offset, *pos)] = padded[(slice(None), slice(None), *index)]
    return col


def reference_col2im(col, spatial, kernel, stride, dilate, pad):
    """(N, C, *kernel, *out) -> (N, C, *spatial): every element's columns added to 0 in the kernel offsets' order."""
    padded = np.zeros((*col.shape[:2], *[s + 2 * p for s, p in zip(spatial, pad, strict=True)]), col.dtype)
    for offset, pos, index in _windows(spatial, kernel, stride, dilate, pad):
        padded[(slice(None), slice(None), *index)] += col[(slice(None), slice(None), *offset, *pos)]
    return padded[(slice(None), slice(None), *[slice(p, p + s) for p, s in zip(pad, spatial, strict=True)])]


def assert_same_bits(actual, expected):
    assert actual.shape == expected.shape and actual.dtype == expected.dtype
    bits = f"u{expected.dtype.itemsize}"
    np.testing.assert_array_equal(np.ascontiguousarray(actual).view(bits), np.ascontiguousarray(expected).view(bits))


def _data(shape, dtype, layout):
    """Random data of ``shape`` (N, C, *spatial): contiguous, a channel-last array's NC view, or a strided slice."""
    rng = np.random.default_rng(sum(shape))
    if layout == "contiguous":
        return rng.standard_normal(shape).astype(dtype)
    if layout == "channel_last":
        stored = rng.standard_normal((shape[0], *shape[2:], shape[1])).astype(dtype)
        return np.moveaxis(stored, -1, 1)
    wide = rng.standard_normal((shape[0], 2 * shape[1], *shape[2:-1], shape[-1] + 3)).astype(dtype)
    return wide[:, ::2, ..., 1 : 1 + shape[-1]]


def _columns(shape, kernel, stride, dilate, pad, dtype):
    """Random columns for data of ``shape``, with negative zeros (whose sign a sum must keep or drop as the loop does)."""
    rng = np.random.default_rng(7)
    col = rng.standard_normal((*shape[:2], *kernel, *_out_size(shape[2:], kernel, stride, dilate, pad))).astype(dtype)
    col[col > 1.0] = -0.0
    return col


@pytest.mark.parametrize("layout", ["contiguous", "channel_last", "strided"])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape, kernel, stride, dilate, pad", GEOMETRIES)
def test_im2col_copies_every_window_element_bit_for_bit(shape, kernel, stride, dilate, pad, dtype, layout):
    x = _data(shape, dtype, layout)
    expected = reference_im2col(x, kernel, stride, dilate, pad)
    g = _geometry(kernel, stride, dilate, pad)
    assert_same_bits(conv_columns.im2col(KCTX, x, g), expected)
    assert_same_bits(conv_columns.im2col_batch_last(KCTX, x, g), np.moveaxis(expected, 0, -1))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape, kernel, stride, dilate, pad", GEOMETRIES)
def test_col2im_sums_every_window_element_bit_for_bit(shape, kernel, stride, dilate, pad, dtype):
    col = _columns(shape, kernel, stride, dilate, pad, dtype)
    g = _geometry(kernel, stride, dilate, pad)
    if g.pointwise:  # the columns are the sums themselves, negative zeros included
        expected = col.reshape(shape)
    else:
        expected = reference_col2im(col, shape[2:], kernel, stride, dilate, pad)
    assert_same_bits(conv_columns.col2im(KCTX, col, shape[2:], g), expected)
    batch_last = conv_columns.col2im_batch_last(KCTX, np.ascontiguousarray(np.moveaxis(col, 0, -1)), shape[2:], g)
    assert_same_bits(batch_last, np.moveaxis(expected, 0, -1))


@pytest.mark.parametrize("shape, kernel, stride, dilate, pad", GEOMETRIES[:6])
def test_col2im_sums_straight_into_a_fitting_out_and_overwrites_it(shape, kernel, stride, dilate, pad):
    col = _columns(shape, kernel, stride, dilate, pad, np.float32)
    out = np.full(shape, np.nan, np.float32)
    result = conv_columns.col2im(KCTX, col, shape[2:], _geometry(kernel, stride, dilate, pad), out=out)
    assert result is out
    assert_same_bits(out, reference_col2im(col, shape[2:], kernel, stride, dilate, pad))


def test_col2im_leaves_an_out_of_another_dtype_alone():
    shape, window = (2, 3, 6, 7), ((3, 3), (1, 1), (1, 1), (1, 1))
    col = _columns(shape, *window, np.float32)
    out = np.full(shape, 5.0, np.float64)
    result = conv_columns.col2im(KCTX, col, shape[2:], _geometry(*window), out=out)
    assert result is not out and (out == 5.0).all()
    assert_same_bits(result, reference_col2im(col, shape[2:], *window))


def test_columns_of_an_empty_batch_are_empty():
    g = _geometry((3, 3), (1, 1), (1, 1), (1, 1))
    x = np.zeros((0, 2, 5, 5), np.float32)
    assert conv_columns.im2col(KCTX, x, g).shape == (0, 2, 3, 3, 5, 5)
    assert conv_columns.im2col_batch_last(KCTX, x, g).shape == (2, 3, 3, 5, 5, 0)
    assert conv_columns.col2im(KCTX, np.zeros((0, 2, 3, 3, 5, 5), np.float32), (5, 5), g).shape == (0, 2, 5, 5)
