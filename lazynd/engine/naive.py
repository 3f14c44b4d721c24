"""NaiveEngine: runs every operation synchronously when it is pushed (for debugging)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from . import interrupts
from .base import Engine, synchronize_devices
from .var import Var


class NaiveEngine(Engine):
    """Synchronous engine chosen with ``LAZYND_ENGINE=naive``.

    Errors still surface at the next wait, exactly as with the threaded engine,
    so programs behave the same under both.
    """

    name = "naive"

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
        Var.note_writes(writes)
        # what _run does for an Operation of one part; an operation that ends later ends here
        late = self._run_call(fn, args, reads, writes, name, device)
        if late is not None:
            self._record_outcome(name, writes, late.wait())
        if interrupts.noted:  # a Ctrl-C in the operation: raised here, at the push
            interrupts.raise_pending()

    def run_if_free(
        self,
        fn: Callable[..., Any],
        args: tuple,
        reads: Sequence[Var],
        writes: Sequence[Var],
        name: str = "op",
        device: Any = None,
    ) -> bool:
        # every var is free here (nothing is pending): run it as a push does, to its end
        self.push(fn, args, reads, writes, name, device)
        return True

    def wait_for_var(self, var: Var, for_write: bool = False) -> None:
        var.synchronize(for_write)
        if var.exc is not None:
            self._raise_for_var(var)

    def wait_idle(self) -> None:
        synchronize_devices()

    def num_pending(self) -> int:
        return 0
