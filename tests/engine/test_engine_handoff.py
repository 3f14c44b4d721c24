"""ThreadedEngine's deferred hand-off: when a ready operation goes to a worker, and that none is ever stuck.

Several tests switch the watcher off (a tick of minutes) so that the rule under test is the only
way the operation can run: they would hang (and fail on their timeouts) if it were broken.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import pytest

import lazynd as mx
from lazynd.engine import ThreadedEngine, Var
from lazynd.engine import policy as policy_module

TIMEOUT = 10.0  # generous: only a broken engine comes near it


def _waitall_on_another_thread(engine: ThreadedEngine, timeout: float = TIMEOUT) -> list[str]:
    """Run ``engine.waitall()`` on a thread of its own; fail (rather than hang) if it never returns."""
    errors: list[str] = []

    def wait() -> None:
        try:
            engine.waitall()
        except mx.EngineError as err:
            errors.append(str(err))

    waiter = threading.Thread(target=wait, name="waitall-thread", daemon=True)
    waiter.start()
    waiter.join(timeout)
    assert not waiter.is_alive(), "waitall never returned"
    return errors


@pytest.fixture
def engine() -> Iterator[ThreadedEngine]:
    eng = ThreadedEngine(num_workers=2)
    yield eng
    _waitall_on_another_thread(eng)


@pytest.fixture
def engine_without_watcher(monkeypatch: pytest.MonkeyPatch) -> Iterator[ThreadedEngine]:
    """An engine whose watcher first looks at the deferred slot after minutes."""
    monkeypatch.setattr(policy_module, "DEFERRED_TICK_S", 600.0)
    eng = ThreadedEngine(num_workers=2)
    yield eng
    _waitall_on_another_thread(eng)


def _record_thread(log: list[str], done: threading.Event | None = None) -> None:
    log.append(threading.current_thread().name)
    if done is not None:
        done.set()


# -- no operation is ever stuck ----------------------------------------------------------------
def test_an_operation_pushed_and_never_waited_for_runs_on_a_worker(engine: ThreadedEngine) -> None:
    ran_on: list[str] = []
    done = threading.Event()
    engine.push(_record_thread, (ran_on, done), [], [Var()], "left_alone")
    assert done.wait(TIMEOUT), "the deferred operation never ran"
    assert ran_on[0].startswith("lazynd-cpu-")


def test_an_operation_pushed_by_a_thread_that_exits_still_runs(engine: ThreadedEngine) -> None:
    ran_on: list[str] = []
    done = threading.Event()
    pusher = threading.Thread(target=engine.push, args=(_record_thread, (ran_on, done), [], [Var()], "orphan"))
    pusher.start()
    pusher.join()
    assert done.wait(TIMEOUT), "the operation of a thread that exited never ran"
    assert ran_on[0].startswith("lazynd-cpu-")


def test_an_operation_left_after_many_prompt_waits_still_reaches_a_worker(
    engine: ThreadedEngine, monkeypatch: pytest.MonkeyPatch
) -> None:
    # every push waited for at once: the watcher finds the slot empty and looks less and less
    # often (up to WATCH_BACKOFF ticks); an operation then left alone must still be handed over
    looks: list[float] = []
    sleep = policy_module.time.sleep

    def counted_sleep(seconds: float) -> None:
        if threading.current_thread().name == "lazynd-deferred-watcher":
            looks.append(seconds)
        sleep(seconds)

    monkeypatch.setattr(policy_module.time, "sleep", counted_sleep)
    longest = policy_module.DEFERRED_TICK_S * policy_module.WATCH_BACKOFF
    deadline = time.monotonic() + TIMEOUT
    while not (looks and max(looks) >= longest) and time.monotonic() < deadline:
        out = Var()
        engine.push(sleep, (0.0001,), [], [out], "prompt")
        engine.wait_for_var(out)
    assert looks and max(looks) == longest, looks[-10:]
    ran_on: list[str] = []
    done = threading.Event()
    engine.push(_record_thread, (ran_on, done), [], [Var()], "left_alone_after_backoff")
    assert done.wait(TIMEOUT), "the deferred operation never ran"
    assert ran_on[0].startswith("lazynd-cpu-")


def test_waitall_on_another_thread_runs_an_operation_deferred_by_a_thread_that_exited(
    engine_without_watcher: ThreadedEngine,
) -> None:
    engine = engine_without_watcher
    ran_on: list[str] = []
    pusher = threading.Thread(target=engine.push, args=(_record_thread, (ran_on,), [], [Var()], "deferred"))
    pusher.start()
    pusher.join()
    _waitall_on_another_thread(engine)
    assert ran_on == ["waitall-thread"]


def test_a_failing_deferred_operation_raises_at_waitall(engine: ThreadedEngine) -> None:
    def fail() -> None:
        raise ValueError("boom")

    pusher = threading.Thread(target=engine.push, args=(fail, (), [], [Var()], "deferred_failure"))
    pusher.start()
    pusher.join()
    errors = _waitall_on_another_thread(engine)
    assert len(errors) == 1 and "deferred_failure" in errors[0]


# -- the pusher's next step decides where the deferred operation runs ----------------------------
def test_a_waiting_thread_runs_the_operation_it_just_pushed(engine_without_watcher: ThreadedEngine) -> None:
    engine = engine_without_watcher
    ran_on: list[str] = []
    out = Var()
    engine.push(_record_thread, (ran_on,), [], [out], "pushed_then_waited")
    engine.wait_for_var(out)
    assert ran_on == [threading.current_thread().name]


def test_a_chain_pushed_then_waited_for_runs_on_the_waiting_thread(engine_without_watcher: ThreadedEngine) -> None:
    engine = engine_without_watcher
    ran_on: list[str] = []
    first, second, third = Var(), Var(), Var()
    engine.push(_record_thread, (ran_on,), [], [first], "first")
    engine.push(_record_thread, (ran_on,), [first], [second], "second")  # waits for first
    engine.push(_record_thread, (ran_on,), [second], [third], "third")  # waits for second
    engine.wait_for_var(third)
    assert ran_on == [threading.current_thread().name] * 3


def test_two_operations_pushed_back_to_back_run_concurrently(engine_without_watcher: ThreadedEngine) -> None:
    engine = engine_without_watcher
    barrier = threading.Barrier(2, timeout=TIMEOUT)  # broken (an error at the wait) if run one by one
    a, b = Var(), Var()
    engine.push(barrier.wait, (), [], [a], "first_half")
    engine.push(barrier.wait, (), [], [b], "second_half")  # hands first_half to a worker
    engine.wait_for_var(a)
    engine.wait_for_var(b)
    assert not barrier.broken


def test_an_inline_push_hands_the_deferred_operation_to_a_worker(engine_without_watcher: ThreadedEngine) -> None:
    engine = engine_without_watcher
    started = threading.Event()
    seen: list[bool] = []
    engine.push(started.set, (), [], [Var()], "deferred")
    # runs on this thread at once; it can only see ``started`` if the push above went to a worker
    engine.push(lambda: seen.append(started.wait(TIMEOUT)), (), [], [Var()], "inline", inline_ok=True)
    assert seen == [True]


def test_a_push_that_waits_on_something_else_hands_the_deferred_operation_to_a_worker(
    engine_without_watcher: ThreadedEngine,
) -> None:
    engine = engine_without_watcher
    gate, held, started = threading.Event(), threading.Event(), threading.Event()
    busy, unrelated = Var(), Var()
    engine.push(lambda: (held.set(), gate.wait(TIMEOUT)), (), [], [busy], "holds_busy")
    engine.push(started.set, (), [], [unrelated], "deferred")  # hands holds_busy to a worker
    assert held.wait(TIMEOUT)
    engine.push(lambda: None, (), [busy], [Var()], "waits_for_busy")  # not ready, unrelated to deferred
    try:
        assert started.wait(TIMEOUT), "the deferred operation stayed deferred"
    finally:
        gate.set()


def test_a_long_chain_pushed_without_waiting_starts_on_a_worker(engine_without_watcher: ThreadedEngine) -> None:
    engine = engine_without_watcher
    started = threading.Event()
    first = Var()
    engine.push(started.set, (), [], [first], "deferred")
    links = [first]
    for k in range(policy_module.DEFERRED_CHAIN_MAX):
        # a short chain keeps the first operation deferred (the pusher is likely to wait on it)
        assert not started.is_set(), f"handed over after {k} chained pushes"
        links.append(Var())
        engine.push(lambda: None, (), [first, links[-2]], [links[-1]], f"link{k}")  # each reads first
    # DEFERRED_CHAIN_MAX operations waiting on it: a training loop queueing passes; it starts now
    assert started.wait(TIMEOUT), "the start of a long chain stayed deferred"
    engine.wait_for_var(links[-1])


# -- a waiting thread helps only with what it waits for ------------------------------------------
# Each test leaves a "gate" operation ready beside the one a thread waits for: the gate blocks
# until that thread, its wait over, opens it.  A waiting thread that ran the gate would never
# return (the plain policy's waiting thread only sleeps, so the program is correct).
def _wait_then_open(engine: ThreadedEngine, var: Var, gate: threading.Event) -> None:
    """Wait for ``var`` on a thread of its own, then open ``gate``; fail (rather than hang) if the
    wait never returns."""
    waiter = threading.Thread(target=lambda: (engine.wait_for_var(var), gate.set()), name="gated-waiter", daemon=True)
    waiter.start()
    waiter.join(TIMEOUT)
    stalled = waiter.is_alive()
    gate.set()  # lets a stalled wait end, so that the engine can be shut down
    assert not stalled, "the waiting thread ran an operation it does not wait for, which blocked it"


def test_a_waiting_thread_leaves_an_unrelated_deferred_operation_to_the_workers(
    engine_without_watcher: ThreadedEngine,
) -> None:
    engine = engine_without_watcher
    gate, awaited_may_end = threading.Event(), threading.Event()
    awaited = Var()
    engine.push(awaited_may_end.wait, (TIMEOUT,), [], [awaited], "awaited")
    engine.push(gate.wait, (), [], [Var()], "gate")  # hands awaited to a worker and is deferred
    # awaited still runs when the wait starts, whatever the machine's load (correct either way)
    threading.Timer(0.1, awaited_may_end.set).start()
    _wait_then_open(engine, awaited, gate)


def test_a_waiting_thread_leaves_an_unrelated_queued_operation_to_the_workers(
    engine_without_watcher: ThreadedEngine,
) -> None:
    engine = engine_without_watcher
    gate, workers_may_end = threading.Event(), threading.Event()
    awaited = Var()
    engine.push(workers_may_end.wait, (TIMEOUT,), [], [awaited], "awaited")
    engine.push(workers_may_end.wait, (TIMEOUT,), [], [Var()], "keeps_the_other_worker_busy")
    engine.push(gate.wait, (), [], [Var()], "gate")
    engine.push(lambda: None, (), [], [Var()], "deferred")  # the gate waits in the worker queue
    threading.Timer(0.1, workers_may_end.set).start()
    _wait_then_open(engine, awaited, gate)


def test_a_waiting_thread_leaves_an_unrelated_operation_its_chain_makes_ready_to_the_workers(
    engine_without_watcher: ThreadedEngine,
) -> None:
    engine = engine_without_watcher
    gate, busy_may_end = threading.Event(), threading.Event()
    busy, first, awaited = Var(), Var(), Var()
    engine.push(busy_may_end.wait, (TIMEOUT,), [], [busy], "holds_busy")
    engine.push(lambda: None, (), [], [Var()], "unrelated")  # hands holds_busy to a worker
    engine.push(lambda: None, (), [], [first], "first")  # deferred
    # reads first and busy: busy keeps it from merging into first; queued on first before awaited
    engine.push(gate.wait, (), [first, busy], [Var()], "gate")
    engine.push(lambda: None, (), [first], [awaited], "awaited")
    busy_may_end.set()
    deadline = time.monotonic() + TIMEOUT
    while not busy.ready_for_read() and time.monotonic() < deadline:  # holds_busy is done
        time.sleep(0.001)
    # the waiting thread runs first; its completion makes the gate ready, then awaited
    _wait_then_open(engine, awaited, gate)


def test_a_waiting_thread_finds_what_it_waits_for_behind_unrelated_queued_operations(
    engine_without_watcher: ThreadedEngine,
) -> None:
    engine = engine_without_watcher
    gate, workers_may_end = threading.Event(), threading.Event()
    started = [threading.Event(), threading.Event()]
    ran_on: list[str] = []
    awaited = Var()
    try:
        for k, event in enumerate(started):  # each pushes the one before it to the queue
            engine.push(lambda e=event: (e.set(), workers_may_end.wait(TIMEOUT)), (), [], [Var()], f"busy{k}")
        for k in range(3):
            engine.push(gate.wait, (), [], [Var()], f"gate{k}")
        engine.push(_record_thread, (ran_on,), [], [awaited], "awaited")
        engine.push(lambda: None, (), [], [Var()], "deferred")  # queued: the busy ones (taken), gates, awaited
        assert all(event.wait(TIMEOUT) for event in started)  # both workers are held
        _wait_then_open(engine, awaited, gate)
    finally:
        workers_may_end.set()
    assert ran_on == ["gated-waiter"]


# -- several pushing threads ---------------------------------------------------------------------
def test_operations_pushed_from_several_threads_all_run_in_each_threads_order(
    engine_without_watcher: ThreadedEngine,
) -> None:
    engine = engine_without_watcher
    threads, per_thread = 4, 200
    logs: list[list[int]] = [[] for _ in range(threads)]
    shared = Var()
    shared_count: list[int] = []

    def pusher(k: int) -> None:
        own = Var()
        for i in range(per_thread):
            engine.push(logs[k].append, (i,), [], [own], f"t{k}_{i}")
            engine.push(shared_count.append, (1,), [], [shared], f"shared{k}_{i}")

    workers = [threading.Thread(target=pusher, args=(k,)) for k in range(threads)]
    for t in workers:
        t.start()
    for t in workers:
        t.join()
    _waitall_on_another_thread(engine, TIMEOUT * 3)
    assert logs == [list(range(per_thread))] * threads
    assert len(shared_count) == threads * per_thread
    assert engine.num_pending() == 0


def test_waitall_returns_when_an_inline_operation_ends_the_last_wait(engine: ThreadedEngine) -> None:
    # the only pending item is another thread's wait on a var held by an inline operation: when
    # that operation ends, the wait ends and waitall, sleeping on the engine's idle condition,
    # must be woken
    var, gate, started = Var(), threading.Event(), threading.Event()
    inline = threading.Thread(
        target=engine.push,
        args=(lambda: (started.set(), gate.wait(TIMEOUT)), (), [], [var], "inline_holder"),
        kwargs={"inline_ok": True},
    )
    inline.start()
    assert started.wait(TIMEOUT)
    reader = threading.Thread(target=engine.wait_for_var, args=(var,))
    reader.start()
    for _ in range(1000):  # the reader's wait is queued: it is the one pending item
        if engine.num_pending() == 1:
            break
        threading.Event().wait(0.005)
    assert engine.num_pending() == 1
    waiter = threading.Thread(target=engine.waitall, daemon=True)
    waiter.start()
    threading.Event().wait(0.05)  # let waitall reach its sleep (it is correct either way)
    gate.set()
    for t in (inline, reader, waiter):
        t.join(TIMEOUT)
    assert not waiter.is_alive(), "waitall was never woken"
