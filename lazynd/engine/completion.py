"""Completion: a finished operation hands its vars on to the operations queued behind it.

When an operation finishes (on a worker, or on a thread that waits), each var it read or
wrote is granted to the operations at the head of the var's queue, by the rules of
:mod:`lazynd.engine.threaded`: reads run concurrently; a write waits for every earlier read
and write.  An operation whose last var this grants is ready and goes to its worker queue,
except one: a worker runs the operation its own completion made ready next, so a dependent
chain stays on one thread instead of bouncing between them.

Wait markers (operations with no function, queued by :mod:`lazynd.engine.waiting`) complete
as soon as they are granted, which may grant more operations in turn.

:class:`CompletingEngine` is one layer of :class:`~lazynd.engine.threaded.ThreadedEngine`,
not an engine of its own: the attributes it declares are set up by ``ThreadedEngine``.
"""

from __future__ import annotations

import threading
from queue import SimpleQueue
from typing import Any

from .base import Engine, Operation
from .var import Var


class CompletingEngine(Engine):
    """Releasing a finished operation's vars, and running or queuing what that makes ready."""

    # set up by ThreadedEngine.__init__
    _lock: threading.Lock
    _idle: threading.Condition  # notified when ``_pending`` drops to 0 and a waitall waits
    _pending: int  # pushed and not completed (inline ops excluded)
    _idle_waiters: int  # threads in waitall waiting on ``_idle``
    _cpu_queue: SimpleQueue[Operation | None]
    _tail: Operation | None  # the last operation pushed through the queues (see merging)

    def _queue_for(self, device: Any) -> SimpleQueue:
        """The worker queue of ``device`` (the CPU pool's for None or a CPU)."""
        raise NotImplementedError

    def _worker(self, queue: SimpleQueue) -> None:
        run, complete = self._run, self._complete
        while True:
            op = queue.get()
            if op is None:
                return
            # an operation that this one made ready runs next on this thread: a chain of
            # dependent operations stays on one worker instead of bouncing between them
            while op is not None:
                run(op)
                op = complete(op, queue)

    def _complete(self, op: Operation, keep_for: SimpleQueue | None = None) -> Operation | None:
        """Release ``op``'s vars and queue what that makes ready.

        With ``keep_for``, the first ready operation that belongs on that queue is returned
        instead of queued, for the calling worker to run next.
        """
        ready: list[Operation] = []
        release = self._release
        lock = self._lock
        lock.acquire()  # not ``with``: see ThreadedEngine._push_queued
        try:
            if op is self._tail:  # no longer mergeable: do not keep its arguments alive
                self._tail = None
            for v in op.reads:
                v.pending_reads -= 1
                if v.pending_reads == 0 and v.queue:
                    release(v, ready)
            for v in op.writes:
                v.writing = False
                if v.queue:
                    release(v, ready)
            self._pending -= 1
            for r in ready:
                if r.fn is None:  # a wait marker among them: complete it (and what it grants)
                    self._finish_markers(ready)
                    break
            if self._pending == 0 and self._idle_waiters:
                self._idle.notify_all()
        finally:
            lock.release()
        if not ready:
            return None
        kept = None
        cpu_queue = self._cpu_queue
        for r in ready:
            target = cpu_queue if getattr(r.device, "device_type", None) != "gpu" else self._queue_for(r.device)
            if kept is None and target is keep_for:
                kept = r
            else:
                target.put(r)
        return kept

    def _release(self, v: Var, ready: list[Operation]) -> None:
        """Grant ``v`` to the operations at the head of its queue (lock held)."""
        queue = v.queue  # not empty: the callers test it
        while queue:
            op, is_write = queue[0]
            if is_write:
                if v.pending_reads or v.writing:
                    return
                v.writing = True  # before the pop: see run_now
                queue.popleft()
                op.wait -= 1
                if op.wait == 0:
                    ready.append(op)
                return
            if v.writing:
                return
            queue.popleft()
            v.pending_reads += 1
            op.wait -= 1
            if op.wait == 0:
                ready.append(op)

    def _finish_markers(self, ready: list[Operation]) -> None:
        """Complete the wait markers in ``ready`` (lock held); that may grant more operations."""
        i = 0
        while i < len(ready):
            if ready[i].fn is None:
                self._finish_marker(ready.pop(i), ready)
            else:
                i += 1

    def _finish_marker(self, marker: Operation, ready: list[Operation]) -> None:
        for v in marker.reads:
            v.pending_reads -= 1
            if v.pending_reads == 0 and v.queue:
                self._release(v, ready)
        for v in marker.writes:
            v.writing = False
            if v.queue:
                self._release(v, ready)
        self._pending -= 1
        assert marker.done is not None
        marker.done.set()
