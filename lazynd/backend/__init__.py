"""Backends: NumPy on the CPU; CuPy (imported only when a GPU is used) on NVIDIA GPUs."""

from __future__ import annotations

import threading
from typing import Any

from ..engine import register_device_sync
from ..errors import ContextError
from .base import Backend
from .numpy_backend import NumpyBackend

__all__ = ["Backend", "NumpyBackend", "get_backend", "synchronize_all", "cpu_backend"]

cpu_backend = NumpyBackend()
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
        return cpu_backend
    backend = _gpu_backends.get(ctx.device_id)
    if backend is None:
        with _gpu_lock:
            backend = _gpu_backends.get(ctx.device_id)
            if backend is None:
                backend = _make_gpu_backend(ctx.device_id)
                _gpu_backends[ctx.device_id] = backend
    return backend


def _make_gpu_backend(device_id: int) -> Backend:
    try:
        import cupy
    except ImportError as err:
        raise ContextError(
            f"gpu({device_id}) needs CuPy, which is not installed: pip install 'lazynd[gpu]' (cupy-cuda12x)"
        ) from err
    try:
        count = cupy.cuda.runtime.getDeviceCount()
    except Exception as err:  # CUDARuntimeError: no driver or no device
        raise ContextError(f"gpu({device_id}) cannot be used: no CUDA device or driver ({err})") from err
    if device_id >= count:
        raise ContextError(f"gpu({device_id}) does not exist: {count} GPU(s) visible")
    from .cupy_backend import CupyBackend

    return CupyBackend(device_id)


def synchronize_all() -> None:
    """Wait for every stream of every GPU backend in use."""
    for backend in list(_gpu_backends.values()):
        backend.synchronize()


def gpu_backends() -> dict[int, Backend]:
    """The GPU backends created so far, by device id."""
    return dict(_gpu_backends)


# a wait for all pushed work (waitall) ends when every GPU backend in use is done as well
register_device_sync(synchronize_all)
