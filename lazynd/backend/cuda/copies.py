"""Copies that involve device memory; each runs on the current stream that the backend's
``wrap`` made current (the h2d, d2h or compute stream), after the waits for its vars."""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["copy_between_devices", "copy_from_host", "copy_to_host"]


def compute_stream_of(device_id: int) -> Any:
    """The compute stream of the backend of ``gpu(device_id)``."""
    from ...context import Context
    from .. import get_backend

    backend: Any = get_backend(Context("gpu", device_id))
    return backend.compute_stream


def copy_from_host(src: np.ndarray, dst: Any) -> None:
    """Host array -> device array, on the current stream (dtype converted)."""
    if src.dtype != dst.dtype or not src.flags.c_contiguous:
        src = np.ascontiguousarray(src, dtype=dst.dtype)
    if dst.flags.c_contiguous:
        dst.set(src)
    else:
        import cupy

        dst[...] = cupy.asarray(src)


def copy_to_host(src: Any, dst: np.ndarray) -> None:
    """Device array -> host array, on the current stream (the caller synchronises)."""
    import cupy

    host = src.get(stream=cupy.cuda.get_current_stream())
    np.copyto(dst, host, casting="unsafe")


def copy_between_devices(src: Any, dst: Any) -> None:
    """Device -> device, same GPU or another (dtype converted).  Runs on the destination's compute stream, which already waits for ``src``'s last write."""
    import cupy

    if src.device.id == dst.device.id:
        cupy.copyto(dst, src, casting="unsafe")
        return
    here = cupy.cuda.get_current_stream()
    src_stream = None
    if not src.flags.c_contiguous:
        # a peer copy moves contiguous bytes: pack them on the source device, on its compute
        # stream, ordered after this stream (and so after src's last write) and before the copy
        src_stream = compute_stream_of(src.device.id)
        ready = here.record()
        with src.device, src_stream:
            src_stream.wait_event(ready)
            src = cupy.ascontiguousarray(src)
            packed = src_stream.record()
        here.wait_event(packed)
    if src.dtype == dst.dtype and dst.flags.c_contiguous:
        dst.data.copy_from_device_async(src.data, src.nbytes)
    else:
        landed = cupy.empty(src.shape, src.dtype)
        landed.data.copy_from_device_async(src.data, src.nbytes)
        cupy.copyto(dst, landed, casting="unsafe")  # the dtype changes on the destination device
    if src_stream is not None:
        # the packed block returns to the source stream's arena: not before the copy has read it
        src_stream.wait_event(here.record())


