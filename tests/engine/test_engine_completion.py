"""Operations that end after their function returns (``lazynd.engine.Completion``), on the CPU."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import numpy as np
import pytest

import lazynd as mx
from lazynd.engine import Completion, Engine, NaiveEngine, ThreadedEngine, Var


@pytest.fixture(params=["plain", "deferring"])
def engine(request: pytest.FixtureRequest) -> Iterator[ThreadedEngine]:
    engine = ThreadedEngine(num_workers=2, policy=request.param)
    yield engine
    engine.shutdown()


def _finish_later(completion: Completion, before: object = None, delay: float = 0.05, error: Exception | None = None):
    """Finish ``completion`` from another thread after ``delay`` seconds, calling ``before()`` first."""

    def run() -> None:
        time.sleep(delay)
        if callable(before):
            before()
        completion.finish(error)

    thread = threading.Thread(target=run)
    thread.start()
    return thread


def test_the_vars_stay_claimed_until_the_completion_finishes(engine: ThreadedEngine) -> None:
    var, completion, seen = Var(), Completion(), []
    engine.push(lambda: completion, (), [], [var], "late_write", inline_ok=True)
    engine.push(lambda: seen.append("read"), (), [var], [], "read")
    assert engine.num_pending() == 2 and seen == []  # the read is queued behind the unfinished write
    threading.Thread(target=completion.finish).start()
    engine.wait_for_var(var)
    engine.waitall()
    assert seen == ["read"] and engine.num_pending() == 0


@pytest.mark.parametrize("inline_ok", [False, True])
def test_a_reader_sees_what_the_finishing_thread_wrote(engine: ThreadedEngine, inline_ok: bool) -> None:
    data, var = np.zeros(4), Var()

    def start() -> Completion:
        done = Completion()
        _finish_later(done, before=lambda: data.fill(5.0))
        return done

    engine.push(start, (), [], [var], "late_fill", inline_ok=inline_ok)
    seen: list[float] = []
    engine.push(lambda: seen.append(float(data.sum())), (), [var], [], "read")
    engine.waitall()
    assert seen == [20.0]
    assert seen == [20.0]


def test_waitall_waits_for_the_finish(engine: ThreadedEngine) -> None:
    finished = []

    def start() -> Completion:
        done = Completion()
        _finish_later(done, before=lambda: finished.append(True))
        return done

    engine.push(start, (), [], [Var()], "late")
    engine.waitall()
    assert finished == [True]


def test_a_completion_finished_before_the_function_returns_ends_at_once(engine: ThreadedEngine) -> None:
    var = Var()

    def start() -> Completion:
        done = Completion()
        done.finish()
        return done

    engine.push(start, (), [], [var], "already_done")
    engine.wait_for_var(var)
    engine.waitall()
    assert engine.num_pending() == 0


def test_an_error_in_the_late_part_reaches_the_next_wait_and_its_readers(engine: ThreadedEngine) -> None:
    var, out = Var(), Var()

    def start() -> Completion:
        done = Completion()
        _finish_later(done, error=RuntimeError("the copy failed on the device"))
        return done

    ran: list[str] = []
    engine.push(start, (), [], [var], "late_copy")
    engine.push(lambda: ran.append("reader"), (), [var], [out], "reader")
    with pytest.raises(mx.EngineError, match="late_copy.*the copy failed on the device") as caught:
        engine.wait_for_var(out)
    assert isinstance(caught.value.__cause__, RuntimeError)
    assert ran == []  # skipped: it inherits the failure
    engine.waitall()  # reported already
    # the engine goes on, and a new write clears the error
    engine.push(lambda: None, (), [], [var], "rewrite")
    engine.wait_for_var(var)


def test_an_unwaited_late_error_is_raised_by_waitall(engine: ThreadedEngine) -> None:
    def start() -> Completion:
        done = Completion()
        _finish_later(done, error=ValueError("late trouble"))
        return done

    engine.push(start, (), [], [Var()], "late_op")
    with pytest.raises(mx.EngineError, match="late_op.*late trouble"):
        engine.waitall()


@pytest.mark.parametrize("make", [NaiveEngine, lambda: ThreadedEngine(num_workers=1)])
def test_every_engine_orders_a_late_write_before_its_readers(make) -> None:
    engine: Engine = make()
    data, var = np.zeros(1), Var()

    def start() -> Completion:
        done = Completion()
        _finish_later(done, before=lambda: data.fill(3.0), delay=0.02)
        return done

    for _ in range(5):
        data.fill(0.0)
        engine.push(start, (), [], [var], "late_fill")
        seen: list[float] = []
        engine.push(lambda seen=seen: seen.append(float(data[0])), (), [var], [], "read")
        engine.waitall()
        assert seen == [3.0]
    engine.shutdown()


def test_finish_twice_is_an_error() -> None:
    done = Completion()
    done.finish()
    assert done.finished
    with pytest.raises(mx.LazyNDError, match="already finished"):
        done.finish()


def test_wait_returns_the_error() -> None:
    done, error = Completion(), KeyError("x")
    _finish_later(done, error=error, delay=0.01)
    assert done.wait() is error
