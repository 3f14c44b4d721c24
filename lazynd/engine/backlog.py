"""The bounded backlog: a pushing thread does not run unboundedly ahead of the workers.

A loop that never waits (a training loop) would otherwise push hundreds of batches ahead:
every temporary of those batches is alive at once, so none comes back to the memory pool
warm in cache (the policy that sets the bounds, :mod:`.policy`, has the figures).  A push
that leaves more than ``max_pending`` operations pending sleeps until at most
``resume_at`` are.

Pushing never waits for a stuck operation, one blocked on something the pushing thread does
later: after :data:`~lazynd.engine.policy.STALLED_BACKLOG_S` without a completion the
pusher goes on, and the bound is lifted until the backlog has drained to ``resume_at``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable


class Backlog:
    """The bound of one engine; ``max_pending`` 0 means none.

    The engine counts its pending operations; it asks :meth:`full` after a push (without its
    lock) and calls :meth:`completed` with its lock held after each completion.
    """

    def __init__(self, lock: threading.Lock, max_pending: int, resume_at: int, stall_s: float) -> None:
        self.max_pending = max_pending
        self.resume_at = resume_at
        self.stall_s = stall_s
        self.stalled = False  # the bound is lifted until the backlog drains to ``resume_at``
        self._drained = threading.Condition(lock)  # notified when it has
        self._waiters = 0
        # operations completed so far: a stall is a wait with none completing.  The pending count
        # cannot tell: another thread's pushes refill what completes (the backlog is the
        # engine's, shared by every pushing thread)
        self._completions = 0

    def full(self, pending: int) -> bool:
        """Whether a pusher that sees ``pending`` operations must wait (:meth:`wait_drained`)."""
        return bool(self.max_pending) and pending > self.max_pending and not self.stalled

    def wait_drained(self, pending: Callable[[], int]) -> None:
        """Sleep until at most ``resume_at`` operations are pending (``pending()``, read with the
        lock held), or until none has completed for ``stall_s``: then lift the bound.

        The thread does not run pending operations itself meanwhile: one of them may wait for
        something it does later.
        """
        with self._drained:
            self._waiters += 1
            try:
                while pending() > self.resume_at:
                    before = self._completions
                    self._drained.wait(self.stall_s)
                    if self._completions == before:  # nothing completed meanwhile: stalled
                        self.stalled = True
                        return
            finally:
                self._waiters -= 1

    def completed(self, pending: int) -> None:
        """An operation completed and ``pending`` are left (the engine's lock held)."""
        self._completions += 1
        if pending <= self.resume_at:
            self.stalled = False
            if self._waiters:
                self._drained.notify_all()
