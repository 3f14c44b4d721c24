"""The GPU backend: CuPy arrays, one compute stream and two copy streams per device.

Dependency tracking on the device uses CUDA events: every operation records an
event on its stream after launching and stores it on the vars it wrote; an
operation on another stream ``wait_event``s on it, and a host read synchronises
on it.  Reads on other streams are remembered too, so a later write waits for
them (write-after-read across streams).

Events come from a pool per device and are recorded again once nothing can wait on them
(:mod:`.events`).  A copy that returns :class:`~.copies.AfterDevice` (a device->host copy, a
copy out of a ``cpu_pinned`` array) ends only when the device has done it: :meth:`wrap` hands
its event to the device's :class:`~.events.EventWaiter` and returns the engine a
:class:`~lazynd.engine.completion.Completion`, so the device thread goes on launching.

Memory is CuPy's pool, allocated on the compute stream (the pool keeps one arena per
stream and hands a freed block out again only to allocations on the stream it came
from, in that stream's order).  Work on the copy streams is not in that order, so two
rules close the gaps, as MXNet frees storage through the engine:

- the var of a fresh array is a :class:`DeviceVar` that holds the block: when the last
  array of the chunk is gone, the compute stream waits for the var's own events on the
  copy streams before the block returns to the pool;
- a var that no GPU operation has written yet (a fresh block, perhaps just reused) is
  first touched on a copy stream only after the compute stream's work issued so far
  (see :func:`wait_for_vars`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ...engine.base import StepFailure
from ...engine.completion import Completion
from ...engine.var import Var
from ...errors import DeviceMemoryError
from ..base import Backend
from . import copies, gemm, graphs
from .checks import DeviceChecks
from .events import EventWaiter, StreamEvent, event_pool

STREAM_KINDS = ("compute", "h2d", "d2h")


class DeviceVar(Var):
    """The var of a chunk of device memory fresh from the pool; it keeps the block alive.

    When the var goes (every array of the chunk is gone and no pending operation holds it), the
    compute stream is made to wait for the var's events on other streams: the pool hands the
    block out again only in the compute stream's order, so its next user runs after them.
    """

    __slots__ = ("memory", "compute")

    def __init__(self, memory: Any, compute: Any) -> None:
        super().__init__()
        self.memory = memory
        self.compute = compute

    def __del__(self) -> None:
        compute = self.compute
        events = [self.event, *(self.read_events or {}).values()]
        try:
            for event in events:
                if event is not None and event.stream is not compute:
                    compute.wait_event(event.event)
        except Exception:  # noqa: BLE001 - at interpreter exit CUDA may be gone; nothing to order
            pass


def wait_for_vars(stream: Any, reads: Sequence[Any], writes: Sequence[Any], compute: Any = None) -> None:
    """Make ``stream`` wait for the last write of every var in ``reads``, and for every access
    (the last write and the reads since) of every var in ``writes``, made on other streams.

    A var with no event yet was never written on the device: its block may have been freed by
    kernels that ``compute`` (the device's compute stream) has not finished, so a copy stream
    waits for the compute stream first.
    """
    fresh = False
    for v in reads:
        ev = v.event
        if ev is None:
            fresh = True
        elif ev.stream is not stream:
            stream.wait_event(ev.event)
    for v in writes:
        ev = v.event
        if ev is None:
            fresh = True
        elif ev.stream is not stream:
            stream.wait_event(ev.event)
        read_events = v.read_events
        if read_events:
            for rev in list(read_events.values()):
                if rev.stream is not stream:
                    stream.wait_event(rev.event)
    if fresh and compute is not None and compute is not stream:
        fence = event_pool(compute.device_id).record(compute)  # held across the wait: see .events
        stream.wait_event(fence.event)


class CupyBackend(Backend):
    """Arrays are ``cupy.ndarray`` on one device; memory comes from CuPy's pool."""

    name = "gpu"

    def __init__(self, device_id: int) -> None:
        import cupy

        self.cupy = cupy
        self.xp = cupy
        self.device_id = device_id
        self.device = cupy.cuda.Device(device_id)
        with self.device:
            self.streams = {kind: cupy.cuda.Stream(non_blocking=True) for kind in STREAM_KINDS}
        self.compute_stream = self.streams["compute"]
        self.copy_streams = (self.streams["h2d"], self.streams["d2h"])
        self._anchor: tuple[Any, int] | None = None  # (event, perf_counter_ns) for event_time_ns
        self._capture_streams = threading.local()  # one per thread, made on first use: see capture_stream
        self.events = event_pool(device_id)
        # ends the operations that finish when the device has done them (device->host copies)
        self.waiter = EventWaiter(f"lazynd-gpu{device_id}-events")
        self.checks = DeviceChecks(self)  # operators' range checks, raised at the next wait

    # -- memory --------------------------------------------------------------------------------
    def _allocate(self, make: Callable[[], Any], shape: tuple[int, ...], dtype: Any) -> Any:
        try:
            with self.device, self.compute_stream:
                array = make()
        except self.cupy.cuda.memory.OutOfMemoryError as err:
            nbytes = int(np.prod(shape, dtype=np.int64)) * np.dtype(dtype).itemsize
            raise DeviceMemoryError(
                f"gpu({self.device_id}) is out of memory: asked for {nbytes:,} bytes "
                f"(shape {tuple(shape)}, {np.dtype(dtype).name}); {err}",
                ctx=f"gpu({self.device_id})",
                nbytes=nbytes,
            ) from None
        return array

    def empty(self, shape: tuple[int, ...], dtype: Any) -> Any:
        return self._allocate(lambda: self.cupy.empty(shape, dtype), shape, dtype)

    def zeros(self, shape: tuple[int, ...], dtype: Any) -> Any:
        out = self._allocate(lambda: self.cupy.zeros(shape, dtype), shape, dtype)
        self.compute_stream.synchronize()
        return out

    def full(self, shape: tuple[int, ...], value: Any, dtype: Any) -> Any:
        out = self._allocate(lambda: self.cupy.full(shape, value, dtype), shape, dtype)
        self.compute_stream.synchronize()
        return out

    def new_var(self, data: Any) -> Var:
        """The var of ``data``, an array fresh from :meth:`empty` (see :class:`DeviceVar`)."""
        return DeviceVar(data.data, self.compute_stream)

    def var_written_now(self, data: Any) -> Var:
        """The var of ``data``, written by work just launched on the current stream (this device
        current): its event is recorded there now, so reads on the copy streams (``asnumpy``'s
        device->host copy among them) wait for that work.  A var without an event would let them
        read the block before the work is done."""
        var = self.new_var(data)
        var.event = self.events.record(self.cupy.cuda.get_current_stream())
        return var

    def to_numpy(self, array: Any) -> np.ndarray:
        with self.device:
            values = array.get(stream=self.streams["d2h"])
        self.checks.raise_found()
        return values

    def check_range(
        self, op: str, argument: str, values: Any, low: float, high: float, inclusive: bool = False
    ) -> None:
        """On the device (see :mod:`.checks`): a value out of range raises at the next wait."""
        self.checks.check_range(op, argument, values, low, high, inclusive)

    def check_report(
        self, op: str, argument: str, low: float, high: float, inclusive: bool = False
    ) -> tuple[Any, float]:
        """The report array and the check's number for a kernel that makes :meth:`check_range`'s
        check itself, on values it reads anyway (``checks.cuh``): no launch of its own."""
        return self.checks.report_for(op, argument, low, high, inclusive)

    def empty_cache(self) -> None:
        """Return this device's unused pool blocks to the driver."""
        with self.device:
            self.cupy.get_default_memory_pool().free_all_blocks()

    def memory_in_use(self) -> int:
        """Bytes CuPy's pool has handed out on this device."""
        with self.device:
            return int(self.cupy.get_default_memory_pool().used_bytes())

    def scatter_add(self, target: Any, index: Any, values: Any) -> None:
        add_at = getattr(self.cupy.add, "at", None)  # ufunc.at: CuPy 13 and later
        if add_at is not None:
            add_at(target, index, values)
            return
        import cupyx  # older CuPy (and the CPU emulator): the same, deprecated since CuPy 13

        cupyx.scatter_add(target, index, values)

    def matmul(self, a: Any, b: Any, out: Any) -> None:
        """``out[...] = a @ b`` on the current stream: cuBLAS directly for matrices (see :mod:`.gemm`)."""
        gemm.matmul(a, b, out)

    def snapshot_for_device(self, host: np.ndarray, dtype: Any) -> np.ndarray:
        """A copy of ``host`` to be copied to this device: in page-locked memory when possible, so
        the host->device copy is asynchronous and needs no second host copy."""
        return copies.STAGING.snapshot(host, dtype)

    # -- copies (run through ``wrap`` on the h2d, d2h or compute stream) --------------------------
    copy_from_host = staticmethod(copies.copy_from_host)
    copy_from_pinned_host = staticmethod(copies.copy_from_pinned_host)
    hold_until_done = staticmethod(copies.hold_until_done)
    copy_to_host = staticmethod(copies.copy_to_host)
    copy_between_devices = staticmethod(copies.copy_between_devices)

    # -- streams and events --------------------------------------------------------------------
    def wrap(
        self, fn: Callable[..., Any], reads: Sequence[Any], writes: Sequence[Any], kind: str = "compute"
    ) -> Callable[..., Any]:
        stream = self.streams[kind]
        compute = self.compute_stream
        device = self.device
        backend = self
        after_device = copies.AfterDevice

        def run(*args: Any) -> Completion | None:
            with device, stream:
                wait_for_vars(stream, reads, writes, compute)
                try:
                    result = fn(*args)
                except StepFailure as failure:
                    if failure.reaches is not None:  # the engine counts the other writes as done: their readers
                        backend.record_done(stream, reads, writes)  # must wait for the kernels that wrote them
                    raise
                done = backend.record_done(stream, reads, writes)
            if result.__class__ is after_device:
                # the operation ends when the device has done it (and the host its part), on the
                # waiter's thread: this one goes on launching
                return backend.waiter.finish_after(done, result.then)
            return None

        return run

    def launch_graphs(self) -> Any:
        """A :class:`~.graphs.LaunchGraphs` of this device, or None where this CuPy cannot capture
        streams (the CPU emulator's)."""
        return graphs.LaunchGraphs(self) if graphs.capture_supported(self.cupy) else None

    def capture_stream(self) -> Any:
        """The stream this thread captures launch sequences on into CUDA graphs (:mod:`.graphs`):
        one of its own, since whatever a capturing stream is given becomes part of the graph, and
        one per thread, since a stream holds one capture at a time (two threads capturing passes
        of two executors would otherwise refuse each other's)."""
        stream = getattr(self._capture_streams, "stream", None)
        if stream is None:
            with self.device:
                stream = self._capture_streams.stream = self.cupy.cuda.Stream(non_blocking=True)
        return stream

    def record_done(self, stream: Any, reads: Sequence[Any], writes: Sequence[Any]) -> StreamEvent:
        """Record an event on ``stream`` after an operation was launched there, and note it on the
        vars: the last write of each var in ``writes``, a read of each other var in ``reads``.
        Every GPU operation (kernels, copies, NCCL) ends with this; the device must be current."""
        done = self.events.record(stream)
        for v in writes:
            v.event = done
            v.read_events = None
        for v in reads:
            if v.event is done:  # read and written by this operation
                continue
            # every read, whatever stream wrote the var last: a later write on another stream
            # must wait for it.  One event per stream (a later one covers the earlier); a new
            # dict is published whole, so a thread iterating the old one is never disturbed
            events = dict(v.read_events) if v.read_events else {}
            events[stream] = done
            v.read_events = events
        return done

    def event_time_ns(self, done: StreamEvent) -> int:
        """When ``done`` completed, on the host's ``time.perf_counter_ns`` clock (for the profiler):
        the device clock is anchored once per backend by an event the host waited for."""
        import time

        done.event.synchronize()
        if self._anchor is None:
            with self.device:
                mark = self.cupy.cuda.Event()
                mark.record(done.stream)
                mark.synchronize()
            self._anchor = (mark, time.perf_counter_ns())
        mark, host_ns = self._anchor
        return host_ns + round(self.cupy.cuda.get_elapsed_time(mark, done.event) * 1e6)

    def import_external(self, make: Callable[[], Any]) -> tuple[Any, Any]:
        """Run ``make`` (a DLPack import) with the compute stream current, so a producer that
        honours the consumer stream orders it after its own work, and return the array with an
        event on the compute stream for the new var."""
        with self.device, self.compute_stream:
            array = make()
            event = StreamEvent(self.compute_stream.record(), self.compute_stream)
        return array, event

    def synchronize(self) -> None:
        with self.device:
            for stream in self.streams.values():
                stream.synchronize()
        self.checks.raise_found()
