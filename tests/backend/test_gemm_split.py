"""Large host products split across lazynd's threads: the parts, the route, the thread settings."""

from __future__ import annotations

import json
import multiprocessing
import os
import subprocess
import sys
import threading

import numpy as np
import pytest

import lazynd as mx
from lazynd.backend import blas, gemm_split
from lazynd.backend.gemm_split import MIN_SPLIT_MACS, split_product
from lazynd.errors import LazyNDError

rng = np.random.default_rng(11)


def _operands(m: int, k: int, n: int, dtype=np.float32, a_transposed=False, b_transposed=False):
    a = rng.standard_normal((k, m) if a_transposed else (m, k)).astype(dtype)
    b = rng.standard_normal((n, k) if b_transposed else (k, n)).astype(dtype)
    return (a.T if a_transposed else a), (b.T if b_transposed else b)


def _recording(calls: list):
    def product(a, b, out):
        calls.append((threading.current_thread().name, a.shape, b.shape))
        np.matmul(a, b, out=out)

    return product


@pytest.mark.parametrize(
    "m, k, n, a_t, b_t",
    [
        (128, 784, 128, False, True),  # an MLP's first layer: rows
        (128, 128, 784, True, False),  # its weight gradient: columns
        (131, 500, 67, False, False),  # rows not a multiple of the alignment
        (40, 300, 1000, True, True),  # both operands transposed views, columns
    ],
)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_split_products_equal_numpy(m, k, n, a_t, b_t, dtype):
    a, b = _operands(m, k, n, dtype, a_t, b_t)
    assert m * k * n >= MIN_SPLIT_MACS
    calls: list = []
    out = np.full((m, n), np.nan, dtype)
    assert split_product(a, b, out, _recording(calls), threads=2)
    assert len(calls) == 2
    np.testing.assert_allclose(out, np.matmul(a, b), rtol=1e-5 if dtype == np.float32 else 1e-12, atol=1e-4)
    again = np.empty_like(out)
    split_product(a, b, again, _recording([]), threads=2)
    assert np.array_equal(out, again)  # the same parts each time, whichever thread computes them


def test_parts_cover_rows_or_columns_at_aligned_cuts():
    calls: list = []
    a, b = _operands(200, 400, 60)
    split_product(a, b, np.empty((200, 60), np.float32), _recording(calls), threads=3)
    assert sorted(shape[0] for _, shape, _ in calls) == [56, 72, 72]  # rows in multiples of 8
    calls.clear()
    a, b = _operands(30, 400, 250)
    split_product(a, b, np.empty((30, 250), np.float32), _recording(calls), threads=2)
    assert sorted(shape[1] for _, _, shape in calls) == [122, 128]  # columns in multiples of 16


def test_a_batch_splits_by_whole_matrices():
    a = rng.standard_normal((5, 128, 64)).astype(np.float32)
    b = rng.standard_normal((5, 64, 96)).astype(np.float32)
    calls: list = []
    out = np.empty((5, 128, 96), np.float32)
    assert split_product(a, b, out, _recording(calls), threads=2)
    assert sorted(shape[0] for _, shape, _ in calls) == [2, 3]
    np.testing.assert_allclose(out, a @ b, rtol=1e-5, atol=1e-4)


def test_declines_what_it_does_not_split():
    never = _recording(calls := [])
    small_a, small_b = _operands(64, 64, 64)
    assert not split_product(small_a, small_b, np.empty((64, 64), np.float32), never, threads=2)
    a, b = _operands(256, 256, 256)
    assert not split_product(a, b, np.empty((256, 256), np.float32), never, threads=1)
    assert not split_product(a, b[:200], np.empty((256, 256), np.float32), never, threads=2)  # np.matmul's error
    assert not split_product(a, b, a, never, threads=2)  # the output is an operand
    broadcast = rng.standard_normal((256, 256)).astype(np.float32)
    batch = rng.standard_normal((4, 256, 256)).astype(np.float32)
    assert not split_product(batch, broadcast, np.empty((4, 256, 256), np.float32), never, threads=2)
    assert calls == []


def test_an_error_in_a_part_reaches_the_caller_after_every_part():
    finished = []

    def failing(a, b, out):
        if a.shape[0] and out.base is not None and out[0:1].ctypes.data != out.base.ctypes.data:
            raise ValueError("the second part failed")
        np.matmul(a, b, out=out)
        finished.append(True)

    a, b = _operands(256, 256, 64)
    with pytest.raises(ValueError, match="second part failed"):
        split_product(a, b, np.empty((256, 64), np.float32), failing, threads=2)
    assert finished == [True]


def test_callers_on_several_threads_share_the_helpers():
    results = {}

    def caller(i: int) -> None:
        a, b = _operands(256, 300, 128)
        out = np.empty((256, 128), np.float32)
        for _ in range(20):
            split_product(a, b, out, lambda x, y, z: np.matmul(x, y, out=z), threads=2)
        results[i] = np.allclose(out, a @ b, rtol=1e-5, atol=1e-4)

    threads = [threading.Thread(target=caller, args=(i,)) for i in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert results == {0: True, 1: True, 2: True}


def _product_in_child(queue) -> None:
    a, b = _operands(256, 256, 256)
    out = np.empty((256, 256), np.float32)
    names: list = []
    split_product(a, b, out, _recording(names), threads=2)
    queue.put((bool(np.allclose(out, a @ b, rtol=1e-5, atol=1e-4)), len(names)))


@pytest.mark.skipif(sys.platform == "win32", reason="fork is POSIX's")
def test_a_forked_child_starts_helpers_of_its_own():
    split_product(*_operands(256, 256, 256), np.empty((256, 256), np.float32), _recording([]), threads=2)
    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    child = context.Process(target=_product_in_child, args=(queue,))
    child.start()
    assert queue.get(timeout=60) == (True, 2)
    child.join(60)


def test_the_cpu_route_splits_operator_products(monkeypatch):
    import lazynd.backend.cpu as cpu_module

    monkeypatch.setattr(cpu_module, "SPLIT_THREADS", 2)
    parts = []
    original = cpu_module._one_product

    def spy(a, b, out):
        parts.append(a.shape)
        original(a, b, out)

    monkeypatch.setattr(cpu_module, "_one_product", spy)
    x, w = _operands(256, 784, 128, b_transposed=True)
    got = mx.nd.dot(mx.nd.array(x), mx.nd.array(np.ascontiguousarray(w.T)), transpose_b=True).asnumpy()
    np.testing.assert_allclose(got, x @ w, rtol=1e-4, atol=1e-3)
    assert parts == [(128, 784), (128, 784)]


def test_gemm_threads_setting():
    assert blas.gemm_threads({}) == (os.cpu_count() or 1)
    assert blas.gemm_threads({"OMP_NUM_THREADS": "1"}) == 0  # the user chose the BLAS's threads
    assert blas.gemm_threads({"LAZYND_GEMM_THREADS": "1", "OPENBLAS_NUM_THREADS": "4"}) == 1
    with pytest.raises(LazyNDError, match="LAZYND_GEMM_THREADS must be a count of threads.*'two'"):
        blas.gemm_threads({"LAZYND_GEMM_THREADS": "two"})


_PROBE = """
import json, lazynd
from threadpoolctl import threadpool_info
from lazynd.backend import blas
print(json.dumps([blas.SPLIT_THREADS, blas.BLAS_THREADS, blas.GEMM_THREADS,
                  [i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"]]))
"""


def _probe(**env: str) -> list:
    environ = {k: v for k, v in os.environ.items() if k not in (*blas.THREAD_VARIABLES, "LAZYND_GEMM_THREADS")}
    result = subprocess.run(
        [sys.executable, "-c", _PROBE], env={**environ, **env}, capture_output=True, text=True, timeout=120, check=True
    )
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_import_takes_the_host_blas_to_one_thread_by_default():
    split, library, gemm, found = _probe(LAZYND_GEMM_THREADS="2")
    assert (split, library, gemm) == (2, 1, 2)
    assert found and set(found) == {1}


def test_a_users_blas_setting_is_left_alone():
    split, library, gemm, found = _probe(OPENBLAS_NUM_THREADS="2")
    assert (split, library, gemm) == (0, 2, 2)
    assert found and set(found) == {2}
    assert _probe(OPENBLAS_NUM_THREADS="2", LAZYND_GEMM_THREADS="0")[:3] == [0, 2, 2]


def test_split_helpers_are_named():
    split_product(*_operands(256, 256, 256), np.empty((256, 256), np.float32), _recording(names := []), threads=2)
    assert {name for name, _, _ in names} <= {threading.current_thread().name, "lazynd-gemm-1"}
    assert any(t.name == "lazynd-gemm-1" for t in threading.enumerate())
    assert gemm_split._helpers.started >= 1
