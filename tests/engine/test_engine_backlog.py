"""ThreadedEngine's bounded backlog (lazynd.engine.policy): a pushing thread does not run
unboundedly ahead of the workers, and never waits for an operation that cannot finish yet."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import pytest

from lazynd.engine import ThreadedEngine, Var
from lazynd.engine import policy as policy_module
from lazynd.engine.backlog import Backlog

TIMEOUT = 10.0  # generous: only a broken engine comes near it


@pytest.fixture
def engine() -> Iterator[ThreadedEngine]:
    eng = ThreadedEngine(num_workers=2)
    yield eng
    eng.shutdown()


def _slow(delay: float) -> None:
    time.sleep(delay)


def test_a_loop_that_never_waits_keeps_at_most_the_backlog_pending(engine: ThreadedEngine) -> None:
    # a chain of operations that each take a while, pushed without a wait: the pusher must stop
    # to let the workers catch up instead of queueing the whole chain
    limit = policy_module.MAX_BACKLOG
    var, most = Var(), 0
    for _ in range(limit * 3):
        engine.push(_slow, (0.0002,), [], [var], "slow_step")
        most = max(most, engine.num_pending())
    engine.waitall()
    assert most <= limit + 1, f"{most} operations pending, the backlog is {limit}"


def test_the_plain_policy_has_no_backlog_bound() -> None:
    engine = ThreadedEngine(num_workers=2, policy="plain")
    release = threading.Event()
    try:
        blocker = Var()
        engine.push(release.wait, (TIMEOUT,), [], [blocker], "blocker")
        start = time.monotonic()
        for _ in range(policy_module.MAX_BACKLOG * 2):
            engine.push(lambda: None, (), [blocker], [Var()], "behind_blocker")
        assert engine.num_pending() > policy_module.MAX_BACKLOG
        assert time.monotonic() - start < policy_module.STALLED_BACKLOG_S * 10
    finally:
        release.set()
        engine.shutdown()


def test_a_push_behind_a_stuck_operation_goes_on(engine: ThreadedEngine) -> None:
    # the pending operations wait for an event the pushing thread sets only after its pushes:
    # the bound must give up (after one stall) rather than deadlock, and not stall on every push
    release = threading.Event()
    blocker = Var()
    engine.push(release.wait, (TIMEOUT,), [], [blocker], "blocker")
    pushes = policy_module.MAX_BACKLOG * 4
    start = time.monotonic()
    for _ in range(pushes):
        engine.push(lambda: None, (), [blocker], [Var()], "behind_blocker")
    elapsed = time.monotonic() - start
    release.set()
    engine.waitall()
    assert elapsed < TIMEOUT / 2, f"{pushes} pushes behind a stuck operation took {elapsed:.1f} s"


def test_the_bound_applies_again_once_a_stalled_backlog_drains(engine: ThreadedEngine) -> None:
    release = threading.Event()
    blocker = Var()
    engine.push(release.wait, (TIMEOUT,), [], [blocker], "blocker")
    for _ in range(policy_module.MAX_BACKLOG * 2):  # (the first few merge into one operation)
        engine.push(lambda: None, (), [blocker], [Var()], "behind_blocker")
    assert engine.backlog.stalled
    release.set()
    engine.waitall()
    assert not engine.backlog.stalled


def test_pushes_of_another_thread_that_refill_the_backlog_are_not_a_stall() -> None:
    # two threads push: the workers drain the backlog to its resume mark, which wakes the
    # waiting one, but before it runs the other thread has pushed it full again.  Operations
    # did complete: the bound must hold (a stall lifted it for both threads, and they ran
    # hundreds of operations ahead, each holding its arrays: 800 MB for two 100k chains)
    lock = threading.Lock()
    backlog = Backlog(lock, max_pending=64, resume_at=32, stall_s=TIMEOUT)
    pending = [65]
    waiter = threading.Thread(target=backlog.wait_drained, args=(lambda: pending[0],))
    waiter.start()
    deadline = time.monotonic() + TIMEOUT
    while not backlog._waiters and time.monotonic() < deadline:  # until it waits
        time.sleep(0.001)
    with lock:
        pending[0] = 32
        backlog.completed(32)  # drained: the waiter is woken...
        pending[0] = 65  # ...and the other thread refills it before the waiter has the lock
    time.sleep(0.05)  # the waiter wakes and looks
    assert not backlog.stalled
    assert waiter.is_alive(), "the waiter went on with 65 operations pending"
    with lock:
        pending[0] = 32
        backlog.completed(32)
    waiter.join(TIMEOUT)
    assert not waiter.is_alive() and not backlog.stalled
