"""The operator benchmark runs where PyTorch is not installed (its column is then left out)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# bench/ops.py with ``import torch`` failing, as on a machine without PyTorch
_WITHOUT_TORCH = """
import runpy, sys
sys.modules["torch"] = None
sys.argv = ["bench/ops.py", "--only", "reduce", "shape", "--repeat", "1", "--calls", "1"]
runpy.run_path("bench/ops.py", run_name="__main__")
"""


def test_bench_ops_runs_without_pytorch() -> None:
    env = dict(os.environ, PYTHONPATH=str(ROOT), OPENBLAS_NUM_THREADS="1")
    done = subprocess.run(
        [sys.executable, "-c", _WITHOUT_TORCH], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "no torch" in done.stdout
    for row in ("| reduce | norm", "| shape  | one_hot"):
        assert row in done.stdout, done.stdout[-3000:]
    assert "ThreadedEngine: " in done.stdout and "NaiveEngine: " in done.stdout


def test_bench_user_loops_rows_run_and_learn(data_dir) -> None:
    """Each lazynd row of bench/user_loops.py runs on a slice of the data and reports its time and accuracy."""
    import json
    import os
    import subprocess
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    for row in ("seed/lazynd", "sgd_update/lazynd", "fit/lazynd", "autograd/lazynd", "seed/numpy"):
        result = subprocess.run(
            [sys.executable, str(root / "bench" / "user_loops.py"), "--row", row, "--limit", "2560"],
            capture_output=True, text=True, timeout=300, check=False, env=dict(os.environ),
        )  # fmt: skip
        assert result.returncode == 0, result.stderr[-2000:]
        record = json.loads(result.stdout.strip().splitlines()[-1])
        assert record["seconds"] > 0 and record["accuracy"] > 0.5, (row, record)


def test_bench_user_loops_times_tiny_layers_by_the_cpu_clock() -> None:
    """``--clock cpu --sizes 8,8,8,10``: the per-batch work of lazynd and hand NumPy on random data, and no
    PyTorch figure (its CPU clock counts its threads' spinning); widths that make no MLP are refused."""
    command = [sys.executable, str(ROOT / "bench" / "user_loops.py"), "--rounds", "1", "--loops", "fit"]
    command += ["--clock", "cpu", "--sizes", "8,8,8,10", "--limit", "2560"]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "one random data epoch, MLP 8-8-8-10" in done.stdout and "CPU seconds" in done.stdout
    row = next(line for line in done.stdout.splitlines() if line.startswith("| fit |"))
    assert "not timed (CPU clock)" in row
    assert "round by round" in done.stdout and any(line.startswith("- fit: ") for line in done.stdout.splitlines())
    bad = subprocess.run([*command[:2], "--sizes", "8,8,10"], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert bad.returncode != 0 and "--sizes: four widths" in bad.stderr


def test_bench_lenet_runs_on_the_cpu_and_both_sides_learn_alike() -> None:
    """bench/lenet_epoch.py --ctx cpu: lazynd's executor on the CPU (against PyTorch's CPU eager where installed)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    done = subprocess.run(
        [sys.executable, "bench/lenet_epoch.py", "--ctx", "cpu", "--batches", "3", "--repeat", "1"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    rows = [line.split() for line in done.stdout.splitlines() if line.startswith(("lazynd executor", "PyTorch eager"))]
    assert rows and rows[0][:3] == ["lazynd", "executor,", "cpu"], done.stdout
    losses = [float(row[-1]) for row in rows]  # the same batches and initial weights: the same loss
    assert max(losses) - min(losses) < 2e-3, f"the two sides end at different losses: {done.stdout}"


def test_bench_shared_machine_runs_quiet_and_loaded(data_dir) -> None:
    """bench/shared_machine.py: the lazynd rows, on a slice of the data, beside one busy process."""
    done = subprocess.run(
        [sys.executable, "bench/shared_machine.py", "--loop", "seed", "--limit", "1280", "--rounds", "1",
         "--burners", "1", "--rows", "lazynd,lazynd (BLAS threads fixed)"],
        cwd=ROOT, env=dict(os.environ, PYTHONPATH=str(ROOT)), capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    rows = [line for line in done.stdout.splitlines() if line.startswith("| lazynd")]
    assert len(rows) == 2 and all(len(row.split("|")) == 6 for row in rows), done.stdout


@pytest.mark.gpu
def test_bench_user_loops_on_a_gpu_leaves_out_a_pytorch_without_cuda(data_dir) -> None:
    """``--ctx gpu`` (a step of tools/gpu_check.sh) times PyTorch only where it can use the GPU: a
    CPU-only build beside the GPU has its column marked, not every one of its rows failed."""
    import lazynd as mx

    if mx.num_gpus() == 0:
        pytest.skip("needs gpu(0) (the CUDA emulator's will do)")
    command = [sys.executable, str(ROOT / "bench" / "user_loops.py"), "--ctx", "gpu", "--loops", "seed"]
    command += ["--rounds", "1", "--limit", "2560", "--warmup", "0"]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    row = next(line for line in done.stdout.splitlines() if line.startswith("| seed |"))
    try:
        import torch

        with_cuda = torch.cuda.is_available()
    except ImportError:
        with_cuda = False
    assert ("not installed (for gpu)" in row) != with_cuda, row
