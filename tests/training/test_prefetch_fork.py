"""A PrefetchingIter made before a fork (multiprocessing's default start method on Linux) works in
the child, or says why it cannot: its background thread stayed in the parent.

Each case runs in a fresh interpreter under a timeout, so a hang fails the test.
"""

from __future__ import annotations

import sys

import pytest
from fresh_interpreter import run_fresh

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="fork is POSIX only")


CHILD_ITERATES = """
import multiprocessing, queue, threading
import numpy as np
import lazynd as mx

gate = threading.Event()

class Gated(mx.io.NDArrayIter):
    def next(self):
        if GATED:
            gate.wait(10)
        return super().next()

it = mx.io.PrefetchingIter(Gated(np.arange(40, dtype=np.float32).reshape(20, 2), batch_size=4))

def child(results):
    try:
        results.put(sum(float(b.data[0].asnumpy().sum()) for b in it))
    except mx.LazyNDError as err:
        results.put(f"{type(err).__name__}: {err}")

context = multiprocessing.get_context("fork")
results = context.Queue()
process = context.Process(target=child, args=(results,))
process.start()
try:
    print("child:", results.get(timeout=15))
except queue.Empty:
    print("child: hung")
gate.set()
process.join(10)
if process.exitcode is None:
    process.kill()
"""


def test_a_prefetching_iter_made_before_a_fork_iterates_in_the_child() -> None:
    # the child waited for ever for a batch from a thread that was not there
    result = run_fresh(
        "GATED = False\n" + CHILD_ITERATES.replace("\ncontext =", "\nimport time\ntime.sleep(0.2)\ncontext =", 1)
    )
    assert result.returncode == 0, result.stderr
    assert f"child: {float(sum(range(40)))}" in result.stdout, result.stdout + result.stderr


def test_a_fork_while_the_thread_loads_a_batch_gives_the_child_a_clear_error() -> None:
    result = run_fresh("GATED = True\n" + CHILD_ITERATES)
    assert result.returncode == 0, result.stderr
    assert "child: DataError: PrefetchingIter: this process was forked while" in result.stdout, result.stdout
