"""A child process made by ``fork`` after the engine started (multiprocessing's default start
method on Linux, DataLoader-style pools) gets an engine of its own and the parent's values.

Each case runs in a fresh interpreter that forks; the child reports through a queue with a
timeout, and the interpreter itself runs under a timeout, so a hang fails the test.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="fork is POSIX only")

REPO_ROOT = Path(__file__).resolve().parents[2]

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
    import os

    try:
        return subprocess.run(
            [sys.executable, "-c", FORK_HARNESS + textwrap.dedent(code)],
            capture_output=True,
            text=True,
            timeout=timeout,
            cwd=REPO_ROOT,
            env={**os.environ, "PYTHONPATH": str(REPO_ROOT), **(env or {})},
        )
    except subprocess.TimeoutExpired as err:
        pytest.fail(f"the fresh interpreter hung (killed after {timeout} s); its output: {err.stdout!r} {err.stderr!r}")


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
