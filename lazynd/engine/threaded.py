"""ThreadedEngine: MXNet's dependency engine on Python worker threads.

Scheduling rules (per var): reads run concurrently; a write waits for every
earlier read and write and blocks later ones; operations touching a var are
ordered as they were pushed.

Workers are fed through ``queue.SimpleQueue`` (a push is well under a
microsecond).  One pool serves the CPU; each GPU device has one thread of its
own, so launches on its streams keep push order.  An operation whose
dependencies are already met and which the caller marks ``inline_ok`` (cheap
CPU work, or an asynchronous GPU launch) runs at once on the pushing thread:
a thread hand-off would cost more than the work itself, and the result is the
same as if a worker had run it.

Handing an operation to a worker is what costs: the put wakes a thread, which
then fights the pushing thread for the GIL and for a core, and on a busy
machine that is 50-200 us, more than many 1M-element kernels take.  So a ready
CPU operation is not handed over at once.  It waits in the *deferred slot*
(one per engine) for what the pushing program does next:

- it waits (``wait_to_read``, ``asnumpy``, ``waitall``, from any thread): the
  waiting thread runs the deferred operation itself, and then each operation
  that this makes ready while its wait lasts (no hand-off, no wake-up);
- it pushes another operation that is ready (queued or inline): the deferred
  one goes to a worker and the new one, if queued, takes the slot, so two
  independent operations pushed back to back still run in parallel;
- it pushes an operation that waits for the deferred one: the slot is kept
  (a chain, most likely waited for next), up to ``DEFERRED_CHAIN_MAX`` such
  operations (a longer chain, such as a training loop's passes, starts on a
  worker at once); one that waits for something else sends the deferred
  operation to a worker;
- it does none of these (computes in Python, sleeps, its thread exits): a
  watcher thread that looks at the slot every tick while operations are being
  deferred hands it to a worker after one to two ticks.  A tick is
  ``DEFERRED_TICK_S`` (0.5 ms; the GIL may add its switch interval) after the
  watcher last had to hand an operation over; each look that finds the slot
  empty (the program collected what it deferred) doubles it, up to
  ``WATCH_BACKOFF`` times that, so a program that waits for each result
  right away is not woken up 2000 times a second (each wake-up takes the GIL:
  0.5 us of every 50 us push-then-wait measured).  An operation left in the
  slot after such a phase goes to a worker within 8 ms, and the tick is short
  again.  After ``WATCH_LINGER_TICKS`` looks without a new deferral the watcher
  sleeps until the next one, so it does not disturb long operations running in
  parallel.

Three more ways to avoid hand-offs: ``run_now`` computes a pure function of
ready vars on the calling thread with no bookkeeping at all (small arithmetic
into a fresh array); a worker runs the operation its own completion made ready
next, so a dependent chain stays on one thread (:mod:`.completion`); and a
thread that waits runs queued operations itself instead of sleeping
(:mod:`.waiting`).

A chain pushed faster than it runs (a training loop's forward, backward and update, again
and again) is merged: an operation that depends on the one pushed just before it, which has not
started, becomes that operation's next part (:mod:`.merging`, MXNet's engine bulk), so the
vars are queued on and released once for up to ``merging.MAX_PARTS`` operations.

The engine is built in layers, one idea each: :class:`.CompletingEngine`
(releasing a finished operation's vars), :class:`.WaitingEngine` (waiting,
and working meanwhile) and, here, the worker threads, pushing and the deferred
slot with its watcher.
"""

from __future__ import annotations

import os
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from queue import SimpleQueue
from typing import Any

from .base import NOT_READY, Operation, split_vars
from .merging import merge_into
from .var import Var
from .waiting import WaitingEngine

# the watcher looks at the deferred slot this often while operations are being pushed; an
# operation still there at its next look (after one to two ticks) goes to the workers
DEFERRED_TICK_S = 0.0005
# the tick doubles with each look at an empty slot, up to this many times DEFERRED_TICK_S
WATCH_BACKOFF = 8
# after this many looks without a new deferral the watcher sleeps until the next deferral
WATCH_LINGER_TICKS = 4
# the deferred operation goes to a worker when this many operations waiting for it have been
# pushed since it was deferred (a chain this long is not about to be waited for)
DEFERRED_CHAIN_MAX = 4


def default_cpu_workers() -> int:
    env = os.environ.get("LAZYND_CPU_WORKERS")
    if env:
        return max(1, int(env))
    return max(2, min(os.cpu_count() or 2, 8))


def _shares_a_var(op: Operation, other: Operation) -> bool:
    for v in op.reads:
        if v in other.writes:
            return True
    for v in op.writes:
        if v in other.writes or v in other.reads:
            return True
    return False


class ThreadedEngine(WaitingEngine):
    """The default engine.  See the module docstring for its rules."""

    name = "threaded"
    has_workers = True

    def __init__(self, num_workers: int | None = None) -> None:
        super().__init__()
        self.num_workers = num_workers or default_cpu_workers()
        self._lock = threading.Lock()
        self._idle = threading.Condition(self._lock)
        self._pending = 0  # pushed and not completed (inline ops excluded)
        self._idle_waiters = 0  # threads in waitall waiting on ``_idle``
        self._cpu_queue: SimpleQueue[Operation | None] = SimpleQueue()
        self._device_queues: dict[Any, SimpleQueue[Operation | None]] = {}
        self._threads: list[threading.Thread] = []
        for i in range(self.num_workers):
            self._start_worker(self._cpu_queue, f"lazynd-cpu-{i}")
        # the deferred slot: one ready CPU operation not yet handed to the workers (see the
        # module docstring); ``_deferrals`` counts what entered it, for the watcher
        self._deferred: Operation | None = None
        self._deferrals = 0
        self._chained = 0  # operations pushed since the deferral that wait for the deferred one
        # the CPU operation pushed last through the queues: the next one may merge into it while
        # it has not started (lazynd.engine.merging); cleared when it completes
        self._tail: Operation | None = None
        self._watcher_asleep = False
        self._watcher_wake = threading.Condition(self._lock)
        self._closed = False
        watcher = threading.Thread(target=self._watch, name="lazynd-deferred-watcher", daemon=True)
        watcher.start()
        self._threads.append(watcher)

    def shutdown(self) -> None:
        """Finish what was pushed, then stop this engine's threads (see :func:`lazynd.engine.set_engine`)."""
        self.waitall()
        with self._lock:
            if self._closed:
                return
            self._closed = True
            self._watcher_asleep = False
            self._watcher_wake.notify()
            queues = [self._cpu_queue] * self.num_workers + list(self._device_queues.values())
        for queue in queues:
            queue.put(None)  # one stop signal per worker

    def _start_worker(self, queue: SimpleQueue, name: str) -> None:
        thread = threading.Thread(target=self._worker, args=(queue,), name=name, daemon=True)
        thread.start()
        self._threads.append(thread)

    def _queue_for(self, device: Any) -> SimpleQueue:
        if device is None or not getattr(device, "is_gpu", False):
            return self._cpu_queue
        queue = self._device_queues.get(device)
        if queue is None:
            with self._lock:
                queue = self._device_queues.get(device)
                if queue is None:
                    queue = SimpleQueue()
                    self._start_worker(queue, f"lazynd-{device}")
                    self._device_queues[device] = queue
        return queue

    # -- pushing -------------------------------------------------------------------------------
    def push(
        self,
        fn: Callable[..., Any],
        args: tuple,
        reads: Sequence[Var],
        writes: Sequence[Var],
        name: str = "op",
        device: Any = None,
        inline_ok: bool = False,
    ) -> None:
        if inline_ok:
            # fast path: claim every var if all are free, run here, release
            lock = self._lock
            lock.acquire()
            for v in reads:
                if v.writing or v.queue:
                    break
            else:
                for v in writes:
                    if v.writing or v.pending_reads or v.queue:
                        break
                else:
                    for v in reads:
                        v.pending_reads += 1
                    for v in writes:
                        v.writing = True
                    deferred = self._deferred
                    if deferred is None:
                        lock.release()
                    else:  # the pusher works on: the deferred operation goes to a worker
                        self._deferred = None
                        lock.release()
                        self._cpu_queue.put(deferred)
                    self._run_inline(fn, args, reads, writes, name, device)
                    return
            lock.release()
        self._push_queued(fn, args, reads, writes, name, device)

    def run_now(self, fn: Callable[..., Any], args: tuple, reads: Sequence[Var]) -> Any:
        # No lock: every write pushed before this call either holds ``v.writing`` or sits in
        # ``v.queue``, and ``_release`` sets ``writing`` before it pops the queue, so reading
        # ``queue`` first and ``writing`` second can never see a pushed write as neither.
        # Only a write pushed concurrently by another thread could slip in; that is a race in
        # the caller's program (it has no order with this push), exactly as it is in NumPy.
        if self.profiler_hook is not None:
            return NOT_READY
        for v in reads:
            if v.queue or v.writing or v.exc is not None:
                return NOT_READY
        try:
            return fn(*args)
        except Exception:  # noqa: BLE001 - pushed again by the caller: the error reaches a wait
            return NOT_READY

    def _run_inline(
        self, fn: Callable[..., Any], args: tuple, reads: Sequence[Var], writes: Sequence[Var], name: str, device: Any
    ) -> None:
        self._run_call(fn, args, reads, writes, name, device)
        ready: list[Operation] | None = None
        lock = self._lock
        lock.acquire()  # not ``with``: see _push_queued
        try:
            for v in reads:
                v.pending_reads -= 1
                if v.queue and v.pending_reads == 0:
                    if ready is None:
                        ready = []
                    self._release(v, ready)
            for v in writes:
                v.writing = False
                if v.queue:
                    if ready is None:
                        ready = []
                    self._release(v, ready)
            if ready:
                self._finish_markers(ready)  # a finished wait marker may have been the last pending
                if self._pending == 0 and self._idle_waiters:
                    self._idle.notify_all()
        finally:
            lock.release()
        if ready:
            for r in ready:
                self._queue_for(r.device).put(r)

    def _push_queued(
        self,
        fn: Callable[..., Any],
        args: tuple,
        reads: Sequence[Var],
        writes: Sequence[Var],
        name: str,
        device: Any,
    ) -> None:
        checks = reads
        n_reads = len(reads)
        if n_reads + len(writes) > 1 and not (n_reads == 1 and len(writes) == 1 and reads[0] is not writes[0]):
            reads, writes = split_vars(reads, writes)  # one read and one other write: nothing to split
        op = Operation(fn, args, reads, writes, checks, name, device)
        queue = self._cpu_queue if getattr(device, "device_type", None) != "gpu" else self._queue_for(device)
        on_cpu = queue is self._cpu_queue
        lock = self._lock
        # acquire and release rather than ``with``: half the cost, on every push (and the same
        # in the wait and completion paths)
        lock.acquire()
        try:
            tail = self._tail
            if tail is not None and on_cpu and (tail.wait or tail is self._deferred) and merge_into(tail, op):
                # one more part of the operation pushed last (see lazynd.engine.merging); for
                # the deferred operation it counts as a push that waits for it (or not) as above
                deferred = self._deferred
                if deferred is None:
                    return
                if deferred is tail or _shares_a_var(op, deferred):
                    self._chained += 1
                    if self._chained < DEFERRED_CHAIN_MAX:
                        return
                self._deferred = None
            else:
                self._tail = op if on_cpu else None
                deferred = self._enqueue(op, queue)
                if deferred is None:
                    return
        finally:
            lock.release()
        self._cpu_queue.put(deferred)

    def _enqueue(self, op: Operation, queue: SimpleQueue) -> Operation | None:
        """Queue ``op`` on its busy vars, or make it ready (lock held).

        Returns the deferred operation when it must go to a worker now (the caller puts it
        there, after releasing the lock), else None.  A GPU operation ready at once goes to its
        device thread here.
        """
        wait = 0
        # a free var is granted at once; a busy one queues the op behind earlier users
        for v in op.reads:
            if v.writing or v.queue:
                if v.queue is None:
                    v.queue = deque()
                v.queue.append((op, False))
                wait += 1
            else:
                v.pending_reads += 1
        for v in op.writes:
            if v.writing or v.pending_reads or v.queue:
                if v.queue is None:
                    v.queue = deque()
                v.queue.append((op, True))
                wait += 1
            else:
                v.writing = True
        self._pending += 1
        deferred = self._deferred
        if wait:
            op.wait = wait
            # the deferred operation stays deferred when this one waits for it (a chain the
            # pusher will most likely wait on), but only for a few such operations: a pusher
            # that queues a longer chain (a training loop) works on without waiting, and
            # the chain must start now, not when the watcher gets the GIL from it
            if deferred is None:
                return None
            if _shares_a_var(op, deferred):
                self._chained += 1
                if self._chained < DEFERRED_CHAIN_MAX:
                    return None
            self._deferred = None
            return deferred
        if queue is self._cpu_queue:
            self._deferred = op
            self._chained = 0
            self._deferrals += 1
            if self._watcher_asleep:
                self._watcher_asleep = False
                self._watcher_wake.notify()
            return deferred
        # ready on a GPU: to its device thread at once, and the deferred one to a worker
        self._deferred = None
        queue.put(op)
        return deferred

    def _watch(self) -> None:
        """Hand an operation left in the deferred slot for a tick or two to the workers.

        A pusher that neither pushes again nor waits (it sleeps, computes in Python, or has
        exited) must not hold its operation back: this thread bounds the delay.  It looks at
        the slot every tick while operations are being deferred: :data:`DEFERRED_TICK_S` at
        first and after each hand-over, twice as long after each look at an empty slot (up to
        :data:`WATCH_BACKOFF` times).  After :data:`WATCH_LINGER_TICKS` looks without a new
        deferral it sleeps on a condition that the next deferral signals (so it costs nothing
        while the engine is idle or the workers run long operations).
        """
        lock = self._lock
        seen = -1  # ``_deferrals`` when the slot was last seen holding an operation
        last = 0  # ``_deferrals`` at the previous look
        quiet_looks = 0
        tick = DEFERRED_TICK_S
        op: Operation | None
        while not self._closed:
            time.sleep(tick)
            with lock:
                if self._closed:
                    return
                count = self._deferrals
                if count != last:
                    last, quiet_looks = count, 0
                else:
                    quiet_looks += 1
                # (no local reference to the deferred operation unless it is handed over: one
                # kept until the next tick would keep its output buffers from the pool's reuse)
                if self._deferred is None:
                    # what was deferred has been collected: the program waits for its results
                    # or pushes on, and the slot needs fewer looks
                    seen = -1
                    tick = min(tick * 2, DEFERRED_TICK_S * WATCH_BACKOFF)
                    if quiet_looks >= WATCH_LINGER_TICKS:
                        self._watcher_asleep = True
                        while self._watcher_asleep and not self._closed:
                            self._watcher_wake.wait()
                        last, quiet_looks, tick = self._deferrals, 0, DEFERRED_TICK_S
                    continue
                if count != seen:  # deferred since the last look: leave it a tick
                    seen = count
                    continue
                op = self._deferred
                self._deferred = None
                seen = -1
                tick = DEFERRED_TICK_S  # the program leaves operations in the slot: look often
            self._cpu_queue.put(op)
            op = None

    def num_pending(self) -> int:
        with self._lock:
            return self._pending
