"""The CPU backend: NumPy arrays, with a pool for large temporaries."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .base import Backend
from .blas import GOVERNOR
from .host_gemm import host_product
from .pool import MIN_POOLED_BYTES, HostPool, aligned_zeros


class NumpyBackend(Backend):
    """CPU arrays are NumPy arrays; kernels run on the engine's worker threads."""

    name = "cpu"
    xp = np

    def __init__(self) -> None:
        self.pool = HostPool()

    def empty(self, shape: tuple[int, ...], dtype: Any) -> np.ndarray:
        return self.pool.empty(shape, dtype)

    def zeros(self, shape: tuple[int, ...], dtype: Any) -> np.ndarray:
        # calloc zeroes faster than ``fill(0)`` on a pooled buffer (see aligned_zeros); a large
        # array is aligned as the pool's are
        dtype = np.dtype(dtype)
        nbytes = math.prod(shape) * dtype.itemsize
        if nbytes < MIN_POOLED_BYTES:
            return np.zeros(shape, dtype)
        return aligned_zeros(shape, dtype, nbytes)

    def full(self, shape: tuple[int, ...], value: Any, dtype: Any) -> np.ndarray:
        out = self.pool.empty(shape, dtype)
        out.fill(value)
        return out

    def to_numpy(self, array: np.ndarray) -> np.ndarray:
        return array

    def matmul(self, a: Any, b: Any, out: Any) -> None:
        """``out[...] = a @ b``: MKL where it takes the product (:mod:`.host_gemm`), else NumPy's BLAS,
        timed by the BLAS's thread governor where lazynd sets the BLAS's threads (:mod:`.host_threads`)."""
        if GOVERNOR is None:
            host_product(a, b, out)
        else:
            GOVERNOR.run(a, b, out, host_product)

    def empty_cache(self) -> None:
        self.pool.release_free()
