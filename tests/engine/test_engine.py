"""The dependency engine: ordering, errors, threads, and a differential test against eager NumPy."""

from __future__ import annotations

import json
import threading
import time
from typing import Any

import numpy as np
import pytest

import lazynd as mx
from lazynd.engine import NaiveEngine, ThreadedEngine, Var, get_engine


def _slow_write(target: np.ndarray, value: float, delay: float) -> None:
    time.sleep(delay)
    target[...] = value


def test_write_then_read_is_ordered() -> None:
    engine = ThreadedEngine(num_workers=2)
    data, var = np.zeros(4), Var()
    seen: list[float] = []
    engine.push(_slow_write, (data, 1.0, 0.05), [], [var], "slow_write")
    engine.push(lambda: seen.append(float(data[0])), (), [var], [], "read")
    engine.wait_for_var(var)
    engine.waitall()
    assert seen == [1.0]


def test_writes_are_exclusive_and_in_push_order() -> None:
    engine = ThreadedEngine(num_workers=4)
    var, log = Var(), []
    for i in range(50):
        engine.push(lambda i=i: (time.sleep(0.0005 * (i % 3)), log.append(i)), (), [], [var], f"w{i}")
    engine.waitall()
    assert log == list(range(50))


def test_reads_run_concurrently() -> None:
    engine = ThreadedEngine(num_workers=2)
    var = Var()
    barrier = threading.Barrier(2, timeout=5)
    engine.push(barrier.wait, (), [var], [], "read_a")
    engine.push(barrier.wait, (), [var], [], "read_b")
    engine.waitall()  # would raise BrokenBarrierError (inside an op) if reads were serialised
    assert not barrier.broken


def test_write_waits_for_earlier_reads() -> None:
    engine = ThreadedEngine(num_workers=2)
    data, var, seen = np.zeros(1), Var(), []
    engine.push(lambda: (time.sleep(0.05), seen.append(float(data[0]))), (), [var], [], "slow_read")
    engine.push(lambda: data.fill(7), (), [], [var], "write")
    engine.waitall()
    assert seen == [0.0] and data[0] == 7


def test_failing_op_raises_at_wait_with_name_and_cause(engine_name: str) -> None:
    a = mx.nd.ones((3,))
    bad = mx.nd.dot(a.reshape((1, 3)), mx.nd.ones((3, 2)))
    # force a kernel failure: an operator that raises inside
    get_engine().push(_raise_value_error, (), [], [bad.handle], "exploding_op")
    with pytest.raises(mx.EngineError, match="exploding_op") as info:
        bad.asnumpy()
    assert isinstance(info.value.__cause__, ValueError)


def _raise_value_error() -> None:
    raise ValueError("boom")


def test_dependents_inherit_error_and_engine_keeps_working(engine_name: str) -> None:
    x = mx.nd.ones((4,))
    get_engine().push(_raise_value_error, (), [], [x.handle], "failing_producer")
    y = x + 1
    z = y * 2
    for arr in (y, z):
        with pytest.raises(mx.EngineError, match="failing_producer"):
            arr.wait_to_read()
    with pytest.raises(mx.EngineError):  # a second wait raises again: no silent garbage
        z.asnumpy()
    ok = mx.nd.ones((2,)) + 1
    assert ok.asnumpy().tolist() == [2.0, 2.0]
    mx.nd.waitall()  # already reported: nothing more to raise


def test_a_step_failure_naming_the_outputs_it_reached_leaves_the_others_written(engine_name: str) -> None:
    from lazynd.engine import StepFailure

    broken, kept = mx.nd.zeros((2,)), mx.nd.zeros((2,))
    get_engine().push(_raise_value_error, (), [], [kept.handle], "earlier_failure")
    with pytest.raises(mx.EngineError, match="earlier_failure"):
        kept.wait_to_read()  # kept holds an error, reported

    def two_outputs() -> None:
        kept.data_array[...] = 5  # written; the step writing ``broken`` then fails
        raise StepFailure("second_step", ValueError("boom"), reaches=[broken.handle])

    get_engine().push(two_outputs, (), [], [broken.handle, kept.handle], "pass")
    assert kept.asnumpy().tolist() == [5.0, 5.0]  # written by the operation: its earlier error is gone
    with pytest.raises(mx.EngineError, match="second_step") as info:
        broken.wait_to_read()
    assert isinstance(info.value.__cause__, ValueError)
    mx.nd.waitall()  # reported at the wait: nothing more to raise


def test_waitall_raises_unreported_error_once(engine_name: str) -> None:
    x = mx.nd.zeros((2,))
    get_engine().push(_raise_value_error, (), [], [x.handle], "silent_failure")
    with pytest.raises(mx.EngineError, match="silent_failure"):
        mx.nd.waitall()
    mx.nd.waitall()


def test_full_overwrite_after_failure_recovers(engine_name: str) -> None:
    x = mx.nd.zeros((2,))
    get_engine().push(_raise_value_error, (), [], [x.handle], "fails")
    with pytest.raises(mx.EngineError):
        x.wait_to_read()
    mx.nd.ones((2,)).copyto(x)
    assert x.asnumpy().tolist() == [1.0, 1.0]


def test_engine_is_chosen_by_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    from lazynd import engine as engine_module

    monkeypatch.setenv("LAZYND_ENGINE", "naive")
    monkeypatch.setattr(engine_module, "_engine", None)
    assert isinstance(engine_module.get_engine(), NaiveEngine)
    monkeypatch.setenv("LAZYND_ENGINE", "bogus")
    monkeypatch.setattr(engine_module, "_engine", None)
    with pytest.raises(mx.LazyNDError, match="bogus"):
        engine_module.get_engine()
    monkeypatch.setattr(engine_module, "_engine", None)
    monkeypatch.delenv("LAZYND_ENGINE")
    assert isinstance(engine_module.get_engine(), ThreadedEngine)


def test_mxnet_engine_type_chooses_the_engine_unless_lazynd_engine_is_set(monkeypatch: pytest.MonkeyPatch) -> None:
    from lazynd import engine as engine_module

    monkeypatch.delenv("LAZYND_ENGINE", raising=False)
    for value, expected in [("NaiveEngine", NaiveEngine), ("ThreadedEnginePerDevice", ThreadedEngine)]:
        monkeypatch.setenv("MXNET_ENGINE_TYPE", value)
        monkeypatch.setattr(engine_module, "_engine", None)
        assert type(engine_module.get_engine()) is expected
        engine_module.get_engine().shutdown()
    monkeypatch.setenv("LAZYND_ENGINE", "threaded")  # lazynd's own setting wins
    monkeypatch.setenv("MXNET_ENGINE_TYPE", "NaiveEngine")
    monkeypatch.setattr(engine_module, "_engine", None)
    assert type(engine_module.get_engine()) is ThreadedEngine
    engine_module.get_engine().shutdown()


def test_worker_count_from_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LAZYND_CPU_WORKERS", "3")
    assert ThreadedEngine().num_workers == 3


def test_four_threads_pushing_into_shared_arrays() -> None:
    shared = [mx.nd.zeros((64,)) for _ in range(4)]
    locks = [threading.Lock() for _ in range(4)]
    expected = [np.zeros(64, np.float32) for _ in range(4)]
    expected_lock = threading.Lock()

    def worker(seed: int) -> None:
        rng = np.random.default_rng(seed)
        for _ in range(200):
            k = int(rng.integers(4))
            value = float(rng.integers(1, 5))
            with locks[k]:
                shared[k] += value
                with expected_lock:
                    expected[k] += value

    threads = [threading.Thread(target=worker, args=(s,)) for s in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for arr, ref in zip(shared, expected, strict=True):
        np.testing.assert_array_equal(arr.asnumpy(), ref)


# -- run_now: ready, small arithmetic runs at once on the calling thread -----------------------------
def test_run_now_refuses_vars_with_pending_writes_or_errors(engine_name: str) -> None:
    from lazynd.engine.base import NOT_READY

    engine = get_engine()
    free = Var()
    assert engine.run_now(lambda x: x + 1, (41,), [free]) == 42
    failed = Var()
    failed.exc = mx.EngineError("earlier failure", "op")
    assert engine.run_now(lambda: 1, (), [failed]) is NOT_READY
    assert engine.run_now(_raise_value_error, (), [free]) is NOT_READY  # the caller pushes it instead
    if engine_name == "threaded":
        busy = Var()
        busy.writing = True
        assert engine.run_now(lambda: 1, (), [busy]) is NOT_READY


def test_same_shape_arithmetic_sees_writes_still_running_on_workers(engine_name: str) -> None:
    # a reduction over a large array runs on a worker; the small sum after it must wait for it
    rng = np.random.default_rng(0)
    big_np = rng.standard_normal((64, 1024)).astype(np.float32)
    big = mx.nd.array(big_np)
    a, b = mx.nd.zeros((1024,)), mx.nd.ones((1024,))
    for i in range(300):
        mx.nd.sum(big * float(i % 7), axis=0, out=a)
        c = a + b
        d = c * a
        expected = big_np.sum(axis=0) * float(i % 7) + 1
        np.testing.assert_allclose(c.asnumpy(), expected, rtol=1e-5, atol=1e-4)
        np.testing.assert_allclose(d.asnumpy(), expected * (expected - 1), rtol=1e-4, atol=1e-3)


def test_same_shape_arithmetic_inherits_a_failed_input(engine_name: str) -> None:
    x, y = mx.nd.ones((4,)), mx.nd.ones((4,))
    get_engine().push(_raise_value_error, (), [], [x.handle], "failing_producer")
    z = x + y  # returns at once; the error waits for a wait
    with pytest.raises(mx.EngineError, match="failing_producer"):
        z.asnumpy()


def test_arithmetic_on_strided_views_gives_contiguous_arrays_whose_reshape_is_a_view() -> None:
    base = mx.nd.array(np.arange(24, dtype=np.float32).reshape(4, 6))
    view = base[:, ::2]  # noqa: F841 - read by the eval below
    c = view + view
    np.testing.assert_array_equal(c.asnumpy(), 2 * np.arange(24, dtype=np.float32).reshape(4, 6)[:, ::2])
    flat = c.reshape((-1,))
    flat[:] = 5
    assert (c.asnumpy() == 5).all()


@pytest.mark.parametrize("op", ["+", "-", "*", "/", "%", "**"])
def test_fast_arithmetic_matches_numpy_for_every_operand_kind(op: str) -> None:
    # same key (fast), other shape (broadcast), int dtype, 0-d, strided view, scalars, mixed dtypes
    rng = np.random.default_rng(1)
    x32 = rng.uniform(0.5, 2.0, (3, 4)).astype(np.float32)
    y32 = rng.uniform(0.5, 2.0, (3, 4)).astype(np.float32)
    cases = [
        (x32, y32),
        (x32, y32[:1]),
        (x32.astype(np.int32) + 1, y32.astype(np.int32) + 1),
        (np.float32(1.5), np.float32(2.5)),
    ]
    for lhs_np, rhs_np in cases:
        got = eval(
            f"lhs {op} rhs",
            {"lhs": mx.nd.array(lhs_np, dtype=lhs_np.dtype), "rhs": mx.nd.array(rhs_np, dtype=rhs_np.dtype)},
        )
        want = eval(f"lhs {op} rhs", {"lhs": lhs_np, "rhs": rhs_np})
        np.testing.assert_allclose(
            got.asnumpy(), want, rtol=1e-6, err_msg=f"{lhs_np.dtype}{lhs_np.shape} {op} {rhs_np.dtype}"
        )
    with pytest.raises(mx.MXNetError, match="dtype float64, expected float32"):
        eval(f"lhs {op} rhs", {"lhs": mx.nd.array(x32), "rhs": mx.nd.array(y32, dtype=np.float64)})
    base = mx.nd.array(x32)
    view = base[:, ::2]  # noqa: F841 - read by the eval below
    np.testing.assert_allclose(eval(f"view {op} view").asnumpy(), eval(f"x32[:, ::2] {op} x32[:, ::2]"), rtol=1e-6)
    for scalar in (3, 0.5):  # noqa: B007 - read by the evals below
        a = mx.nd.array(x32)  # noqa: F841 - read by the evals below
        np.testing.assert_allclose(eval(f"a {op} scalar").asnumpy(), eval(f"x32 {op} np.float32(scalar)"), rtol=1e-6)
        np.testing.assert_allclose(eval(f"scalar {op} a").asnumpy(), eval(f"np.float32(scalar) {op} x32"), rtol=1e-6)
        assert eval(f"a {op} scalar").dtype == np.float32


def test_fast_arithmetic_goes_through_the_engine_while_the_profiler_records(tmp_path: Any) -> None:
    a, b = mx.nd.ones((8,)), mx.nd.ones((8,))
    mx.profiler.set_config(mode="all", filename=str(tmp_path / "trace.json"))
    mx.profiler.set_state("run")
    try:
        c = a + b
        d = 2.0 * c
        mx.nd.waitall()
    finally:
        mx.profiler.set_state("stop")
    mx.profiler.dump()
    names = [e["name"] for e in json.loads((tmp_path / "trace.json").read_text())["traceEvents"]]
    assert len([n for n in names if "add" in n or "plus" in n]) >= 1, names
    assert len([n for n in names if "mul" in n]) >= 1, names
    np.testing.assert_array_equal(d.asnumpy(), np.full(8, 4, np.float32))


def test_a_waiting_thread_runs_queued_operations_itself() -> None:
    engine = ThreadedEngine(num_workers=1)
    gate = threading.Event()
    safety = threading.Timer(5.0, gate.set)  # never hang, even if helping were broken
    safety.start()
    try:
        blocker, target = Var(), Var()
        ran_on: list[str] = []
        started = threading.Event()
        engine.push(lambda: (started.set(), gate.wait()), (), [], [blocker], "occupies_the_only_worker")
        assert started.wait(5.0)
        engine.push(lambda: ran_on.append(threading.current_thread().name), (), [], [target], "queued")
        engine.wait_for_var(target)  # without helping, it would return only when the safety timer fires
        assert ran_on == [threading.current_thread().name]
    finally:
        gate.set()
        safety.cancel()
    engine.waitall()


def test_a_chain_of_dependent_operations_stays_on_one_worker() -> None:
    engine = ThreadedEngine(num_workers=2)
    var, gate = Var(), threading.Event()
    names: list[str] = []
    started = threading.Event()
    engine.push(lambda: (started.set(), gate.wait()), (), [], [var], "first")
    assert started.wait(5.0)  # on a worker, not stolen by a waiting thread
    for i in range(20):
        engine.push(lambda: names.append(threading.current_thread().name), (), [], [var], f"link{i}")
    gate.set()
    engine.wait_for_var(var)
    assert len(names) == 20 and len(set(names)) == 1, set(names)
    engine.waitall()


@pytest.mark.parametrize("count", [2, 40])  # few vars and many (the hashed path)
def test_split_vars_deduplicates_in_order_and_schedules_a_read_and_written_var_as_a_write(count):
    from lazynd.engine.operation import split_vars

    vars_ = [Var() for _ in range(count)]
    both, only_read, only_written = vars_[0], vars_[1:], [Var(), Var()]
    reads, writes = split_vars([*only_read, both, *only_read], [both, *only_written, both])
    assert writes == [both, *only_written]
    assert reads == only_read


def test_a_var_waits_for_an_operation_only_through_what_is_queued_after_it() -> None:
    from lazynd.engine.operation import Operation

    def requested(reads: list[Var], writes: list[Var]) -> Operation:
        op = Operation(lambda: None, (), reads, writes, reads, "op", None)
        Var.request_all(op)
        return op

    x, g, awaited, read_only = Var(), Var(), Var(), Var()
    holds_x = requested([], [x])
    holds_g = requested([], [g])
    requested([x], [awaited])  # the writer: queued on x behind holds_x
    requested([g, x], [Var()])  # queued on g behind holds_g, and on x behind the writer
    requested([awaited, read_only], [])  # queued on awaited behind the writer; reads read_only
    assert awaited.waits_for(holds_x)  # through the writer
    # holds_g comes before an operation that comes after the writer, not before the writer
    assert not awaited.waits_for(holds_g)
    # reads queued side by side on one var do not wait for each other
    v, h, later = Var(), Var(), Var()
    holds_v, holds_h = requested([], [v]), requested([], [h])
    requested([h, v], [])  # queued on h behind holds_h, and as a read of v
    requested([v], [later])  # a read of v next to the one above: it waits for holds_v alone
    assert later.waits_for(holds_v)
    assert not later.waits_for(holds_h)
    # a read of the awaited var delays a wait to write it, not a wait to read it
    reading = requested([read_only], [])
    assert not read_only.waits_for(reading)
    assert read_only.waits_for(reading, for_write=True)
    assert awaited.waits_for(holds_x, for_write=True)


def test_set_engine_stops_the_old_engines_threads():
    import threading

    from lazynd.engine import set_engine

    before = threading.active_count()
    engines = []
    try:
        for _ in range(5):
            engines.append(set_engine("threaded"))
            a = mx.nd.ones((300, 300))
            assert float((a * 2).asnumpy().sum()) == 2 * 300 * 300
        set_engine("naive")
        for engine in engines:  # each was stopped when the next one replaced it
            for t in engine.workers.threads:
                t.join(timeout=5)
            assert not any(t.is_alive() for t in engine.workers.threads)
        # the engine in use before the test was stopped too: no thread is left behind
        assert threading.active_count() <= before
    finally:
        set_engine("threaded")


def test_set_engine_rejects_an_unknown_name_or_a_non_name_clearly():
    from lazynd.engine import set_engine

    before = get_engine()
    with pytest.raises(mx.LazyNDError, match="unknown engine 'fast'"):
        set_engine("fast")
    with pytest.raises(mx.LazyNDError, match="expected an engine name, 'threaded' or 'naive', got NaiveEngine"):
        set_engine(NaiveEngine())  # type: ignore[arg-type]
    assert get_engine() is before  # a rejected switch leaves the engine in place
