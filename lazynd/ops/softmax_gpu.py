"""How the softmax family's GPU kernels (``kernels/softmax.cu``) are laid out and launched.

An array is seen as ``(outer, n, inner)`` around the reduced axis (:func:`lines`).  The forward pass
of rows along the last axis takes one of three paths (:func:`forward_path`): short rows are held in
registers, several to a block (:func:`register_layout`); longer rows, where there are many, take a
block each and are read twice (the second read from L2); few long rows are cut into pieces, one
block each, finished by a second kernel (:func:`piece_layout`).  The gradient has the register and
piece paths (:func:`gradient_path`).  Other axes run one thread per line.  :func:`softmax_gpu` launches
the forward pass or, given the output, the input gradient.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..backend.cuda.devices import multiprocessor_count
from ..backend.cuda.elementwise import unaliased
from ..backend.cuda.sources import dtype_name, launch_config, load_file

_SOURCE = load_file("softmax.cu")  # read once; each kernel compiles on first use


def lines(shape: tuple[int, ...], axis: int) -> tuple[int, int, int]:
    """``(outer, n, inner)``: the lines of ``n`` elements along ``axis`` of an array of ``shape``."""
    outer = int(np.prod(shape[:axis], dtype=np.int64))
    inner = int(np.prod(shape[axis + 1 :], dtype=np.int64))
    return outer, shape[axis], inner


ROW_THREADS = 256  # LAZYND_SOFTMAX_THREADS in softmax.cu: the block of pieces, and of short rows in registers
MAX_ROW_THREADS = 1024  # LAZYND_SOFTMAX_MAX_THREADS: the register path's widest group, a block of its own
MAX_PER_THREAD = 16  # LAZYND_SOFTMAX_MAX_PER_THREAD: the register path holds rows up to MAX_ROW_THREADS * this
PER_THREAD = 8  # the register path's elements a thread, where a row has enough of them
LONG_PER_THREAD = 16  # ... and for rows longer than a block of ROW_THREADS holds that way, before groups widen
VECTOR_BYTES = 16  # the register kernels' widest access: 4 float32 or 2 float64 at a time
VECTOR_MIN_PER_THREAD = 4  # softmax.cu has kernels of that access for 4 to 32 elements a thread
MIN_PIECE = 2048  # a long row is cut into pieces of at least this many elements, one block each
# pieces wanted a multiprocessor, where rows are few: 8 blocks of 256 threads fill one (an H100's
# 2048 threads), and the loads of a streaming kernel need every thread (with 2 a multiprocessor, 64
# rows of 2**20 ran at 21% of a copy's bandwidth)
PIECE_BLOCKS_PER_MULTIPROCESSOR = 8
# The forward pass's paths, from an H200 (64M float32, fraction of a copy's bandwidth): rows of 8192
# in registers 88% (a block a row 73%); 16384 69% either way (registers 65% with the gradient's
# layout of 1024 x 16); 32768 56% in registers, 64% a block a row; 2**20 in pieces 57%, a block a
# row 40% (64 rows: too few blocks).  Blocks a row of 512 threads up to rows of 16384 (69% against 60%
# with 1024), of 1024 beyond (62% against 58% for rows of 2**18, 51% against 40% for 132 rows of 65536).
REGISTER_FORWARD_MAX = 8192  # the forward pass holds rows up to this long in registers
ROW_BLOCK_SPLIT = 16384  # a block a row: ROW_BLOCK_THREADS_SHORT threads up to rows of this long...
ROW_BLOCK_THREADS_SHORT = 512
ROW_BLOCK_THREADS_LONG = 1024  # ... and this many beyond
ROW_BLOCKS_PER_MULTIPROCESSOR = 1  # a block a row where the rows give every multiprocessor one; else pieces
_GRID_LIMIT = 1 << 20  # the kernels loop over rows / pieces beyond the grid


def _next_power_of_two(n: int) -> int:
    return 1 << max(n - 1, 0).bit_length()


def register_layout(n: int) -> tuple[int, int]:
    """``(group, per_thread)`` for a row of ``n <= MAX_ROW_THREADS * MAX_PER_THREAD`` held in registers.

    A group of ``group`` threads owns a row, ``per_thread`` elements each (both powers of two): about
    ``PER_THREAD`` elements a thread until the group is a block of ``ROW_THREADS``, then up to
    ``LONG_PER_THREAD``, then wider groups (a block each), then more elements a thread.  Short rows
    share a block instead of leaving most of its threads idle.  (Kernels of these layouts timed alone
    on an H200, 16-byte accesses: rows of 1024 at 99% of a copy's bandwidth with 8 or 16 elements a
    thread, 78% with 4; rows of 4096 at 98% with 16, 90% with 8, 42% with 4 on 1024 threads; rows of
    8192 at 88% with 512 x 16, 76% with 256 x 32.  The gradient of rows of 16384 ran at 79% with
    1024 x 16, 26% with 512 x 32.)

    Examples:
        >>> register_layout(10), register_layout(1000), register_layout(4096), register_layout(16384)
        ((2, 8), (128, 8), (256, 16), (1024, 16))
    """
    group = min(ROW_THREADS, _next_power_of_two(-(-n // PER_THREAD)))
    per_thread = _next_power_of_two(-(-n // group))
    if per_thread > LONG_PER_THREAD:
        group = min(MAX_ROW_THREADS, _next_power_of_two(-(-n // LONG_PER_THREAD)))
        per_thread = _next_power_of_two(-(-n // group))
    return group, per_thread


def vector_width(n: int, itemsize: int, *arrays: Any) -> int:
    """How many consecutive elements a thread reads and writes at a time along rows of ``n``: 16
    bytes' worth where the row's length is a multiple of it and every array's address is aligned to
    it; else one (the kernels exist for these two widths only).  The register kernels also need a
    thread to hold at least ``VECTOR_MIN_PER_THREAD`` elements (:func:`register_width`).

    Examples:
        >>> vector_width(1024, 4), vector_width(1022, 4), vector_width(10, 8)
        (4, 1, 2)
    """
    width = VECTOR_BYTES // itemsize
    if n % width or any(a.data.ptr % VECTOR_BYTES for a in arrays):
        return 1
    return width


def register_width(n: int, per_thread: int, itemsize: int, *arrays: Any) -> int:
    """:func:`vector_width` for a register kernel whose threads hold ``per_thread`` elements of a row:
    one where they hold fewer than ``VECTOR_MIN_PER_THREAD``.

    Examples:
        >>> register_width(1024, 8, 4), register_width(1024, 2, 4)
        (4, 1)
    """
    return vector_width(n, itemsize, *arrays) if per_thread >= VECTOR_MIN_PER_THREAD else 1


def gradient_path(n: int) -> str:
    """Which kernels take a last-axis softmax gradient of rows of ``n``: ``"regs"`` (rows held in
    registers, several to a block) or ``"pieces"`` (rows cut into pieces: two kernels, the inputs
    read twice; on an H200 rows of 32768 ran at 50% of a copy's bandwidth so, 24% in registers).

    Examples:
        >>> gradient_path(1024), gradient_path(16384), gradient_path(16385), gradient_path(1048576)
        ('regs', 'regs', 'pieces', 'pieces')
    """
    return "regs" if n <= MAX_ROW_THREADS * MAX_PER_THREAD else "pieces"


def forward_path(n: int, rows: int, multiprocessors: int) -> str:
    """Which kernels take the forward softmax of ``rows`` rows of ``n`` along the last axis:
    ``"regs"`` (held in registers), ``"rows"`` (a block a row, read twice) or ``"pieces"`` (rows cut
    into pieces where they are too few to give every multiprocessor ``ROW_BLOCKS_PER_MULTIPROCESSOR``
    blocks).

    Examples:
        >>> forward_path(8192, 10, 132), forward_path(32768, 2048, 132), forward_path(1048576, 64, 132)
        ('regs', 'rows', 'pieces')
    """
    if n <= REGISTER_FORWARD_MAX:
        return "regs"
    return "rows" if rows >= ROW_BLOCKS_PER_MULTIPROCESSOR * multiprocessors else "pieces"


def piece_layout(rows: int, n: int, target_blocks: int, multiple: int = 1) -> tuple[int, int]:
    """``(chunk, chunks)``: a long row cut into ``chunks`` pieces of ``chunk`` elements (the last one
    shorter, ``chunk`` a multiple of ``multiple``), as many as ``target_blocks`` blocks in all allow
    (not more: a block past them would run alone in a second wave), none under ``MIN_PIECE``.

    Examples:
        >>> piece_layout(32, 32000, 1056), piece_layout(64, 1048576, 1056, 4), piece_layout(2048, 32768, 1056)
        ((2000, 16), (65536, 16), (32768, 1))
    """
    chunks = max(1, min(target_blocks // rows, -(-n // MIN_PIECE)))
    per_piece = -(-n // chunks)
    chunk = -(-per_piece // multiple) * multiple  # rounded up to whole vectors
    return chunk, -(-n // chunk)


def softmax_gpu(kctx: Any, x: Any, out: Any, axis: int, temperature: float, log: bool, y: Any = None) -> None:
    """The kernels of softmax.cu: ``softmax(x)`` into ``out``, or, given the output ``y``, the input
    gradient for the head gradient ``x`` into ``out``."""
    xp = kctx.xp
    source = _SOURCE
    dtype = dtype_name(out.dtype)
    outer, n, inner = lines(out.shape, axis)
    target = out if out.flags.c_contiguous else xp.empty(out.shape, out.dtype)
    inv_temp = out.dtype.type(1.0 / temperature)
    # inputs that overlap the output other than element for element (out= a shifted view) are read
    # from copies: the kernels write while other threads still read
    x = unaliased(xp.ascontiguousarray(x), target)
    y = None if y is None else unaliased(xp.ascontiguousarray(y), target)
    grad = "" if y is None else "grad_"
    inputs = (x,) if y is None else (x, y)
    multiprocessors = multiprocessor_count(kctx.device_id)
    path = "" if inner != 1 else (gradient_path(n) if y is not None else forward_path(n, outer, multiprocessors))
    if path == "regs":
        group, per_thread = register_layout(n)
        threads = max(ROW_THREADS, group)  # (the forward kernels know it from the group)
        grid = (min(-(-outer // (threads // group)), _GRID_LIMIT),)
        if y is None:  # a kernel for each layout and access width
            width = register_width(n, per_thread, out.dtype.itemsize, x, target)
            name = f"lazynd_softmax_rows_{group}x{per_thread}v{width}_{dtype}"
            kernel = source.function(kctx.device_id, name)
            kernel(grid, (threads,), (x, target, np.int64(outer), np.int32(n), inv_temp, np.int32(log)))
        else:  # the gradient: the group an argument, an element at a time (see softmax.cu)
            kernel = source.function(kctx.device_id, f"lazynd_softmax_grad_regs{per_thread}_{dtype}")
            args = (*inputs, target, np.int64(outer), np.int32(n), np.int32(group), inv_temp, np.int32(log))
            kernel(grid, (threads,), args)
    elif path == "rows":  # 16 bytes at a time where the rows and addresses allow
        width = vector_width(n, out.dtype.itemsize, x, target)
        kernel = source.function(kctx.device_id, f"lazynd_softmax_block_rows_v{width}_{dtype}")
        grid = (min(outer, _GRID_LIMIT),)
        threads = ROW_BLOCK_THREADS_SHORT if n <= ROW_BLOCK_SPLIT else ROW_BLOCK_THREADS_LONG
        kernel(grid, (threads,), (x, target, np.int64(outer), np.int64(n), inv_temp, np.int32(log)))
    elif path == "pieces":
        # the forward pieces read 16 bytes at a time where they can, so a piece holds whole vectors
        width = 1 if y is not None else vector_width(n, out.dtype.itemsize, x, target)
        chunk, chunks = piece_layout(outer, n, PIECE_BLOCKS_PER_MULTIPROCESSOR * multiprocessors, width)
        grid = (min(outer * chunks, _GRID_LIMIT),)
        shape = (np.int64(outer), np.int64(n), np.int64(chunk), np.int64(chunks))
        # per piece: its max and sum of exp (forward), or its sum of dy * y or of dy (gradient)
        partial = xp.empty(outer * chunks * (2 if y is None else 1), out.dtype)
        # the forward pieces scale by the temperature; the gradient's sums need the mode instead
        tail = (inv_temp,) if y is None else (np.int32(log),)
        suffix = dtype if y is not None else f"v{width}_{dtype}"
        pieces = source.function(kctx.device_id, f"lazynd_softmax_{grad}pieces_{suffix}")
        pieces(grid, (ROW_THREADS,), (*inputs, partial, *shape, *tail))
        finish = source.function(kctx.device_id, f"lazynd_softmax_{grad}finish_{suffix}")
        finish(grid, (ROW_THREADS,), (*inputs, target, partial, *shape, inv_temp, np.int32(log)))
    else:
        grid, block = launch_config(outer * inner)
        kernel = source.function(kctx.device_id, f"lazynd_softmax_{grad}{dtype}")
        kernel(grid, block, (*inputs, target, np.int64(outer), np.int64(n), np.int64(inner), inv_temp, np.int32(log)))
    if target is not out:
        out[...] = target
