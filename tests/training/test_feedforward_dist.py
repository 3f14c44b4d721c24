"""FeedForward.fit with a ``dist_sync`` store: workers started by mpiexec on this machine (127.0.0.1).

Every rank trains on its own part of each combined batch; all must end with
identical weights, equal to one process training on the combined batches.
A subprocess timeout turns a hang into a failure.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import lazynd as mx

ROOT = Path(__file__).resolve().parents[2]
WORKER = Path(__file__).with_name("ff_dist_worker.py")
MPIEXEC = shutil.which("mpiexec")
HAS_MPI4PY = importlib.util.find_spec("mpi4py") is not None
HANG_LIMIT_S = 120

pytestmark = [
    pytest.mark.mpi,
    pytest.mark.skipif(
        MPIEXEC is None or not HAS_MPI4PY, reason="needs mpiexec and mpi4py (pip install 'lazynd[dist]')"
    ),
]
if importlib.util.find_spec("pytest_timeout") is not None:  # the subprocess timeout below guards without it
    pytestmark.append(pytest.mark.timeout(HANG_LIMIT_S + 30))


def _worker_module():
    spec = importlib.util.spec_from_file_location("ff_dist_worker", WORKER)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _run(n: int, num_devices: int, out_dir: Path, *options: str) -> dict[int, dict[str, np.ndarray]]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    env.update(LAZYND_KV_TIMEOUT="60", LAZYND_CPU_WORKERS="2", OMP_NUM_THREADS="1")
    cmd = [
        MPIEXEC,
        "-launcher",
        "fork",
        "-n",
        str(n),
        sys.executable,
        str(WORKER),
        str(out_dir),
        str(num_devices),
        *options,
    ]
    result = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=HANG_LIMIT_S)
    assert result.returncode == 0, f"rc={result.returncode}\n{result.stdout}\n{result.stderr[-3000:]}"
    assert sorted(int(r) for r in re.findall(r"OK (\d+)", result.stdout)) == list(range(n)), result.stdout
    return {rank: dict(np.load(out_dir / f"rank{rank}.npz")) for rank in range(n)}


@pytest.mark.parametrize(
    ("n", "num_devices", "options"),
    [(2, 1, ()), (2, 2, ()), (2, 2, ("gradients_only",))],
    ids=["1dev", "2dev", "2dev-grads"],
)
def test_dist_sync_fit_leaves_identical_weights_equal_to_one_process(tmp_path, n, num_devices, options) -> None:
    # gradients_only: the store sums the gradients in place (pushpull) and every device updates its weights
    weights = _run(n, num_devices, tmp_path, *options)
    for rank in range(1, n):
        for name, value in weights[0].items():
            np.testing.assert_array_equal(weights[rank][name], value, err_msg=f"rank {rank}, {name}")
    worker = _worker_module()
    reference = worker.train_single(mx, n)
    _, _, start = worker.problem(n)
    assert not np.allclose(reference["fc1_weight"], start["fc1_weight"], atol=1e-3)
    for name, value in reference.items():
        np.testing.assert_allclose(weights[0][name], value, rtol=1e-4, atol=1e-5, err_msg=name)
