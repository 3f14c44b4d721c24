"""ThreadedEngine: MXNet's dependency engine on Python worker threads.

An operation is pushed with the vars it reads and writes; it runs once each var grants it
access by the rules of :class:`~lazynd.engine.var.Var` (reads run concurrently; a write waits
for every earlier read and write and blocks later ones; push order per var).

The threads are :class:`~lazynd.engine.workers.Workers`: a pool for the CPU, one thread per
GPU device.  When an operation completes, its vars are released, and what that makes ready
goes to its worker queue.  A thread that waits for a var queues a *wait marker* on it (an
operation with no function, completed as soon as the var is granted to it) and sleeps on the
marker's event; ``waitall`` sleeps until no pushed operation is pending.

Which thread runs a ready operation, and when, is the scheduling policy's choice
(:mod:`.policy`): the default one runs cheap operations on the pushing thread, defers a
ready operation until the program's next step, merges dependent chains and has a waiting
thread run the ready operations its wait needs; the plain one hands everything to the workers.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from queue import SimpleQueue
from typing import Any

from . import interrupts
from .backlog import Backlog
from .base import Engine, synchronize_devices
from .completion import Completion
from .merging import drop_parts, give_back_due
from .operation import Operation, finish_markers, split_vars
from .policy import STALLED_BACKLOG_S, SchedulingPolicy, make_policy
from .var import Var
from .workers import Workers, default_cpu_workers, run_helping

_claim_to_run = Var.claim_to_run
_request_all = Var.request_all
_note_writes = Var.note_writes
_release_all = Var.release_all


class ThreadedEngine(Engine):
    """The default engine.  See the module docstring for its rules.

    Parameters
    ----------
    num_workers : int, optional
        CPU worker threads (default :func:`default_cpu_workers`).
    policy : str or SchedulingPolicy, optional
        'deferring' or 'plain', or a fresh policy object (default ``LAZYND_ENGINE_POLICY``,
        else 'deferring'); see :mod:`lazynd.engine.policy`.
    """

    name = "threaded"
    has_workers = True

    def __init__(self, num_workers: int | None = None, policy: str | SchedulingPolicy | None = None) -> None:
        super().__init__()
        self.policy = make_policy(policy)
        self.num_workers = num_workers or default_cpu_workers()
        self._lock = threading.Lock()
        self._idle = threading.Condition(self._lock)  # notified when ``_pending`` drops to 0
        self._pending = 0  # pushed and not completed (inline ops excluded)
        self.completed = 0  # see Engine.completed
        self._markers = 0  # wait markers queued and not completed: threads sleeping in a wait
        self._idle_waiters = 0  # threads in wait_idle waiting on ``_idle``
        self.backlog = Backlog(self._lock, self.policy.max_backlog, self.policy.resume_backlog, STALLED_BACKLOG_S)
        self._closed = False
        self._inline = self.policy.run_inline  # read on every push
        self._keep_on_worker = self.policy.keep_on_worker
        self.workers = Workers(self._serve, self.num_workers, self._lock)
        self._cpu_queue = self.workers.cpu_queue
        self._queue_for = self.workers.queue_for
        self._dispatch = self.workers.dispatch
        self.policy.start(self)

    def shutdown(self) -> None:
        """Finish what was pushed, then stop this engine's threads (see :func:`lazynd.engine.set_engine`)."""
        self.waitall()
        with self._lock:
            if self._closed:
                return
            self._closed = True
            self.policy.stop()
        self.workers.stop()

    def num_pending(self) -> int:
        with self._lock:
            return self._pending

    def _serve(self, op: Operation | None, queue: SimpleQueue) -> None:
        """Run ``op`` on the calling thread, and each operation its completion gives back to
        ``queue`` (the thread's own, with a policy that keeps chains on a worker)."""
        run, complete = self._run, self._complete
        keep_for = queue if self._keep_on_worker else None
        while op is not None:
            late = run(op)
            op = complete(op, keep_for) if late is None else self._complete_later(op, late)

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
        if not (inline_ok and self._run_if_free(fn, args, reads, writes, name, device)):
            _note_writes(writes)
            self._push_queued(fn, args, reads, writes, name, device)

    def run_if_free(
        self,
        fn: Callable[..., Any],
        args: tuple,
        reads: Sequence[Var],
        writes: Sequence[Var],
        name: str = "op",
        device: Any = None,
    ) -> bool:
        return self._run_if_free(fn, args, reads, writes, name, device)

    def _run_if_free(
        self, fn: Callable[..., Any], args: tuple, reads: Sequence[Var], writes: Sequence[Var], name: str, device: Any
    ) -> bool:
        """:meth:`run_if_free`: claim the vars (counting the writes, as a push does), run, release."""
        if not self._inline:  # the policy keeps every operation on the workers
            return False
        lock = self._lock
        # acquire and release rather than ``with``: half the cost, on every push (and the
        # same in the wait and completion paths)
        lock.acquire()
        failed_input = _claim_to_run(reads, writes)
        if failed_input is None and len(writes) > len(unique := list(dict.fromkeys(writes))):
            # a var twice in ``writes`` (outputs that are views of one array) is claimed and released
            # once: a second release would take back what the first granted the next writer
            writes, failed_input = unique, _claim_to_run(reads, unique)
        if failed_input is None:
            lock.release()
            return False
        handoff = self.policy.bypassed()
        lock.release()
        if handoff is not None:
            self._cpu_queue.put(handoff)
        # this thread holds the vars: run the call, then release them (a Completion's: when it
        # ends); its inputs need no look for errors unless the claim saw one
        late = self._run_call(fn, args, reads if failed_input else (), writes, name, device)
        if late is not None:
            with self._lock:  # pending from now until it finishes, released as claimed (lists as given)
                self._pending += 1
            self._complete_later(Operation(fn, args, reads, writes, reads, name, device), late)
            return True
        lock.acquire()
        try:
            ready = _release_all(reads, writes)
            if ready:
                self._finish_markers(ready)  # a finished wait marker may have been the last pending
                if self._pending == 0 and self._idle_waiters:
                    self._idle.notify_all()
        finally:
            lock.release()
        if ready:
            self._dispatch(ready)
        if interrupts.noted:  # a Ctrl-C in the call: raised here, at the push (see .interrupts)
            interrupts.raise_pending()
        return True

    def _push_queued(
        self, fn: Callable[..., Any], args: tuple, reads: Sequence[Var], writes: Sequence[Var], name: str, device: Any
    ) -> None:
        checks = reads
        n_reads = len(reads)
        if n_reads + len(writes) > 1 and not (n_reads == 1 and len(writes) == 1 and reads[0] is not writes[0]):
            reads, writes = split_vars(reads, writes)  # one read and one other write: nothing to split
        op = Operation(fn, args, reads, writes, checks, name, device)
        cpu_queue = self._cpu_queue
        queue = cpu_queue if getattr(device, "device_type", None) != "gpu" else self._queue_for(device)
        on_cpu = queue is cpu_queue
        policy = self.policy
        lock = self._lock
        lock.acquire()
        try:
            if policy.merge(op, on_cpu):
                handoff = policy.waiting(op)
            else:
                _request_all(op)
                self._pending += 1
                if op.wait:
                    handoff = policy.waiting(op)
                elif on_cpu:
                    handoff = policy.ready(op)
                else:  # ready on a GPU: to its device thread at once
                    queue.put(op)
                    handoff = policy.bypassed()
        finally:
            lock.release()
        if handoff is not None:
            cpu_queue.put(handoff)
        if self.backlog.full(self._pending):
            self.backlog.wait_drained(lambda: self._pending)

    # -- completing ----------------------------------------------------------------------------
    def _complete(self, op: Operation, keep_for: SimpleQueue | None = None) -> Operation | None:
        """Release ``op``'s vars and queue what that makes ready.

        With ``keep_for``, the first ready operation that belongs on that queue is returned
        instead of queued, for the calling thread to run next.
        """
        ready: list[Operation] = []
        lock = self._lock
        lock.acquire()
        try:
            self.policy.completed(op)
            _release_all(op.reads, op.writes, ready)
            self._pending -= 1
            self.completed += 1
            self.backlog.completed(self._pending)
            if ready:
                self._finish_markers(ready)  # a wait marker among them: complete it (and what it grants)
            if self._pending == 0 and self._idle_waiters:
                self._idle.notify_all()
        finally:
            lock.release()
        return self._dispatch(ready, keep_for) if ready else None

    def _complete_later(self, op: Operation, late: Completion) -> Operation | None:
        """``op`` ends when ``late`` finishes, then completes as :meth:`_complete` does (returns None)."""

        def finished(error: BaseException | None) -> None:
            self._record_outcome(op.name, op.writes, error)
            self._complete(op)

        late.when_finished(finished)
        return None

    def _run_parts(self, op: Operation, stop: Callable[[], bool] | None = None) -> bool:
        """Run a merged operation's parts in order, giving its vars back part by part.

        After each part but the last, what the parts that have run no longer need is given back
        (:func:`~lazynd.engine.merging.give_back_due`) when a thread sleeps in a wait; while
        none does, nothing can wait for it, and a thread that starts to wait gives it back
        itself (:meth:`wait_for_var`), so a chain nobody waits on pays no lock per part.  With
        ``stop`` (a waiting thread runs the operation), it is given back after every part, and
        the parts after the first one after which ``stop()`` is true are left in ``op`` and
        False is returned: the caller hands ``op``, still holding their vars, to the workers.
        A part that returns a :class:`Completion` is waited for before the next one runs.
        """
        parts = op.parts
        assert parts is not None
        device = op.device
        run_call = self._run_call
        last = len(parts) - 1
        for index, (fn, args, checks, writes, name) in enumerate(parts):
            late = run_call(fn, args, checks, writes, name, device)
            if late is not None:
                self._record_outcome(name, writes, late.wait())
            if index == last:
                break
            # written before ``_markers`` is read: a thread that starts to wait after this read
            # counts itself in ``_markers`` before it reads ``ran`` (see wait_for_var)
            op.ran = index + 1
            if stop is not None:
                self._give_back(op)
                if stop():
                    with self._lock:
                        drop_parts(op)
                    return False
            elif self._markers:
                self._give_back(op)
        return True

    def _give_back(self, op: Operation) -> None:
        """Give back what the running merged ``op`` no longer needs and queue what that makes ready."""
        ready: list[Operation] = []
        lock = self._lock
        lock.acquire()
        try:
            give_back_due(op, ready)
            if ready:
                self._finish_markers(ready)  # (op is still pending: nothing for waitall yet)
        finally:
            lock.release()
        self._dispatch(ready)

    def _finish_markers(self, ready: list[Operation]) -> None:
        """Complete the wait markers in ``ready`` (lock held); that may grant more operations."""
        finished = finish_markers(ready)
        self._pending -= finished
        self.completed += finished
        self._markers -= finished

    # -- waiting -------------------------------------------------------------------------------
    def wait_for_var(self, var: Var, for_write: bool = False) -> None:
        """Block until every write (and, ``for_write``, every read) pushed so far is done.

        Meanwhile this thread runs what the policy hands it, which is only what ``var`` waits
        for (the operation waited for is most often among them): each one, and the chain it
        starts while the var stays busy, with no marker, no event and no hand-off.  The var is
        tested without the lock, as :meth:`Var.values_ready` explains: this thread's own pushes
        and completions are seen.
        """
        take_ready = self.policy.take_ready
        while not var.ready_for(for_write):
            op = take_ready(var, for_write)
            if op is None:
                lock = self._lock
                lock.acquire()
                if var.ready_for(for_write):
                    lock.release()
                    break
                marker = Operation.wait_marker(var, for_write)
                var.queue_behind(marker, for_write)
                self._pending += 1
                self._markers += 1
                # merged operations on other threads give back what their parts that have run no
                # longer need only while a thread sleeps in a wait: this one will (see _run_parts)
                ready: list[Operation] = []
                for merged in self.policy.merged():
                    give_back_due(merged, ready)
                if ready:
                    self._finish_markers(ready)  # this thread's marker may be among them
                lock.release()
                self._dispatch(ready)
                self._help_until(marker.done, var, for_write)  # type: ignore[arg-type]
                break
            run_helping(self._run_for_wait, op, var, for_write, None)
        if var.event is not None or var.read_events:
            var.synchronize(for_write)
        if var.exc is not None:
            self._raise_for_var(var)

    def wait_idle(self) -> None:
        """Block until every pushed operation, then every device, is done (not on an engine thread)."""
        self.workers.refuse_wait_for_all()
        while True:
            with self._lock:
                if not self._pending:
                    break
            op = self.policy.take_ready()  # help: run one ready operation and what it makes ready
            if op is not None:
                run_helping(self._serve, op, self._cpu_queue)
                continue
            with self._lock:
                self._idle_waiters += 1
                try:
                    while self._pending:
                        self._idle.wait()
                finally:
                    self._idle_waiters -= 1
            break
        # every device, queued work or not: a GPU launch made inline on the pushing thread
        # never passes through a device queue, and may still run on its stream
        synchronize_devices()

    def _help_until(self, done: threading.Event, var: Var, for_write: bool) -> None:
        """Run what the policy hands this thread, waiting for ``var``, until ``done`` is set."""
        take_ready = self.policy.take_ready
        while not done.is_set():
            op = take_ready(var, for_write)
            if op is None:
                done.wait()
                return
            run_helping(self._run_for_wait, op, var, for_write, done)

    def _run_for_wait(self, op: Operation, var: Var, for_write: bool, done: threading.Event | None) -> None:
        """Run ``op`` for a thread that waits for ``var`` (until ``done`` is set, with a marker).

        An operation that one of these completions makes ready runs here next while the wait
        lasts (a chain the caller waits for the end of) and ``var`` waits for it; else it goes
        to the workers.  A merged operation runs here only as long as the wait needs its parts:
        once one gives back what the wait needed, the rest go to the workers (one of them may
        block until this wait returns).
        """
        cpu_queue = self._cpu_queue
        helps_with = self.policy.helps_with

        def over() -> bool:  # (or a Ctrl-C in what this thread ran: see .interrupts)
            return (done.is_set() if done is not None else var.ready_for(for_write)) or interrupts.pending()

        def no_longer_needed() -> bool:  # what a merged operation has left: does the wait need it?
            return over() or not helps_with(op, var, for_write)

        while True:
            if op.parts is None:
                late = self._run(op)
            elif self._run_parts(op, no_longer_needed):
                late = None
            else:  # the wait no longer needs the merged operation's later parts: to a worker
                cpu_queue.put(op)
                return
            kept = self._complete(op, cpu_queue) if late is None else self._complete_later(op, late)
            if kept is None:
                return
            if over() or not helps_with(kept, var, for_write):
                cpu_queue.put(kept)
                return
            op = kept
