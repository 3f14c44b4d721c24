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

    def scatter_add(self, target: Any, index: Any, values: Any) -> None:
        """``target[index] += values`` with repeated indices summed.

        Whole rows along one axis (an index array, alone or between two full slices: the gradients
        of ``take`` and ``Embedding``) go as flat positions through NumPy's one-dimensional
        ``add.at``, three times as fast as its route for an index over several axes (4096 rows
        of 128: 1.6 against 4.5 ms)."""
        rows = None if target.ndim == 1 else _row_positions(target, index, values)
        if rows is None:
            np.add.at(target, index, values)
        else:
            np.add.at(target.reshape(-1), rows, values.reshape(-1))

    def empty_cache(self) -> None:
        self.pool.release_free()


def _row_positions(target: np.ndarray, index: Any, values: Any) -> np.ndarray | None:
    """The flat positions in ``target`` of ``target[index]`` where ``index`` picks whole rows along
    one axis (``idx`` or ``(slice(None), idx, slice(None))`` with an integer array ``idx`` of 1-D)
    and ``values`` has that selection's shape exactly; else None (NumPy's ``add.at`` takes it as
    given, and raises for an index out of range)."""
    if isinstance(index, np.ndarray):
        before, idx = 0, index
    elif isinstance(index, tuple) and len(index) == 3 and _whole(index[0]) and _whole(index[2]):
        before, idx = 1, index[1]
    else:
        return None
    if not isinstance(idx, np.ndarray) or idx.ndim != 1 or idx.dtype.kind not in "iu" or idx.size == 0:
        return None
    if not target.flags.c_contiguous or target.ndim < 2 * before + 1:  # (:, idx, :) wants three axes
        return None
    pre = math.prod(target.shape[:before])
    n = target.shape[before]
    post = math.prod(target.shape[before + 1 :])
    if (
        not isinstance(values, np.ndarray)
        or values.shape != target.shape[:before] + idx.shape + target.shape[before + 1 :]
    ):
        return None
    if int(idx.min()) < -n or int(idx.max()) >= n:
        return None
    idx = np.where(idx < 0, idx + n, idx) if idx.dtype.kind == "i" else idx
    starts = (np.arange(pre)[:, None] * n + idx[None, :]) * post
    return (starts[:, :, None] + np.arange(post)).reshape(-1)


def _whole(item: Any) -> bool:
    return isinstance(item, slice) and item == slice(None)
