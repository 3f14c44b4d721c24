"""The user loops on a machine whose cores other jobs also use.

Runs rows of ``user_loops.py`` (each in its own process, default thread settings) twice: on
the machine as it is, and while ``--burners`` other processes (default: one per core) each
keep a core busy with NumPy work, as other jobs on a shared machine or a laptop do.  A loop
that shares the cores fairly takes about ``(burners + 1) / cores`` times its quiet time; a
library whose threads spin while they wait for each other (OpenBLAS's, OpenMP's) can take
many times more.  Rows: lazynd as it comes (the BLAS's threads, set to one for a while after a
product stalls: ``lazynd/backend/host_threads.py``), lazynd with the BLAS's threads as they are
(``LAZYND_HOST_THREADS=fixed``), hand NumPy and PyTorch eager.  Run::

    LAZYND_DATA_DIR=../shared/data python bench/shared_machine.py --loop autograd --limit 12800

``--limit`` trains on that many images (the loaded rows of a spinning library can take a
minute for a whole epoch).  Medians of ``--rounds`` rounds, rows alternated.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROWS = {
    "lazynd": ("lazynd", {}),
    "lazynd (BLAS threads fixed)": ("lazynd", {"LAZYND_HOST_THREADS": "fixed"}),
    "hand NumPy": ("numpy", {}),
    "PyTorch eager": ("torch", {}),
}


def _burn(stop: object) -> None:
    """Keep one core busy with NumPy work until ``stop`` is set (a single-threaded job)."""
    os.environ["OPENBLAS_NUM_THREADS"] = "1"
    import numpy as np

    x = np.random.default_rng(0).random(1 << 16)
    while not stop.is_set():  # type: ignore[attr-defined]
        np.sqrt(x * x + 1.0, out=x)


def _run_row(loop: str, face: str, env: dict[str, str], limit: int) -> float:
    command = [sys.executable, str(HERE / "user_loops.py"), "--row", f"{loop}/{face}", "--limit", str(limit)]
    environ = {**os.environ, **env, "PYTHONPATH": os.pathsep.join([str(HERE.parent), os.environ.get("PYTHONPATH", "")])}
    result = subprocess.run(command, env=environ, capture_output=True, text=True, timeout=1800, check=False)
    if result.returncode != 0:
        raise SystemExit(f"row {loop}/{face} failed:\n{result.stderr[-3000:]}")
    return json.loads(result.stdout.strip().splitlines()[-1])["seconds"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--loop", default="autograd", choices=("seed", "sgd_update", "fit", "autograd"))
    parser.add_argument("--limit", type=int, default=12800, help="images per run (0: the whole epoch)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--burners", type=int, default=os.cpu_count() or 1, help="busy processes while loaded")
    parser.add_argument("--rows", default=",".join(ROWS), help="which rows (comma-separated names)")
    opts = parser.parse_args()
    rows = [name for name in opts.rows.split(",") if name]
    times: dict[tuple[str, bool], list[float]] = {(row, loaded): [] for row in rows for loaded in (False, True)}
    context = multiprocessing.get_context("spawn")
    for r in range(opts.rounds):
        for loaded in (False, True):
            stop = context.Event()
            burners = [
                context.Process(target=_burn, args=(stop,), daemon=True) for _ in range(opts.burners if loaded else 0)
            ]
            for burner in burners:
                burner.start()
            try:
                for row in rows[r % len(rows) :] + rows[: r % len(rows)]:
                    face, env = ROWS[row]
                    times[(row, loaded)].append(_run_row(opts.loop, face, env, opts.limit))
            finally:
                stop.set()
                for burner in burners:
                    burner.join()
    print(
        f"`{opts.loop}` loop, {opts.limit or 'all'} images, {os.cpu_count()} cores, medians of {opts.rounds} rounds (s); "
        f"loaded: {opts.burners} busy processes beside it"
    )
    print("| row | quiet s | loaded s | loaded / quiet |")
    print("|---|---|---|---|")
    for row in rows:
        quiet, loaded = statistics.median(times[(row, False)]), statistics.median(times[(row, True)])
        print(f"| {row} | {quiet:.3f} | {loaded:.3f} | {loaded / quiet:.1f}x |")
    print(
        "\nper round (s): "
        + "; ".join(
            f"{row} {'loaded' if ld else 'quiet'} " + ", ".join(f"{t:.3f}" for t in v) for (row, ld), v in times.items()
        )
    )


if __name__ == "__main__":
    main()
