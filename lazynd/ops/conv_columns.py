"""The column machinery behind Convolution and Deconvolution: window geometry, im2col and col2im.

:class:`Geometry` holds a window's kernel, stride, dilation and padding.  The CPU
im2col copies each kernel offset's slab of the columns ``(N, C, *kernel, *out)``
from the input in one strided copy; col2im, its adjoint, adds each slab back (a
loop over kernel positions, never over pixels); neither builds a padded copy.  On the GPU
both come from our kernels (``kernels/conv.cu``).

On the CPU, batches of 8 or more may take a batch-last layout instead (see
``BATCH_LAST_MIN_BATCH``): columns ``(C, *kernel, *out, N)``, so that each product
is one plain GEMM; :func:`uses_batch_last` and :func:`uses_batch_last_backward`
decide when.
"""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np

from ..backend.cuda.sources import dtype_name, launch_config, load_file
from ..errors import OperatorError, ShapeError


class Geometry:
    """Kernel, stride, dilation and padding of a convolution, one entry per spatial axis."""

    def __init__(self, op: str, attrs: dict, ndim: int | None = None) -> None:
        kernel = tuple(attrs["kernel"])
        nd = len(kernel)
        if nd not in (1, 2, 3) or any(k <= 0 for k in kernel):
            raise OperatorError(f"{op}: kernel must have 1 to 3 positive sizes, got {kernel}")
        if ndim is not None and ndim != nd + 2:
            raise ShapeError(f"{op}: data must be {nd + 2}-D for a {nd}-D kernel {kernel}, got {ndim}-D")
        layout = attrs.get("layout")
        if layout is not None and len(layout) != nd + 2:
            raise OperatorError(f"{op}: layout {layout} does not fit a {nd}-D kernel {kernel}")

        def fill(name: str, default: int) -> tuple[int, ...]:
            value = tuple(attrs.get(name) or ()) or (default,) * nd
            if len(value) != nd:
                raise OperatorError(f"{op}: {name} {value} must have {nd} entries like kernel {kernel}")
            return value

        self.nd = nd
        self.kernel = kernel
        self.stride = fill("stride", 1)
        self.dilate = fill("dilate", 1)
        self.pad = fill("pad", 0)
        if any(s <= 0 for s in self.stride) or any(d <= 0 for d in self.dilate) or any(p < 0 for p in self.pad):
            raise OperatorError(
                f"{op}: stride {self.stride} and dilate {self.dilate} must be positive, pad {self.pad} non-negative"
            )
        self.channel_last = layout is not None and layout.endswith("C")
        # a 1x1 window moving one step without padding: the columns are the data itself
        self.pointwise = all(k == 1 for k in kernel) and all(s == 1 for s in self.stride) and not any(self.pad)

    def out_size(self, op: str, spatial: tuple[int, ...]) -> tuple[int, ...]:
        out = []
        for i, size in enumerate(spatial):
            span = self.dilate[i] * (self.kernel[i] - 1) + 1
            if size and size + 2 * self.pad[i] < span:
                raise ShapeError(f"{op}: input size {spatial} with pad {self.pad} is smaller than kernel {self.kernel}")
            out.append((size + 2 * self.pad[i] - span) // self.stride[i] + 1 if size else 0)
        return tuple(out)

    # channel-last arrays are handled as transposed views of channels-second ones
    def to_nc(self, x: Any) -> Any:
        return x.transpose((0, x.ndim - 1, *range(1, x.ndim - 1))) if self.channel_last else x

    def from_nc_shape(self, shape: tuple) -> tuple:
        return (shape[0], *shape[2:], shape[1]) if self.channel_last else tuple(shape)

    def to_nc_shape(self, shape: tuple) -> tuple:
        return (shape[0], shape[-1], *shape[1:-1]) if self.channel_last else tuple(shape)


# -- im2col / col2im -----------------------------------------------------------------------------
_SOURCE = load_file("conv.cu")


def _gpu_dims(g: Geometry, spatial: tuple, out: tuple) -> list[int]:
    pad3 = 3 - g.nd
    return (
        [1] * pad3
        + list(spatial)
        + [1] * pad3
        + list(g.kernel)
        + [1] * pad3
        + list(out)
        + [1] * pad3
        + list(g.stride)
        + [1] * pad3
        + list(g.dilate)
        + [0] * pad3
        + list(g.pad)
    )


def _check_gpu_dtype(x: Any) -> str:
    name = dtype_name(x.dtype)
    if name not in ("float32", "float64"):
        raise OperatorError(f"convolution on the GPU supports float32 and float64, got {name}")
    return name


def im2col(kctx: Any, x: Any, g: Geometry) -> Any:
    """(N, C, *spatial) -> contiguous columns (N, C, *kernel, *out): for a pointwise geometry the data
    itself, reshaped (the callers only read columns)."""
    xp = kctx.xp
    out = g.out_size("Convolution", tuple(x.shape[2:]))
    if g.pointwise:  # the data are the columns: a view (the callers only read columns)
        return xp.ascontiguousarray(x).reshape(*x.shape[:2], *g.kernel, *out)
    if xp is not np:
        x = xp.ascontiguousarray(x)
        col = xp.empty((*x.shape[:2], *g.kernel, *out), dtype=x.dtype)
        fn = _SOURCE.function(kctx.device_id, f"lazynd_im2col_{_check_gpu_dtype(x)}")
        grid, block = launch_config(col.size)
        fn(
            grid,
            block,
            (x, col, np.int64(col.size), np.int32(x.shape[1]), *[np.int32(v) for v in _gpu_dims(g, x.shape[2:], out)]),
        )
        return col
    return _im2col_host(kctx, x, g, out)


def col2im(kctx: Any, col: Any, spatial: tuple[int, ...], g: Geometry, out: Any = None) -> Any:
    """Sum columns (N, C, *kernel, *out) back into an (N, C, *spatial) array (the adjoint of im2col).

    The sums go straight into ``out`` when it is given, C-contiguous and of the result's dtype
    (it is returned); otherwise into a new array (on the CPU a pooled one); for a pointwise
    geometry the result is ``col`` itself, reshaped (the callers copy what they keep).
    """
    xp = kctx.xp
    n, c = col.shape[:2]
    positions = col.shape[2 + g.nd :]
    if g.pointwise:  # every column is one element: nothing to sum (a view: the callers copy it)
        return col.reshape(n, c, *spatial)
    if xp is not np:
        col = xp.ascontiguousarray(col)
        if out is not None and out.shape == (n, c, *spatial) and out.flags.c_contiguous and out.dtype == col.dtype:
            x = out
            x.fill(0)  # the kernel adds each column into its place
        else:
            x = xp.zeros((n, c, *spatial), dtype=col.dtype)
        fn = _SOURCE.function(kctx.device_id, f"lazynd_col2im_{_check_gpu_dtype(col)}")
        grid, block = launch_config(col.size)
        fn(
            grid,
            block,
            (col, x, np.int64(col.size), np.int32(c), *[np.int32(v) for v in _gpu_dims(g, spatial, positions)]),
        )
        return x
    return _col2im_host(kctx, col, spatial, g, out)


# Batch-last layout on the CPU: with the batch axis innermost, every slab that im2col copies
# and col2im adds is a run of (out width x batch) contiguous elements instead of one output
# row, and each product is one GEMM over (channels x kernel, positions x batch) instead of a
# GEMM per sample (plus a sum over the batch for the weight gradient).  Worth it once the
# batch is a few rows long.  The forward pays a transpose of its output back to batch-first,
# so it takes this layout only when the per-sample GEMMs would be thin (few output
# positions): there the batch-first im2col copies runs of one short output row and OpenBLAS
# runs far below its peak on (filters x positions) products.
BATCH_LAST_MIN_BATCH = 8
BATCH_LAST_MAX_FORWARD_POSITIONS = 256
# The backward's batch-last layout pays for its transposed copies of dy and of the data gradient
# only with long enough columns (channels per group x kernel size).  Measured at batch 128: 1 x 3x3
# (9) runs 2.3x faster in the batch-first layout, 1 x 5x5 (25) and 3 x 3x3 (27) 2-6% faster;
# 4 x 3x3 (36) 1.5x slower, 20 x 5x5 (500, LeNet's second layer) 2.2x slower.
BATCH_LAST_MIN_BACKWARD_COLUMN = 32


def uses_batch_last(xp: Any, batch: int, positions: int | None = None) -> bool:
    """Whether the CPU kernels take the batch-last layout (``positions``: the forward's output positions)."""
    if xp is not np or batch < BATCH_LAST_MIN_BATCH:
        return False
    return positions is None or positions <= BATCH_LAST_MAX_FORWARD_POSITIONS


def uses_batch_last_backward(xp: Any, batch: int, column: int) -> bool:
    """Whether the CPU backward takes the batch-last layout (``column``: channels per group x kernel size)."""
    return uses_batch_last(xp, batch) and column >= BATCH_LAST_MIN_BACKWARD_COLUMN


def im2col_batch_last(kctx: Any, x: np.ndarray, g: Geometry) -> np.ndarray:
    """(N, C, *spatial) -> contiguous columns (C, *kernel, *out, N) (NumPy only)."""
    out = g.out_size("Convolution", tuple(x.shape[2:]))
    n, c = x.shape[:2]
    xt = host_empty(kctx)((c, *x.shape[2:], n), x.dtype)  # the data batch-last, copied once
    xt[...] = np.moveaxis(x, 0, -1)
    if g.pointwise:  # the data are the columns
        return xt.reshape(c, *g.kernel, *out, n)
    col = host_empty(kctx)((c, *g.kernel, *out, n), x.dtype)
    _fill_columns(col, xt, g)
    return col


def col2im_batch_last(kctx: Any, col: np.ndarray, spatial: tuple[int, ...], g: Geometry) -> np.ndarray:
    """Sum columns (C, *kernel, *out, N) back into a (C, *spatial, N) array (the adjoint of im2col_batch_last).

    The result is a new pooled buffer, or for a pointwise geometry ``col`` itself reshaped.
    """
    c, n = col.shape[0], col.shape[-1]
    if g.pointwise:
        return col.reshape(c, *spatial, n)
    x = host_empty(kctx)((c, *spatial, n), col.dtype)
    _sum_columns(x, col, g)
    return x


# -- the CPU column copies -----------------------------------------------------------------------
# Each kernel offset's slab of the columns is one strided copy from the data (im2col) or one
# strided add into it (col2im), clipped to the output positions whose window element falls inside
# the unpadded data: the zero padding is never materialised (np.pad built it in several passes).
# The slabs go a block of planes at a time: col2im's sums then stay in the cache for all the
# offsets instead of streaming through memory once per offset (1.3-1.5x on cnocr's 3x3 layers).
# im2col without padding keeps one copy of a sliding-window view in the columns' order: as fast
# as the slabs on LeNet's layers, 1.3x faster on its 1x28x28 input.  Every result is a pooled
# buffer: fresh multi-megabyte columns cost page faults on each call.
# planes per block: about this many bytes of data (512 KiB was best of 32 KiB to 4 MiB on cnocr)
COLUMN_BLOCK_BYTES = 1 << 19


def host_empty(kctx: Any) -> Any:
    """The backend's pooled ``empty``: a fresh buffer of tens of megabytes is mapped, faulted
    in and zeroed by the kernel on every call (measured: 3 ms of a 13 ms backward)."""
    return kctx.backend.empty if kctx.backend is not None else np.empty


def _clipped_offsets(
    g: Geometry, spatial: tuple[int, ...], out: tuple[int, ...]
) -> list[tuple[tuple[int, ...], tuple[slice, ...], tuple[slice, ...]]]:
    """For each kernel offset, in row-major order: the offset, the data it reads (slices over the
    spatial axes) and the output positions it fills from there (slices over the output axes);
    every other output position reads padding."""
    clipped = []
    for offset in itertools.product(*map(range, g.kernel)):
        source, target = [], []
        for k, d, s, p, size, o in zip(offset, g.dilate, g.stride, g.pad, spatial, out, strict=True):
            first = k * d - p  # the data index that output position 0 reads
            lo = min(o, -(first // s) if first < 0 else 0)  # ceil(-first / s)
            hi = max(lo, min(o, (size - 1 - first) // s + 1) if size - 1 >= first else 0)
            start = first + lo * s
            source.append(slice(start, start + (hi - lo - 1) * s + 1, s) if hi > lo else slice(0, 0))
            target.append(slice(lo, hi))
        clipped.append((offset, tuple(source), tuple(target)))
    return clipped


def _plane_blocks(planes: int, plane_bytes: int) -> list[slice]:
    """Blocks of whole planes (a channel of a sample, or all samples of a channel) of about
    :data:`COLUMN_BLOCK_BYTES` of data each."""
    step = max(COLUMN_BLOCK_BYTES // max(plane_bytes, 1), 1)
    return [slice(start, min(start + step, planes)) for start in range(0, planes, step)]


def _fill_columns(col: np.ndarray, data: np.ndarray, g: Geometry) -> None:
    """im2col on the CPU: ``col`` (P, *kernel, *out, *tail) from ``data`` (P, *spatial, *tail).

    Without padding, one copy of a sliding-window view in the columns' order; with padding, each
    kernel offset's slab clipped to the unpadded data (the rest zeroed), a block of planes P at a
    time so that each block is read from the cache by every offset.
    """
    spatial = data.shape[1 : 1 + g.nd]
    out = col.shape[1 + g.nd : 1 + 2 * g.nd]
    if not any(g.pad):
        spans = [d * (k - 1) + 1 for k, d in zip(g.kernel, g.dilate, strict=True)]
        win = np.lib.stride_tricks.sliding_window_view(data, spans, axis=tuple(range(1, 1 + g.nd)))
        index: tuple[slice, ...] = (
            slice(None),
            *[slice(0, s * (o - 1) + 1, s) for s, o in zip(g.stride, out, strict=True)],
        )
        index += (slice(None),) * (data.ndim - 1 - g.nd) + tuple(slice(None, None, d) for d in g.dilate)
        perm = (0, *range(data.ndim, data.ndim + g.nd), *range(1, data.ndim))
        col[...] = win[index].transpose(perm)
        return
    clipped = _clipped_offsets(g, spatial, out)
    for block in _plane_blocks(data.shape[0], data.itemsize * math.prod(data.shape[1:])):
        for offset, source, target in clipped:
            at: tuple[slice | int, ...] = (block, *offset)
            slab = col[at]
            slab[(slice(None), *target)] = data[(block, *source)]
            for axis, kept in enumerate(target):  # the positions that read padding
                before = (slice(None),) * (1 + axis)
                if kept.start > 0:
                    slab[(*before, slice(0, kept.start))] = 0
                if kept.stop < out[axis]:
                    slab[(*before, slice(kept.stop, None))] = 0


def _sum_columns(data: np.ndarray, col: np.ndarray, g: Geometry) -> None:
    """col2im on the CPU: ``data`` (P, *spatial, *tail) = the sum of ``col`` (P, *kernel, *out, *tail)
    over the kernel offsets, added in their row-major order (the padding's share is dropped), a
    block of planes at a time so that each block's sums stay in the cache."""
    spatial = data.shape[1 : 1 + g.nd]
    out = col.shape[1 + g.nd : 1 + 2 * g.nd]
    clipped = _clipped_offsets(g, spatial, out)
    data.fill(0)
    for block in _plane_blocks(data.shape[0], data.itemsize * math.prod(data.shape[1:])):
        for offset, source, target in clipped:
            columns: tuple[slice | int, ...] = (block, *offset, *target)
            data[(block, *source)] += col[columns]


def _im2col_host(kctx: Any, x: np.ndarray, g: Geometry, out: tuple[int, ...]) -> np.ndarray:
    n, c = x.shape[:2]
    col = host_empty(kctx)((n, c, *g.kernel, *out), x.dtype)
    _fill_columns(col.reshape(n * c, *col.shape[2:]), x.reshape(n * c, *x.shape[2:]), g)
    return col


def _col2im_host(kctx: Any, col: np.ndarray, spatial: tuple[int, ...], g: Geometry, out: Any) -> np.ndarray:
    shape = (*col.shape[:2], *spatial)
    fits = out is not None and out.shape == shape and out.flags.c_contiguous and out.dtype == col.dtype
    x = out if fits else host_empty(kctx)(shape, col.dtype)
    _sum_columns(x.reshape(shape[0] * shape[1], *spatial), col.reshape(shape[0] * shape[1], *col.shape[2:]), g)
    return x
