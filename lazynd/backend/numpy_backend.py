"""The CPU backend: NumPy arrays, with a pool for large temporaries."""

from __future__ import annotations

from typing import Any

import numpy as np

from .base import Backend
from .pool import HostPool


class NumpyBackend(Backend):
    """CPU arrays are NumPy arrays; kernels run on the engine's worker threads."""

    name = "cpu"
    xp = np

    def __init__(self) -> None:
        self.pool = HostPool()

    def empty(self, shape: tuple[int, ...], dtype: Any) -> np.ndarray:
        return self.pool.empty(shape, dtype)

    def zeros(self, shape: tuple[int, ...], dtype: Any) -> np.ndarray:
        # calloc'd pages are zero for free: faster than filling a pooled buffer
        return np.zeros(shape, dtype)

    def full(self, shape: tuple[int, ...], value: Any, dtype: Any) -> np.ndarray:
        out = self.pool.empty(shape, dtype)
        out.fill(value)
        return out

    def to_numpy(self, array: np.ndarray) -> np.ndarray:
        return array

    def empty_cache(self) -> None:
        self.pool.release_free()
