"""Faster NumPy forms of two reductions the CPU kernels run on every training step, and the
constant tables (vectors of ones, one-hot rows) they and the loss kernels read.

NumPy reduces a C-contiguous ``(rows, n)`` array along its last axis with an inner loop
of ``n``, slow when ``n`` is short: for MNIST's ``(128, 10)`` logits
``np.maximum.reduce(x, axis=1)`` takes 6.6 us and ``np.add.reduce`` 3.5 us (one BLAS
thread, AMD EPYC).  Here:

- the maximum along a last axis of at most ``SHORT_AXIS`` comes from a transposed copy
  reduced over its first axis (2.1 us); a maximum is exact, so the result is the same;
- a float32/float64 sum along the first or the last axis is one BLAS matrix-vector
  product with a vector of ones: 1.2 us for the logits, 1.7 against 3.9 us for a
  ``(128, 128)`` bias gradient, 27 against 167 us for ``1000 x 1000`` along the last
  axis.  BLAS accumulates in the array's precision, as MXNet's CPU kernels do, so the
  last bits may differ from NumPy's pairwise sum; the operators that promise NumPy's
  sums (``sum``, ``mean``...) keep NumPy's.

While the host BLAS has threads of its own, a product large enough for OpenBLAS to
split across them (:data:`THREADED_GEMV_MIN` elements) is not used: each call then
wakes BLAS's threads, and on a busy machine one that is not running makes the call
wait for it.  A ``1000 x 1000`` softmax took 1.9 instead of 1.1 ms in whole runs of
the benchmark that way, in either engine.  A long last axis is summed by
``einsum`` instead (54 us for ``1000 x 1000``, as fast as the product on one thread),
a first axis by NumPy.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from ..backend.blas import BLAS_THREADS
from ..backend.cuda.gemm import column_sum

SHORT_AXIS = 32
# OpenBLAS splits a matrix-vector product of at least this many elements across its threads
# (2304 * GEMM_MULTITHREAD_THRESHOLD, 4 by default, in its interface/gemv.c)
THREADED_GEMV_MIN = 9216
# constant tables kept at most, of each kind (a program softmaxing ever-new lengths drops the
# least recently read)
MAX_CONSTANTS = 256
_BLAS_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def _read_only(table: np.ndarray) -> np.ndarray:
    table.flags.writeable = False
    return table


# the tables are functools' caches: a table made before is found in C, without a Python call
# (the kernels of an MLP's training step read four of them)
@functools.lru_cache(maxsize=MAX_CONSTANTS)
def ones(n: int, dtype: np.dtype) -> np.ndarray:
    """A read-only vector of ``n`` ones, made once per length and dtype."""
    return _read_only(np.ones(n, dtype))


@functools.lru_cache(maxsize=MAX_CONSTANTS)
def identity(n: int, dtype: np.dtype) -> np.ndarray:
    """A read-only ``n x n`` identity matrix, made once per size and dtype: row ``k`` is class ``k`` one-hot.

    ``identity(n, dtype).take(labels, axis=0)`` is the one-hot matrix of ``labels`` in one
    gather (1 us for 128 labels of 10 classes, against 2 us for writing through a fancy index).
    """
    return _read_only(np.eye(n, dtype=dtype))


def max_along(x: Any, axis: int) -> Any:
    """``x.max(axis=axis, keepdims=True)``; a NumPy array's is faster along a short last axis."""
    if x.__class__ is not np.ndarray:  # a device array: its own reduction
        return x.max(axis=axis, keepdims=True)
    n = x.shape[axis] if x.ndim else 1
    if axis == x.ndim - 1 and 1 < n <= SHORT_AXIS and x.size >= 16 * n and x.flags.c_contiguous:
        lines = np.ascontiguousarray(x.reshape(-1, n).T)  # (n, rows)
        return np.maximum.reduce(lines, axis=0).reshape(*x.shape[:-1], 1)
    return np.maximum.reduce(x, axis=axis, keepdims=True)


def _single_threaded_gemv(x: np.ndarray) -> bool:
    """Whether BLAS runs a product with ``x`` on the calling thread alone (see the module docstring)."""
    return BLAS_THREADS == 1 or x.size < THREADED_GEMV_MIN


def sum_along(x: Any, axis: int) -> Any:
    """``x.sum(axis=axis, keepdims=True)``; a NumPy float sum along the first or last axis by BLAS
    (along a long last axis by ``einsum`` while BLAS would split the product across its threads)."""
    if x.__class__ is not np.ndarray:
        return x.sum(axis=axis, keepdims=True)
    if x.ndim and x.dtype in _BLAS_FLOATS and x.size and x.flags.c_contiguous:
        n = x.shape[axis]
        if axis == x.ndim - 1 and n > 1:
            lines = x.reshape(-1, n)
            if _single_threaded_gemv(x):
                return np.matmul(lines, ones(n, x.dtype)).reshape(*x.shape[:-1], 1)
            return np.einsum("ij->i", lines).reshape(*x.shape[:-1], 1)
        if axis == 0 and n > 1 and _single_threaded_gemv(x):
            return np.matmul(ones(n, x.dtype), x.reshape(n, -1)).reshape(1, *x.shape[1:])
    return np.add.reduce(x, axis=axis, keepdims=True)


def column_sum_into(x: Any, out: Any) -> None:
    """Write the sum of a 2-D ``x`` over its rows into the 1-D ``out`` (a bias gradient)."""
    if x.__class__ is not np.ndarray:
        column_sum(x, out)
        return
    dtype, rows = x.dtype, x.shape[0]
    if dtype in _BLAS_FLOATS and out.dtype == dtype and rows > 1 and x.flags.c_contiguous and _single_threaded_gemv(x):
        np.matmul(ones(rows, dtype), x, out=out)
    else:
        np.add.reduce(x, axis=0, out=out)
