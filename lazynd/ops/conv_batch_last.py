"""Convolution's CPU kernels in the batch-last layout, walked a chunk of output rows at a time.

In the batch-last layout (see :func:`~lazynd.ops.conv_columns.uses_batch_last`) the columns are
``(C, *kernel, *out, N)`` and every product is one plain GEMM over (channels x kernel,
positions x batch).  Those columns are large: 16 MB for LeNet's second layer at batch 128,
11 times its data.  Made whole, they stream through memory twice: written by im2col's copy,
read back by the GEMM (and in the backward the data gradient's columns, written by a GEMM and
read back by col2im).  Here each kernel walks the first output axis
:data:`~lazynd.ops.conv_columns.COLUMN_CHUNK_BYTES` of columns at a time instead: a chunk's
columns are copied, multiplied and, for the data gradient, summed back into place while they
are still in the cache, through two chunk buffers reused for the whole batch.  A chunk of rows is a range of each product's columns (the
positions x batch axis), so every GEMM still takes plain strided matrices, and the weight
gradient is the sum of the chunks' products.

NumPy only: the GPU keeps its column kernels.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from . import conv_columns
from .conv_columns import Geometry
from .cpu_blocks import copy_batch_first

Empty = Callable[[tuple[int, ...], Any], np.ndarray]


class BatchLastWindows:
    """The windows of data ``x`` (N, C, *spatial) in the batch-last layout: a strided view
    ``(C, *kernel, *out, N)`` of one padded, transposed copy ``(C, *padded, N)`` of the data (in a
    buffer of ``empty``), copied into contiguous columns a chunk of output rows at a time."""

    def __init__(self, x: np.ndarray, g: Geometry, empty: Empty) -> None:
        self.g = g
        self.out = g.out_size("Convolution", tuple(x.shape[2:]))
        padded = tuple(s + 2 * p for s, p in zip(x.shape[2:], g.pad, strict=True))
        moved = empty((x.shape[1], *padded, x.shape[0]), x.dtype)  # (C, *padded, N)
        if any(g.pad):
            moved.fill(0)
        moved[(slice(None), *g.interior(tuple(x.shape[2:])))] = np.moveaxis(x, 0, -1)
        spans = [d * (k - 1) + 1 for k, d in zip(g.kernel, g.dilate, strict=True)]
        win = np.lib.stride_tricks.sliding_window_view(moved, spans, axis=tuple(range(1, 1 + g.nd)))
        index = (slice(None),) + tuple(slice(0, s * (o - 1) + 1, s) for s, o in zip(g.stride, self.out, strict=True))
        index += (slice(None),) + tuple(slice(None, None, d) for d in g.dilate)
        perm = (0, *range(2 + g.nd, 2 + 2 * g.nd), *range(1, 1 + g.nd), 1 + g.nd)
        self.view = win[index].transpose(perm)

    def copy_rows(self, rows: slice, col: np.ndarray) -> None:
        """Columns of the output rows ``rows`` into ``col`` (C, *kernel, rows, *out[1:], N)."""
        g = self.g
        col[...] = self.view[(slice(None),) * (1 + g.nd) + (rows,)]


def row_chunks(
    g: Geometry, channels: int, out: tuple[int, ...], batch: int, itemsize: int
) -> tuple[int, Iterator[slice]]:
    """Rows per chunk of the first output axis (:data:`~lazynd.ops.conv_columns.COLUMN_CHUNK_BYTES`
    of columns, at least one row), and the chunks' slices of that axis."""
    row_bytes = channels * math.prod(g.kernel) * math.prod(out[1:]) * batch * itemsize
    rows = max(min(conv_columns.COLUMN_CHUNK_BYTES // max(row_bytes, 1), out[0]), 1)
    return rows, (slice(a, min(a + rows, out[0])) for a in range(0, out[0], rows))


def conv_forward_batch_last(
    empty: Empty, matmul: Callable, g: Geometry, groups: int, x: np.ndarray, w: np.ndarray, bias: Any, out_nc: Any
) -> None:
    """The forward: per chunk of output rows, one GEMM (F, C x kernel) @ (C x kernel, rows x N),
    written into its range of the batch-last result, then moved to batch-first with the bias."""
    windows = BatchLastWindows(x, g, empty)
    out, n, filters = windows.out, x.shape[0], w.shape[0]
    per_row = math.prod(out[1:]) * n  # columns of the product in one output row
    y = empty((groups, filters // groups, math.prod(out) * n), x.dtype)
    wm = w.reshape(groups, filters // groups, -1)
    rows, chunks = row_chunks(g, x.shape[1], out, n, x.itemsize)
    col = empty((x.shape[1], *g.kernel, rows, *out[1:], n), x.dtype)
    for chunk in chunks:
        part = col[(slice(None),) * (1 + g.nd) + (slice(0, chunk.stop - chunk.start),)]
        windows.copy_rows(chunk, part)
        matmul(wm, part.reshape(groups, wm.shape[2], -1), y[:, :, chunk.start * per_row : chunk.stop * per_row])
    copy_batch_first(y.reshape(filters, *out, n), out_nc, bias)


def conv_backward_batch_last(
    empty: Empty, matmul: Callable, g: Geometry, groups: int, x: np.ndarray, w: np.ndarray, dy: np.ndarray, grads: list
) -> None:
    """The backward: per chunk of output rows, the weight gradient's GEMM (summed over the chunks)
    and the data gradient's GEMM, whose columns are added back into place at once; ``grads`` =
    [data, weight(, bias)] in NC order, a gradient given as None not computed."""
    dx, dw = grads[0], grads[1]
    db = grads[2] if len(grads) > 2 else None
    n, channels, filters = x.shape[0], x.shape[1], w.shape[0]
    out = tuple(dy.shape[2:])
    per_row = math.prod(out[1:]) * n
    dyt = empty((filters, *out, n), dy.dtype)
    dyt[...] = np.moveaxis(dy, 0, -1)
    dyt = dyt.reshape(groups, filters // groups, -1)  # (F, *out * N)
    wm = w.reshape(groups, filters // groups, -1)
    depth = wm.shape[2]  # channels per group x kernel size: the rows of a group's columns
    rows, chunks = row_chunks(g, channels, out, n, x.itemsize)
    chunk_shape = (channels, *g.kernel, rows, *out[1:], n)
    windows = BatchLastWindows(x, g, empty) if dw is not None else None
    col = empty(chunk_shape, x.dtype) if dw is not None else None
    dcol = empty(chunk_shape, x.dtype) if dx is not None else None
    # the weight gradient as (col @ dy^T)^T: OpenBLAS runs this orientation 25-40% faster than dy @ col^T
    dwt = empty((groups, depth, filters // groups), x.dtype) if dw is not None else None
    dwt_part = empty((groups, depth, filters // groups), x.dtype) if dw is not None else None
    padded = tuple(s + 2 * p for s, p in zip(x.shape[2:], g.pad, strict=True))
    dx_t = empty((channels, *padded, n), x.dtype) if dx is not None else None
    if dx_t is not None:
        dx_t.fill(0)
    for first, chunk in enumerate(chunks):
        count = chunk.stop - chunk.start
        head = dyt[:, :, chunk.start * per_row : chunk.stop * per_row]
        rows_of = (slice(None),) * (1 + g.nd) + (slice(0, count),)
        if windows is not None and col is not None and dwt is not None and dwt_part is not None:
            part = col[rows_of]
            windows.copy_rows(chunk, part)
            target = dwt if first == 0 else dwt_part
            matmul(part.reshape(groups, depth, -1), head.transpose(0, 2, 1), target)
            if target is dwt_part:
                dwt += dwt_part
        if dcol is not None and dx_t is not None:
            part = dcol[rows_of]
            matmul(wm.transpose(0, 2, 1), head, part.reshape(groups, depth, -1))
            _add_columns_back(g, part, chunk.start, dx_t)
    if dw is not None and dwt is not None:
        dw[...] = dwt.transpose(0, 2, 1).reshape(w.shape)
    if dx is not None and dx_t is not None:
        interior = (slice(None), *g.interior(tuple(x.shape[2:])))
        copy_batch_first(dx_t[interior] if any(g.pad) else dx_t, dx)
    if db is not None:
        db[...] = dyt.reshape(filters, -1).sum(axis=1)


def _add_columns_back(g: Geometry, col: np.ndarray, first_row: int, x: np.ndarray) -> None:
    """col2im of one chunk: add columns (C, *kernel, rows, *out[1:], N) of the output rows from
    ``first_row`` on into the padded, batch-last data gradient ``x`` (C, *padded, N)."""
    positions = col.shape[1 + g.nd : 1 + 2 * g.nd]
    shift = first_row * g.stride[0]
    for offset in g.offsets():
        window = g.window(offset, positions)
        rows = slice(window[0].start + shift, window[0].stop + shift, window[0].step)
        source: tuple[slice | int, ...] = (slice(None), *offset)
        x[(slice(None), rows, *window[1:])] += col[source]
