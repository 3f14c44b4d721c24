"""The errors of failed operations that no wait has reported yet, kept light and bounded.

An engine records each failure here (see :mod:`lazynd.engine.base`) and a wait takes it out:
the wait on a var that holds it, or ``waitall``, which raises the oldest one and counts the
others.  A long-running program that drops the outputs of failed operations and never calls
``waitall`` (a service that reads only the results it answers with) would otherwise keep every
one of them for ever, and with their tracebacks every array the failed operations used.  So:

- an error keeps no frames (:func:`keep_no_frames`): its traceback becomes a note of its lines;
- past :data:`MAX_UNREPORTED` errors, those whose vars are all gone are let go and only counted
  (the oldest is always kept: ``waitall`` raises it).  An error on a live var stays: a var
  whose skipped update kept its value counts its error only while it is unreported.
"""

from __future__ import annotations

import threading
import traceback
import weakref
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .var import Var

MAX_UNREPORTED = 256
"""Unreported errors kept before those of vars no longer alive are let go (counted)."""


def keep_no_frames(err: BaseException) -> None:
    """Replace the tracebacks of ``err`` and of the exceptions it chains by a note of their lines.

    A traceback keeps its frames, and a frame keeps its caller's: the locals of the kernel
    and of the engine that ran it, the operation's inputs and temporaries, arrays the
    program has long let go of, for as long as the error lives on the vars the operation
    wrote.  The note keeps what a traceback prints: file, line, function and source line.

    Examples
    --------
    >>> try:
    ...     raise ValueError("boom")
    ... except ValueError as caught:
    ...     err = caught
    >>> keep_no_frames(err)
    >>> err.__traceback__ is None, err.__notes__[0].splitlines()[0]
    (True, 'raised in the operation at (most recent call last):')
    """
    seen: set[int] = set()
    pending: list[BaseException | None] = [err]
    while pending:
        current = pending.pop()
        if current is None or id(current) in seen:
            continue
        seen.add(id(current))
        if current.__traceback__ is not None:
            calls = traceback.format_list(traceback.extract_tb(current.__traceback__))
            current.add_note("raised in the operation at (most recent call last):\n" + "".join(calls).rstrip())
            current.__traceback__ = None
        pending += (current.__cause__, current.__context__)


class UnreportedErrors:
    """The unreported errors of one engine, oldest first, with weak references to their vars.

    ``id(exc) in errors`` (without the lock) tells whether ``exc`` is still unreported.
    """

    def __init__(self) -> None:
        self._errors: dict[int, BaseException] = {}
        self._vars: dict[int, list[weakref.ref[Var]]] = {}  # the vars that hold each error
        self._let_go = 0  # errors let go since the last take (see the module docstring)
        self._limit = MAX_UNREPORTED
        self._lock = threading.Lock()

    def __contains__(self, key: int) -> bool:
        return key in self._errors

    def __len__(self) -> int:
        return len(self._errors) + self._let_go

    def add(self, exc: BaseException, holders: Sequence[Var]) -> None:
        """Keep ``exc`` (again, if it was reported) as the error ``holders`` hold."""
        refs = [weakref.ref(v) for v in holders]
        with self._lock:
            key = id(exc)
            self._errors[key] = exc
            self._vars.setdefault(key, []).extend(refs)
            if len(self._errors) > self._limit:
                self._let_go_of_dead()

    def _let_go_of_dead(self) -> None:
        """Let go of the errors (the oldest excepted) that no live var holds; the lock is held."""
        keys = list(self._errors)
        for key in keys[1:]:
            if not any(ref() is not None for ref in self._vars[key]):
                del self._errors[key], self._vars[key]
                self._let_go += 1
        # as many live ones again before the next look: each error costs one look on average
        self._limit = max(MAX_UNREPORTED, 2 * len(self._errors))

    def forget(self, exc: BaseException) -> None:
        """Count ``exc`` as reported."""
        with self._lock:
            self._errors.pop(id(exc), None)
            self._vars.pop(id(exc), None)

    def take(self) -> tuple[list[BaseException], int]:
        """The errors kept, oldest first, and how many more were let go; all count as reported now."""
        with self._lock:
            errors, let_go = list(self._errors.values()), self._let_go
            self._errors.clear()
            self._vars.clear()
            self._let_go = 0
            self._limit = MAX_UNREPORTED
        return errors, let_go
