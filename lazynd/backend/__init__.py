"""Backends: NumPy on the CPU; CuPy (imported only when a GPU is used) on NVIDIA GPUs."""

from __future__ import annotations

import threading
from typing import Any

from ..engine import register_device_sync
from .base import Backend
from .cpu import NumpyBackend
from .pinned import PinnedHostBackend

__all__ = [
    "Backend",
    "NumpyBackend",
    "PinnedHostBackend",
    "cpu_backend",
    "get_backend",
    "gpu_count",
    "pinned_backend",
    "synchronize_all",
]

cpu_backend = NumpyBackend()
# ``cpu_pinned`` contexts: the CPU backend with page-locked memory where CUDA gives it
pinned_backend = PinnedHostBackend(cpu_backend)
# whether device events carry timestamps: only while the profiler records (timing costs, and
# events without it let a waiting host thread sleep instead of spinning)
event_timing = False
_gpu_backends: dict[int, Backend] = {}
_gpu_lock = threading.Lock()


def get_backend(ctx: Any) -> Backend:
    """The backend for a :class:`~lazynd.Context`.

    Raises
    ------
    ContextError
        For a GPU context when CuPy is missing, no GPU is visible or the id is out of range.
    """
    if ctx.device_type != "gpu":
        return cpu_backend if ctx.device_type == "cpu" else pinned_backend
    backend = _gpu_backends.get(ctx.device_id)
    if backend is None:
        with _gpu_lock:
            backend = _gpu_backends.get(ctx.device_id)
            if backend is None:
                backend = _make_gpu_backend(ctx.device_id)
                _gpu_backends[ctx.device_id] = backend
    return backend


def _make_gpu_backend(device_id: int) -> Backend:
    from .cuda.devices import make_backend

    return make_backend(device_id)


def gpu_count() -> int:
    """Number of GPUs CuPy can see (0 without CuPy or without a driver)."""
    from .cuda.devices import gpu_count as count

    return count()


def gpu_memory_info(device_id: int) -> tuple[int, int]:
    """``(free, total)`` bytes of ``gpu(device_id)``'s memory (see ``lazynd.context.gpu_memory_info``)."""
    from .cuda.devices import memory_info

    return memory_info(device_id)


def gpu_compute_capability(device_id: int) -> int:
    """``gpu(device_id)``'s CUDA compute capability (80 for sm_80); a ContextError without that GPU."""
    from .cuda.devices import compute_capability

    return compute_capability(device_id)


def set_event_timing(enabled: bool) -> None:
    """Record timestamps with device events from now on (the profiler turns this on)."""
    global event_timing
    event_timing = enabled


def synchronize_all() -> None:
    """Wait for every stream of every GPU backend in use; then raise the first device's finding
    (a range check's: :mod:`lazynd.backend.cuda.checks`), every device having been waited for."""
    found: Exception | None = None
    for backend in list(_gpu_backends.values()):
        try:
            backend.synchronize()
        except Exception as err:  # noqa: BLE001 - the others are still waited for
            found = found or err
    if found is not None:
        raise found


def gpu_backends() -> dict[int, Backend]:
    """The GPU backends created so far, by device id."""
    return dict(_gpu_backends)


# a wait for all pushed work (waitall) ends when every GPU backend in use is done as well
register_device_sync(synchronize_all)
