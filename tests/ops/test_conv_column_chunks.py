"""The CPU convolution copies and multiplies its columns in chunks (blocks of samples in the
batch-first layout, of output rows in the batch-last one): any chunking gives the convolution and
the gradients of one whole chunk and of the other layout, strides, dilations, padding, groups,
channel-last layouts and uneven last chunks included."""

from __future__ import annotations

import numpy as np
import pytest
from conv_reference import naive_conv

import lazynd
from lazynd.ops import conv_batch_last, conv_columns

CASES = {
    "LeNet's second layer, smaller": ((8, 4, 9, 9), (5, 5), (1, 1), (0, 0), (1, 1), 1, None),
    "stride 2, padded, uneven rows": ((8, 4, 13, 7), (3, 3), (2, 1), (1, 1), (1, 1), 2, None),
    "dilated, groups": ((8, 4, 11, 8), (3, 2), (1, 2), (1, 0), (2, 1), 2, None),
    "1-D": ((9, 3, 14), (3,), (2,), (1,), (1,), 1, None),
    "3-D": ((8, 2, 6, 4, 5), (2, 3, 2), (1, 1, 2), (0, 1, 1), (1, 1, 1), 1, None),
    "channel-last": ((10, 7, 5, 6), (3, 3), (1, 1), (1, 1), (1, 1), 1, "NHWC"),
    "pointwise": ((8, 6, 5, 4), (1, 1), (1, 1), (0, 0), (1, 1), 1, None),
}


def _arrays(case, dtype):
    shape, kernel, stride, pad, dilate, groups, layout = CASES[case]
    rng = np.random.default_rng(len(shape) + shape[-1])
    channels = shape[-1] if layout else shape[1]
    w = rng.standard_normal((6, channels // groups, *kernel))
    params = dict(kernel=kernel, stride=stride, pad=pad, dilate=dilate, num_filter=6, num_group=groups, layout=layout)
    x_nc = rng.standard_normal(shape if not layout else (shape[0], shape[-1], *shape[1:-1]))
    x = np.moveaxis(x_nc, 1, -1) if layout else x_nc
    w_given = np.moveaxis(w, 1, -1) if layout else w
    bias = rng.standard_normal(6)
    return params, x_nc, w, bias, [lazynd.nd.array(a, dtype=dtype) for a in (x, w_given, bias)]


def _run(params, arrays, dy=None):
    y = lazynd.nd.Convolution(*arrays, **params)
    if dy is None:
        dy = lazynd.nd.array(np.random.default_rng(2).standard_normal(y.shape), dtype=arrays[0].dtype)
    grads = lazynd.nd._backward_Convolution(dy, arrays[0], arrays[1], **params)
    return [y.asnumpy()] + [g.asnumpy() for g in grads], dy


def _out(case):
    shape, kernel, stride, pad, dilate, _, layout = CASES[case]
    spatial = shape[1:-1] if layout else shape[2:]
    g = conv_columns.Geometry("Convolution", dict(kernel=kernel, stride=stride, pad=pad, dilate=dilate))
    return g.out_size("Convolution", spatial)


def _chunk_bytes(case, rows):
    """:data:`COLUMN_CHUNK_BYTES` that makes chunks of ``rows`` output rows of ``case`` in float64."""
    shape, kernel, _, _, _, _, layout = CASES[case]
    out = _out(case)
    channels = shape[-1] if layout else shape[1]
    return rows * channels * int(np.prod(kernel)) * int(np.prod(out[1:])) * shape[0] * 8


def _assert_same_convolution(params, x_nc, w, bias, got, reference):
    """``got`` (output and gradients of one route) against the naive convolution and ``reference``
    (the same from the other route)."""
    want_y = naive_conv(x_nc, w, bias, params["stride"], params["pad"], params["dilate"], params["num_group"])
    np.testing.assert_allclose(np.moveaxis(got[0], -1, 1) if params["layout"] else got[0], want_y, rtol=1e-10)
    for name, mine, want in zip(("output", "data", "weight", "bias"), got, reference, strict=True):
        np.testing.assert_allclose(mine, want, rtol=1e-10, atol=1e-10, err_msg=name)


@pytest.mark.parametrize("rows", [1, 2, 1 << 20], ids=["one row a chunk", "two rows a chunk", "one chunk"])
@pytest.mark.parametrize("case", CASES)
def test_batch_last_convolution_in_chunks_of_rows_is_the_per_sample_convolution(monkeypatch, case, rows):
    monkeypatch.setattr(conv_columns, "BATCH_LAST_MIN_BACKWARD_COLUMN", 0)
    monkeypatch.setattr(conv_columns, "BATCH_LAST_MAX_FORWARD_POSITIONS", 1 << 30)
    monkeypatch.setattr(conv_columns, "COLUMN_CHUNK_BYTES", _chunk_bytes(case, rows))
    params, x_nc, w, bias, arrays = _arrays(case, "float64")
    chunked, dy = _run(params, arrays)
    monkeypatch.setattr(conv_columns, "BATCH_LAST_MIN_BATCH", 1 << 30)
    per_sample, _ = _run(params, arrays, dy)
    _assert_same_convolution(params, x_nc, w, bias, chunked, per_sample)


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_batch_last_convolution_in_chunks_keeps_the_dtype_and_its_precision(monkeypatch, dtype):
    monkeypatch.setattr(conv_columns, "BATCH_LAST_MIN_BACKWARD_COLUMN", 0)
    monkeypatch.setattr(conv_columns, "COLUMN_CHUNK_BYTES", 1)
    params, _, _, _, arrays = _arrays("stride 2, padded, uneven rows", dtype)
    chunked, dy = _run(params, arrays)
    monkeypatch.setattr(conv_columns, "COLUMN_CHUNK_BYTES", 1 << 30)
    whole, _ = _run(params, arrays, dy)
    tolerance = 1e-5 if dtype == "float32" else 1e-2
    for name, got, want in zip(("output", "data", "weight", "bias"), chunked, whole, strict=True):
        assert got.dtype == np.dtype(dtype), name
        scale = max(float(np.abs(want.astype(np.float64)).max()), 1.0)
        np.testing.assert_allclose(got, want, rtol=tolerance, atol=tolerance * scale, err_msg=name)


@pytest.mark.parametrize("left_out", [0, 1])
def test_batch_last_backward_in_chunks_leaves_out_a_gradient_given_as_none(monkeypatch, left_out):
    monkeypatch.setattr(conv_columns, "BATCH_LAST_MIN_BACKWARD_COLUMN", 0)
    monkeypatch.setattr(conv_columns, "COLUMN_CHUNK_BYTES", 1)
    params, _, _, _, arrays = _arrays("stride 2, padded, uneven rows", "float64")
    full, dy = _run(params, arrays)
    out = [None if i == left_out else lazynd.nd.zeros(g.shape, dtype="float64") for i, g in enumerate(full[1:])]
    lazynd.nd._backward_Convolution(dy, arrays[0], arrays[1], out=out, **params)
    for i, (got, want) in enumerate(zip(out, full[1:], strict=True)):
        if got is not None:
            np.testing.assert_allclose(got.asnumpy(), want, rtol=1e-12, atol=1e-12, err_msg=f"gradient {i}")


def test_chunks_cover_the_output_rows_once_in_order(monkeypatch):
    g = conv_columns.Geometry("Convolution", dict(kernel=(3, 3)))
    two_rows = 2 * 4 * 9 * 6 * 8 * 4  # of (4 channels, 3x3, 6 positions, 8 samples) float32
    monkeypatch.setattr(conv_columns, "COLUMN_CHUNK_BYTES", two_rows)
    rows, chunks = conv_batch_last.row_chunks(g, 4, (5, 6), 8, 4)
    assert rows == 2 and list(chunks) == [slice(0, 2), slice(2, 4), slice(4, 5)]
    monkeypatch.setattr(conv_columns, "COLUMN_CHUNK_BYTES", 1)
    rows, chunks = conv_batch_last.row_chunks(g, 4, (3, 6), 8, 4)
    assert rows == 1 and list(chunks) == [slice(0, 1), slice(1, 2), slice(2, 3)]


@pytest.mark.parametrize("samples", [1, 3, 1 << 20], ids=["one sample a block", "three samples a block", "one block"])
@pytest.mark.parametrize("case", CASES)
def test_batch_first_convolution_in_blocks_of_samples_is_the_whole_convolution(monkeypatch, case, samples):
    monkeypatch.setattr(conv_columns, "BATCH_LAST_MIN_BATCH", 1 << 30)
    shape, kernel, _, _, _, _, layout = CASES[case]
    channels = shape[-1] if layout else shape[1]
    per_sample = channels * int(np.prod(kernel)) * int(np.prod(_out(case))) * 8  # bytes of float64 columns
    monkeypatch.setattr(conv_columns, "COLUMN_CHUNK_BYTES", samples * per_sample)
    params, x_nc, w, bias, arrays = _arrays(case, "float64")
    blocks, dy = _run(params, arrays)
    monkeypatch.setattr(conv_columns, "COLUMN_CHUNK_BYTES", 1 << 40)
    whole, _ = _run(params, arrays, dy)
    _assert_same_convolution(params, x_nc, w, bias, blocks, whole)


def test_im2col_blocks_cover_the_batch_once_in_order(monkeypatch):
    g = conv_columns.Geometry("Convolution", dict(kernel=(3, 3), pad=(1, 1)))
    x = np.random.default_rng(0).standard_normal((7, 2, 5, 4)).astype(np.float32)
    whole = conv_columns.im2col(_Host, x, g)
    monkeypatch.setattr(conv_columns, "COLUMN_CHUNK_BYTES", 3 * whole[0].nbytes)
    seen = []
    for block, col in conv_columns.im2col_blocks(_Host, x, g, np.empty):
        seen.append(block)
        np.testing.assert_array_equal(col, whole[block])
    assert seen == [slice(0, 3), slice(3, 6), slice(6, 7)]


class _Host:
    xp = np
