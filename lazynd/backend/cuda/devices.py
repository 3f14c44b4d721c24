"""Which GPUs there are, and the backend of one (CuPy imported here, on first use of a GPU)."""

from __future__ import annotations

import functools
from typing import Any

from ...errors import ContextError


def gpu_count() -> int:
    """Number of GPUs CuPy can see (0 without CuPy or without a driver)."""
    try:
        import cupy

        return int(cupy.cuda.runtime.getDeviceCount())
    except Exception:  # noqa: BLE001 - no CuPy, no driver, no device: no GPU
        return 0


def make_backend(device_id: int) -> Any:
    """The :class:`~lazynd.backend.cuda.backend.CupyBackend` of ``gpu(device_id)``, or a clear
    :class:`~lazynd.ContextError` when CuPy, the driver or the device is missing."""
    _check_device(device_id)
    from .backend import CupyBackend

    return CupyBackend(device_id)


def _check_device(device_id: int) -> None:
    """Raise a clear :class:`~lazynd.ContextError` unless CuPy, a driver and ``gpu(device_id)`` are there."""
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
    if not 0 <= device_id < count:
        raise ContextError(f"gpu({device_id}) does not exist: {count} GPU(s) visible")


def memory_info(device_id: int) -> tuple[int, int]:
    """``(free, total)`` bytes of ``gpu(device_id)``'s memory as the driver reports them (memory
    CuPy's pool holds counts as used); a :class:`~lazynd.ContextError` where there is no such GPU."""
    _check_device(device_id)
    import cupy

    with cupy.cuda.Device(device_id):
        free, total = cupy.cuda.runtime.memGetInfo()
    return int(free), int(total)


# an H100's count, for device properties that lack it (the CPU emulator the tests can run on)
_DEFAULT_MULTIPROCESSORS = 132


@functools.cache
def multiprocessor_count(device_id: int) -> int:
    """Streaming multiprocessors of ``gpu(device_id)``: kernels size their grids to fill them."""
    import cupy

    properties = cupy.cuda.runtime.getDeviceProperties(device_id)
    return int(properties.get("multiProcessorCount", _DEFAULT_MULTIPROCESSORS))


def compute_capability(device_id: int) -> int:
    """``gpu(device_id)``'s CUDA compute capability as one number (80 for sm_80); a
    :class:`~lazynd.ContextError` where there is no such GPU or the driver does not say."""
    _check_device(device_id)
    import cupy

    properties = cupy.cuda.runtime.getDeviceProperties(device_id)
    if "major" not in properties or "minor" not in properties:
        raise ContextError(f"gpu({device_id}): the driver reports no compute capability")
    return int(properties["major"]) * 10 + int(properties["minor"])
