"""Profiler overhead on the MNIST MLP (bench/mlp_epoch.py's executor setup) and on small ops.

The same training loop (symbolic executor, batch 128, SGD) runs with the
profiler stopped, running in mode 'symbolic' and running in mode 'all'; the
states alternate round by round and the best of the rounds counts, so load from
other processes hits every state alike.  Wall and process CPU time are both
shown.  OpenBLAS is held to one thread (as in bench/engine_parallel.py): its
spinning threads on a loaded machine swing an MLP run by 2x either way.  Run:
``python bench/profiler.py [--batches 200] [--rounds 7]``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")
sys.path.insert(0, os.path.dirname(__file__))
from _table import print_table  # noqa: E402
from mlp_epoch import BATCH, data, lazynd_trainer  # noqa: E402

import lazynd as mx  # noqa: E402
from lazynd import profiler  # noqa: E402
from lazynd.engine import get_engine  # noqa: E402

STATES = ("stop", "symbolic", "all")


def mlp_trainer(batches: int) -> tuple[Callable[[], None], int]:
    """A function training ``batches`` batches of the MLP, and the engine ops it pushes per batch."""
    x, y = data()
    batches = min(batches, len(x) // BATCH)
    train, _, n_params = lazynd_trainer(x[: batches * BATCH], y[: batches * BATCH])
    ops_per_batch = 2 + 2 + n_params  # two copies, forward, backward, one update per parameter
    return train, ops_per_batch


def small_ops() -> None:
    """2000 dot + 2000 add on 64x64 arrays: ops of a few µs, the profiler's worst case."""
    x = mx.nd.ones((64, 64))
    w = mx.nd.ones((64, 64)) * 0.01
    y = x
    for _ in range(2000):
        y = mx.nd.dot(y, w) + x
    y.wait_to_read()


def timed(fn: Callable[[], None], state: str) -> tuple[float, float, int]:
    """(wall s, process CPU s, records) of one run of ``fn`` with the profiler in ``state``."""
    if state != "stop":
        profiler.set_config(mode=state, filename=os.path.join(tempfile.gettempdir(), "lazynd-bench-profile.json"))
        profiler.set_state("run")
    wall, cpu = time.perf_counter(), time.process_time()
    fn()
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    profiler.set_state("stop")
    records = len(profiler._records)
    profiler.reset()
    return wall, cpu, records


def compare(fn: Callable[[], None], rounds: int) -> dict[str, dict[str, float]]:
    """Per profiler state: best wall/CPU time, and the median over rounds of the time relative to
    the stopped run of the same round (paired, so slow phases of the machine cancel out)."""
    runs: dict[str, list[tuple[float, float, int]]] = {s: [] for s in STATES}
    fn()  # warm up
    for r in range(rounds):
        order = STATES[r % 3 :] + STATES[: r % 3]
        for state in order:
            runs[state].append(timed(fn, state))
    out = {}
    for state, values in runs.items():
        out[state] = {
            "wall": min(v[0] for v in values),
            "cpu": min(v[1] for v in values),
            "wall_ratio": statistics.median(v[0] / s[0] for v, s in zip(values, runs["stop"], strict=True)),
            "cpu_ratio": statistics.median(v[1] / s[1] for v, s in zip(values, runs["stop"], strict=True)),
            "records": values[-1][2],
            "ops": 0,
        }
    return out


def hook_seconds(mode: str, repeat: int = 200_000) -> float:
    """What one operation costs a running profiler: two perf_counter_ns calls and the hook call."""
    profiler.set_config(mode=mode, filename=os.path.join(tempfile.gettempdir(), "lazynd-bench-profile.json"))
    profiler.set_state("run")
    hook = get_engine().profiler_hook
    writes = [mx.nd.ones((1,)).var]
    device = mx.cpu()
    clock = time.perf_counter_ns
    start = time.perf_counter()
    for _ in range(repeat):
        t0 = clock()
        hook("dot", device, writes, t0, clock())
    elapsed = time.perf_counter() - start
    profiler.reset()  # before stopping, which would write the 200,000 calls to the trace file
    profiler.set_state("stop")
    start = time.perf_counter()
    for _ in range(repeat):
        pass
    return (elapsed - (time.perf_counter() - start)) / repeat


def hook_check_seconds(repeat: int = 1_000_000) -> float:
    """What a stopped profiler costs per operation: reading ``engine.profiler_hook`` and testing it."""
    engine = get_engine()
    start = time.perf_counter()
    for _ in range(repeat):
        if engine.profiler_hook is None:
            pass
    loop = time.perf_counter() - start
    start = time.perf_counter()
    for _ in range(repeat):
        pass
    empty = time.perf_counter() - start
    return max(loop - empty, 0.0) / repeat


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--batches", type=int, default=200, help="MLP batches per run (468 = one MNIST epoch)")
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    train, ops_per_batch = mlp_trainer(args.batches)
    per_op = {"stop": hook_check_seconds(), "symbolic": hook_seconds("symbolic"), "all": hook_seconds("all")}
    rows = []
    for label, fn, ops in (
        (f"MLP, {args.batches} batches", train, ops_per_batch * args.batches),
        ("small ops, 4000", small_ops, 4000),
    ):
        best = compare(fn, args.rounds)
        for state in STATES:
            b = best[state]
            # every op pays the per-op cost of its state (symbolic: timing and the name test)
            intrinsic = per_op[state] * ops / best["stop"]["wall"] * 100
            rows.append(
                [
                    label,
                    "stopped" if state == "stop" else f"running '{state}'",
                    f"{b['wall'] * 1e3:.1f}",
                    f"{b['cpu'] * 1e3:.1f}",
                    f"{(b['wall_ratio'] - 1) * 100:+.1f}%",
                    f"{(b['cpu_ratio'] - 1) * 100:+.1f}%",
                    int(b["records"]),
                    f"{per_op[state] * 1e9:.0f}",
                    f"{intrinsic:.2f}%",
                ]
            )
    print_table(
        f"Profiler overhead; best of {args.rounds} rounds, states alternating; overheads are medians of "
        f"per-round ratios to the stopped run; threaded engine, {get_engine().num_workers} CPU workers",
        [
            "workload",
            "profiler",
            "wall ms",
            "CPU ms",
            "wall overhead",
            "CPU overhead",
            "records",
            "ns/op",
            "ns/op x ops / stopped wall",
        ],
        rows,
    )


if __name__ == "__main__":
    main()
