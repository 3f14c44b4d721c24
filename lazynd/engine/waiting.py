"""Waiting: a thread that waits for a var, or for everything, runs ready operations meanwhile.

A wait (``wait_to_read``, ``asnumpy``, ``waitall``, from any thread) does not just sleep
until a worker is done.  The operation waited for often sits in the deferred slot (see
:mod:`lazynd.engine.threaded`) or still in the CPU queue: the waiting thread runs the deferred
operation itself, and then each operation that this makes ready while its wait lasts, with no
hand-off and no wake-up.  On a busy machine each thread hand-off costs tens to hundreds of
microseconds, more than many kernels take.

When nothing is ready to run here, ``wait_for_var`` queues a *wait marker* on the var (an
operation with no function, completed by :mod:`lazynd.engine.completion` as soon as the var
is granted to it) and sleeps on the marker's event; ``waitall`` sleeps until no pushed
operation is pending.

:class:`WaitingEngine` is one layer of :class:`~lazynd.engine.threaded.ThreadedEngine`,
not an engine of its own: the attributes it declares are set up by ``ThreadedEngine``.
"""

from __future__ import annotations

import threading
from collections import deque
from queue import Empty, SimpleQueue
from typing import Any

from .base import Operation
from .completion import CompletingEngine
from .var import Var


class WaitingEngine(CompletingEngine):
    """Waiting for a var or for all pushed operations, running ready operations meanwhile."""

    # set up by ThreadedEngine.__init__
    _device_queues: dict[Any, SimpleQueue[Operation | None]]
    _deferred: Operation | None  # the deferred slot

    def wait_for_var(self, var: Var, for_write: bool = False) -> None:
        """Block until every write (and, ``for_write``, every read) pushed so far is done."""
        queue = self._cpu_queue
        lock = self._lock
        marker = None
        while True:
            lock.acquire()  # not ``with``: see ThreadedEngine._push_queued
            try:
                if not (var.writing or var.queue or (for_write and var.pending_reads)):
                    break
                op = self._deferred
                if op is None:
                    marker = self._wait_marker(var, for_write)
                    break
                self._deferred = None
            finally:
                lock.release()
            # the deferred operation is most often the one waited for: run it here, and the
            # chain it starts while the var stays busy (no marker, no event, no hand-off)
            while op is not None:
                self._run(op)
                op = self._complete(op, queue)
                if op is not None and not (var.writing or var.queue or (for_write and var.pending_reads)):
                    queue.put(op)
                    break
            # done when the var is free: read without the lock, as ``run_now`` does (this thread's
            # own completions are seen; a push from another thread since is a race of the program)
            if not (var.writing or var.queue or (for_write and var.pending_reads)):
                break
        if marker is not None:
            assert marker.done is not None
            self._help_until(marker.done)
        if var.event is not None or var.read_events:
            var.synchronize(for_write)
        if var.exc is not None:
            self._raise_for_var(var)

    def _wait_marker(self, var: Var, for_write: bool) -> Operation:
        """Queue a marker on busy ``var`` that completes when the wait is over (lock held)."""
        marker = Operation(None, (), [] if for_write else [var], [var] if for_write else [], (), "wait", None)
        marker.done = threading.Event()
        if var.queue is None:
            var.queue = deque()
        var.queue.append((marker, for_write))
        marker.wait = 1
        self._pending += 1
        return marker

    def wait_idle(self) -> None:
        """Block until every pushed operation has completed (``waitall`` then raises errors)."""
        while True:
            with self._lock:
                if not self._pending:
                    break
            if not self._help_once():
                with self._lock:
                    self._idle_waiters += 1
                    try:
                        while self._pending:
                            self._idle.wait()
                    finally:
                        self._idle_waiters -= 1
                break
        self._synchronize_devices()

    def _synchronize_devices(self) -> None:
        # every device that was used, queued work or not: GPU launches made inline on the pushing
        # thread never pass through a device queue, and may still run on their streams
        from ..backend import synchronize_all

        synchronize_all()

    # -- a waiting thread works meanwhile ------------------------------------------------------
    def _help_until(self, done: threading.Event) -> None:
        """Run ready CPU operations on this waiting thread until ``done`` is set.

        The operation waited for often sits in the deferred slot or still in the queue; running
        it here instead of sleeping until a worker wakes up saves two thread hand-offs, and on a
        busy machine each one costs tens to hundreds of microseconds.  An operation that one of
        these completions makes ready runs here next while the wait lasts (a chain the caller
        waits for the end of), and goes to the workers once it is over.
        """
        queue = self._cpu_queue
        while not done.is_set():
            op = self._ready_cpu_operation()
            if op is None:
                done.wait()
                return
            while op is not None:
                self._run(op)
                op = self._complete(op, queue)
                if op is not None and done.is_set():
                    queue.put(op)
                    return

    def _help_once(self) -> bool:
        """Run one ready CPU operation here, and what it makes ready; False when there is none."""
        queue = self._cpu_queue
        op = self._ready_cpu_operation()
        if op is None:
            return False
        while op is not None:
            self._run(op)
            op = self._complete(op, queue)
        return True

    def _ready_cpu_operation(self) -> Operation | None:
        """Take the deferred operation, else one from the CPU queue; None when there is none."""
        op: Operation | None
        if self._deferred is not None:
            with self._lock:
                op = self._deferred
                self._deferred = None
            if op is not None:
                return op
        try:
            op = self._cpu_queue.get_nowait()
        except Empty:
            return None
        if op is None:  # a worker's stop signal: leave it for the workers
            self._cpu_queue.put(None)
        return op
