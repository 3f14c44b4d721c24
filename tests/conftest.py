"""Shared fixtures: contexts (cpu, and gpu when present), the data folder, engines, the cuBLAS stand-in."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

import lazynd as mx


def _has_gpu() -> bool:
    return mx.num_gpus() > 0


HAS_GPU = _has_gpu()


@pytest.fixture(autouse=True, scope="session")
def _blas_keeps_its_threads():
    """The host BLAS keeps its threads in the tests: lazynd's governor (lazynd/backend/host_threads.py)
    sets it to one thread while the machine is busy, and OpenBLAS's products on one thread differ
    from those on two in the last bits (a 128 x 784 x 128 product by up to 1e-3 relative, on
    elements near zero), so tests that compare two paths closely would depend on the test machine's
    load (two MNIST training comparisons failed under load that way).  The governor's own tests
    build governors of their own, and its integration runs in subprocesses."""
    from lazynd.backend import cpu

    saved, cpu.GOVERNOR = cpu.GOVERNOR, None
    yield
    cpu.GOVERNOR = saved


requires_gpu = pytest.mark.skipif(not HAS_GPU, reason="needs an NVIDIA GPU with CuPy (none visible)")


@pytest.fixture(params=["cpu", pytest.param("gpu", marks=[pytest.mark.gpu, requires_gpu])])
def ctx(request: pytest.FixtureRequest) -> mx.Context:
    """Each test using it runs on cpu(0) and, where a GPU is present, on gpu(0)."""
    return mx.cpu(0) if request.param == "cpu" else mx.gpu(0)


@pytest.fixture
def data_dir() -> Path:
    """The real datasets folder ($LAZYND_DATA_DIR); tests using it skip when it is not set."""
    path = os.environ.get("LAZYND_DATA_DIR")
    if not path or not Path(path).is_dir():
        pytest.skip("LAZYND_DATA_DIR is not set to the shared data folder (see README: Set up)")
    return Path(path)


@pytest.fixture(params=["threaded", "naive"])
def engine_name(request: pytest.FixtureRequest):
    """Run a test under both engines, restoring the default afterwards."""
    from lazynd import engine

    engine.set_engine(request.param)
    yield request.param
    engine.set_engine("threaded")


@pytest.fixture
def stopped_profiler():
    """The profiler stopped and emptied before and after a test (files use it with ``usefixtures``)."""
    from lazynd import profiler

    profiler.set_state("stop")
    profiler.reset()
    yield
    profiler.set_state("stop")
    profiler.reset()


@pytest.fixture(scope="session")
def cublas_stand_in(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """A library with cuBLAS's C signatures built by the C compiler (tests/cublas_stand_in.py), where
    :class:`lazynd.backend.cuda.gemm.LibraryBlas` is tested without a GPU; skips without a compiler."""
    from cublas_stand_in import build_stand_in

    library = build_stand_in(tmp_path_factory.mktemp("cublas"))
    if library is None:
        pytest.skip("needs a C compiler to build the stand-in for cuBLAS's C library")
    return library


@pytest.fixture
def captured_steps(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> int:
    """How many steps a test runs with executors' CUDA graphs on: eager, captured, then two replays
    on a GPU; eager and captured on the CUDA emulator, whose capture is emulated
    (tests/cuda_capture.py, with the stand-in cuBLAS).  Skips without a GPU."""
    import lazynd as mx

    if mx.num_gpus() == 0:
        pytest.skip("needs an NVIDIA GPU with CuPy (none visible)")
    import cupy
    from cuda_capture import emulate_capture

    from lazynd.backend.cuda.graphs import capture_supported

    if hasattr(cupy, "_call"):  # the CUDA emulator's fake CuPy
        emulate_capture(monkeypatch, request.getfixturevalue("cublas_stand_in"))
        return 2
    if not capture_supported(cupy):
        pytest.skip("this CuPy captures no streams")
    monkeypatch.setenv("LAZYND_CUDA_GRAPHS", "1")
    return 4
