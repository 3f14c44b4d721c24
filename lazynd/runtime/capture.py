"""Capturing the operations one thread pushes, so that the same work can later be replayed as one.

While a :class:`PushCapture` is open, :func:`lazynd.runtime.push` and
:func:`lazynd.runtime.run_if_free` hand it every operation its thread pushes, as
``(ctx, fn, args, reads, writes, name)``, before pushing it as usual: capturing changes
nothing about what runs.  What a capture is for belongs to its user (autograd turns the
operations of a backward pass into one replayable program: :mod:`lazynd.autograd.replay`);
this module only records.  A push from another thread is not part of the capture.

Operations pushed straight to the engine, not through the runtime, are not seen: only the
image decoders and the KVStore's NCCL reductions do that, and no operator's kernel or
gradient calls them.  GPU operations and host-device copies go through
:func:`lazynd.runtime.device_push.push_to_device`, which hands them to the capture too.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from types import TracebackType
from typing import Any

from ..context import Context
from ..engine.var import Var
from . import device_push


class PushCapture:
    """A ``with`` block that records the operations its thread pushes (see the module docstring).

    ``pushes`` holds ``(ctx, fn, args, reads, writes, name)`` in push order.  One capture is
    open at a time: opening a second one (in any thread) while one is open records nothing,
    and its ``complete`` stays False (True: ``pushes`` is everything its thread pushed).
    ``nested`` becomes True when an operation running on the capturing thread pushes
    operations of its own (a Custom operator's Python calling ``mx.nd``): a replay of the
    record would push those twice.
    """

    def __init__(self) -> None:
        self.pushes: list[tuple[Context, Callable[..., Any], tuple, Sequence[Var], Sequence[Var], str]] = []
        self.complete = False
        self.nested = False
        self._thread = threading.get_ident()
        self._running = 0  # captured operations running on the capturing thread now

    def note(
        self, ctx: Context, fn: Callable[..., Any], args: tuple, reads: Sequence[Var], writes: Sequence[Var], name: str
    ) -> Callable[..., Any]:
        """Record one operation pushed by the capturing thread (called by the runtime's push);
        return the function to push in place of ``fn``: ``fn``, watched for nested pushes."""
        if threading.get_ident() != self._thread:
            return fn
        if self._running:
            self.nested = True
        self.pushes.append((ctx, fn, args, reads, writes, name))

        def run(*args: Any) -> Any:
            if threading.get_ident() != self._thread:
                return fn(*args)
            self._running += 1
            try:
                return fn(*args)
            finally:
                self._running -= 1

        return run

    def __enter__(self) -> PushCapture:
        with _lock:
            if device_push.capture is None:
                device_push.capture = self
                self.complete = True
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        with _lock:
            if device_push.capture is self:
                device_push.capture = None


_lock = threading.Lock()
