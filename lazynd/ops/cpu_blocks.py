"""Blocks of whole samples for the CPU kernels that walk a batch in cache-sized pieces.

A NumPy step over a whole batch of activations streams it through memory, and a
temporary of the batch's size is a fresh mapping from the OS whose page faults cost
as much as the arithmetic.  The kernels of BatchNorm and Pooling (and the gradients of
tanh and sigmoid, a block of elements at a time) instead take the
batch a block of samples at a time (about ``BLOCK_ELEMENTS`` elements, so that a
block and its temporaries stay in a core's L2 cache between the steps that read it)
through temporaries allocated once per call.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import numpy as np

BLOCK_ELEMENTS = 1 << 16


def samples_per_block(per_sample: int) -> int:
    """How many samples of ``per_sample`` elements a block holds (at least one)."""
    return max(BLOCK_ELEMENTS // max(per_sample, 1), 1)


def sample_blocks(samples: int, per_sample: int) -> Iterator[slice]:
    """Slices of ``samples`` samples, a block each."""
    step = samples_per_block(per_sample)
    for start in range(0, samples, step):
        yield slice(start, min(start + step, samples))


class Scratch:
    """One block's temporary of shape ``(samples in a block, *sample_shape)``, allocated once and
    reused for every block."""

    def __init__(self, samples: int, sample_shape: tuple[int, ...], dtype: np.dtype) -> None:
        per_sample = int(np.prod(sample_shape))
        self.array = np.empty((min(samples_per_block(per_sample), samples), *sample_shape), dtype)

    def of(self, block: slice) -> np.ndarray:
        """The scratch for ``block`` (as many samples as the block)."""
        return self.array[: block.stop - block.start]


# elements of one block of a transposing copy: its rows of the source and of the target stay in L1/L2
TRANSPOSE_BLOCK_ELEMENTS = 8192


def copy_batch_first(source: np.ndarray, out: np.ndarray, bias: np.ndarray | None = None) -> None:
    """``out[...] = np.moveaxis(source, -1, 0)`` (plus ``bias``, one value per leading index of
    ``source``, e.g. per filter of an (F, *positions, N) result) in blocks of columns.

    NumPy copies such a transpose in the target's order, reading each element from another cache
    line of the source, a line that a batch of 16 to 128 re-reads long after it left the cache:
    4-10x slower than the same copy taken a few thousand elements at a time."""
    batch = source.shape[-1]
    if out.size == 0:
        return
    if not out.flags.c_contiguous or out.shape != (batch, *source.shape[:-1]):
        moved = np.moveaxis(source, -1, 0)
        if bias is None:
            out[...] = moved
        else:
            np.add(moved, bias.reshape((1, -1) + (1,) * (source.ndim - 2)), out=out)
        return
    rows = source.reshape(-1, batch)  # (columns of the target, batch)
    target = out.reshape(batch, -1)
    per_column = None if bias is None else np.repeat(bias, rows.shape[0] // max(bias.size, 1))
    step = max(TRANSPOSE_BLOCK_ELEMENTS // max(batch, 1), 1)
    for start in range(0, rows.shape[0], step):
        block = slice(start, start + step)
        if per_column is None:
            target[:, block] = rows[block].T
        else:
            np.add(rows[block].T, per_column[block], out=target[:, block])


def times_factor_in_blocks(g: np.ndarray, y: np.ndarray, out: np.ndarray, factor: Callable[..., None]) -> None:
    """``out[...] = g * f(y)`` (an activation's gradient), where ``factor(y, into)`` writes ``f(y)``,
    a block of :data:`BLOCK_ELEMENTS` elements at a time through one block-sized scratch.

    A whole-array temporary for ``f(y)`` is a fresh mapping from the OS on every step, whose page
    faults cost more than the arithmetic (LeNet's first tanh gradient: 0.57 ms with temporaries,
    0.43 ms in blocks; in a training step, where the temporaries' pages were faulted in again
    at every call, 3-4x that).  ``out`` may be ``g`` or ``y`` itself (an in-place gradient): each
    block reads its elements before writing them.  Arrays of other layouts, or that overlap in
    another way, take one whole-array temporary."""
    arrays = (g, y, out)
    plain = all(a.flags.c_contiguous and a.shape == out.shape and a.dtype == out.dtype for a in arrays)
    if not plain or any(np.may_share_memory(out, a) and a.ctypes.data != out.ctypes.data for a in (g, y)):
        whole = np.empty(y.shape, y.dtype)
        factor(y, whole)
        np.multiply(g, whole, out=out)
        return
    g, y, out = (a.reshape(-1) for a in arrays)
    scratch = np.empty(min(BLOCK_ELEMENTS, out.size), out.dtype)
    for start in range(0, out.size, BLOCK_ELEMENTS):
        block = slice(start, start + BLOCK_ELEMENTS)
        into = scratch[: min(BLOCK_ELEMENTS, out.size - start)]
        factor(y[block], into)
        np.multiply(g[block], into, out=out[block])
