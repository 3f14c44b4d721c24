"""What the engine schedules: one pushed operation, and the vars it uses.

An operation is a function with its arguments and the vars it reads and writes.  A var both
read and written is scheduled as a write (:func:`split_vars`), but the operation still
inherits the errors of everything it reads (``checks``).  A *wait marker* is an operation
with no function: a thread that waits for a var queues one on it and sleeps until the var
is granted to the marker.  Operations of a dependent chain may be merged into one (see
:mod:`lazynd.engine.merging`): it then runs its ``parts`` in order.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any

from .var import Var


class Operation:
    """One pushed operation: ``fn(*args)`` reading and writing some vars.

    Attributes
    ----------
    reads, writes : sequence of Var
        The vars it claims, deduplicated (a var in both is only in ``writes``).
    checks : sequence of Var
        Vars whose errors it inherits: everything it reads, in-place targets included.
    wait : int
        Vars it is queued on and not yet granted; ready to run at 0.
    done : threading.Event or None
        Set when a wait marker completes.
    parts : list or None
        Each merged part's ``(fn, args, checks, writes, name)``, this one's own first; None
        when nothing merged into it.
    access : dict or None
        Var -> written?, for every var of a merged operation.
    ran, given : int
        Parts of a merged operation that have run, and after which it has given back what it
        no longer needs (:func:`~lazynd.engine.merging.give_back_due`).
    steps : dict or None
        A merged operation's :func:`~lazynd.engine.merging.release_steps`, once computed.

    The attributes of a merged operation from ``ran`` on are set with ``parts``, by
    :func:`~lazynd.engine.merging.merge_into`, and left unset, at no cost, on the others.
    """

    __slots__ = (
        "fn",
        "args",
        "reads",
        "writes",
        "checks",
        "name",
        "device",
        "wait",
        "done",
        "parts",
        "access",
        "ran",
        "given",
        "steps",
    )
    ran: int
    given: int
    steps: dict[int, tuple[list[Var], list[Var], list[Var]]] | None

    def __init__(
        self,
        fn: Callable[..., Any] | None,
        args: tuple,
        reads: Sequence[Var],
        writes: Sequence[Var],
        checks: Sequence[Var],
        name: str,
        device: Any,
    ) -> None:
        self.fn = fn
        self.args = args
        self.reads = reads
        self.writes = writes
        self.checks = checks
        self.name = name
        self.device = device
        self.wait = 0
        self.done: threading.Event | None = None
        self.parts: list[tuple] | None = None
        self.access: dict[Var, bool] | None = None

    @classmethod
    def wait_marker(cls, var: Var, for_write: bool) -> Operation:
        """A marker that a thread waiting for ``var`` queues on it (as a write for ``for_write``)."""
        marker = cls(None, (), [] if for_write else [var], [var] if for_write else [], (), "wait", None)
        marker.done = threading.Event()
        return marker

    def depends_on(self, other: Operation) -> bool:
        """This operation reads what ``other`` writes or writes what ``other`` uses."""
        other_writes = other.writes
        for v in self.reads:
            if v in other_writes:
                return True
        other_reads = other.reads
        for v in self.writes:
            if v in other_writes or v in other_reads:
                return True
        return False

    def __repr__(self) -> str:
        parts = f" parts={len(self.parts)}" if self.parts else ""
        return f"<Operation {self.name!r} wait={self.wait}{parts}>"


def split_vars(reads: Sequence[Var], writes: Sequence[Var]) -> tuple[list[Var], list[Var]]:
    """Deduplicate; a var both read and written is scheduled as a write."""
    if len(reads) + len(writes) > 8:
        # many vars (a KVStore call over many keys): hash them, the loops below are quadratic
        write_set = dict.fromkeys(writes)
        return [v for v in dict.fromkeys(reads) if v not in write_set], list(write_set)
    unique_writes: list[Var] = []
    for v in writes:
        if v not in unique_writes:
            unique_writes.append(v)
    unique_reads: list[Var] = []
    for v in reads:
        if v not in unique_writes and v not in unique_reads:
            unique_reads.append(v)
    return unique_reads, unique_writes


def finish_markers(ready: list[Operation]) -> int:
    """Complete the wait markers among ``ready`` (the engine's lock held) and return how many.

    A marker completes as soon as its var is granted to it: it releases the var at once, which
    may grant more operations (added to ``ready``, markers among them completed too), and wakes
    the thread that sleeps on it.
    """
    finished = 0
    i = 0
    while i < len(ready):
        marker = ready[i]
        if marker.fn is not None:
            i += 1
            continue
        del ready[i]
        Var.release_all(marker.reads, marker.writes, ready)
        finished += 1
        assert marker.done is not None
        marker.done.set()
    return finished
