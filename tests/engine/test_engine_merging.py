"""ThreadedEngine merges a dependent CPU operation into the one pushed just before it (lazynd.engine.merging)."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import numpy as np
import pytest

import lazynd as mx
from lazynd.engine import ThreadedEngine, merging
from lazynd.engine import policy as policy_module
from lazynd.engine.operation import Operation
from lazynd.engine.var import Var

TIMEOUT = 10.0  # generous: only a broken engine comes near it


@pytest.fixture
def engine(monkeypatch: pytest.MonkeyPatch) -> Iterator[ThreadedEngine]:
    """An engine whose watcher never hands the deferred operation over during a test."""
    monkeypatch.setattr(policy_module, "DEFERRED_TICK_S", 600.0)
    eng = ThreadedEngine(num_workers=2)
    yield eng
    eng.shutdown()


def _gated(gate: threading.Event, log: list[str], name: str):
    def run() -> None:
        assert gate.wait(TIMEOUT)
        log.append(name)

    return run


def test_a_dependent_chain_becomes_one_operation_run_in_push_order(engine: ThreadedEngine) -> None:
    gate, log = threading.Event(), []
    blocker = Var()
    engine.push(_gated(gate, log, "blocker"), (), [], [blocker], "blocker")
    engine.push(lambda: log.append("other"), (), [], [Var()], "other")  # the blocker goes to a worker
    chain = [blocker]
    for k in range(merging.MAX_PARTS):
        chain.append(Var())
        engine.push(log.append, (f"link{k}",), [chain[-2]], [chain[-1]], f"link{k}")
    tail = engine.policy.tail  # link0 (waiting for the blocker), with every later link merged into it
    assert tail is not None and tail.parts is not None and tail.wait == 1
    assert [part[4] for part in tail.parts] == [f"link{k}" for k in range(merging.MAX_PARTS)]
    chain.append(Var())
    engine.push(log.append, ("next",), [chain[-2]], [chain[-1]], "next")  # a full operation: a new one
    assert engine.policy.tail is not tail and engine.policy.tail.parts is None
    gate.set()
    engine.wait_for_var(chain[-1])
    assert log[log.index("blocker") :] == ["blocker"] + [f"link{k}" for k in range(merging.MAX_PARTS)] + ["next"]


def test_independent_operations_and_readers_of_one_var_are_not_merged(engine: ThreadedEngine) -> None:
    gate, log = threading.Event(), []
    shared, busy = Var(), Var()
    engine.push(_gated(gate, log, "writer"), (), [], [busy], "writer")
    engine.push(lambda: None, (), [], [Var()], "other")
    engine.push(lambda: None, (), [busy, shared], [Var()], "read_a")  # waits for the writer
    engine.push(lambda: None, (), [busy, shared], [Var()], "read_b")  # reads the same: independent
    engine.push(lambda: None, (), [Var()], [Var()], "unrelated")
    assert engine.policy.tail is not None and engine.policy.tail.parts is None
    gate.set()
    engine.waitall()


def test_a_failing_part_fails_what_depends_on_it_and_nothing_else(engine: ThreadedEngine) -> None:
    a, b, c, d = Var(), Var(), Var(), Var()
    gate, log = threading.Event(), []
    engine.push(_gated(gate, log, "first"), (), [], [a], "first")
    engine.push(lambda: None, (), [], [Var()], "other")  # "first" goes to a worker

    def explode() -> None:
        raise ValueError("part two failed")

    engine.push(log.append, ("reads a",), [a], [b], "reads_a")
    engine.push(explode, (), [b], [c], "exploding_part")
    engine.push(log.append, ("skipped",), [c], [d], "needs_c")
    engine.push(log.append, ("runs",), [b], [Var()], "needs_only_b")
    assert engine.policy.tail is not None and len(engine.policy.tail.parts) == 4
    gate.set()
    with pytest.raises(mx.EngineError, match="exploding_part") as info:
        engine.wait_for_var(d)
    assert isinstance(info.value.__cause__, ValueError)
    engine.waitall()
    assert log == ["first", "reads a", "runs"]


def test_a_read_claim_becomes_a_write_and_keeps_the_order(engine: ThreadedEngine) -> None:
    data, seen = np.zeros(1), []
    v, start = Var(), Var()
    gate = threading.Event()
    engine.push(lambda: gate.wait(TIMEOUT), (), [], [start], "start")
    engine.push(lambda: None, (), [], [Var()], "other")
    engine.push(lambda: seen.append(float(data[0])), (), [start, v], [Var()], "reads_v")
    engine.push(lambda: data.fill(5), (), [start], [v], "writes_v")  # merged: the read claim upgrades
    assert engine.policy.tail is not None and engine.policy.tail.parts is not None
    assert v in engine.policy.tail.writes and v not in engine.policy.tail.reads
    gate.set()
    engine.wait_for_var(v)
    assert seen == [0.0] and data[0] == 5


def test_the_deferred_operation_takes_only_free_vars(engine: ThreadedEngine) -> None:
    # merged with an operation that needs a busy var, the deferred operation would no longer be
    # ready: a wait for its own output would then wait for that var too
    gate, log = threading.Event(), []
    a, b = Var(), Var()
    engine.push(_gated(gate, log, "holds_b"), (), [], [b], "holds_b")
    engine.push(log.append, ("writes_a",), [], [a], "writes_a")  # holds_b to a worker; this deferred
    engine.push(log.append, ("needs_b",), [a], [b], "needs_b")
    engine.wait_for_var(a)  # runs the deferred operation here, while holds_b still waits
    assert log == ["writes_a"]
    gate.set()
    engine.waitall()
    assert log == ["writes_a", "holds_b", "needs_b"]


def test_each_part_reaches_the_profiler_under_its_own_name(engine: ThreadedEngine) -> None:
    names: list[str] = []
    engine.profiler_hook = lambda name, device, writes, start, end: names.append(name)
    first, second = Var(), Var()
    engine.push(lambda: None, (), [], [first], "part0")
    engine.push(lambda: None, (), [first], [second], "part1")
    engine.wait_for_var(second)
    assert names == ["part0", "part1"]


@pytest.mark.parametrize("seed", range(40))
def test_random_programs_match_running_them_in_order(engine: ThreadedEngine, seed: int) -> None:
    """Operations over a few arrays, some slow: pushed without waiting, then compared with eager NumPy."""
    rng = np.random.default_rng(seed)
    arrays = [np.full(3, float(k)) for k in range(5)]
    expected = [a.copy() for a in arrays]
    variables = [Var() for _ in arrays]

    def step(dst: int, srcs: tuple[int, ...], scale: float, store: list[np.ndarray], slow: bool) -> None:
        if slow:
            threading.Event().wait(0.001)
        total = sum(store[s].sum() for s in srcs)
        store[dst] *= scale
        store[dst] += total

    for _ in range(40):
        dst = int(rng.integers(len(arrays)))
        srcs = tuple(int(s) for s in rng.choice(len(arrays), size=int(rng.integers(0, 3)), replace=False))
        scale = float(rng.choice([0.5, 1.0, -1.0]))
        slow = bool(rng.random() < 0.2)
        step(dst, srcs, scale, expected, False)
        reads = [variables[s] for s in srcs]
        engine.push(step, (dst, srcs, scale, arrays, slow), reads, [variables[dst]], "step")
    engine.waitall()
    for got, want in zip(arrays, expected, strict=True):
        np.testing.assert_array_equal(got, want)


# -- a merged operation gives each var back after the last part that uses it ---------------------
# In each test a later part blocks until the thread waiting for an earlier part's output opens a
# gate after its wait returns: were the vars held to the end of the merged operation, that wait
# would never return (the plain policy's does, so the program is correct).
def _wait_then_open(engine: ThreadedEngine, var: Var, gate: threading.Event) -> None:
    """Wait for ``var`` on a thread of its own, then open ``gate``; fail (rather than hang) if the
    wait never returns."""
    waiter = threading.Thread(target=lambda: (engine.wait_for_var(var), gate.set()), name="gated-waiter", daemon=True)
    waiter.start()
    waiter.join(TIMEOUT)
    stalled = waiter.is_alive()
    gate.set()  # lets a stalled wait end, so that the engine can be shut down
    assert not stalled, "the wait for an earlier part's output waited for a later part, which waited for it"


def _merged_after_a_blocker(engine: ThreadedEngine, parts: list[tuple]) -> threading.Event:
    """Push ``parts`` (fn, args, reads, writes, name), the first one behind a gated blocker so that
    it waits and the others merge into it; return the blocker's gate."""
    blocker_gate, start = threading.Event(), Var()
    engine.push(blocker_gate.wait, (TIMEOUT,), [], [start], "blocker")
    engine.push(lambda: None, (), [], [Var()], "other")  # the blocker goes to a worker
    fn, args, reads, writes, name = parts[0]
    engine.push(fn, args, [start, *reads], writes, name)
    for fn, args, reads, writes, name in parts[1:]:
        engine.push(fn, args, reads, writes, name)
    tail = engine.policy.tail
    assert tail is not None and tail.parts is not None and len(tail.parts) == len(parts)
    return blocker_gate


def test_a_wait_for_an_earlier_parts_output_returns_while_a_later_part_runs(engine: ThreadedEngine) -> None:
    x, y, gate = Var(), Var(), threading.Event()
    blocker_gate = _merged_after_a_blocker(
        engine, [(lambda: None, (), [], [x], "writes_x"), (gate.wait, (), [x], [y], "reads_x_waits_for_gate")]
    )
    blocker_gate.set()  # the merged operation runs on a worker
    _wait_then_open(engine, x, gate)
    engine.wait_for_var(y)


def test_a_wait_that_starts_after_a_later_part_started_returns(engine: ThreadedEngine) -> None:
    # no thread waits when the first part ends, so the running operation gives nothing back then:
    # the thread that starts to wait gives back what the parts that ran no longer need
    x, gate, in_later_part = Var(), threading.Event(), threading.Event()
    blocker_gate = _merged_after_a_blocker(
        engine,
        [
            (lambda: None, (), [], [x], "writes_x"),
            (lambda: (in_later_part.set(), gate.wait(TIMEOUT * 3)), (), [x], [Var()], "reads_x_waits_for_gate"),
        ],
    )
    blocker_gate.set()
    try:
        assert in_later_part.wait(TIMEOUT)
    finally:
        _wait_then_open(engine, x, gate)


def test_a_waiting_thread_that_runs_a_merged_operation_leaves_its_later_parts_to_a_worker(
    engine: ThreadedEngine,
) -> None:
    x, y, gate, ran_on = Var(), Var(), threading.Event(), []
    engine.push(lambda: None, (), [], [x], "writes_x")  # deferred: the waiting thread runs it
    engine.push(lambda: (gate.wait(), ran_on.append(threading.current_thread().name)), (), [x], [y], "waits")
    tail = engine.policy.tail
    assert tail is not None and tail.parts is not None and len(tail.parts) == 2
    _wait_then_open(engine, x, gate)
    engine.wait_for_var(y)
    assert len(ran_on) == 1 and ran_on != ["gated-waiter"]


def test_a_waiting_thread_leaves_a_merged_operations_later_parts_once_its_wait_needs_only_others(
    engine: ThreadedEngine,
) -> None:
    y, z, awaited, gate, blocker_gate = Var(), Var(), Var(), threading.Event(), threading.Event()
    engine.push(blocker_gate.wait, (TIMEOUT,), [], [z], "holds_z")
    engine.push(lambda: None, (), [], [Var()], "other")  # holds_z goes to a worker
    engine.push(lambda: None, (), [], [y], "writes_y")  # deferred: the waiting thread runs it
    engine.push(gate.wait, (TIMEOUT * 3,), [y], [Var()], "waits_for_gate")  # merged into writes_y
    merged = engine.policy.tail
    # waits for writes_y through y, not for the part after it; z (busy) keeps it from merging
    engine.push(lambda: None, (), [y, z], [awaited], "writes_awaited")
    blocker_gate.set()
    try:
        assert merged is not None and merged.parts is not None and len(merged.parts) == 2
        assert engine.policy.tail is not merged
    finally:
        _wait_then_open(engine, awaited, gate)


def test_a_wait_for_write_returns_after_the_last_part_that_uses_the_var(engine: ThreadedEngine) -> None:
    x, y, gate = Var(), Var(), threading.Event()
    blocker_gate = _merged_after_a_blocker(
        engine, [(lambda: None, (), [x], [y], "reads_x"), (gate.wait, (), [y], [Var()], "waits_for_gate")]
    )
    blocker_gate.set()
    waiter = threading.Thread(target=lambda: (engine.wait_for_var(x, for_write=True), gate.set()), daemon=True)
    waiter.start()
    waiter.join(TIMEOUT)
    stalled = waiter.is_alive()
    gate.set()
    assert not stalled, "a wait to write a var that no later part uses waited for the later parts"


def test_a_var_a_later_part_reads_is_given_back_as_a_read_and_writers_still_wait(engine: ThreadedEngine) -> None:
    data, seen = np.zeros(1), []
    x, gate, read_by_other = Var(), threading.Event(), threading.Event()

    def later_part() -> None:  # reads x after another reader of x has run, and before x is rewritten
        assert gate.wait(TIMEOUT * 3)
        seen.append(float(data[0]))

    blocker_gate = _merged_after_a_blocker(
        engine, [(data.fill, (1.0,), [], [x], "writes_x"), (later_part, (), [x], [Var()], "reads_x_later")]
    )
    # each pushed after an independent one, so that none merges into the operation pushed before it
    engine.push(lambda: None, (), [], [Var()], "independent0")
    engine.push(lambda: (seen.append(-float(data[0])), read_by_other.set()), (), [x], [Var()], "another_reader")
    waiter = threading.Thread(target=engine.wait_for_var, args=(x,), daemon=True)
    waiter.start()
    blocker_gate.set()
    try:
        waiter.join(TIMEOUT)
        assert not waiter.is_alive(), "the wait to read x waited for a later part that only reads it"
        assert read_by_other.wait(TIMEOUT), "a reader queued with the wait waited for the later part"
        engine.push(lambda: None, (), [], [Var()], "independent1")
        engine.push(data.fill, (2.0,), [], [x], "rewrites_x")  # must wait for the later part's read
    finally:
        gate.set()
    engine.wait_for_var(x)
    assert seen == [-1.0, 1.0] and data[0] == 2.0


def test_a_failing_parts_error_reaches_a_wait_for_its_output_while_a_later_part_runs(engine: ThreadedEngine) -> None:
    w, x, gate = Var(), Var(), threading.Event()
    errors: list[BaseException] = []

    def explode() -> None:
        raise ValueError("first part failed")

    def wait_then_open() -> None:
        try:
            engine.wait_for_var(x)
        except mx.EngineError as err:
            errors.append(err)
        gate.set()

    # the later part writes what the failing one reads: it runs (it reads nothing that failed)
    blocker_gate = _merged_after_a_blocker(
        engine, [(explode, (), [w], [x], "exploding_part"), (gate.wait, (), [], [w], "rewrites_w")]
    )
    blocker_gate.set()
    waiter = threading.Thread(target=wait_then_open, daemon=True)
    waiter.start()
    waiter.join(TIMEOUT)
    stalled = waiter.is_alive()
    gate.set()
    assert not stalled, "the wait for the failed part's output waited for a later part"
    assert len(errors) == 1 and "exploding_part" in str(errors[0])
    assert isinstance(errors[0].__cause__, ValueError)
    engine.wait_for_var(w)  # the later part ran, and succeeded


def test_release_steps_give_each_var_back_after_the_last_part_that_uses_it() -> None:
    a, b, c, d, e, start = (Var() for _ in range(6))
    start.claim_write()  # the first part waits for it: the others merge into it whatever their vars

    def op(reads: list[Var], writes: list[Var]) -> Operation:
        return Operation(lambda: None, (), reads, writes, reads, "part", None)

    tail = op([start, a], [b])
    Var.request_all(tail)
    # part1 reads b and a and writes c in place; part2 reads c, writes d and e; part3 reads d
    for part in (op([b, a, c], [c]), op([c], [d, e]), op([d], [Var()])):
        part.reads = [v for v in part.reads if v not in part.writes]
        assert merging.merge_into(tail, part)
    last = tail.writes[-1]
    assert merging.release_steps(tail) == {
        0: ([b], [start], []),  # b is final, part1 still reads it
        1: ([c], [b, a], []),  # c is final, part2 reads it; b and a are used no more
        2: ([d], [c], [e]),  # d is read by part3; c and e are used no more
    }
    ready: list[Operation] = []
    start.release_write(ready)
    assert ready == [tail]  # every var granted: it may run
    tail.ran = 2  # the first two parts ran
    merging.give_back_due(tail, ready)
    assert ready == [tail] and tail.given == 2
    assert set(tail.reads) == {c} and set(tail.writes) == {d, e, last}  # what the last two use
    assert all(v.ready_for_write() for v in (start, a, b))
    assert c.ready_for_read() and not c.ready_for_write()
    merging.drop_parts(tail)
    assert merging.release_steps(tail) == {0: ([d], [c], [e])}
