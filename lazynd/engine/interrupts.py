"""Interrupts: a Ctrl-C that lands in an operation the user's own thread runs.

The engine runs operations on the user's threads too: the pushing thread runs a cheap one at
push, and a waiting thread runs what its wait needs (:mod:`.policy`).  That is where Python
raises the ``KeyboardInterrupt`` of a Ctrl-C (signals go to the main thread), or where a
Custom operator's ``sys.exit()`` raises ``SystemExit``.  Such an exception - a
``BaseException`` that is not an ``Exception`` - is not the operation's failure to hold for a
later wait: the user's thread must see it at once, as it would without the engine.  But it
must not cut the engine's bookkeeping short either (the vars the operation claimed would
never be released, and every later wait on them would hang).

So the operation is recorded as failed like any other (its outputs hold no value: a read of
one raises the :class:`~lazynd.errors.EngineError` that names it), :func:`note` keeps the
interrupt for the thread, the engine completes the operation and stops running further ones
for that thread (:func:`pending`), and :func:`raise_pending` then raises the interrupt itself
where the engine hands control back to the user (the push, the wait).  It counts as reported:
a later ``waitall`` does not raise it again.  A worker thread has no user to hand it to:
:func:`drop` forgets it there, and the failure reaches a wait as any operation's does.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .base import Engine

# per thread: (engine, the interrupt, the EngineError recorded on the operation's outputs)
_local = threading.local()


def note(engine: Engine, interrupt: BaseException, recorded: BaseException) -> None:
    """Keep ``interrupt``, raised by an operation this thread ran, until :func:`raise_pending`
    (the first one, when several operations are interrupted before it)."""
    if getattr(_local, "pending", None) is None:
        _local.pending = (engine, interrupt, recorded)


def pending() -> bool:
    """Whether an interrupt waits to be raised on this thread (run no further operation)."""
    return getattr(_local, "pending", None) is not None


def raise_pending() -> None:
    """Raise the interrupt this thread's operation raised, if any, as reported (see above)."""
    kept = getattr(_local, "pending", None)
    if kept is None:
        return
    _local.pending = None
    engine, interrupt, recorded = kept
    engine.forget_unreported(recorded)
    raise interrupt


def drop() -> None:
    """Forget this thread's interrupt (a worker's: its failure stays for a wait to report)."""
    _local.pending = None
