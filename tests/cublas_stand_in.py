"""A stand-in for cuBLAS's C library for the tests: the functions :class:`lazynd.backend.cuda.gemm.LibraryBlas`
calls, with cuBLAS's C signatures, written from its documented column-major contract and built here
with the C compiler.  Called through ctypes as on a GPU, it checks the argument types (C ints, 64-bit
strides, pointers) by a real C call, and computes on host memory: the CPU emulator's device arrays are
host arrays whose ``data.ptr`` is their address.
"""

from __future__ import annotations

import ctypes
import shutil
import subprocess
from pathlib import Path

_STAND_IN = r"""
static long long calls = 0;
long long stand_in_calls(void) { return calls; }
int cublasSetStream_v2(void* handle, void* stream) { return handle ? 0 : 1; }
int cublasSetPointerMode_v2(void* handle, int mode) { return mode == 0 ? 0 : 7; }
#define GEMM(NAME, T)                                                                                   \
  int NAME(void* h, int ta, int tb, int m, int n, int k, const T* alpha, const T* A, int lda,         \
           const T* B, int ldb, const T* beta, T* C, int ldc) {                                        \
    calls++;                                                                                            \
    for (int j = 0; j < n; ++j)                                                                         \
      for (int i = 0; i < m; ++i) {                                                                     \
        double acc = 0;                                                                                 \
        for (int p = 0; p < k; ++p)                                                                     \
          acc += (double)(ta ? A[p + (long long)i * lda] : A[i + (long long)p * lda]) *                 \
                 (double)(tb ? B[j + (long long)p * ldb] : B[p + (long long)j * ldb]);                 \
        double old = *beta != 0 ? (double)*beta * C[i + (long long)j * ldc] : 0;                        \
        C[i + (long long)j * ldc] = (T)(*alpha * acc + old);                                            \
      }                                                                                                 \
    return 0;                                                                                           \
  }
GEMM(cublasSgemm_v2, float)
GEMM(cublasDgemm_v2, double)
#define BATCHED(NAME, ONE, T)                                                                           \
  int NAME(void* h, int ta, int tb, int m, int n, int k, const T* alpha, const T* A, int lda,         \
           long long sa, const T* B, int ldb, long long sb, const T* beta, T* C, int ldc,             \
           long long sc, int count) {                                                                   \
    for (int q = 0; q < count; ++q)                                                                     \
      ONE(h, ta, tb, m, n, k, alpha, A + q * sa, lda, B + q * sb, ldb, beta, C + q * sc, ldc);        \
    return 0;                                                                                           \
  }
BATCHED(cublasSgemmStridedBatched, cublasSgemm_v2, float)
BATCHED(cublasDgemmStridedBatched, cublasDgemm_v2, double)
"""


def build_stand_in(folder: Path) -> ctypes.CDLL | None:
    """The stand-in library built in ``folder``, or None where no C compiler is found."""
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        return None
    (folder / "stand_in.c").write_text(_STAND_IN)
    library = folder / "libstand_in.so"
    subprocess.run([compiler, "-shared", "-fPIC", "-O1", "-o", str(library), str(folder / "stand_in.c")], check=True)
    built = ctypes.CDLL(str(library))
    built.stand_in_calls.restype = ctypes.c_longlong
    return built
