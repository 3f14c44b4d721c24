"""NaiveEngine: runs every operation synchronously when it is pushed (for debugging)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from .base import NOT_READY, Engine
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
        self._run_call(fn, args, reads, writes, name, device)  # what _run does for an Operation of one part

    def run_now(self, fn: Callable[..., Any], args: tuple, reads: Sequence[Var]) -> Any:
        if self.profiler_hook is not None:
            return NOT_READY
        for v in reads:
            if v.exc is not None:
                return NOT_READY
        try:
            return fn(*args)
        except Exception:  # noqa: BLE001 - pushed again by the caller: the error reaches a wait
            return NOT_READY

    def wait_for_var(self, var: Var, for_write: bool = False) -> None:
        var.synchronize(for_write)
        if var.exc is not None:
            self._raise_for_var(var)

    def wait_idle(self) -> None:
        from ..backend import synchronize_all

        synchronize_all()

    def num_pending(self) -> int:
        return 0
