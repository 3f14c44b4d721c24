"""Blocks of whole samples for the CPU kernels that walk a batch in cache-sized pieces.

A NumPy step over a whole batch of activations streams it through memory, and a
temporary of the batch's size is a fresh mapping from the OS whose page faults cost
as much as the arithmetic.  The kernels of BatchNorm and Pooling instead take the
batch a block of samples at a time (about ``BLOCK_ELEMENTS`` elements, so that a
block and its temporaries stay in a core's L2 cache between the steps that read it)
through temporaries allocated once per call.
"""

from __future__ import annotations

from collections.abc import Iterator

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
