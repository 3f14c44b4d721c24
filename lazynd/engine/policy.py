"""Scheduling policies: which thread runs a ready operation, and when.

:class:`~lazynd.engine.threaded.ThreadedEngine` keeps what is fixed: the dependency rules
(on :class:`~lazynd.engine.var.Var`), the worker threads, completion and waits.  What is a
choice sits here, behind :class:`SchedulingPolicy`:

- :class:`PlainPolicy` hands every operation to a worker once its vars are granted; a thread
  that waits sleeps.  The textbook engine, to compare against.
- :class:`DeferringPolicy` (the default) avoids thread hand-offs.  Handing an operation to a
  worker is what costs: the put wakes a thread, which then fights the pushing thread for the
  GIL and for a core, and on a busy machine that is 50-200 us, more than many 1M-element
  kernels take.  So:

  * *inline*: a cheap operation (``inline_ok``) whose vars are free runs at once on the
    pushing thread;
  * *deferred slot*: a ready CPU operation is not handed over at once but waits in the slot
    (one per engine) for what the pushing program does next.  It waits for it
    (``wait_to_read`` or ``asnumpy`` of its output, ``waitall``, from any thread): the waiting
    thread runs it itself, then each operation that this makes ready while its wait lasts and
    that the wait needs (*help while waiting*, below).  It pushes another ready operation (queued or inline): the deferred one goes to a worker and the new
    one, if queued, takes the slot, so two independent operations pushed back to back still
    run in parallel.  It pushes an operation that waits for the deferred one (a *chain*, most
    likely waited for next): the slot is kept, for up to ``DEFERRED_CHAIN_MAX`` such pushes (a
    longer chain, such as a training loop's passes, starts on a worker at once); one that
    waits for something else sends the deferred operation to a worker;
  * *help while waiting*: a thread that waits for one var (``wait_to_read``, ``asnumpy``)
    runs only operations that var waits for: those that write it (for a wait to write it,
    that use it), and those that such an operation waits for, however indirectly
    (:meth:`Var.waits_for <lazynd.engine.var.Var.waits_for>`).  Any other ready operation,
    deferred, queued or made ready by what the thread ran, is left to the workers (the
    deferred one is handed to them at once), and the thread sleeps when none is left.  An
    unrelated operation may block on something the waiting thread does only after its wait
    returns: a custom operator or a pushed Python function that waits for an event, a lock,
    a queue, or for another var through the engine.  Run on the waiting thread, it would
    stall that wait forever, where the plain policy's wait returns.  The chain the wait
    needs still runs with no thread hand-off.  ``waitall`` waits for every pending
    operation, so its thread runs any of them;
  * *watcher*: a program that does none of these (computes in Python, sleeps, its thread
    exits) must not hold its operation back.  A watcher thread looks at the slot every tick
    while operations are being deferred, and an operation it finds there at two looks in a
    row goes to a worker (see :meth:`DeferringPolicy._watch`);
  * *merge*: an operation that depends on the one pushed just before it, which has not
    started, becomes that operation's next part (:mod:`.merging`, MXNet's engine bulk); while
    a thread waits, the merged operation gives each var back after the last part that uses it,
    so that a wait for an earlier part's output never waits for the later parts;
  * *keep on worker*: a worker runs next the operation its own completion made ready, so a
    dependent chain stays on one thread instead of bouncing between them;
  * *bounded backlog*: a thread that pushes while more than ``max_backlog`` operations are
    pending sleeps until at most ``resume_backlog`` are.  A loop
    that never waits (a training loop) otherwise runs hundreds of batches ahead of the
    workers: every temporary of those batches is alive at once, so none comes back to the
    pool warm in cache; an MNIST epoch took 278 page faults a batch and 180 MB of pool, and
    1.4-1.6 ms a batch against 1.1 with the bound.  Pushing never waits for a stuck operation
    (one blocked on something the pushing thread does later): after ``STALLED_BACKLOG_S``
    without a completion the pusher goes on, and the bound applies again once the backlog
    has drained to ``resume_backlog``.

GEMM-heavy operators keep push order through the same rules: they all write one var (see
:mod:`lazynd.backend.blas`), so two pushed together form a chain that a waiting thread runs.

The engine calls a policy with its lock held (except :meth:`~SchedulingPolicy.start`,
:meth:`~SchedulingPolicy.take_ready`); an operation a method returns goes to the CPU workers
once the lock is released.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Collection
from queue import Empty
from typing import TYPE_CHECKING

from ..errors import LazyNDError
from .merging import merge_into
from .operation import Operation

if TYPE_CHECKING:
    from .threaded import ThreadedEngine
    from .var import Var

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
# bounded backlog: a push beyond MAX_BACKLOG pending operations sleeps until at most
# RESUME_BACKLOG are pending; 64 operations are several batches of a training loop (an MNIST
# MLP batch is about 7 operations once merged), enough to keep the workers busy meanwhile
MAX_BACKLOG = 64
RESUME_BACKLOG = 32
# a push that waited this long for the backlog without any operation completing goes on
STALLED_BACKLOG_S = 0.05


class SchedulingPolicy:
    """What :class:`~lazynd.engine.threaded.ThreadedEngine` asks about where operations run.

    The base class is the plain policy: every ready operation goes to a worker.
    """

    name = "plain"
    # an ``inline_ok`` operation whose vars are free runs on the pushing thread
    run_inline = False
    # a worker runs next the operation its completion made ready (else it queues it)
    keep_on_worker = False
    # pending operations beyond which a push waits until at most ``resume_backlog`` are (0: never)
    max_backlog = 0
    resume_backlog = 0

    def start(self, engine: ThreadedEngine) -> None:
        """Called once by the engine, when its queues and workers exist."""

    def stop(self) -> None:
        """The engine shuts down: stop the policy's threads (lock held)."""

    def merge(self, op: Operation, on_cpu: bool) -> bool:
        """Make the pushed ``op`` part of an operation pushed before it; True if done (lock held).

        Called for each operation before its vars are requested; a merged one is not queued.
        """
        return False

    def ready(self, op: Operation) -> Operation | None:
        """A pushed CPU operation is ready: return what goes to the workers now (lock held)."""
        return op

    def waiting(self, op: Operation) -> Operation | None:
        """A pushed operation waits for its vars, or was merged (lock held); return what goes to
        the workers now."""
        return None

    def bypassed(self) -> Operation | None:
        """The pushing thread ran an operation itself, or a ready one went to a device's thread
        (lock held); return what goes to the workers now."""
        return None

    def completed(self, op: Operation) -> None:
        """``op`` completed (lock held)."""

    def merged(self) -> Collection[Operation]:
        """The merged operations (:meth:`merge`) not yet completed (lock held)."""
        return ()

    def take_ready(self, var: Var | None = None, for_write: bool = False) -> Operation | None:
        """A ready CPU operation for a waiting thread to run; None: the thread sleeps.

        With ``var`` (a wait for one var, as a write for ``for_write``), only an operation that
        ``var`` waits for (:meth:`Var.waits_for`); without it (``waitall``), any.
        """
        return None

    def helps_with(self, op: Operation, var: Var, for_write: bool = False) -> bool:
        """A thread waiting for ``var`` (as a write for ``for_write``) may run the ready ``op``
        next, which the completion of an operation it ran made ready (lock not held)."""
        return False


class PlainPolicy(SchedulingPolicy):
    """Hand every operation to a worker once its vars are granted; waiting threads sleep."""


class DeferringPolicy(SchedulingPolicy):
    """Avoid thread hand-offs (see the module docstring)."""

    name = "deferring"
    run_inline = True
    keep_on_worker = True
    max_backlog = MAX_BACKLOG
    resume_backlog = RESUME_BACKLOG

    def start(self, engine: ThreadedEngine) -> None:
        self._lock = engine._lock
        self._cpu_queue = engine.workers.cpu_queue
        # the deferred slot: one ready CPU operation not yet handed to the workers;
        # ``_deferrals`` counts what entered it, for the watcher
        self._deferred: Operation | None = None
        self._deferrals = 0
        self._chained = 0  # operations pushed since the deferral that wait for the deferred one
        # the CPU operation pushed last through the queues: the next one may merge into it while
        # it has not started (lazynd.engine.merging); cleared when it completes
        self.tail: Operation | None = None
        self._merged: set[Operation] = set()  # see merged()
        self._watcher_asleep = False
        self._watcher_wake = threading.Condition(self._lock)
        self._closed = False
        engine.workers.start_thread(self._watch, (), "lazynd-deferred-watcher")

    def stop(self) -> None:
        self._closed = True
        self._watcher_asleep = False
        self._watcher_wake.notify()

    def merge(self, op: Operation, on_cpu: bool) -> bool:
        tail = self.tail
        if tail is not None and on_cpu and (tail.wait or tail is self._deferred) and merge_into(tail, op):
            if len(tail.parts) == 2:  # type: ignore[arg-type]
                self._merged.add(tail)
            return True
        self.tail = op if on_cpu else None
        return False

    def ready(self, op: Operation) -> Operation | None:
        deferred = self._deferred
        self._deferred = op
        self._chained = 0
        self._deferrals += 1
        if self._watcher_asleep:
            self._watcher_asleep = False
            self._watcher_wake.notify()
        return deferred

    def waiting(self, op: Operation) -> Operation | None:
        # the deferred operation stays deferred when this one waits for it (a chain the pusher
        # will most likely wait on), but only for a few such operations: a pusher that queues a
        # longer chain (a training loop) works on without waiting, and the chain must start
        # now, not when the watcher gets the GIL from it
        deferred = self._deferred
        if deferred is None:
            return None
        if deferred is self.tail or op.depends_on(deferred):  # (tail: op merged into deferred)
            self._chained += 1
            if self._chained < DEFERRED_CHAIN_MAX:
                return None
        self._deferred = None
        return deferred

    def bypassed(self) -> Operation | None:
        deferred = self._deferred
        self._deferred = None
        return deferred

    def completed(self, op: Operation) -> None:
        if op is self.tail:  # no longer mergeable: do not keep its arguments alive
            self.tail = None
        if op.parts is not None:
            self._merged.discard(op)

    def merged(self) -> Collection[Operation]:
        return self._merged

    def take_ready(self, var: Var | None = None, for_write: bool = False) -> Operation | None:
        """The deferred operation (most often the one waited for), else one from the CPU queue.

        An operation that ``var`` does not wait for is left to the workers: the deferred one is
        handed to them, and those passed over in the queue go back (see "help while waiting"
        above).
        """
        op: Operation | None
        unrelated = None
        if self._deferred is not None:
            lock = self._lock
            lock.acquire()  # not ``with``: half the cost (and the same in the engine)
            op = self._deferred
            self._deferred = None
            if op is not None and (var is None or var.waits_for(op, for_write)):
                lock.release()
                return op
            lock.release()
            unrelated = op
        cpu_queue = self._cpu_queue
        found = None
        passed_over: list[Operation | None] = []
        # what is queued now, at most (the workers take from it meanwhile, and put into it)
        for _ in range(cpu_queue.qsize()):
            try:
                op = cpu_queue.get_nowait()
            except Empty:
                break
            if op is not None and (var is None or self.helps_with(op, var, for_write)):
                found = op
                break
            passed_over.append(op)  # (None: a worker's stop signal, left for the workers)
        if unrelated is not None:
            passed_over.append(unrelated)
        for op in passed_over:
            cpu_queue.put(op)
        return found

    def helps_with(self, op: Operation, var: Var, for_write: bool = False) -> bool:
        """:meth:`Var.waits_for`, taking the engine lock when the answer is not plain."""
        if var in op.writes:  # the common case, without the lock: op writes what is waited for
            return True
        lock = self._lock
        lock.acquire()
        try:
            return var.waits_for(op, for_write)
        finally:
            lock.release()

    def _watch(self) -> None:
        """Hand an operation left in the deferred slot for a tick or two to the workers.

        A pusher that neither pushes again nor waits (it sleeps, computes in Python, or has
        exited) must not hold its operation back: this thread bounds the delay.  It looks at
        the slot every tick while operations are being deferred: :data:`DEFERRED_TICK_S` at
        first and after each hand-over, twice as long after each look at an empty slot (up to
        :data:`WATCH_BACKOFF` times), so a program that waits for each result right away is
        not woken 2000 times a second (each wake-up takes the GIL).  After
        :data:`WATCH_LINGER_TICKS` looks without a new deferral it sleeps on a condition that
        the next deferral signals (so it costs nothing while the engine is idle or the workers
        run long operations).
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


POLICIES: dict[str, type[SchedulingPolicy]] = {"deferring": DeferringPolicy, "plain": PlainPolicy}


def make_policy(policy: str | SchedulingPolicy | None = None) -> SchedulingPolicy:
    """A policy from its name (``LAZYND_ENGINE_POLICY`` when None, default 'deferring'), or as given."""
    if isinstance(policy, SchedulingPolicy):
        return policy
    if policy is None:
        policy = os.environ.get("LAZYND_ENGINE_POLICY", "deferring")
    if not isinstance(policy, str):
        raise LazyNDError(
            f"engine policy: expected a name, {' or '.join(map(repr, POLICIES))}, got {type(policy).__name__}"
        )
    key = policy.strip().lower()
    if key not in POLICIES:
        raise LazyNDError(
            f"unknown engine policy {policy!r} (LAZYND_ENGINE_POLICY); choose {' or '.join(map(repr, POLICIES))}"
        )
    return POLICIES[key]()
