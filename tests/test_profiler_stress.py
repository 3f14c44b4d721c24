"""Results stay right while the profiler records: a bounded stress run on the threaded engine.

Two Python threads push dots (on the workers and inline), elementwise ops,
in-place updates and copies of views, with buffers recycled by the host pool,
while the main thread reads and resets the profiler's records; every result is
compared with NumPy.  A session once saw a dot read as zeros in a profiler
test; this is the net for that kind of race.
"""

from __future__ import annotations

import random
import threading
import time

import numpy as np
import pytest

import lazynd as mx
from lazynd import profiler
from lazynd.engine import get_engine, set_engine

SECONDS = 2.0
MIN_ITERATIONS = 20  # per thread, however slow the machine


@pytest.fixture
def threaded_engine():
    old = get_engine().name
    if old != "threaded":
        set_engine("threaded")
    yield get_engine()
    profiler.set_state("stop")
    profiler.reset()
    if old != "threaded":
        set_engine(old)


def _check_iteration(rng: np.random.Generator, pick: random.Random, failures: list[str]) -> None:
    # 64x64 outputs run inline on the pushing thread, 256x256 and 384x384 on the workers
    n = pick.choice([4, 64, 256, 384])
    k = pick.choice([8, 128, 512])
    a_np = rng.standard_normal((n, k)).astype(np.float32)
    b_np = rng.standard_normal((k, n)).astype(np.float32)
    a, b = mx.nd.array(a_np), mx.nd.array(b_np)
    c = mx.nd.dot(a, b)
    ct = mx.nd.dot(b, a, transpose_a=True, transpose_b=True)
    d = c + 1.0
    e = d * c
    f = mx.nd.relu(e - 2.0)
    g = mx.nd.ones((n, n)) * 3
    g += f
    h = g[1:].copyto(mx.cpu())
    c_ref = a_np @ b_np
    e_ref = (c_ref + 1) * c_ref
    g_ref = 3 + np.maximum(e_ref - 2, 0)
    checks = [
        ("dot", c, c_ref),
        ("dot transposed", ct, c_ref.T),
        ("plus", d, c_ref + 1),
        ("mul", e, e_ref),
        ("relu", f, np.maximum(e_ref - 2, 0)),
        ("in-place add", g, g_ref),
        ("copy of a slice", h, g_ref[1:]),
    ]
    pick.shuffle(checks)  # wait in a different order each time
    for name, array, expected in checks:
        got = array.asnumpy()
        scale = float(np.abs(expected).max()) + 1.0
        if not np.allclose(got, expected, rtol=1e-4, atol=1e-5 * scale * k):
            zeros = " (all zeros)" if not got.any() else ""
            failures.append(f"{name} n={n} k={k}{zeros}: got {got.ravel()[:3]}, expected {expected.ravel()[:3]}")


def _pusher(seed: int, deadline: float, failures: list[str], counts: list[int]) -> None:
    rng, pick = np.random.default_rng(seed), random.Random(seed)
    done = 0
    try:
        while done < MIN_ITERATIONS or time.monotonic() < deadline:
            _check_iteration(rng, pick, failures)
            done += 1
    except BaseException as err:  # noqa: BLE001 - reported by the main thread
        failures.append(f"thread {seed} raised {type(err).__name__}: {err}")
    counts.append(done)


@pytest.mark.parametrize("mode", ["all", "symbolic"])
def test_dots_and_elementwise_ops_match_numpy_while_profiling(threaded_engine, tmp_path, mode):
    profiler.set_config(mode=mode, filename=str(tmp_path / "stress.json"))
    profiler.set_state("run")
    failures: list[str] = []
    counts: list[int] = []
    deadline = time.monotonic() + SECONDS / 2
    threads = [threading.Thread(target=_pusher, args=(seed, deadline, failures, counts)) for seed in (1, 2)]
    for t in threads:
        t.start()
    recorded = 0
    while any(t.is_alive() for t in threads):
        recorded += len(profiler._records)
        profiler.dumps()  # read the records while workers append to them
        profiler.reset()
        time.sleep(0.005)
    for t in threads:
        t.join()
    mx.waitall()
    recorded += len(profiler._records)
    assert not failures, failures[:5]
    assert len(counts) == 2 and min(counts) >= MIN_ITERATIONS
    if mode == "all":
        assert recorded > 0
    else:
        assert recorded == 0  # no executor ran


def test_failed_op_under_running_profiler_is_raised_and_not_recorded(threaded_engine, tmp_path):
    profiler.set_config(mode="all", filename=str(tmp_path / "fail.json"))
    profiler.set_state("run")
    engine = get_engine()

    def boom() -> None:
        raise ValueError("broken kernel")

    out = mx.nd.zeros((2,))
    engine.push(boom, (), [], [out.var], name="boom", inline_ok=True)
    with pytest.raises(mx.LazyNDError, match="boom"):
        out.wait_to_read()
    engine.push(boom, (), [], [out.var], name="boom_queued")
    with pytest.raises(mx.LazyNDError, match="boom_queued"):
        out.wait_to_read()
    names = {record[0] for record in profiler._records}
    assert "boom" not in names and "boom_queued" not in names
    ok = mx.nd.ones((3,)) * 2  # the engine and the profiler go on
    np.testing.assert_array_equal(ok.asnumpy(), [2.0, 2.0, 2.0])
    assert any(record[0] != "boom" for record in profiler._records)
