"""dist_sync across processes: several workers started by mpiexec on this machine (127.0.0.1).

Each test runs ``kv_dist_worker.py`` under ``mpiexec -launcher fork -n N``; a worker
prints ``OK <rank>`` when its checks pass.  A subprocess timeout turns any hang
into a failure.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

import lazynd_kv
from lazynd.errors import LazyNDError
from lazynd_kv import watchdog

ROOT = Path(__file__).resolve().parents[2]
WORKER = Path(__file__).with_name("kv_dist_worker.py")
MPIEXEC = shutil.which("mpiexec")
HAS_MPI4PY = importlib.util.find_spec("mpi4py") is not None
HANG_LIMIT_S = 90

requires_mpi = pytest.mark.skipif(
    MPIEXEC is None or not HAS_MPI4PY, reason="needs mpiexec and mpi4py (pip install 'lazynd[dist]')"
)


def _env(timeout_s: float) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    env["LAZYND_KV_TIMEOUT"] = str(timeout_s)
    env["LAZYND_CPU_WORKERS"] = "2"
    env["OMP_NUM_THREADS"] = "1"
    return env


def run_workers(n: int, *args: str, timeout_s: float = 30, extra: tuple[str, ...] = ()) -> subprocess.CompletedProcess:
    cmd = [MPIEXEC, "-launcher", "fork", *extra, "-n", str(n), sys.executable, str(WORKER), *args]
    return subprocess.run(cmd, cwd=ROOT, env=_env(timeout_s), capture_output=True, text=True, timeout=HANG_LIMIT_S)


def assert_all_ok(result: subprocess.CompletedProcess, n: int) -> None:
    assert result.returncode == 0, f"rc={result.returncode}\n{result.stdout}\n{result.stderr}"
    ranks = sorted(int(rank) for rank in re.findall(r"OK (\d+)", result.stdout))
    assert ranks == list(range(n)), result.stdout


@pytest.mark.mpi
@requires_mpi
@pytest.mark.parametrize("n", [2, 3])
@pytest.mark.parametrize("store", ["dist_sync", "dist_device_sync"])
def test_workers_agree_on_init_push_pull_and_updater(n, store):
    assert_all_ok(run_workers(n, "semantics", store), n)


@pytest.mark.mpi
@requires_mpi
@pytest.mark.parametrize("n", [2, 3])
def test_large_keys_are_summed_into_the_stored_value_leaving_the_pushed_array(n):
    assert_all_ok(run_workers(n, "large_keys"), n)


@pytest.mark.mpi
@requires_mpi
@pytest.mark.parametrize("n", [2, 3])
@pytest.mark.parametrize("store", ["dist_sync", "dist_device_sync"])
def test_pushpull_gives_push_then_pull_and_the_store_keeps_the_sum(n, store):
    assert_all_ok(run_workers(n, "pushpull", store), n)


@pytest.mark.mpi
@requires_mpi
def test_bad_pushpull_calls_raise_before_any_collective():
    assert_all_ok(run_workers(2, "pushpull_errors"), 2)


@pytest.mark.mpi
@requires_mpi
@pytest.mark.parametrize("n", [2, 3])
def test_ranks_that_sum_a_large_key_differently_first_still_agree(n):
    assert_all_ok(run_workers(n, "uneven_local_sums"), n)


@pytest.mark.mpi
@requires_mpi
@pytest.mark.parametrize("n", [2, 3])
def test_dist_training_matches_one_process_on_the_combined_batch(n):
    assert_all_ok(run_workers(n, "train"), n)


@pytest.mark.mpi
@requires_mpi
def test_dist_training_with_set_optimizer_matches_one_process():
    if importlib.util.find_spec("lazynd.optimizer") is None:
        pytest.skip("lazynd.optimizer is not in the tree yet")
    assert_all_ok(run_workers(2, "train_optimizer"), 2)


@pytest.mark.mpi
@requires_mpi
@pytest.mark.parametrize("n", [2, 3])
def test_the_keys_of_one_call_may_come_in_any_order_on_each_rank(n):
    assert_all_ok(run_workers(n, "key_order_in_a_call"), n)


@pytest.mark.mpi
@requires_mpi
def test_keys_pushed_in_another_order_raise_a_clear_error_on_every_rank():
    assert_all_ok(run_workers(2, "push_order"), 2)


@pytest.mark.mpi
@requires_mpi
def test_a_worker_that_ends_first_makes_the_next_push_of_the_others_fail_at_once():
    # a watchdog of 60 s, nearly the subprocess limit: only the message of the ending worker can end it
    result = run_workers(2, "a_worker_ends_first", timeout_s=60)
    assert_all_ok(result, 2)
    assert "did not complete within" not in result.stderr
    assert "lazynd_kv: at exit: KVStore dist_sync: the workers disagree" in result.stderr


@pytest.mark.mpi
@requires_mpi
def test_a_program_that_finalizes_mpi_itself_ends_cleanly():
    assert_all_ok(run_workers(2, "finalize_explicitly"), 2)


@pytest.mark.mpi
@requires_mpi
def test_init_with_another_shape_or_dtype_raises_a_clear_error_on_every_rank():
    assert_all_ok(run_workers(2, "init_mismatch"), 2)


@pytest.mark.mpi
@requires_mpi
def test_an_uncaught_exception_on_one_worker_ends_the_whole_job():
    # the watchdog (600 s) cannot be what ends it: the subprocess limit would turn a wait into a failure
    result = run_workers(2, "raise", timeout_s=600, extra=("-disable-auto-cleanup",))
    assert result.returncode != 0
    assert "ValueError: rank 1 fails here" in result.stderr
    assert "lazynd_kv: rank 1 of 2 stopped on an uncaught ValueError; aborting the MPI job" in result.stderr
    assert "did not complete within" not in result.stderr
    assert "must not complete" not in result.stderr


@pytest.mark.mpi
@requires_mpi
def test_a_worker_that_fails_before_creating_its_store_does_not_hang_the_others():
    # the failed worker waits in MPI's finalisation; the others, creating their stores, must not wait forever
    result = run_workers(2, "raise_before_store", timeout_s=3)
    assert result.returncode != 0
    assert "ValueError: rank 1 fails before creating its store" in result.stderr
    assert (
        "rank 0 of 2: the creation of the dist_sync store (a duplicate of COMM_WORLD) did not complete" in result.stderr
    )


@pytest.mark.mpi
@requires_mpi
def test_a_worker_waiting_for_a_slower_one_does_not_spin_a_core():
    assert_all_ok(run_workers(2, "slow_peer"), 2)


@pytest.mark.mpi
@requires_mpi
def test_log_lines_say_the_rank_under_mpiexec():
    result = run_workers(2, "log")
    assert_all_ok(result, 2)
    for rank in range(2):
        assert f"lazynd.callback: [rank {rank}/2] Iter[0] Batch [1]\tSpeed:" in result.stderr


@pytest.mark.mpi
@requires_mpi
def test_a_dead_worker_makes_the_others_fail_with_a_clear_error():
    # without hydra's auto-cleanup the survivors are left in the Allreduce: the watchdog must end them
    start = time.monotonic()
    result = run_workers(3, "die", timeout_s=3, extra=("-disable-auto-cleanup",))
    assert result.returncode != 0
    assert "did not complete within 3 s; a worker has died or stopped responding" in result.stderr
    assert "a push with a dead worker must not complete" not in result.stderr
    assert time.monotonic() - start < HANG_LIMIT_S


@pytest.mark.mpi
@requires_mpi
def test_a_dead_worker_in_the_reduce_scatter_of_a_large_key_trips_the_watchdog():
    result = run_workers(3, "die_large", timeout_s=3, extra=("-disable-auto-cleanup",))
    assert result.returncode != 0
    assert "the Allreduce of key 0 did not complete within 3 s; a worker has died" in result.stderr
    assert "a push with a dead worker must not complete" not in result.stderr


@pytest.mark.mpi
@requires_mpi
def test_a_dead_worker_ends_the_job_under_default_mpiexec():
    result = run_workers(2, "die", timeout_s=3)
    assert result.returncode != 0
    assert "a push with a dead worker must not complete" not in result.stderr


@pytest.mark.mpi
@requires_mpi
def test_a_stalled_worker_trips_the_watchdog():
    result = run_workers(2, "stall", timeout_s=2)
    assert result.returncode != 0
    assert "lazynd_kv: rank 0 of 2: the Allreduce of keys [0] did not complete within 2 s" in result.stderr


def _worker_without_mpiexec() -> subprocess.CompletedProcess:
    cmd = [sys.executable, str(WORKER), "semantics"]
    return subprocess.run(cmd, cwd=ROOT, env=_env(30), capture_output=True, text=True, timeout=HANG_LIMIT_S)


@pytest.mark.skipif(not HAS_MPI4PY, reason="needs mpi4py (pip install 'lazynd[dist]')")
def test_dist_sync_runs_as_a_single_worker_without_mpiexec():
    assert_all_ok(_worker_without_mpiexec(), 1)


def test_missing_mpi4py_gives_install_instructions(monkeypatch):
    monkeypatch.setitem(sys.modules, "mpi4py", None)
    with pytest.raises(LazyNDError, match=r"pip install 'lazynd\[dist\]'"):
        lazynd_kv.create("dist_sync")


@pytest.mark.parametrize("text", ["soon", "0", "-4"])
def test_bad_timeout_setting_is_refused(monkeypatch, text):
    monkeypatch.setenv("LAZYND_KV_TIMEOUT", text)
    with pytest.raises(LazyNDError, match=f"LAZYND_KV_TIMEOUT must be a positive number of seconds, got '{text}'"):
        watchdog.timeout_from_env()
