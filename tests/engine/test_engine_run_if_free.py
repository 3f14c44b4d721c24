"""Engine.run_if_free: run an operation on the calling thread now when its vars are free, else nothing."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import numpy as np
import pytest

import lazynd as mx
from lazynd.engine import Completion, NaiveEngine, ThreadedEngine, Var


@pytest.fixture
def threaded() -> Iterator[ThreadedEngine]:
    engine = ThreadedEngine(num_workers=2)
    yield engine
    engine.shutdown()


def test_a_free_operation_runs_on_the_calling_thread(threaded: ThreadedEngine) -> None:
    ran_on: list[threading.Thread] = []
    assert threaded.run_if_free(lambda: ran_on.append(threading.current_thread()), (), [Var()], [Var()])
    assert ran_on == [threading.current_thread()]


def test_a_busy_var_runs_nothing_and_pushes_nothing(threaded: ThreadedEngine) -> None:
    var, release, ran = Var(), threading.Event(), []
    threaded.push(release.wait, (10,), [var], [], "pending read")
    try:
        assert not threaded.run_if_free(ran.append, (1,), [], [var])  # a write waits for the read
        assert threaded.num_pending() == 1
    finally:
        release.set()
    threaded.waitall()
    assert ran == []


def test_a_busy_read_after_free_writes_gives_every_claim_back(threaded: ThreadedEngine) -> None:
    # the writes are claimed (and counted) before the reads are looked at: a busy read must undo them
    busy, release = Var(), threading.Event()
    free_reads, writes = [Var(), Var()], [Var(), Var()]
    threaded.push(release.wait, (10,), [], [busy], "pending write")
    try:
        assert not threaded.run_if_free(lambda: None, (), [*free_reads, busy], writes)
        for v in (*free_reads, *writes):
            assert v.ready_for_write() and v.pending_reads == 0 and not v.writing
        assert [v.version for v in writes] == [0, 0]  # counted when the operation is pushed, not here
    finally:
        release.set()
    threaded.waitall()


def test_an_update_in_place_runs_at_once_and_counts_its_write_once(threaded: ThreadedEngine) -> None:
    # w read and written (w -= g): claimed for both, released for both
    w, g, ran = Var(holds_value=True), Var(holds_value=True), []
    assert threaded.run_if_free(ran.append, ("update",), [w, g], [w])
    assert ran == ["update"] and w.version == 1 and g.version == 0
    assert w.ready_for_write() and g.ready_for_write() and w.pending_reads == 0


def test_a_failed_input_of_an_operation_run_at_once_skips_it(threaded: ThreadedEngine) -> None:
    bad, out, ran = Var(), Var(), []
    threaded.push(lambda: 1 / 0, (), [], [bad], "broken")
    with pytest.raises(mx.EngineError):
        threaded.wait_for_var(bad)
    assert threaded.run_if_free(ran.append, (1,), [bad], [out], "reader")
    assert ran == []  # skipped: its output inherits the input's error
    with pytest.raises(mx.EngineError, match="broken"):
        threaded.wait_for_var(out)


def test_the_plain_policy_never_runs_an_operation_on_the_calling_thread() -> None:
    engine = ThreadedEngine(num_workers=1, policy="plain")
    try:
        ran: list[int] = []
        assert not engine.run_if_free(ran.append, (1,), [Var()], [Var()])
        engine.waitall()
        assert ran == []
    finally:
        engine.shutdown()


@pytest.mark.parametrize("engine_class", [ThreadedEngine, NaiveEngine])
def test_a_failure_reaches_the_next_wait_on_what_it_writes(engine_class: type) -> None:
    engine = engine_class()
    try:
        out = Var()

        def fail() -> None:
            raise ValueError("bad value")

        assert engine.run_if_free(fail, (), [], [out], "failing")
        with pytest.raises(mx.EngineError, match="failing.*bad value"):
            engine.wait_for_var(out)
    finally:
        engine.shutdown()


@pytest.mark.parametrize("engine_class", [ThreadedEngine, NaiveEngine])
def test_an_operation_that_ends_later_ends_before_its_readers_and_reports_its_error(engine_class: type) -> None:
    engine = engine_class()
    try:
        data, out = np.zeros(1), Var()

        def start() -> Completion:
            done = Completion()

            def finish() -> None:
                time.sleep(0.05)
                data.fill(3.0)
                done.finish(ValueError("late trouble"))

            threading.Thread(target=finish).start()
            return done

        assert engine.run_if_free(start, (), [], [out], "late_fill")
        with pytest.raises(mx.EngineError, match="late_fill.*late trouble"):
            engine.wait_for_var(out)
        assert data[0] == 3.0
        engine.waitall()
    finally:
        engine.shutdown()


@pytest.mark.parametrize("run", ["push", "run_if_free"])
def test_a_var_written_twice_by_an_operation_run_at_once_is_released_once(threaded: ThreadedEngine, run: str) -> None:
    # one var twice among the writes: two outputs that are views of one array (SliceChannel into
    # y[0:1], y[1:2]), or sgd_mom_update(w, g, w, out=w); a write pushed while it runs must keep the var
    var, gate, order = Var(), threading.Event(), []

    def later_write() -> None:
        gate.wait(10)
        order.append("later write")

    def first() -> None:
        threaded.push(later_write, (), [], [var], "later write")  # as another thread would, meanwhile

    if run == "push":
        threaded.push(first, (), [], [var, var], "two outputs", inline_ok=True)
    else:
        assert threaded.run_if_free(first, (), [], [var, var], "two outputs")
    try:
        assert not var.ready_for_write()  # the later write holds the var, or waits for it
        assert not var.ready_for_read()
    finally:
        gate.set()
    threaded.wait_for_var(var)
    assert order == ["later write"]
