"""The column machinery behind Convolution and Deconvolution: window geometry, im2col and col2im.

:class:`Geometry` holds a window's kernel, stride, dilation and padding.  The CPU
im2col is a strided view of the (padded) input copied once into a contiguous
column buffer ``(N, C, *kernel, *out)``; col2im, its adjoint, adds each kernel
offset's slab back (a loop over kernel positions, never over pixels).  On the GPU
both come from our kernels (``kernels/conv.cu``).

On the CPU, batches of 8 or more may take a batch-last layout instead (see
``BATCH_LAST_MIN_BATCH``): columns ``(C, *kernel, *out, N)``, so that each product
is one plain GEMM; :func:`uses_batch_last` and :func:`uses_batch_last_backward`
decide when, and :mod:`~lazynd.ops.conv_batch_last` holds those kernels.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Iterator
from typing import Any

import numpy as np

from ..backend.cuda.sources import dtype_name, launch_config, load_file
from ..errors import OperatorError, ShapeError
from .params_memo import ParamsMemo


def zero_gradients_of_an_empty_output(out_grad: Any, outputs: list) -> bool:
    """With no element in the output gradient of a convolution, deconvolution or deformable one (an
    empty batch, or a spatial size of 0) every gradient is 0, each of its terms holding an element of
    ``out_grad``: write them (the outputs that are not None; the data gradient is empty, weight and
    bias ones are not) and say so.  The kernels' reshapes by -1, windows, blocks and spans cannot
    take zero sizes."""
    if out_grad.size:
        return False
    for out in outputs:
        if out is not None:
            out[...] = 0
    return True


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

    def offsets(self) -> list[tuple[int, ...]]:
        """Every kernel offset, in C order (the order of a weight's kernel axes, flattened)."""
        return list(itertools.product(*[range(k) for k in self.kernel]))

    def window(self, offset: tuple[int, ...], out: tuple[int, ...]) -> tuple[slice, ...]:
        """Per spatial axis, the slice of the padded input that kernel ``offset`` meets at the ``out``
        output positions (im2col's slab for that offset; col2im adds it back there)."""
        return tuple(
            slice(k * d, k * d + s * (o - 1) + 1, s)
            for k, d, s, o in zip(offset, self.dilate, self.stride, out, strict=True)
        )

    def interior(self, spatial: tuple[int, ...]) -> tuple[slice, ...]:
        """Per spatial axis, the slice of a padded array that holds the ``spatial``-sized original."""
        return tuple(slice(p, p + s) for p, s in zip(self.pad, spatial, strict=True))

    # channel-last arrays are handled as transposed views of channels-second ones
    def to_nc(self, x: Any) -> Any:
        return x.transpose((0, x.ndim - 1, *range(1, x.ndim - 1))) if self.channel_last else x

    def from_nc_shape(self, shape: tuple) -> tuple:
        return (shape[0], *shape[2:], shape[1]) if self.channel_last else tuple(shape)

    def to_nc_shape(self, shape: tuple) -> tuple:
        return (shape[0], shape[-1], *shape[1:-1]) if self.channel_last else tuple(shape)


def _build_geometry(attrs: dict, op: str, ndim: int | None) -> Geometry:
    return Geometry(op, attrs, ndim)


# ``Geometry(op, attrs, ndim)`` of the kernels, which a training step calls with the same parameters
# at every step: built once
geometry = ParamsMemo(_build_geometry)


# -- im2col / col2im -----------------------------------------------------------------------------
# The CPU kernels copy columns and multiply them this many bytes at a time (a block of samples, or
# of output rows in the batch-last layout), through one buffer reused for every chunk: columns
# made whole (16 MB for LeNet's second layer at batch 128, 7 MB for its first) are written out to
# memory by the copy and read back by the product, where a chunk is still in the cache when its
# product reads it.  Measured on the 2-core EPYC at batch 128, float32, with other data through
# the cache between calls (best of 40): LeNet's first layer forward 1.87-1.98 ms whole, 1.58-1.62
# in blocks of 32 samples (1.8 MB), 1.69 of 72 (4 MB); its second layer (batch-last) forward
# 4.75-4.94 -> 4.14-4.44 ms and backward 10.9-11.4 -> 9.8-10.4 ms in chunks of two output rows
# (4 MB), 4.4-4.7 and 10.0-10.9 of one row (2 MB).
COLUMN_CHUNK_BYTES = 4 << 20
_SOURCE = load_file("conv.cu")


@functools.lru_cache(maxsize=256)
def _gpu_dims(g: Geometry, spatial: tuple[int, ...], out: tuple[int, ...]) -> tuple[np.int32, ...]:
    """conv.cu's geometry arguments (sizes, kernel, outputs, stride, dilation, padding, each padded to
    three axes) as 32-bit integers, once per geometry and sizes: kernels take the geometries of
    :data:`geometry`, which a training step passes again at every call."""
    pad3 = 3 - g.nd
    dims = (
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
    return tuple(np.int32(v) for v in dims)


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
            (x, col, np.int64(col.size), np.int32(x.shape[1]), *_gpu_dims(g, tuple(x.shape[2:]), out)),
        )
        return col
    return np.ascontiguousarray(_windows(x, g, out))


def _windows(x: np.ndarray, g: Geometry, out: tuple[int, ...]) -> np.ndarray:
    """The CPU im2col's strided view (N, C, *kernel, *out) of the (padded) data."""
    if any(g.pad):
        x = np.pad(x, [(0, 0), (0, 0)] + [(p, p) for p in g.pad])
    spans = [d * (k - 1) + 1 for k, d in zip(g.kernel, g.dilate, strict=True)]
    axes = tuple(range(2, 2 + g.nd))
    win = np.lib.stride_tricks.sliding_window_view(x, spans, axis=axes)
    index: tuple[slice, ...] = (slice(None), slice(None))
    index += tuple(slice(0, s * (o - 1) + 1, s) for s, o in zip(g.stride, out, strict=True))
    index += tuple(slice(None, None, d) for d in g.dilate)
    perm = (0, 1, *range(2 + g.nd, 2 + 2 * g.nd), *range(2, 2 + g.nd))
    return win[index].transpose(perm)


def im2col_blocks(kctx: Any, x: Any, g: Geometry, empty: Any) -> Iterator[tuple[slice, Any]]:
    """im2col a block of samples at a time: ``(samples, their columns (n, C, *kernel, *out))``.

    On the CPU a block holds :data:`COLUMN_CHUNK_BYTES` of columns (at least one sample), copied
    into one buffer of ``empty`` reused for every block, so that the product that reads a block's
    columns finds them in the cache (see :data:`COLUMN_CHUNK_BYTES`); on the GPU, and for a
    pointwise geometry, the whole batch is one block."""
    n = x.shape[0]
    if kctx.xp is not np or g.pointwise or n == 0:
        yield slice(0, n), im2col(kctx, x, g)
        return
    out = g.out_size("Convolution", tuple(x.shape[2:]))
    windows = _windows(x, g, out)
    per_sample = math.prod(windows.shape[1:]) * x.itemsize
    step = max(min(COLUMN_CHUNK_BYTES // max(per_sample, 1), n), 1)
    buffer = empty((step, *windows.shape[1:]), x.dtype)
    for start in range(0, n, step):
        block = slice(start, min(start + step, n))
        col = buffer[: block.stop - block.start]
        col[...] = windows[block]
        yield block, col


def col2im(kctx: Any, col: Any, spatial: tuple[int, ...], g: Geometry, out: Any = None) -> Any:
    """Sum columns (N, C, *kernel, *out) back into an (N, C, *spatial) array (the adjoint of im2col).

    On the GPU the sums go straight into ``out`` when it is given, C-contiguous and of the
    result's dtype (it is returned); otherwise, and on the CPU, into a new array; for a pointwise
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
            (col, x, np.int64(col.size), np.int32(c), *_gpu_dims(g, tuple(spatial), tuple(positions))),
        )
        return x
    padded = [s + 2 * p for s, p in zip(spatial, g.pad, strict=True)]
    x = np.zeros((n, c, *padded), dtype=col.dtype)
    for offset in g.offsets():
        target = (slice(None), slice(None), *g.window(offset, positions))
        x[target] += col[(slice(None), slice(None), *offset)]
    if any(g.pad):
        x = x[(slice(None), slice(None), *g.interior(spatial))]
    return x


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
