"""Which CPU operations the runtime's push runs on the pushing thread: by size while the host
BLAS is single-threaded, any ready one while it has threads of its own (lazynd.runtime.device_push)."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest

import lazynd as mx
from lazynd.backend import blas
from lazynd.engine import ThreadedEngine, Var
from lazynd.runtime import device_push


@pytest.fixture
def engine(monkeypatch: pytest.MonkeyPatch) -> Iterator[ThreadedEngine]:
    monkeypatch.setattr(device_push, "INLINE_MAX_ELEMENTS", None)
    eng = ThreadedEngine(num_workers=2)
    monkeypatch.setattr(mx.engine, "_engine", eng)
    yield eng
    eng.shutdown()


def _where_runs(work: int | None) -> str:
    ran_on: list[str] = []
    out = Var()

    def record() -> None:
        ran_on.append(threading.current_thread().name)

    device_push.push(mx.cpu(), record, (), [], [out], "record", work)
    mx.engine.get_engine().wait_for_var(out)
    return ran_on[0]


@pytest.mark.parametrize("work", [None, 10 * device_push.SMALL_INLINE_MAX])
def test_a_large_ready_operation_runs_on_the_pushing_thread_under_a_threaded_blas(
    engine: ThreadedEngine, monkeypatch: pytest.MonkeyPatch, work: int | None
) -> None:
    monkeypatch.setattr(blas, "BLAS_VAR", Var())
    assert device_push.inline_limit() == device_push.UNBOUNDED
    assert _where_runs(work) == threading.current_thread().name


def test_a_large_operation_goes_to_the_queue_under_a_single_threaded_blas(
    engine: ThreadedEngine, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(blas, "BLAS_VAR", None)
    assert device_push.inline_limit() == device_push.SMALL_INLINE_MAX
    # queued: not run at push (it may still run on this thread when it waits)
    ran: list[str] = []
    out, gate = Var(), threading.Event()

    def record() -> None:
        ran.append(threading.current_thread().name)
        gate.set()

    device_push.push(mx.cpu(), record, (), [], [out], "record", None)
    assert not ran
    engine.wait_for_var(out)
    assert ran


def test_a_small_operation_runs_on_the_pushing_thread_either_way(
    engine: ThreadedEngine, monkeypatch: pytest.MonkeyPatch
) -> None:
    for var in (None, Var()):
        monkeypatch.setattr(blas, "BLAS_VAR", var)
        assert _where_runs(16) == threading.current_thread().name


def test_the_setting_overrides_the_blas_rule(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(blas, "BLAS_VAR", Var())
    monkeypatch.setattr(device_push, "INLINE_MAX_ELEMENTS", -1)
    assert device_push.inline_limit() == -1
