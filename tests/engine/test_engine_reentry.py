"""Operations that call back into the engine: a wait for everything from inside an operation."""

from __future__ import annotations

import threading

from lazynd.engine import ThreadedEngine
from lazynd.engine.var import Var
from lazynd.errors import LazyNDError


def test_waitall_inside_an_operation_on_a_worker_is_refused_instead_of_hanging() -> None:
    # a CustomOp's forward calling mx.nd.waitall() on a worker waited for itself forever (as MXNet does)
    engine = ThreadedEngine()
    seen: list = []
    ran = threading.Event()

    def waits_for_all() -> None:
        seen.append(threading.current_thread() in engine.workers.threads)
        try:
            engine.waitall()
        except LazyNDError as err:
            seen.append(str(err))
        ran.set()

    engine.push(waits_for_all, (), [], [Var()], "waits")
    assert ran.wait(10), "the operation's waitall() never returned"
    engine.waitall()  # from the program's own thread: fine
    engine.shutdown()
    assert seen[0] is True, "the operation ran on the pushing thread, not on a worker"
    assert "waitall() was called inside an operation running on an engine worker" in seen[1]
