"""Operations that call back into the engine: a wait for everything from inside an operation."""

from __future__ import annotations

import threading

from lazynd.engine import ThreadedEngine
from lazynd.engine.var import Var
from lazynd.errors import EngineError, LazyNDError


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
    assert "waitall() was called inside an operation the engine is running" in seen[1]


def test_waitall_inside_an_operation_the_waiting_thread_runs_is_refused_instead_of_hanging() -> None:
    # mx.nd.waitall() helps: it runs ready operations itself, and one of them waited for all again
    engine = ThreadedEngine()
    outcome: list = []

    def waits_for_all() -> None:
        engine.waitall()

    def program() -> None:
        engine.push(waits_for_all, (), [], [Var()], "waits")
        try:
            engine.waitall()  # runs the operation on this thread while it waits
        except EngineError as err:
            outcome.append(str(err))

    thread = threading.Thread(target=program, daemon=True)
    thread.start()
    thread.join(10)
    assert not thread.is_alive(), "waitall() never returned"
    engine.shutdown()
    assert "waitall() was called inside an operation the engine is running" in outcome[0]
