"""CUDA events: reused from a pool per device, and a thread that ends operations when theirs happen.

Every GPU operation records an event after its launch (:meth:`CupyBackend.record_done`), so
events are made at the rate operations are.  They come from an :class:`EventPool` instead of
being created and destroyed each time.  The rule that makes reuse safe: a :class:`StreamEvent`
is the only holder of its CUDA event, and whoever may still wait on the event (a var's last
write or reads, the profiler's records, a staging buffer in flight, a thread about to call
``wait_event``) holds the StreamEvent.  When the last reference to it goes, nobody can wait on
that event any more, and it goes back to the pool to be recorded again by a later operation.
(A stream that already called ``wait_event`` on it keeps waiting for the record it saw: CUDA
takes the event's state at that call.)  So code never keeps ``stream_event.event`` beyond the
StreamEvent it came from.  The pool itself holds every event it lent: a StreamEvent dropped
inside a reference cycle is finalised together with whatever else the cycle held, and CuPy's
``Event`` destroys its CUDA event in its own finaliser, so an event reachable only through the
StreamEvent would come back to the pool already destroyed (recording it again fails with
``cudaErrorContextIsDestroyed``, or crashes).

Events are made without timing, with blocking synchronisation (a host thread that waits sleeps
instead of spinning a core); while the profiler records they are made with timing and are not
pooled.

:class:`EventWaiter` is the thread that lets a GPU device thread hand off an operation that
ends only when the device has done it (a device->host copy): the device thread launches it,
records its event and goes on; the waiter sleeps on the event, runs the host-side rest and
finishes the operation's :class:`~lazynd.engine.completion.Completion`.
"""

from __future__ import annotations

import sys
import threading
import traceback
from collections import deque
from collections.abc import Callable
from queue import SimpleQueue
from typing import Any

from ... import backend as backend_package  # its event_timing flag, read at each record
from ...engine.completion import Completion

# idle events a pool keeps; a program has about as many in use as vars with recent device work,
# and the pool only needs to hold those that come back between uses
POOL_MAX = 256


class StreamEvent:
    """A CUDA event together with the stream it was recorded on; its event returns to ``pool``
    (when it has one) once the StreamEvent is gone (see the module docstring)."""

    __slots__ = ("event", "stream", "pool")

    def __init__(self, event: Any, stream: Any, pool: EventPool | None = None) -> None:
        self.event = event
        self.stream = stream
        self.pool = pool

    @property
    def done(self) -> bool:
        """Whether the work before the event has finished (does not wait)."""
        return bool(self.event.done)

    def synchronize(self) -> None:
        """Block (sleeping) until the work before the event has finished."""
        self.event.synchronize()

    def __del__(self) -> None:
        if self.pool is not None:
            self.pool.give_back(self.event)


class EventPool:
    """The reusable events of one device (see the module docstring).

    ``lent`` holds every event out of the pool, so none is ever reachable only through its
    StreamEvent; ``free`` those ready to be recorded again.  Both are changed with single
    atomic operations (``set.add``/``discard``, ``deque.append``/``pop``): any thread may drop
    the last reference to a StreamEvent.
    """

    def __init__(self, cupy: Any) -> None:
        self.cupy = cupy
        self.free: deque[Any] = deque()
        self.lent: set[Any] = set()
        # read from the instance: a StreamEvent dropped while the interpreter exits may find the
        # module's globals already cleared
        self.limit = POOL_MAX

    def record(self, stream: Any) -> StreamEvent:
        """An event recorded on ``stream`` now (the stream's device must be current)."""
        if backend_package.event_timing:  # the profiler reads timestamps: a fresh timing event, not pooled
            event = self.cupy.cuda.Event(block=True, disable_timing=False)
            event.record(stream)
            return StreamEvent(event, stream)
        try:
            event = self.free.pop()
        except IndexError:
            event = self.cupy.cuda.Event(block=True, disable_timing=True)
            self.lent.add(event)
        event.record(stream)
        return StreamEvent(event, stream, self)

    def give_back(self, event: Any) -> None:
        """``event`` can no longer be waited on: keep it for reuse, or let it go past
        :data:`POOL_MAX` idle ones (then its last reference drops and CuPy destroys it)."""
        if len(self.free) < self.limit:
            self.free.append(event)
        else:
            self.lent.discard(event)


# one pool per device, shared by the backend and the copies
_pools: dict[int, EventPool] = {}


def event_pool(device_id: int) -> EventPool:
    """The event pool of ``gpu(device_id)``."""
    pool = _pools.get(device_id)
    if pool is None:
        import cupy

        pool = _pools.setdefault(device_id, EventPool(cupy))
    return pool


class EventWaiter:
    """A thread that ends operations once their device work has happened, in the order handed over.

    :meth:`finish_after` is called by the device thread that launched the work; the returned
    :class:`~lazynd.engine.completion.Completion` is what that operation's function returns.
    The thread starts on first use.
    """

    def __init__(self, name: str) -> None:
        self.name = name
        self._queue: SimpleQueue[tuple[StreamEvent, Callable[[], None] | None, Completion]] = SimpleQueue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def finish_after(self, done: StreamEvent, then: Callable[[], None] | None = None) -> Completion:
        """A completion finished once ``done`` has happened and ``then()`` (host work: copying
        out of a page-locked buffer) has run; an error of either fails the operation."""
        completion = Completion()
        if self._thread is None:
            with self._lock:
                if self._thread is None:
                    self._thread = threading.Thread(target=self._run, name=self.name, daemon=True)
                    self._thread.start()
        self._queue.put((done, then, completion))
        return completion

    def _run(self) -> None:
        queue = self._queue
        while True:
            done, then, completion = queue.get()
            error: BaseException | None = None
            try:
                done.synchronize()
                if then is not None:
                    then()
            except BaseException as err:  # noqa: BLE001 - the operation fails; the wait reports it
                error = err
            try:
                completion.finish(error)
            except Exception:  # noqa: BLE001 - an engine fault: keep serving the other operations
                traceback.print_exc(file=sys.stderr)
            # drop the references before sleeping on the queue: the event goes back to its pool,
            # the staging buffer to CuPy's
            del done, then, completion
