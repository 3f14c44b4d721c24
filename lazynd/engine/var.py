"""Engine variables and their dependency rules: one var per storage chunk; views share their parent's.

The rules, per var: reads run concurrently; a write waits for every earlier read and write
and blocks later ones; operations that touch a var are served in push order.  An operation
*requests* each var it uses: a free var is *claimed* at once, a busy one queues the operation
behind the var's earlier users.  When an operation ends it *releases* its claims, and the var
is *granted* to the operations at the head of its queue that the rules now let in.  The
methods below are the only code that changes a var's counters (``pending_reads``,
``writing``, ``queue``, ``version``); the engine calls them with its lock held, except the
``ready_*`` tests, which are also safe without it (see :meth:`Var.values_ready`), and
:meth:`Var.note_writes`, which the pushing thread calls at every push.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .operation import Operation


class Var:
    """Dependency state of one storage chunk.

    Attributes
    ----------
    pending_reads : int
        Reads claimed (running or ready) and not yet released.
    writing : bool
        A write is claimed and not yet released.
    queue : deque or None
        Operations waiting on this var, in push order, as ``(op, is_write)``.
    exc : EngineError or None
        Error of the last failed operation that wrote this var.
    holds_value : bool
        The chunk holds a value: it was created from data (``Var(holds_value=True)``) or an
        operation wrote it.  False for a fresh output buffer, uninitialised until its operation
        runs.
    value_kept : bool
        With ``exc``: the var still holds its value from before, because the operation that
        failed to write it never ran (skipped for an input's error; :meth:`skipped_write`):
        an update (``w -= lr * g``, ``w[:] = w - lr * g``) with a failed input.  Its error then
        says that an update is missing, not that the value is garbage, and it counts only
        until it has been reported once (see :mod:`lazynd.engine.base`): one bad batch does
        not fail every later use of the weights it would have updated.
    event : object or None
        Device event recorded by the last write (GPU); ``synchronize()`` waits for it.
    read_events : dict or None
        Device events of the reads since the last write, the latest per stream (GPU): a
        write on another stream waits for them.
    version : int
        How many operations writing this var have been pushed (:meth:`note_writes`).  Autograd
        saves it for every array a gradient will read and compares at backward: a change means
        the values were modified in place after they were recorded.
    """

    __slots__ = (
        "pending_reads",
        "writing",
        "queue",
        "exc",
        "holds_value",
        "value_kept",
        "event",
        "read_events",
        "version",
        "__weakref__",
    )

    def __init__(self, holds_value: bool = False) -> None:
        self.pending_reads = 0
        self.writing = False
        self.queue: deque[tuple[Operation, bool]] | None = None
        self.exc: BaseException | None = None
        self.holds_value = holds_value
        self.value_kept = False
        self.event: Any = None
        self.read_events: dict[Any, Any] | None = None
        self.version = 0

    # -- is it ready? ----------------------------------------------------------------------------
    # Each test reads ``queue`` before ``writing``: a grant claims the var before it pops the
    # queue, so a test made without the lock never sees a granted write as neither.
    def ready_for_read(self) -> bool:
        """A read may be claimed now: no write is claimed or queued."""
        return not (self.queue or self.writing)

    def ready_for_write(self) -> bool:
        """A write may be claimed now: no read or write is claimed or queued."""
        return not (self.queue or self.writing or self.pending_reads)

    def ready_for(self, write: bool) -> bool:
        """:meth:`ready_for_write` if ``write`` else :meth:`ready_for_read`."""
        return not (self.queue or self.writing or (write and self.pending_reads))

    @staticmethod
    def values_ready(vars: Iterable[Var]) -> bool:
        """The value of every var in ``vars`` may be read now on the calling thread, with no engine
        bookkeeping at all (one call for an operation's reads).

        True when none has a write claimed or queued and no last write failed.  Safe without
        the engine lock for the thread that pushed every write it depends on: each such write
        either holds ``writing`` or sits in ``queue`` (see the note above).  A write pushed
        concurrently by another thread has no order with the caller's read: that is a race in
        the program, as it would be in NumPy.
        """
        for v in vars:
            if v.queue or v.writing or v.exc is not None:
                return False
        return True

    # -- failures (by the thread that ran the operation, which holds the var) ----------------------
    def failed_write(self, exc: BaseException) -> None:
        """The operation writing this var raised ``exc``: the value is garbage."""
        self.exc = exc
        self.value_kept = False

    def skipped_write(self, exc: BaseException, read_too: bool) -> None:
        """The operation writing this var (and reading it, ``read_too``) was skipped for an
        input's error ``exc``.

        The var keeps what it held (``value_kept``) if that was a value: it held one
        (``holds_value``, or the operation read it) and no failure had made it garbage.
        """
        self.value_kept = (read_too or self.holds_value) and (self.exc is None or self.value_kept)
        self.exc = exc

    def written(self) -> None:
        """The operation writing this var succeeded."""
        self.exc = None
        self.holds_value = True

    # -- claiming and queueing (engine lock held) --------------------------------------------------
    def claim_read(self) -> None:
        """Claim a read (the caller checked :meth:`ready_for_read`)."""
        self.pending_reads += 1

    def claim_write(self) -> None:
        """Claim the write (the caller checked :meth:`ready_for_write`)."""
        self.writing = True

    def queue_behind(self, op: Operation, write: bool) -> None:
        """Queue ``op`` behind this var's earlier users; ``op`` waits for one more var."""
        queue = self.queue
        if queue is None:
            self.queue = queue = deque()
        queue.append((op, write))
        op.wait += 1

    def request_read(self, op: Operation) -> None:
        """Claim a read for ``op`` if the var is ready for one, else queue ``op`` for it."""
        if self.queue or self.writing:
            self.queue_behind(op, False)
        else:
            self.pending_reads += 1

    def request_write(self, op: Operation) -> None:
        """Claim the write for ``op`` if the var is ready for one, else queue ``op`` for it."""
        if self.queue or self.writing or self.pending_reads:
            self.queue_behind(op, True)
        else:
            self.writing = True

    # -- what the merging of operations needs (engine lock held) -----------------------------------
    def nothing_queued_after(self, op: Operation) -> bool:
        """No operation is queued on this var, or ``op`` is the last one queued."""
        queue = self.queue
        return not queue or queue[-1][0] is op

    def can_upgrade_read(self, op: Operation) -> bool:
        """``op``'s read of this var could become a write: its queued entry is the last one, or
        its claimed read is the only one and nothing is queued."""
        queue = self.queue
        if queue:
            return queue[-1][0] is op
        return self.pending_reads == 1

    def upgrade_read(self, op: Operation) -> None:
        """Make ``op``'s read a write (the caller checked :meth:`can_upgrade_read`)."""
        queue = self.queue
        if queue:
            queue[-1] = (op, True)
        else:
            self.pending_reads -= 1
            self.writing = True

    # -- releasing (engine lock held) ---------------------------------------------------------------
    def release_read(self, ready: list[Operation]) -> None:
        """Release a claimed read; operations this makes ready are appended to ``ready``."""
        self.pending_reads -= 1
        if self.pending_reads == 0 and self.queue:
            self._grant(ready)

    def release_write(self, ready: list[Operation]) -> None:
        """Release the claimed write; operations this makes ready are appended to ``ready``."""
        self.writing = False
        if self.queue:
            self._grant(ready)

    def downgrade_write(self, ready: list[Operation]) -> None:
        """Turn the claimed write into a claimed read (its holder is done writing the var but still
        reads it); reads this lets in are granted and appended to ``ready``."""
        self.pending_reads += 1  # before ``writing`` drops: a test without the lock never sees it free
        self.writing = False
        if self.queue:
            self._grant(ready)

    def _grant(self, ready: list[Operation]) -> None:
        """Grant the var to the operations at the head of its (non-empty) queue that may have it now."""
        queue = self.queue
        assert queue is not None
        while queue:
            op, is_write = queue[0]
            if is_write:
                if self.pending_reads or self.writing:
                    return
                self.writing = True  # claimed before the pop: see the note on the ready tests
                queue.popleft()
                op.wait -= 1
                if op.wait == 0:
                    ready.append(op)
                return
            if self.writing:
                return
            self.pending_reads += 1
            queue.popleft()
            op.wait -= 1
            if op.wait == 0:
                ready.append(op)

    # -- all the vars of one operation at once (engine lock held) -----------------------------------
    # One call per operation rather than one per var: these run on every push and completion.
    @staticmethod
    def claim_to_run(reads: Sequence[Var], writes: Sequence[Var]) -> bool | None:
        """Claim every var of an operation the calling thread runs now, and count its writes
        (:meth:`note_writes`); None when a var is busy, and then nothing is claimed or counted.

        Otherwise returns whether a var in ``reads`` holds an error, which the run must then
        look at (the inputs of the operation are final: every write of them has completed).
        A var may be in both lists (an update in place: a write that reads); one given twice in
        ``writes`` (two outputs that are views of one array) counts as busy: the caller gives
        each var once.
        One loop per list, checking and claiming together: this runs at every push that runs
        its operation at once.
        """
        for n, v in enumerate(writes):
            if v.queue or v.writing or v.pending_reads:
                Var._give_back(reads, 0, writes, n)
                return None
            v.writing = True
            v.version += 1
        failed = False
        for n, v in enumerate(reads):
            # a var this operation writes is claimed by it above: readable by it alone
            if v.queue or (v.writing and v not in writes):
                Var._give_back(reads, n, writes, len(writes))
                return None
            v.pending_reads += 1
            if v.exc is not None:
                failed = True
        return failed

    @staticmethod
    def _give_back(reads: Sequence[Var], n_reads: int, writes: Sequence[Var], n_writes: int) -> None:
        """Undo the claims of :meth:`claim_to_run` on the first ``n_reads`` reads and ``n_writes``
        writes (nothing was queued on those vars meanwhile: the engine lock is held)."""
        for v in reads[:n_reads]:
            v.pending_reads -= 1
        for v in writes[:n_writes]:
            v.writing = False
            v.version -= 1

    @staticmethod
    def request_all(op: Operation) -> None:
        """Request every var of ``op``: claim the free ones, queue it on the busy ones (``op.wait``
        counts those)."""
        for v in op.reads:
            if v.queue or v.writing:
                v.queue_behind(op, False)
            else:
                v.pending_reads += 1
        for v in op.writes:
            if v.queue or v.writing or v.pending_reads:
                v.queue_behind(op, True)
            else:
                v.writing = True

    @staticmethod
    def release_all(
        reads: Sequence[Var], writes: Sequence[Var], ready: list[Operation] | None = None
    ) -> list[Operation] | None:
        """Release claimed reads and writes; return ``ready`` (a new list if None and needed)
        with the operations this makes ready appended."""
        for v in reads:
            v.pending_reads -= 1
            if v.pending_reads == 0 and v.queue:
                if ready is None:
                    ready = []
                v._grant(ready)
        for v in writes:
            v.writing = False
            if v.queue:
                if ready is None:
                    ready = []
                v._grant(ready)
        return ready

    # -- versions (the pushing thread, at push) ------------------------------------------------------
    @staticmethod
    def note_writes(writes: Sequence[Var]) -> None:
        """Count one more pushed write of each var in ``writes`` (see ``version``).

        Every engine calls this when an operation is pushed (or run at once by ``run_if_free``),
        so a push order is a version order.  Operations the runtime runs with no push at all
        (``run_now``) write only fresh vars, which nothing recorded can know yet.
        """
        for v in writes:
            v.version += 1

    # -- what a wait needs (engine lock held) -------------------------------------------------------
    def waits_for(self, op: Operation, for_write: bool = False) -> bool:
        """This var becomes ready for a read (``for_write``: for a write) only once ``op`` has
        completed; ``op`` holds its vars (it is ready or running).

        True when ``op`` writes this var (``for_write``: uses it), or when an operation that
        waits for ``op`` does, directly or through others.  The search follows the queues
        forward, in push order: every operation queued on a var that an operation holds waits
        for it (a read is queued only behind a write, and that write waits for the holder's
        read); of the operations queued behind a queued one, all wait for it if it writes,
        and from the next write on if it reads (reads next to each other run side by side).
        """
        stack = [op]
        seen = {op}
        while stack:
            current = stack.pop()
            if self in current.writes or (for_write and self in current.reads):
                return True
            for v in (*current.reads, *current.writes):
                if not v.queue:
                    continue
                entries = list(v.queue)
                start = 0
                for i, (queued, write) in enumerate(entries):
                    if queued is current:
                        start = i + 1
                        if not write:
                            while start < len(entries) and not entries[start][1]:
                                start += 1
                        break
                for queued, _ in entries[start:]:
                    if queued not in seen:
                        seen.add(queued)
                        stack.append(queued)
        return False

    # -- devices ------------------------------------------------------------------------------------
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
