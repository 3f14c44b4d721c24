"""The BLAS's threads follow the machine: one thread for a while after a product stalls."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from lazynd.backend import blas, host_threads
from lazynd.backend.host_threads import BlasThreads
from lazynd.errors import LazyNDError

BIG = np.ones((128, 784), np.float32), np.ones((784, 128), np.float32), np.empty((128, 128), np.float32)


class _Clock:
    """The governor's clocks, advanced by the tests alone: the wall clock (``perf_counter``) and
    the calling thread's CPU time (``thread_time``).  A loaded test machine cannot make a product
    look stalled, or a backoff end early, as it could with the real clocks."""

    def __init__(self) -> None:
        self.wall = 1000.0
        self.cpu = 10.0

    def perf_counter(self) -> float:
        return self.wall

    def thread_time(self) -> float:
        return self.cpu

    def spin(self, seconds: float) -> None:
        """The caller on a core for ``seconds``: spinning, as a thread waiting for the BLAS's threads."""
        self.wall += seconds
        self.cpu += seconds

    def sleep(self, seconds: float) -> None:
        """``seconds`` pass while the caller is off its core (a GIL wait, or descheduled)."""
        self.wall += seconds


class _Products:
    """A stand-in product: it takes ``took`` of the clock's time (1 ms by default, the best time of
    the shape), spinning or sleeping for ``spin``/``sleep`` more when told to."""

    def __init__(self, clock: _Clock) -> None:
        self.clock = clock
        self.spin = 0.0
        self.sleep = 0.0
        self.took = 0.001
        self.calls = 0

    def __call__(self, a, b, out) -> None:
        self.calls += 1
        out[...] = self.calls
        self.clock.spin(self.took + self.spin)
        self.clock.sleep(self.sleep)


@pytest.fixture
def clock(monkeypatch):
    fake = _Clock()
    monkeypatch.setattr(host_threads, "perf_counter", fake.perf_counter)
    monkeypatch.setattr(host_threads, "thread_time", fake.thread_time)
    return fake


@pytest.fixture
def governor(monkeypatch, clock):
    monkeypatch.setattr(host_threads, "FIRST_BACKOFF_S", 0.2)
    monkeypatch.setattr(host_threads, "MAX_BACKOFF_S", 0.8)
    monkeypatch.setattr(host_threads, "STALL_MIN_S", 0.01)
    monkeypatch.setattr(host_threads, "LOST_LIMIT_S", 0.04)  # one stall of the tests' 50 ms is enough
    settings: list[int] = []
    return BlasThreads(4, settings.append), settings


def test_a_stalled_product_sets_one_thread_until_the_backoff_ends(governor, clock):
    gov, settings = governor
    product = _Products(clock)
    for _ in range(3):
        gov.run(*BIG, product)  # the best time of the shape
    assert settings == [] and not gov.single
    product.spin = 0.05
    gov.run(*BIG, product)  # too long: suspect, its next run watched by the CPU clock too
    assert settings == [] and gov.stalls == 0
    gov.run(*BIG, product)  # too long again, spinning: a stall
    assert settings == [1] and gov.single and gov.stalls == 1
    product.spin = 0.0
    gov.run(*BIG, product)  # within the backoff: on one thread, untimed
    assert settings == [1]
    clock.sleep(0.25)
    gov.run(*BIG, product)  # the backoff is over: the BLAS's threads again
    assert settings == [1, 4] and not gov.single
    assert product.calls == 7 and (BIG[2] == 7).all()  # every product ran, on one thread or several


def test_a_slow_product_followed_by_a_fast_one_is_no_stall(governor, clock, monkeypatch):
    # the calling thread's CPU clock (a system call) is read only for the run after a slow one
    gov, settings = governor
    product = _Products(clock)
    reads = []
    monkeypatch.setattr(host_threads, "thread_time", lambda: reads.append(1) or clock.thread_time())
    for _ in range(3):
        gov.run(*BIG, product)
    assert reads == []  # a quiet machine: two wall-clock reads a product, no CPU clock
    product.spin = 0.05
    gov.run(*BIG, product)
    product.spin = 0.0
    gov.run(*BIG, product)  # watched, and fast again: no stall, and no longer watched
    gov.run(*BIG, product)
    assert len(reads) == 1 and settings == [] and gov.stalls == 0


def test_a_stall_soon_after_the_threads_come_back_doubles_the_backoff(governor, clock):
    gov, settings = governor
    product = _Products(clock)
    gov.run(*BIG, product)
    product.spin = 0.05
    gov.run(*BIG, product)
    gov.run(*BIG, product)
    assert gov._backoff == pytest.approx(0.2)
    clock.sleep(0.25)
    gov.run(*BIG, product)  # back to the threads, and stalled again at once (still watched)
    assert settings == [1, 4, 1] and gov._backoff == pytest.approx(0.4)


def test_stalls_switch_only_when_they_add_up(governor, clock):
    gov, settings = governor
    product = _Products(clock)
    gov.run(*BIG, product)
    product.spin = 0.025
    gov.run(*BIG, product)  # suspect
    gov.run(*BIG, product)  # 25 ms lost: a hiccup
    assert settings == [] and gov.stalls == 1
    gov.run(*BIG, product)  # 50 ms lost within a moment: one thread
    assert settings == [1] and gov.stalls == 2 and gov.switches == 1


def test_a_hiccup_fades_out(governor, clock, monkeypatch):
    monkeypatch.setattr(host_threads, "LOST_FADE_S", 0.05)
    gov, settings = governor
    product = _Products(clock)
    gov.run(*BIG, product)
    product.spin = 0.025
    gov.run(*BIG, product)  # suspect
    gov.run(*BIG, product)
    clock.sleep(0.3)  # six fade times: the first 25 ms count for nothing by now
    gov.run(*BIG, product)
    assert settings == [] and gov.stalls == 2


def test_waiting_without_spinning_is_no_stall(governor, clock):
    gov, settings = governor
    product = _Products(clock)
    gov.run(*BIG, product)
    product.sleep = 0.05  # the caller slept (the GIL, or descheduled): not the BLAS's threads
    for _ in range(3):
        gov.run(*BIG, product)
    assert settings == [] and gov.stalls == 0


def test_a_machine_loaded_from_the_start_is_seen_without_a_best_time(governor, clock):
    gov, settings = governor
    product = _Products(clock)
    product.spin = 0.05  # 12.8 M multiply-adds: 3.2 ms at the slowest rate a BLAS runs
    gov.run(*BIG, product)
    gov.run(*BIG, product)
    assert settings == [1]


def test_small_and_non_blas_products_are_not_timed(governor, clock):
    gov, settings = governor
    product = _Products(clock)
    product.spin = 0.05
    small = np.ones((32, 32), np.float32), np.ones((32, 32), np.float32), np.empty((32, 32), np.float32)
    ints = np.ones((128, 784), np.int64), np.ones((784, 128), np.int64), np.empty((128, 128), np.int64)
    gov.run(*small, product)
    gov.run(*ints, product)
    assert product.calls == 2 and settings == [] and gov._best == {}


def test_thread_governor_settings():
    assert blas.thread_governor({"OPENBLAS_NUM_THREADS": "2"}) is None  # the user's choice stands
    assert blas.thread_governor({"LAZYND_HOST_THREADS": "fixed"}) is None
    with pytest.raises(LazyNDError, match="LAZYND_HOST_THREADS must be adaptive or fixed, got 'sometimes'"):
        blas.thread_governor({"LAZYND_HOST_THREADS": "sometimes"})


_PROBE = """
import json
import numpy as np
from threadpoolctl import threadpool_info
from lazynd.backend import blas, cpu_backend
gov = blas.GOVERNOR
found = [i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"]
if gov is not None:
    gov._set_threads(1)
    one = [i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"]
    gov._set_threads(gov.threads)
else:
    one = None
a = np.ones((256, 256), np.float32)
out = np.empty_like(a)
cpu_backend.matmul(a, a, out)
print(json.dumps([gov is not None, found, one, float(out[0, 0])]))
"""


def _probe(**env: str) -> list:
    environ = {k: v for k, v in os.environ.items() if k not in (*blas.THREAD_VARIABLES, "LAZYND_HOST_THREADS")}
    result = subprocess.run(
        [sys.executable, "-c", _PROBE], env={**environ, **env}, capture_output=True, text=True, timeout=120, check=True
    )
    return json.loads(result.stdout.strip().splitlines()[-1])


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="the BLAS has one thread on a one-core machine: no governor")
def test_the_governor_sets_the_blas_libraries_threads():
    active, found, one, value = _probe()
    assert active and found and min(found) >= 2 and set(one) == {1} and value == 256.0


def test_a_users_thread_setting_leaves_the_blas_alone():
    assert _probe(OPENBLAS_NUM_THREADS="2")[:3] == [False, [2], None]
    assert _probe(LAZYND_HOST_THREADS="fixed")[0] is False
