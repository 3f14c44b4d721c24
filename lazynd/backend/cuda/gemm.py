"""Matrix products on the GPU: cuBLAS GEMM called directly for 2-D float32/float64 operands.

``cupy.matmul`` handles every shape, dtype and layout, and pays for it: on the H100 its host
side took about 30 us a call, against a few us for the cuBLAS call itself, in a training step
whose small GEMMs run in less time than that.  :func:`matmul` takes the common case of the
operators -- two matrices of one floating dtype, each row-major or transposed (a ``.T`` view),
into a row-major output -- straight to ``cublasSgemm``/``cublasDgemm`` on the current stream;
everything else goes to ``cupy.matmul``, as does everything where CuPy has no cuBLAS bindings
(the CPU emulator).

cuBLAS is called through its C functions (:class:`LibraryBlas`, ctypes on the library CuPy
loaded) rather than CuPy's bindings, which refuse every call while a stream captures a CUDA
graph: an executor's pass with products in it could not be captured (:mod:`.graphs`).  cuBLAS
itself captures GEMMs that read alpha and beta from the host.  Where the library is not found
in the process (CuPy linked it otherwise), CuPy's bindings are used.

cuBLAS is column-major: a row-major ``m x n`` product ``C = A @ B`` is computed as
``C^T = B^T A^T``, where the buffer of a row-major matrix, read column-major, is its transpose
and that of a transposed view is the matrix itself.
"""

from __future__ import annotations

import ctypes
import math
import os
import threading
from typing import Any

import numpy as np

_OP_N, _OP_T = 0, 1  # cublasOperation_t
_POINTER_MODE_HOST = 0
_INT_MAX = 2**31 - 1

# alpha and beta are read from host memory (CUBLAS_POINTER_MODE_HOST) when cuBLAS is called
_ONE_ZERO: dict[Any, tuple[np.ndarray, np.ndarray, str]] = {
    np.dtype(np.float32): (np.ones(1, np.float32), np.zeros(1, np.float32), "sgemm"),
    np.dtype(np.float64): (np.ones(1, np.float64), np.zeros(1, np.float64), "dgemm"),
}
_POINTERS = {dtype: (one.ctypes.data, zero.ctypes.data, name) for dtype, (one, zero, name) in _ONE_ZERO.items()}


class Bindings:
    """What :func:`matmul` calls: CuPy's cuBLAS module, the current device's handle and the
    current stream's pointer."""

    __slots__ = ("cublas", "handle", "stream")

    def __init__(self, cublas: Any, handle: Any, stream: Any) -> None:
        self.cublas, self.handle, self.stream = cublas, handle, stream


_bindings_found: Bindings | bool | None = None  # False where CuPy has no cuBLAS bindings
_bindings_lock = threading.Lock()


def bindings() -> Bindings | None:
    """cuBLAS's functions (:class:`LibraryBlas` where the library is found in the process, else
    CuPy's bindings), or None where CuPy has none (the CPU emulator)."""
    global _bindings_found
    if _bindings_found is None:
        with _bindings_lock:
            if _bindings_found is None:
                try:
                    import cupy

                    try:
                        from cupy_backends.cuda.libs import cublas
                    except ImportError:
                        from cupy.cuda import cublas
                    path = _cublas_library(cupy)
                    functions: Any = LibraryBlas(ctypes.CDLL(path)) if path is not None else cublas
                    _bindings_found = Bindings(
                        functions, cupy.cuda.device.get_cublas_handle, lambda: cupy.cuda.get_current_stream().ptr
                    )
                except (ImportError, AttributeError):
                    _bindings_found = False
    return _bindings_found if isinstance(_bindings_found, Bindings) else None


def _cublas_library(cupy: Any) -> str | None:
    """The path of the cuBLAS library CuPy loaded (it loads it with the first handle), or None."""
    path = loaded_library("libcublas.so")
    if path is None:
        try:
            cupy.cuda.device.get_cublas_handle()
        except Exception:  # noqa: BLE001 - no device or no library: CuPy's bindings then
            return None
        path = loaded_library("libcublas.so")
    return path


def loaded_library(prefix: str) -> str | None:
    """The path of a shared library whose file name starts with ``prefix`` among those this process
    has loaded (``/proc/self/maps``), or None (another system, or none loaded)."""
    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as maps:
            for line in maps:
                path = line.rstrip("\n").partition("/")[2]
                if path and os.path.basename("/" + path).startswith(prefix):
                    return "/" + path
    except OSError:
        return None
    return None


_HANDLE, _STREAM, _PTR, _INT, _LONG = ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int, ctypes.c_longlong
_GEMM = [_HANDLE, _INT, _INT, _INT, _INT, _INT, _PTR, _PTR, _INT, _PTR, _INT, _PTR, _PTR, _INT]
_GEMM_BATCHED = [_HANDLE, _INT, _INT, _INT, _INT, _INT, _PTR, _PTR, _INT, _LONG, _PTR, _INT, _LONG, _PTR, _PTR, _INT, _LONG, _INT]  # fmt: skip
# the functions :func:`matmul` calls, by the names of CuPy's bindings: (C symbol, argument types)
CUBLAS_FUNCTIONS = {
    "setStream": ("cublasSetStream_v2", [_HANDLE, _STREAM]),
    "setPointerMode": ("cublasSetPointerMode_v2", [_HANDLE, _INT]),
    "sgemm": ("cublasSgemm_v2", _GEMM),
    "dgemm": ("cublasDgemm_v2", _GEMM),
    "sgemmStridedBatched": ("cublasSgemmStridedBatched", _GEMM_BATCHED),
    "dgemmStridedBatched": ("cublasDgemmStridedBatched", _GEMM_BATCHED),
}


class LibraryBlas:
    """cuBLAS's C functions through ctypes, under the names and argument order of CuPy's bindings
    (handles, streams and device pointers as integers); a failing call raises
    :class:`~lazynd.LazyNDError` naming the function and cuBLAS's status."""

    def __init__(self, library: Any) -> None:
        for name, (symbol, argtypes) in CUBLAS_FUNCTIONS.items():
            function = getattr(library, symbol)
            function.argtypes = argtypes
            function.restype = ctypes.c_int
            setattr(self, name, _checked(symbol, function))


def _checked(symbol: str, function: Any) -> Any:
    def call(*args: Any) -> None:
        status = function(*args)
        if status:
            from ...errors import LazyNDError

            raise LazyNDError(f"{symbol} failed: cuBLAS status {status}")

    call.__name__ = symbol
    return call


def _layout(x: Any, rows: int, cols: int) -> tuple[int, int] | None:
    """``(op, ld)`` of a matrix for the transposed problem, or None when cuBLAS cannot read it:
    row-major rows (``op N``) or columns contiguous (a transposed view, ``op T``), with a
    leading dimension that fits cuBLAS's ``int`` (a wider one would fail in CuPy's binding with
    an OverflowError instead of going to ``cupy.matmul``).  A single row or column has no step
    to read: its leading dimension is the smallest cuBLAS accepts."""
    item = x.itemsize
    s0, s1 = x.strides[-2:]
    if (s1 == item or cols == 1) and s0 % item == 0 and (rows == 1 or s0 // item >= cols):
        op, ld = _OP_N, max(cols, 1) if rows == 1 else s0 // item
    elif (s0 == item or rows == 1) and s1 % item == 0 and (cols == 1 or s1 // item >= rows):
        op, ld = _OP_T, max(rows, 1) if cols == 1 else s1 // item
    else:
        return None
    return (op, ld) if ld <= _INT_MAX else None


def _bounds(x: Any) -> tuple[int, int]:
    """The first and one-past-last byte addresses ``x`` can touch (from its shape and strides)."""
    lo = hi = x.data.ptr
    for size, stride in zip(x.shape, x.strides, strict=True):
        if stride < 0:
            lo += stride * (size - 1)
        else:
            hi += stride * (size - 1)
    return lo, hi + x.itemsize


def _overlaps(a: Any, out: Any) -> bool:
    a_lo, a_hi = _bounds(a)
    o_lo, o_hi = _bounds(out)
    return a_lo < o_hi and o_lo < a_hi


def _batch_stride(x: Any, batch: tuple[int, ...]) -> int | None:
    """The one element stride between consecutive matrices of ``x`` over the broadcast batch shape
    ``batch`` (0 when ``x`` broadcasts over all of it), or None when its batch axes do not step
    evenly."""
    dims = x.shape[:-2]
    strides = x.strides[:-2]
    lead = len(batch) - len(dims)
    steps = []  # (size, stride) of the batch axes that count
    for j, size in enumerate(batch):
        if size == 1:
            continue
        if j < lead or dims[j - lead] == 1:
            steps.append((size, 0))
        else:
            steps.append((size, strides[j - lead]))
    if not steps:
        return 0
    if all(stride == 0 for _, stride in steps):
        return 0
    for (_, outer), (size, inner) in zip(steps, steps[1:], strict=False):
        if outer != inner * size:
            return None
    if steps[-1][1] % x.itemsize:
        return None
    return steps[-1][1] // x.itemsize


def matmul(a: Any, b: Any, out: Any) -> None:
    """``out[...] = a @ b`` for CuPy arrays on the current device, on the current stream.

    Operands of one dtype (float32 or float64) whose matrices are row-major or transposed views, into
    a row-major ``out`` of that dtype that shares no memory with them, go to cuBLAS directly: two
    matrices to GEMM, stacks of them (NumPy's broadcasting over the leading axes, each operand's
    matrices an even stride apart or one matrix for all) to strided batched GEMM (a stack of one
    pair, a single sample's, to GEMM).  Any other case
    goes to ``cupy.matmul``.
    """
    found = bindings()
    call = _cublas_call(found.cublas, a, b, out) if found is not None else None
    if found is None or call is None:
        _fallback(a, b, out)
        return
    function, arguments = call
    handle = found.handle()
    found.cublas.setStream(handle, found.stream())
    found.cublas.setPointerMode(handle, _POINTER_MODE_HOST)
    function(handle, *arguments)


def _cublas_call(cublas: Any, a: Any, b: Any, out: Any) -> tuple[Any, tuple] | None:
    """The cuBLAS function computing ``out[...] = a @ b`` and its arguments after the handle, or
    None where cuBLAS cannot take the operands (see :func:`matmul`)."""
    pointers = _POINTERS.get(out.dtype)
    if pointers is None or a.ndim < 2 or b.ndim < 2 or a.dtype != out.dtype or b.dtype != out.dtype:
        return None
    one, zero, name = pointers
    m, k = a.shape[-2:]
    n = b.shape[-1]
    if (
        b.shape[-2] != k
        or out.shape[-2:] != (m, n)
        or out.ndim != max(a.ndim, b.ndim)
        or not 0 < m <= _INT_MAX
        or not 0 < n <= _INT_MAX
        or not 0 < k <= _INT_MAX
    ):
        return None
    la, lb, lc = _layout(a, m, k), _layout(b, k, n), _layout(out, m, n)
    if la is None or lb is None or lc is None or lc[0] != _OP_N or _overlaps(a, out) or _overlaps(b, out):
        return None
    batch = out.shape[:-2]
    count = math.prod(batch)
    if out.ndim > 2 and _broadcast(a.shape[:-2], b.shape[:-2]) != batch:
        return None
    if count == 1:  # two matrices (a stack of one: a single sample's convolution)
        return getattr(cublas, name), (lb[0], la[0], n, m, k, one, b.data.ptr, lb[1], a.data.ptr, la[1], zero, out.data.ptr, lc[1])  # fmt: skip
    batched = getattr(cublas, name + "StridedBatched", None)
    if batched is None or not 0 < count <= _INT_MAX:
        return None
    sa, sb, sc = _batch_stride(a, batch), _batch_stride(b, batch), _batch_stride(out, batch)
    if sa is None or sb is None or not sc or (count > 1 and sc < m * lc[1]):
        return None
    return batched, (
        lb[0], la[0], n, m, k, one, b.data.ptr, lb[1], sb, a.data.ptr, la[1], sa, zero, out.data.ptr, lc[1], sc, count
    )  # fmt: skip


def _broadcast(x: tuple[int, ...], y: tuple[int, ...]) -> tuple[int, ...] | None:
    """NumPy's broadcast of two batch shapes, or None when they do not broadcast."""
    try:
        return tuple(np.broadcast_shapes(x, y))
    except ValueError:
        return None


def _fallback(a: Any, b: Any, out: Any) -> None:
    import cupy

    cupy.matmul(a, b, out=out)


def _ones_like(out: Any, rows: int) -> Any:
    import cupy

    return cupy.ones((1, rows), out.dtype)


# (device, dtype, length) -> a (1, length) row of ones, kept for the program's life: a CUDA graph of
# an executor's pass (graphs.py) holds the address of each row it read, so none may be freed (a
# program sees few lengths: one per bias size and batch size)
_ONES: dict[tuple[int, Any, int], Any] = {}


def column_sum(x: Any, out: Any) -> None:
    """``out[...] = x.sum(axis=0)`` for a 2-D CuPy ``x`` and a contiguous 1-D ``out`` (a bias
    gradient): a GEMM of a row of ones with ``x`` where :func:`matmul` takes it to cuBLAS,
    ``cupy.sum`` otherwise."""
    rows = x.shape[0] if x.ndim == 2 else 0
    if (
        bindings() is None
        or rows == 0
        or out.dtype not in _POINTERS
        or x.dtype != out.dtype
        or out.ndim != 1
        or not out.flags.c_contiguous
    ):
        x.sum(axis=0, out=out)
        return
    matmul(_ones_row(out, rows), x, out.reshape(1, -1))


def channel_sum(x: Any, out: Any) -> None:
    """``out[...] = x.sum(axis=(0, 2))`` for a C-contiguous 3-D CuPy ``x`` of shape (batch, channels,
    positions) and a contiguous 1-D ``out`` (a convolution's bias gradient): each row's sum as a
    GEMM with a column of ones, then their sum over the batch as :func:`column_sum`."""
    if (
        bindings() is None
        or x.ndim != 3
        or x.size == 0
        or out.dtype not in _POINTERS
        or x.dtype != out.dtype
        or not x.flags.c_contiguous
        or out.ndim != 1
        or not out.flags.c_contiguous
    ):
        out[...] = x.sum(axis=(0, 2))
        return
    batch, channels, positions = x.shape
    per_row = _empty_like(out, (batch * channels, 1))
    matmul(x.reshape(batch * channels, positions), _ones_row(out, positions).reshape(positions, 1), per_row)
    column_sum(per_row.reshape(batch, channels), out)


def _ones_row(like: Any, length: int) -> Any:
    """A cached (1, length) row of ones of ``like``'s dtype on its device."""
    key = (like.device.id, like.dtype, length)
    ones = _ONES.get(key)
    if ones is None:
        ones = _ONES[key] = _ones_like(like, length)
    return ones


def _empty_like(like: Any, shape: tuple[int, ...]) -> Any:
    import cupy

    return cupy.empty(shape, like.dtype)
