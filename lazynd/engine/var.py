"""Engine variables: one per storage chunk; views share their parent's."""

from __future__ import annotations

from collections import deque
from typing import Any


class Var:
    """Dependency state of one storage chunk.

    Attributes
    ----------
    pending_reads : int
        Reads dispatched (running or ready) and not yet complete.
    writing : bool
        A write is dispatched and not yet complete.
    queue : deque or None
        Operations waiting on this var, in push order, as ``(op, is_write)``.
    exc : EngineError or None
        Error of the last failed operation that wrote this var.
    event : object or None
        Device event recorded by the last write (GPU); ``synchronize()`` waits for it.
    read_events : dict or None
        Device events of the reads since the last write, the latest per stream (GPU): a
        write on another stream waits for them.
    """

    __slots__ = ("pending_reads", "writing", "queue", "exc", "event", "read_events", "__weakref__")

    def __init__(self) -> None:
        self.pending_reads = 0
        self.writing = False
        self.queue: deque[Any] | None = None
        self.exc: BaseException | None = None
        self.event: Any = None
        self.read_events: dict[Any, Any] | None = None

    def synchronize(self, for_write: bool = False) -> None:
        """Block until the device work behind this var is done: its last write, and for a write
        also the reads since (a device event's ``synchronize()``; nothing on the CPU)."""
        event = self.event
        if event is not None:
            event.synchronize()
        if for_write:
            read_events = self.read_events
            if read_events:
                for read_event in list(read_events.values()):
                    read_event.synchronize()

    def __repr__(self) -> str:
        state = "writing" if self.writing else f"reads={self.pending_reads}"
        waiting = len(self.queue) if self.queue else 0
        return f"<Var {state} waiting={waiting}{' failed' if self.exc else ''}>"
