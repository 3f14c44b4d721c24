"""MXNet 1.x's ``mx.runtime.Features``: which capabilities this installation has.

MXNet reports how its C++ library was built; lazynd answers the same names for what it can do
here: ``CUDA`` and ``CUDA_RTC`` when CuPy sees a GPU (so ``mx.gpu()`` can be used; kernels are
compiled by NVRTC at run time), ``NCCL`` when CuPy also has its NCCL bindings, ``OPENCV`` with OpenCV, ``DIST_KVSTORE`` with
mpi4py, the ``BLAS_*`` family from NumPy's build configuration, ``CPU_*`` from the processor's
flags (Linux), and ``LAPACK``, ``PROFILER`` and ``INT64_TENSOR_SIZE`` always.  The names MXNet
has and lazynd has no counterpart for (``CUDNN``, ``MKLDNN``, ``TENSORRT``...) are there and
off, so ``is_enabled`` answers every name an MXNet program may ask about.

Examples
--------
>>> import lazynd as mx
>>> features = mx.runtime.Features()
>>> features.is_enabled("PROFILER"), features.is_enabled("CUDNN")
(True, False)
"""

from __future__ import annotations

import importlib.util
from collections import OrderedDict
from pathlib import Path

from ..backend.host_gemm import host_gemm_library
from ..errors import LazyNDError

__all__ = ["Feature", "Features", "feature_list"]

# MXNet 1.9.1's feature names, in its order
NAMES = (
    "CUDA", "CUDNN", "NCCL", "CUDA_RTC", "TENSORRT", "CPU_SSE", "CPU_SSE2", "CPU_SSE3", "CPU_SSE4_1",
    "CPU_SSE4_2", "CPU_SSE4A", "CPU_AVX", "CPU_AVX2", "OPENMP", "SSE", "F16C", "JEMALLOC", "BLAS_OPEN",
    "BLAS_ATLAS", "BLAS_MKL", "BLAS_APPLE", "LAPACK", "MKLDNN", "OPENCV", "CAFFE", "PROFILER",
    "DIST_KVSTORE", "CXX14", "INT64_TENSOR_SIZE", "SIGNAL_HANDLER", "DEBUG", "TVM_OP",
)  # fmt: skip

# CPU feature -> the flag Linux lists in /proc/cpuinfo
_CPU_FLAGS = {
    "CPU_SSE": "sse", "CPU_SSE2": "sse2", "CPU_SSE3": "pni", "CPU_SSE4_1": "sse4_1", "CPU_SSE4_2": "sse4_2",
    "CPU_SSE4A": "sse4a", "CPU_AVX": "avx", "CPU_AVX2": "avx2", "SSE": "sse", "F16C": "f16c",
}  # fmt: skip

# BLAS feature -> a word in the name of the BLAS NumPy was built with
_BLAS_WORDS = {"BLAS_OPEN": "openblas", "BLAS_ATLAS": "atlas", "BLAS_MKL": "mkl", "BLAS_APPLE": "accelerate"}


class Feature:
    """One capability: its ``name`` and whether it is ``enabled``."""

    __slots__ = ("name", "enabled")

    def __init__(self, name: str, enabled: bool) -> None:
        self.name = name
        self.enabled = enabled

    def __repr__(self) -> str:
        return f"{'✔' if self.enabled else '✖'} {self.name}"


class Features(OrderedDict):
    """Every :class:`Feature` by name, in MXNet's order."""

    def __init__(self) -> None:
        super().__init__((f.name, f) for f in feature_list())

    def __repr__(self) -> str:
        return str(list(self.values()))

    def is_enabled(self, feature_name: str) -> bool:
        """Whether ``feature_name`` (one of MXNet's names, any case) is enabled."""
        name = str(feature_name).upper()
        if name not in self:
            raise LazyNDError(f"runtime: feature {feature_name!r} is unknown; the features are {list(self)}")
        return bool(self[name].enabled)


def feature_list() -> list[Feature]:
    """The :class:`Feature` of every name, in MXNet's order."""
    enabled = _enabled()
    return [Feature(name, name in enabled) for name in NAMES]


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a parent package that fails to import
        return False


def _enabled() -> set[str]:
    on = {"LAPACK", "PROFILER", "INT64_TENSOR_SIZE"}
    if _installed("cupy") and _gpus() > 0:
        on |= {"CUDA", "CUDA_RTC"}
        if _installed("cupy.cuda.nccl") or _installed("cupy_backends.cuda.libs.nccl"):
            on.add("NCCL")
    if _installed("cv2"):
        on.add("OPENCV")
    if _installed("mpi4py"):
        on.add("DIST_KVSTORE")
    flags = _cpu_flags()
    on |= {name for name, flag in _CPU_FLAGS.items() if flag in flags}
    blas = _blas_name()
    on |= {name for name, word in _BLAS_WORDS.items() if word in blas}
    if host_gemm_library() == "mkl":  # the CPU's large products run on MKL (backend/host_gemm.py)
        on.add("BLAS_MKL")
    return on


def _gpus() -> int:
    from ..context import num_gpus

    return num_gpus()


def _cpu_flags() -> set[str]:
    """The processor's flags from Linux's /proc/cpuinfo (none elsewhere)."""
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return set()
    for line in text.splitlines():
        if line.startswith("flags"):
            return set(line.partition(":")[2].split())
    return set()


def _blas_name() -> str:
    """The lower-case name of the BLAS NumPy was built with ('' when NumPy does not say)."""
    import numpy as np

    try:
        config = np.show_config(mode="dicts")
        return str(config["Build Dependencies"]["blas"]["name"]).lower()
    except Exception:  # noqa: BLE001 - an older NumPy without mode='dicts', or another layout
        return ""
