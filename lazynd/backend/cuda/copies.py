"""Copies that involve device memory; each runs on the current stream that the backend's
``wrap`` made current (the h2d, d2h or compute stream), after the waits for its vars.

Host memory takes part in three ways.  A copy from *pageable* memory (NumPy's own) is first
copied on the host into a page-locked staging buffer, then DMA'd: its operation is over at
launch, since the source was already read.  A copy from a ``cpu_pinned`` array is DMA'd from
the array itself: it too ends at launch (the stream orders the destination's readers after it),
and a hold pushed after it (:func:`hold_until_done`) keeps the source read until the device
has read it.  A device->host copy returns :class:`AfterDevice`: its operation ends only once
the device has done it (and the host has copied a staged result into a pageable destination),
on the device's waiter thread; the device thread does not wait.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import numpy as np

from .events import event_pool

__all__ = [
    "STAGING",
    "AfterDevice",
    "PinnedStaging",
    "copy_between_devices",
    "copy_from_host",
    "copy_from_pinned_host",
    "copy_to_host",
    "copy_to_host_now",
    "hold_until_done",
]


class AfterDevice:
    """Returned by a copy whose operation must end only once the device has done the copy.

    ``then`` is host work to run after that (copying a staged result into its destination),
    or None.  The backend's ``wrap`` turns it into the engine's
    :class:`~lazynd.engine.completion.Completion`.
    """

    __slots__ = ("then",)

    def __init__(self, then: Callable[[], None] | None = None) -> None:
        self.then = then


def compute_stream_of(device_id: int) -> Any:
    """The compute stream of the backend of ``gpu(device_id)``."""
    from ...context import Context
    from .. import get_backend

    backend: Any = get_backend(Context("gpu", device_id))
    return backend.compute_stream


class PinnedStaging:
    """Page-locked host buffers that host->device copies pass through, so the copy engine runs it
    asynchronously on the copy stream (from pageable memory CUDA stages and blocks).

    A buffer is handed out again only after the copy that read it has finished (its event);
    buffers come from CuPy's pinned pool.  Where page-locked memory cannot be had (a locked-memory
    limit), copies go from pageable memory, correct but blocking.
    """

    def __init__(self) -> None:
        self._in_flight: list[tuple[Any, Any]] = []  # (pinned memory, event of the copy reading it)
        self._lock = threading.Lock()
        self.available = True

    def take(self, nbytes: int) -> tuple[Any, np.ndarray] | None:
        """(memory, uint8 view) of at least ``nbytes`` page-locked bytes, or None."""
        import cupy

        with self._lock:
            # buffers whose copies are done go back to CuPy's pool when the references drop
            self._in_flight = [(memory, event) for memory, event in self._in_flight if not event.done]
        if not self.available:
            return None
        try:
            memory = cupy.cuda.alloc_pinned_memory(nbytes)
        except Exception:  # noqa: BLE001 - no page-locked memory (limits, or a CuPy without it): pageable copies
            self.available = False
            return None
        return memory, np.frombuffer(memory, dtype=np.uint8, count=nbytes)

    def empty(self, shape: tuple[int, ...], dtype: Any) -> np.ndarray | None:
        """An uninitialised C-contiguous array in page-locked memory (it keeps the memory alive),
        or None where none can be had (and for an empty array)."""
        dtype = np.dtype(dtype)
        nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
        staged = self.take(nbytes) if nbytes else None
        if staged is None:
            return None
        return staged[1].view(dtype).reshape(shape)

    def snapshot(self, host: np.ndarray, dtype: Any) -> np.ndarray:
        """A C-contiguous copy of ``host`` as ``dtype``, in page-locked memory when it can be had:
        copied from there, a host->device copy needs no second host copy."""
        pinned = self.empty(host.shape, dtype)
        if pinned is None:
            return np.array(host, dtype=dtype, copy=True, order="C")
        np.copyto(pinned, host, casting="unsafe")
        return pinned

    def in_flight(self, memory: Any, event: Any) -> None:
        """Keep ``memory`` until ``event`` (recorded after the copy that reads it; anything with
        ``done``) has happened."""
        with self._lock:
            self._in_flight.append((memory, event))


STAGING = PinnedStaging()


def buffer_owner(array: np.ndarray) -> Any:
    """The object that exported the memory ``array`` views: the end of its ``base`` chain, through
    the ``memoryview`` that ``np.frombuffer`` keeps; None when NumPy allocated the memory itself."""
    root: Any = array
    while isinstance(root, np.ndarray) and root.base is not None:
        root = root.base
    if isinstance(root, memoryview):
        return root.obj
    return None if isinstance(root, np.ndarray) else root


def pinned_memory_of(array: np.ndarray) -> Any:
    """The page-locked CuPy memory that ``array`` views, or None (pageable memory)."""
    owner = buffer_owner(array)
    if owner is None:
        return None
    import cupy

    pointer_type = getattr(cupy.cuda, "PinnedMemoryPointer", None)
    return owner if pointer_type is not None and isinstance(owner, pointer_type) else None


def copy_from_host(src: np.ndarray, dst: Any) -> None:
    """Host array -> device array, on the current stream (dtype converted), through a page-locked
    buffer: the copy is asynchronous and the calling thread does not wait for it."""
    import cupy

    if src.dtype != dst.dtype or not src.flags.c_contiguous:
        src = np.ascontiguousarray(src, dtype=dst.dtype)
    if not dst.flags.c_contiguous:
        dst[...] = cupy.asarray(src)
        return
    stream = cupy.cuda.get_current_stream()
    memory = pinned_memory_of(src) if STAGING.available else None
    if memory is not None:  # already page-locked (a snapshot made by ``mx.nd.array``)
        dst.set(src, stream=stream)
        STAGING.in_flight(memory, event_pool(stream.device_id).record(stream))
        return
    staged = STAGING.take(src.nbytes) if src.nbytes else None
    if staged is None:
        dst.set(src)
        return
    memory, view = staged
    pinned = view.view(src.dtype).reshape(src.shape)
    np.copyto(pinned, src)
    dst.set(pinned, stream=stream)
    STAGING.in_flight(memory, event_pool(stream.device_id).record(stream))


def copy_from_pinned_host(src: np.ndarray, dst: Any) -> None:
    """A ``cpu_pinned`` array -> device array, on the current stream.

    From page-locked memory the DMA reads the source itself, with no staging copy.  The operation
    ends at launch: readers of ``dst`` are ordered after the copy by its stream event.  The
    source may be rewritten only once the device has read it, which the caller arranges with
    :func:`hold_until_done` pushed right after.  A source in pageable memory (no page-locked
    memory could be had), of another dtype or not contiguous goes as :func:`copy_from_host` does.
    """
    import cupy

    if (
        src.dtype != dst.dtype
        or not src.flags.c_contiguous
        or not dst.flags.c_contiguous
        or not src.size
        or pinned_memory_of(src) is None
    ):
        copy_from_host(src, dst)
        return
    dst.set(src, stream=cupy.cuda.get_current_stream())


def hold_until_done() -> AfterDevice:
    """An operation that ends when the device has done the work queued on its stream before it.

    Pushed after a copy out of host memory that the DMA reads in place, reading that memory: a
    write into it waits for this operation, so for the device's read, while readers of the
    copy's destination need not wait for the host to hear that the copy is over.
    """
    return AfterDevice()


def copy_to_host(src: Any, dst: np.ndarray) -> AfterDevice | None:
    """Device array -> host array, launched on the current stream; the operation ends later.

    The DMA lands in ``dst`` itself when it is page-locked (a ``cpu_pinned`` array of the same
    dtype, contiguous), else in a page-locked staging buffer that the waiter thread copies into
    ``dst`` once the DMA is done (a pageable buffer where no page-locked memory can be had:
    CUDA then copies synchronously).  Either way the calling thread does not wait.
    """
    import cupy

    if not src.size:
        return None
    stream = cupy.cuda.get_current_stream()
    if not src.flags.c_contiguous:
        src = cupy.ascontiguousarray(src)  # on this stream; its block returns to this stream's arena
    if dst.dtype == src.dtype and dst.flags.c_contiguous and pinned_memory_of(dst) is not None:
        src.get(stream=stream, out=dst, blocking=False)
        return AfterDevice()
    landing = STAGING.empty(src.shape, src.dtype)
    if landing is None:
        landing = np.empty(src.shape, src.dtype)
    src.get(stream=stream, out=landing, blocking=False)

    def copy_out() -> None:
        np.copyto(dst, landing, casting="unsafe")

    return AfterDevice(copy_out)


def copy_to_host_now(src: Any, dst: np.ndarray) -> None:
    """:func:`copy_to_host`, finished on this thread before it returns (for a caller whose
    operation must be over when its function returns: an executor's cross-device copy)."""
    import cupy

    after = copy_to_host(src, dst)
    if after is not None:
        cupy.cuda.get_current_stream().synchronize()
        if after.then is not None:
            after.then()


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
