"""The GPU backend: CuPy arrays, one compute stream and two copy streams per device.

Dependency tracking on the device uses CUDA events: every operation records an
event on its stream after launching and stores it on the vars it wrote; an
operation on another stream ``wait_event``s on it, and a host read synchronises
on it.  Reads on other streams are remembered too, so a later write waits for
them (write-after-read across streams).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .base import Backend

STREAM_KINDS = ("compute", "h2d", "d2h")


class StreamEvent:
    """A CUDA event together with the stream it was recorded on."""

    __slots__ = ("event", "stream")

    def __init__(self, event: Any, stream: Any) -> None:
        self.event = event
        self.stream = stream

    def synchronize(self) -> None:
        self.event.synchronize()


def wait_for_vars(stream: Any, reads: Sequence[Any], writes: Sequence[Any]) -> None:
    """Make ``stream`` wait for the last write of every var in ``reads``, and for every access
    (the last write and the reads since) of every var in ``writes``, made on other streams."""
    for v in reads:
        ev = v.event
        if ev is not None and ev.stream is not stream:
            stream.wait_event(ev.event)
    for v in writes:
        ev = v.event
        if ev is not None and ev.stream is not stream:
            stream.wait_event(ev.event)
        if v.read_events:
            for rev in v.read_events.values():
                if rev.stream is not stream:
                    stream.wait_event(rev.event)


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

    # -- memory --------------------------------------------------------------------------------
    def empty(self, shape: tuple[int, ...], dtype: Any) -> Any:
        with self.device:
            return self.cupy.empty(shape, dtype)

    def zeros(self, shape: tuple[int, ...], dtype: Any) -> Any:
        with self.device, self.compute_stream:
            out = self.cupy.zeros(shape, dtype)
        self.compute_stream.synchronize()
        return out

    def full(self, shape: tuple[int, ...], value: Any, dtype: Any) -> Any:
        with self.device, self.compute_stream:
            out = self.cupy.full(shape, value, dtype)
        self.compute_stream.synchronize()
        return out

    def to_numpy(self, array: Any) -> np.ndarray:
        with self.device:
            return array.get(stream=self.streams["d2h"])

    def empty_cache(self) -> None:
        self.cupy.get_default_memory_pool().free_all_blocks()

    def memory_in_use(self) -> int:
        """Bytes CuPy's pool has handed out on this device."""
        with self.device:
            return int(self.cupy.get_default_memory_pool().used_bytes())

    # -- streams and events --------------------------------------------------------------------
    def wrap(self, fn: Callable[..., Any], reads: Sequence[Any], writes: Sequence[Any], kind: str = "compute") -> Callable[..., Any]:
        stream = self.streams[kind]
        device = self.device

        def run(*args: Any) -> None:
            with device, stream:
                wait_for_vars(stream, reads, writes)
                fn(*args)
                done = StreamEvent(stream.record(), stream)
            for v in writes:
                v.event = done
                v.read_events = None
            for v in reads:
                if v.event is done:  # read and written by this operation
                    continue
                # every read, whatever stream wrote the var last: a later write on another
                # stream must wait for it.  One event per stream (a later one covers the earlier);
                # concurrent readers only ever store into the dict, which is safe under the GIL.
                if v.read_events is None:
                    v.read_events = {}
                v.read_events[stream] = done
            if kind == "d2h":
                # the destination is host memory that CPU operations read on completion
                stream.synchronize()

        return run

    def synchronize(self) -> None:
        with self.device:
            for stream in self.streams.values():
                stream.synchronize()
