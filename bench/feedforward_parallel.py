"""MNIST MLP: time of one training epoch (60,000 images) on one device, on several, and with dist_sync workers.

Runs ``tutorials/mnist_feedforward.py`` in subprocesses, side by side in one
run, and reads the ``Time cost`` the script logs (training only, no
evaluation).  With ``dist_sync`` each of the N workers trains on its own
1/N of the data, so one epoch is still 60,000 images.  Every configuration
runs with one BLAS thread per process (``OMP_NUM_THREADS=1`` unless set): on a
loaded machine OpenBLAS's spinning threads made the same epoch 10-30x slower
and the comparison meaningless.

Run::

    LAZYND_DATA_DIR=../shared/data python bench/feedforward_parallel.py --repeat 2
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "tutorials" / "mnist_feedforward.py"


def epoch_seconds(prefix: list[str], args: list[str]) -> float:
    """The slowest worker's logged epoch time."""
    command = [*prefix, sys.executable, str(SCRIPT), *args]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    env.setdefault("OMP_NUM_THREADS", "1")
    env.setdefault("OPENBLAS_NUM_THREADS", env["OMP_NUM_THREADS"])
    result = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=1800)
    if result.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed:\n{result.stderr[-2000:]}")
    times = [float(t) for t in re.findall(r"Epoch\[0\] Time cost=([\d.]+)", result.stdout + result.stderr)]
    return max(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=2, help="best of N runs per configuration")
    parser.add_argument("--batch-size", type=int, default=100)
    opts = parser.parse_args()
    common = ["--epochs", "1", "--no-progress", "--model-prefix", "", "--batch-size", str(opts.batch_size)]
    mpiexec = shutil.which("mpiexec")
    configs = [
        ("1 process, cpu(0)", [], []),
        ("1 process, [cpu(0), cpu(1)], kv local", [], ["--num-devices", "2", "--kv-store", "local"]),
    ]
    if mpiexec is not None:
        configs.append(("2 processes, dist_sync", [mpiexec, "-n", "2"], ["--kv-store", "dist_sync"]))
    results = []
    for name, prefix, extra in configs:
        best = min(epoch_seconds(prefix, [*common, *extra]) for _ in range(opts.repeat))
        results.append((name, best))
    base = results[0][1]
    print(f"| configuration (batch {opts.batch_size} per process) | epoch time (s) | vs 1 process |")
    print("| --- | ---: | ---: |")
    for name, seconds in results:
        print(f"| {name} | {seconds:.2f} | {base / seconds:.2f}x |")


if __name__ == "__main__":
    main()
