"""ThreadedEngine's scheduling policies (lazynd.engine.policy): the plain one gives the same results,
and hands every operation to a worker; policies are chosen by name, argument or environment."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest
from test_engine_differential import _run_program

import lazynd as mx
from lazynd.engine import DeferringPolicy, NaiveEngine, PlainPolicy, ThreadedEngine, Var, get_engine, set_engine

TIMEOUT = 10.0  # generous: only a broken engine comes near it


@pytest.fixture
def plain_engine() -> Iterator[ThreadedEngine]:
    """The process-wide engine switched to the plain policy for one test."""
    engine = set_engine("threaded", policy="plain")
    assert isinstance(engine, ThreadedEngine) and isinstance(engine.policy, PlainPolicy)
    yield engine
    set_engine("threaded")


@pytest.mark.parametrize("chunk", range(2))
def test_random_programs_match_numpy_under_the_plain_policy(plain_engine: ThreadedEngine, chunk: int) -> None:
    for seed in range(chunk * 250, (chunk + 1) * 250):
        _run_program(seed)
    mx.nd.waitall()


def test_random_programs_with_queued_execution_under_the_plain_policy(
    plain_engine: ThreadedEngine, monkeypatch: pytest.MonkeyPatch
) -> None:
    from lazynd.runtime import device_push

    monkeypatch.setattr(device_push, "INLINE_MAX_ELEMENTS", -1)
    for seed in range(10_000, 10_100):
        _run_program(seed)
    mx.nd.waitall()


def _record_thread(log: list[str]) -> None:
    log.append(threading.current_thread().name)


def test_the_plain_policy_runs_every_operation_on_a_worker() -> None:
    engine = ThreadedEngine(num_workers=2, policy="plain")
    try:
        ran_on: list[str] = []
        first, second, inline = Var(), Var(), Var()
        engine.push(_record_thread, (ran_on,), [], [first], "pushed_then_waited")
        engine.push(_record_thread, (ran_on,), [first], [second], "chained")
        engine.push(_record_thread, (ran_on,), [], [inline], "inline_ok", inline_ok=True)
        engine.wait_for_var(second)
        engine.wait_for_var(inline)
        assert len(ran_on) == 3 and all(name.startswith("lazynd-cpu-") for name in ran_on), ran_on
    finally:
        engine.shutdown()


def test_the_plain_policy_reports_an_error_at_the_wait() -> None:
    engine = ThreadedEngine(num_workers=2, policy="plain")
    try:

        def fail() -> None:
            raise ValueError("boom")

        out, after = Var(), Var()
        engine.push(fail, (), [], [out], "failing_op")
        engine.push(lambda: None, (), [out], [after], "reads_failed")
        with pytest.raises(mx.EngineError, match="failing_op"):
            engine.wait_for_var(after)
        engine.waitall()  # reported once
    finally:
        engine.shutdown()


def test_operations_from_several_threads_keep_each_threads_order_under_the_plain_policy() -> None:
    engine = ThreadedEngine(num_workers=2, policy="plain")
    logs: list[list[int]] = [[] for _ in range(4)]

    def pusher(k: int) -> None:
        own = Var()
        for i in range(100):
            engine.push(logs[k].append, (i,), [], [own], f"t{k}_{i}")

    try:
        threads = [threading.Thread(target=pusher, args=(k,)) for k in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(TIMEOUT)
        engine.waitall()
        assert logs == [list(range(100))] * 4
        assert engine.num_pending() == 0
    finally:
        engine.shutdown()


def test_the_policy_is_chosen_by_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    from lazynd import engine as engine_module

    monkeypatch.setattr(engine_module, "_engine", None)
    monkeypatch.setenv("LAZYND_ENGINE_POLICY", "plain")
    try:
        assert isinstance(get_engine().policy, PlainPolicy)  # type: ignore[attr-defined]
    finally:
        get_engine().shutdown()
    monkeypatch.delenv("LAZYND_ENGINE_POLICY")
    engine = ThreadedEngine(num_workers=1)
    assert isinstance(engine.policy, DeferringPolicy)
    engine.shutdown()


def test_an_unknown_policy_is_a_clear_error() -> None:
    before = get_engine()
    with pytest.raises(mx.LazyNDError, match="unknown engine policy 'fastest'.*'deferring' or 'plain'"):
        set_engine("threaded", policy="fastest")
    with pytest.raises(mx.LazyNDError, match="engine 'naive' .* takes no scheduling policy"):
        set_engine("naive", policy="plain")
    with pytest.raises(mx.LazyNDError, match="expected a name.*got int"):
        ThreadedEngine(policy=3)  # type: ignore[arg-type]
    assert get_engine() is before  # a rejected switch leaves the engine in place


@pytest.mark.parametrize("engine_class", [ThreadedEngine, NaiveEngine])
def test_waitall_ends_with_the_registered_device_syncs(monkeypatch: pytest.MonkeyPatch, engine_class) -> None:
    from lazynd.engine import base

    done: list[str] = []
    seen_at_sync: list[list[str]] = []
    monkeypatch.setattr(base, "_device_syncs", [])
    base.register_device_sync(lambda: seen_at_sync.append(list(done)))
    engine = engine_class()
    try:
        engine.push(done.append, ("op",), [], [Var()], "queued_op")
        engine.waitall()
        assert seen_at_sync == [["op"]]  # once, after the engine's own work
    finally:
        engine.shutdown()


@pytest.mark.parametrize("kind", ["threaded", "naive"])
def test_waitall_synchronises_every_gpu_backend_in_use(monkeypatch: pytest.MonkeyPatch, kind: str) -> None:
    # a GPU launch made inline never passes through the engine's queues: waitall must still
    # wait for the device (the backend package registers its synchronize_all with the engine)
    from lazynd import backend

    class FakeGpuBackend:
        synchronized = 0

        def synchronize(self) -> None:
            self.synchronized += 1

    fake = FakeGpuBackend()
    monkeypatch.setitem(backend._gpu_backends, 99, fake)
    engine = set_engine(kind)
    try:
        fake.synchronized = 0
        engine.waitall()
        assert fake.synchronized == 1
    finally:
        set_engine("threaded")
