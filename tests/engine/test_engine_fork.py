"""A child process made by ``fork`` after the engine started (multiprocessing's default start
method on Linux, DataLoader-style pools) gets an engine of its own and the parent's values.

Each case runs in a fresh interpreter that forks; the child reports through a queue with a
timeout, and the interpreter itself runs under a timeout, so a hang fails the test.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest
from fresh_interpreter import run_fresh

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="fork is POSIX only")


# the fresh interpreter's part: fork one child that runs ``child(queue)``, print what it put
FORK_HARNESS = """
import multiprocessing, queue as queue_module

def run_child(child):
    context = multiprocessing.get_context("fork")
    results = context.Queue()
    process = context.Process(target=child, args=(results,))
    process.start()
    try:
        got = results.get(timeout=15)
    except queue_module.Empty:
        got = "the child hung"
    process.join(10)
    if process.exitcode is None:
        process.kill()
        got = f"{got}; the child did not exit"
    print("child:", got)
"""


def _run_fresh(code: str, env: dict[str, str] | None = None, timeout: float = 90) -> subprocess.CompletedProcess:
    """Run the harness and ``code`` in a fresh interpreter; a hang fails the test."""
    return run_fresh(FORK_HARNESS + textwrap.dedent(code), env, timeout)


# the child computes a chain, waits for it and waits for everything
COMPUTE_IN_CHILD = """
import lazynd as mx

a = mx.nd.ones((64, 64))
mx.nd.dot(a, a).wait_to_read()  # the engine has started, and its threads

def child(results):
    b = mx.nd.dot(mx.nd.ones((8, 8)), mx.nd.ones((8, 8)))
    for _ in range(10):
        b = b * 0.5
    value = float(b.asnumpy()[0, 0])
    mx.nd.waitall()
    results.put(f"{value} {type(mx.engine.get_engine()).__name__} {getattr(mx.engine.get_engine(), 'policy', None).__class__.__name__}")

run_child(child)
"""


@pytest.mark.parametrize("policy", ["deferring", "plain"])
def test_a_forked_child_computes_and_waits_on_an_engine_of_the_parents_kind(policy: str) -> None:
    result = _run_fresh(COMPUTE_IN_CHILD, {"LAZYND_ENGINE_POLICY": policy})
    assert result.returncode == 0, result.stderr
    expected_policy = {"deferring": "DeferringPolicy", "plain": "PlainPolicy"}[policy]
    assert f"child: {8 * 0.5**10} ThreadedEngine {expected_policy}" in result.stdout, result.stdout + result.stderr


def test_a_forked_child_of_the_naive_engine_keeps_it() -> None:
    result = _run_fresh(COMPUTE_IN_CHILD, {"LAZYND_ENGINE": "naive"})
    assert result.returncode == 0, result.stderr
    assert f"child: {8 * 0.5**10} NaiveEngine" in result.stdout, result.stdout + result.stderr


def test_work_pending_in_the_parent_at_the_fork_is_finished_and_its_values_reach_the_child() -> None:
    result = _run_fresh(
        """
        import time
        import lazynd as mx
        from lazynd.engine import get_engine

        x = mx.nd.zeros((4,))
        get_engine().push(time.sleep, (0.3,), [], [x.handle], "slow")  # still running at the fork
        y = x + 1
        for _ in range(50):
            y = y * 2

        def child(results):
            mx.nd.waitall()
            results.put(f"{float(y.asnumpy()[0])} {float(x.asnumpy()[0])}")

        run_child(child)
        print("parent:", float(y.asnumpy()[0]))
        """
    )
    assert result.returncode == 0, result.stderr
    assert f"child: {2.0**50} 0.0" in result.stdout, result.stdout + result.stderr
    assert f"parent: {2.0**50}" in result.stdout


def test_an_error_recorded_before_the_fork_is_raised_by_a_read_in_the_child_and_reported_by_the_parent() -> None:
    result = _run_fresh(
        """
        import lazynd as mx
        from lazynd.engine import get_engine

        def explode():
            raise ValueError("boom before the fork")

        x = mx.nd.zeros((4,))
        get_engine().push(explode, (), [], [x.handle], "failed_in_parent")

        def child(results):
            try:
                x.asnumpy()
                results.put("no error")
            except mx.EngineError as err:
                mx.nd.waitall()  # the parent's unreported errors are the parent's to report
                results.put(f"raised: {err}")

        run_child(child)
        try:
            mx.nd.waitall()
        except mx.EngineError as err:
            print("parent raised:", err)
        """
    )
    assert result.returncode == 0, result.stderr
    assert "child: raised: operator 'failed_in_parent' failed: ValueError: boom before the fork" in result.stdout
    assert "parent raised: operator 'failed_in_parent' failed" in result.stdout


def test_a_fork_waits_for_the_work_pending_at_the_call_not_for_a_thread_that_pushes_on() -> None:
    # the fork waited until no operation was pending: a thread that kept pushing held it until it stopped
    result = _run_fresh(
        """
        import threading, time
        import lazynd as mx
        from lazynd.engine import get_engine

        stop = threading.Event()
        chain = mx.nd.zeros((1,))

        def pushes_on():  # a chain of 5 ms operations, pushed faster than it runs, for up to 20 s
            deadline = time.monotonic() + 20
            while not stop.is_set() and time.monotonic() < deadline:
                get_engine().push(time.sleep, (0.005,), [], [chain.handle], "step")
                time.sleep(0.001)

        pusher = threading.Thread(target=pushes_on, daemon=True)
        pusher.start()
        time.sleep(0.2)

        def child(results):  # the child's first act: when it began, on the clock parent and child share
            began = time.monotonic()
            results.put(f"{float(mx.nd.ones((2,)).asnumpy().sum())} began {began}")

        print("forking at", time.monotonic())
        run_child(child)
        stop.set()
        pusher.join(10)
        """,
        {"LAZYND_ENGINE_POLICY": "plain"},
    )
    assert result.returncode == 0, result.stderr
    assert "child: 2.0" in result.stdout, result.stdout + result.stderr
    # from the call to the child's first act: the fork's wait for the work pending at the call (the
    # child's own work, its exit and the parent's reading of its result are not timed: on a loaded
    # machine they took seconds); waiting for the pusher to stop would take 20 s
    forked_at = float(result.stdout.split("forking at ")[1].split()[0])
    began = float(result.stdout.split(" began ")[1].split()[0])
    assert began - forked_at < 10, result.stdout


def test_a_fork_does_not_wait_for_ever_for_an_operation_blocked_for_ever() -> None:
    result = _run_fresh(
        """
        import threading
        import lazynd as mx
        from lazynd import engine

        engine.STALLED_WORK_S = 0.5
        never = threading.Event()
        engine.get_engine().push(never.wait, (), [], [mx.nd.zeros((1,)).handle], "blocked_for_ever")

        def child(results):
            results.put(float((mx.nd.ones((3,)) * 2).asnumpy().sum()))

        run_child(child)
        never.set()
        """
    )
    assert result.returncode == 0, result.stderr
    assert "child: 6.0" in result.stdout, result.stdout + result.stderr
