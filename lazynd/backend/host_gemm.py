"""The CPU's matrix products: NumPy's BLAS, or on request MKL's ``cblas_?gemm``.

NumPy's wheels carry OpenBLAS. The CPU backend's one GEMM route
(:meth:`~lazynd.backend.cpu.NumpyBackend.matmul`) runs :func:`host_product`, which hands a product
to :func:`host_gemm` first, and to ``np.matmul`` when it declines. With ``LAZYND_HOST_BLAS=mkl`` (and Intel's MKL installed:
``pip install lazynd[mkl]``) :func:`host_gemm` is :class:`MklGemm`, which computes float32 and
float64 products with MKL and declines:

- a dtype other than float32/float64 (float16, integers), operands of different dtypes;
- a layout BLAS cannot take without a copy (each matrix needs one unit stride), or an output
  that overlaps an operand;
- a product below :data:`MIN_MACS` multiply-adds per matrix (:data:`MIN_BATCHED_MACS` in a
  batch of several), where the foreign call's few microseconds cost more than OpenBLAS loses.

Why it is not the default (measured on the 2-core development machine, 2026-11-27): alone, MKL
runs the MNIST MLP's eight products 30-50% faster than OpenBLAS on the same two threads (242
against 350 us a batch), and a LeNet epoch 7-9% faster; but the MLP training loops moved by less
than their run-to-run noise (+-10%), and while a benchmark in another process shared the cores,
the eight products took 1190 us through MKL's OpenMP threads against 457 us with OpenBLAS. ``LAZYND_HOST_BLAS`` is read
once, at import: ``numpy`` (the default), ``mkl`` (an error when MKL does not load) or ``auto``
(MKL when it loads). MKL runs on as many threads as the host BLAS setting gives
(:data:`~lazynd.backend.blas.BLAS_THREADS`: ``OPENBLAS_NUM_THREADS`` and the other
``*_NUM_THREADS`` variables), so one setting governs both libraries and
:func:`~lazynd.backend.blas.blas_section` keeps its meaning.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import itertools
import math
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import LazyNDError
from .blas import BLAS_THREADS

__all__ = ["MIN_BATCHED_MACS", "MIN_MACS", "MklGemm", "host_gemm", "host_gemm_library", "host_product", "load_mkl"]

# a product of fewer multiply-adds per matrix goes to NumPy: the foreign call and its pointer
# lookups cost about 4 us, which OpenBLAS's small kernels beat (an MLP's 128 x 64 x 10 output
# layer: 4.4 us in NumPy, 7.6 through MKL; at 128 x 128 x 64 the two are even)
MIN_MACS = 1 << 18
# a batch of matrices is looped over here in Python, about 5 us a matrix, where np.matmul loops
# in C: only matrices of this many multiply-adds gain more than that
MIN_BATCHED_MACS = 1 << 20
_ROW_MAJOR, _NO_TRANS, _TRANS = 101, 111, 112  # CBLAS_LAYOUT and CBLAS_TRANSPOSE values
_CHOICES = ("numpy", "mkl", "auto")


def _candidate_paths() -> list[str]:
    """Where MKL's single dynamic library may be: the environment's ``lib`` (PyPI's ``mkl`` wheel
    puts it there), then the system's library path."""
    names = ["libmkl_rt.so.3", "libmkl_rt.so.2", "libmkl_rt.so", "mkl_rt.2.dll", "mkl_rt.dll"]
    found = [str(Path(sys.prefix) / "lib" / name) for name in names]
    found = [path for path in found if Path(path).exists()]
    system = ctypes.util.find_library("mkl_rt")
    return found + ([system] if system else [])


def load_mkl() -> ctypes.CDLL | None:
    """MKL's runtime library, or None where it is not installed (or does not load)."""
    for path in _candidate_paths():
        try:
            return ctypes.CDLL(path)
        except OSError:
            continue
    return None


def _matrix_layout(x: np.ndarray) -> tuple[int, int] | None:
    """``(transpose flag, leading dimension)`` that hands 2-D ``x`` to BLAS without a copy,
    or None when neither axis has a unit stride (or a stride is negative)."""
    rows, cols = x.shape
    item = x.itemsize
    # an axis of length 1 may carry any stride: take the one that makes the layout plain
    s0 = cols * item if rows == 1 else x.strides[0]
    s1 = item if cols == 1 else x.strides[1]
    if s1 == item and s0 > 0 and s0 % item == 0 and s0 >= cols * item:
        return _NO_TRANS, max(s0 // item, 1)
    if s0 == item and s1 > 0 and s1 % item == 0 and s1 >= rows * item:
        return _TRANS, max(s1 // item, 1)
    return None


class MklGemm:
    """``out[...] = a @ b`` through MKL's ``cblas_sgemm``/``cblas_dgemm`` where it can.

    Calling it returns True when MKL computed the product, False when it declined (the module's
    docstring says when); the caller then uses NumPy. Operands and output may be 2-D, or N-D with
    leading axes broadcast as ``np.matmul`` does (one GEMM per matrix).
    """

    def __init__(self, library: ctypes.CDLL, threads: int) -> None:
        self.library = library
        library.MKL_Set_Num_Threads.argtypes = [ctypes.c_int]
        library.MKL_Set_Num_Threads(max(int(threads), 1))
        self._gemms: dict[Any, Callable[..., None]] = {}
        for dtype, name, scalar in (
            (np.float32, "cblas_sgemm", ctypes.c_float),
            (np.float64, "cblas_dgemm", ctypes.c_double),
        ):
            fn = getattr(library, name)
            fn.restype = None
            pointer, index = ctypes.c_void_p, ctypes.c_int
            fn.argtypes = [index] * 6 + [scalar, pointer, index, pointer, index, scalar, pointer, index]
            self._gemms[np.dtype(dtype)] = fn

    def __call__(self, a: np.ndarray, b: np.ndarray, out: np.ndarray) -> bool:
        gemm = self._gemms.get(out.dtype)
        if gemm is None or a.dtype != out.dtype or b.dtype != out.dtype or a.ndim < 2 or b.ndim < 2:
            return False
        m, k, n = a.shape[-2], a.shape[-1], b.shape[-1]
        if b.shape[-2] != k or out.shape[-2:] != (m, n) or m * n * k < MIN_MACS:
            return False  # wrong shapes: np.matmul raises its error
        if np.may_share_memory(out, a) or np.may_share_memory(out, b):
            return False
        if a.ndim == 2 and b.ndim == 2 and out.ndim == 2:  # the common case, without the batch machinery
            return self._one(gemm, a, b, out, m, n, k)
        try:
            batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
        except ValueError:
            return False
        if out.shape[:-2] != batch or math.prod(batch) == 0:
            return False
        if math.prod(batch) > 1 and m * n * k < MIN_BATCHED_MACS:
            return False
        a = np.broadcast_to(a, (*batch, m, k))
        b = np.broadcast_to(b, (*batch, k, n))
        # every matrix of a batch has the first one's strides: if BLAS takes it, it takes them all
        indices = itertools.product(*map(range, batch))
        first = next(indices)
        if not self._one(gemm, a[first], b[first], out[first], m, n, k):
            return False
        for index in indices:
            self._one(gemm, a[index], b[index], out[index], m, n, k)
        return True

    @staticmethod
    def _one(gemm: Callable[..., None], a: np.ndarray, b: np.ndarray, out: np.ndarray, m: int, n: int, k: int) -> bool:
        """One matrix product through ``gemm``; False (nothing written) when a layout needs a copy."""
        layout_a, layout_b, layout_out = _matrix_layout(a), _matrix_layout(b), _matrix_layout(out)
        if layout_a is None or layout_b is None or layout_out is None or layout_out[0] != _NO_TRANS:
            return False
        gemm(
            _ROW_MAJOR, layout_a[0], layout_b[0], m, n, k, 1.0,
            a.ctypes.data, layout_a[1], b.ctypes.data, layout_b[1], 0.0, out.ctypes.data, layout_out[1],
        )  # fmt: skip
        return True


def _no_gemm(a: np.ndarray, b: np.ndarray, out: np.ndarray) -> bool:
    """The host GEMM where NumPy's BLAS does every product: it always declines."""
    return False


def _choose() -> tuple[Callable[[np.ndarray, np.ndarray, np.ndarray], bool], str]:
    choice = os.environ.get("LAZYND_HOST_BLAS", "numpy").strip().lower() or "numpy"
    if choice not in _CHOICES:
        raise LazyNDError(f"LAZYND_HOST_BLAS must be one of {', '.join(_CHOICES)}; got {choice!r}")
    if choice == "numpy":
        return _no_gemm, "numpy"
    library = load_mkl()
    if library is None:
        if choice == "mkl":
            raise LazyNDError(
                "LAZYND_HOST_BLAS=mkl: MKL's runtime library (libmkl_rt) did not load; "
                "install it with `pip install mkl` (or lazynd[mkl]), or set LAZYND_HOST_BLAS=numpy or auto"
            )
        return _no_gemm, "numpy"
    return MklGemm(library, BLAS_THREADS), "mkl"


host_gemm, _library = _choose()


def _gemm_then_numpy(a: np.ndarray, b: np.ndarray, out: np.ndarray) -> None:
    """``out[...] = a @ b``: :func:`host_gemm` where it takes the product, else ``np.matmul``."""
    if not host_gemm(a, b, out):
        np.matmul(a, b, out=out)


# chosen once, as host_gemm is: where NumPy's BLAS does every product, the product is np.matmul
# itself (its third argument is ``out``), with no Python call in between (the MNIST MLP runs
# eight products a training step; two Python calls each were about 2% of the step's Python)
host_product: Callable[[np.ndarray, np.ndarray, np.ndarray], Any] = (
    np.matmul if host_gemm is _no_gemm else _gemm_then_numpy
)
"""``host_product(a, b, out)`` writes ``a @ b`` into ``out`` (``np.matmul``'s rules) with the host's
BLAS: MKL where :func:`host_gemm` takes the product, else NumPy's."""


def host_gemm_library() -> str:
    """Which library computes the CPU's large products: ``'mkl'`` or ``'numpy'`` (NumPy's BLAS)."""
    return _library
