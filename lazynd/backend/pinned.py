"""The ``cpu_pinned`` backend: NumPy arrays in page-locked host memory, when CUDA is usable.

``mx.cpu_pinned()`` is host memory that a GPU's copy engine reads and writes directly (DMA), so
a copy between it and ``gpu(n)`` needs no staging copy on the host and runs asynchronously on
the copy streams.  Arrays there are NumPy arrays viewing CuPy page-locked memory; every
operation on them is the CPU's (this backend *is* the CPU backend, with another allocator), and
only where an array's memory comes from differs.  Without CuPy or a visible GPU, or where
page-locked memory cannot be had (a locked-memory limit), ``cpu_pinned`` arrays are ordinary
host memory, as on an MXNet build without CUDA: everything works, copies to a GPU are staged.

Page-locked memory is a scarce resource (it cannot be swapped out and costs milliseconds to
allocate): CuPy's pinned pool keeps freed blocks for reuse, and a program should keep such
arrays for buffers it copies to or from a GPU again and again (a batch buffer), not for every
temporary.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .cpu import NumpyBackend


class PinnedHostBackend(NumpyBackend):
    """Arrays of ``cpu_pinned`` contexts (see the module docstring); kernels are the CPU's."""

    name = "cpu_pinned"

    def __init__(self, host: NumpyBackend) -> None:
        # not NumpyBackend's __init__: no pool of its own
        self.pool = host.pool  # pageable fallback: the CPU backend's own pool
        self._page_locked: bool | None = None  # whether CUDA is there to give page-locked memory

    def _pinned_empty(self, shape: tuple[int, ...], dtype: Any) -> np.ndarray | None:
        if self._page_locked is None:
            from . import gpu_count

            self._page_locked = gpu_count() > 0
        if not self._page_locked:
            return None
        from .cuda.copies import STAGING

        return STAGING.empty(tuple(shape), dtype)

    @property
    def page_locked(self) -> bool:
        """Whether arrays are given page-locked memory here (False: ordinary host memory)."""
        return self._pinned_empty((1,), np.uint8) is not None

    def empty(self, shape: tuple[int, ...], dtype: Any) -> np.ndarray:
        array = self._pinned_empty(shape, dtype)
        return array if array is not None else super().empty(shape, dtype)

    def zeros(self, shape: tuple[int, ...], dtype: Any) -> np.ndarray:
        array = self._pinned_empty(shape, dtype)
        if array is None:
            return super().zeros(shape, dtype)
        array.fill(0)
        return array

    def full(self, shape: tuple[int, ...], value: Any, dtype: Any) -> np.ndarray:
        out = self.empty(shape, dtype)
        out.fill(value)
        return out
