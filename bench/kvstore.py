"""KVStore benchmark: push+pull through lazynd_kv against the same work done by hand.

    python bench/kvstore.py            # local rows, then starts the dist rows with mpiexec -n 2
    mpiexec -n 2 python bench/kvstore.py --dist

Rows
- local, 16 MB: push one float32 array of 4M elements, pull it back (updater: assign);
  by hand: np.copyto into the store, np.copyto out.
- local, 100 small keys: push and pull 100 keys of 1,000 float32 in one call each.
- dist_sync, 16 MB, 2 ranks: 4M float32 through ``push`` + ``pull``, through
  ``pushpull(value, out=out)`` (the goal: at least 70% of the bandwidth of a raw
  mpi4py in-place ``Allreduce`` of the same buffer), through ``pushpull(grad)``
  (summed in place), and ``pushpull`` timed until the store's own copy of ``out``
  is done too; against raw in-place ``Allreduce(IN_PLACE, buf)`` and raw
  ``Allreduce(send, recv)``.  Same processes and buffer size, every case warmed
  up, samples interleaved and started from a barrier with the engine idle, best
  of ``DIST_REPEAT`` per rank, slowest rank.
- dist_sync, 100 keys of 4 KB in one call (batched into one Allreduce) by push+pull
  and by pushpull, against a raw in-place ``Allreduce`` of the same bytes packed.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import lazynd as mx  # noqa: E402
import lazynd_kv  # noqa: E402

BIG = 4 * 1024 * 1024  # float32 elements: 16 MB
SMALL_KEYS, SMALL = 100, 1000
DIST_REPEAT = 30


def best_of(fn, repeat: int, warmup: int = 2) -> float:
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def row(name: str, ours: float, ref: float, nbytes: int, ref_name: str) -> str:
    gbps = nbytes / ours / 1e9
    return f"| {name} | {ours * 1e3:8.3f} ms | {gbps:6.2f} GB/s | {ref_name} {ref * 1e3:8.3f} ms | {ref / ours * 100:5.0f}% |"


def local_rows() -> list[str]:
    kv = lazynd_kv.create("local")
    value, out = mx.nd.ones((BIG,)), mx.nd.zeros((BIG,))
    kv.init("big", value)

    def kv_big():
        kv.push("big", value)
        kv.pull("big", out=out)
        out.wait_to_read()

    src, store, dst = np.ones(BIG, np.float32), np.zeros(BIG, np.float32), np.zeros(BIG, np.float32)

    def np_big():
        np.copyto(store, src)
        np.copyto(dst, store)

    keys = list(range(SMALL_KEYS))
    values = [mx.nd.ones((SMALL,)) for _ in keys]
    outs = [mx.nd.zeros((SMALL,)) for _ in keys]
    kv.init(keys, values)

    def kv_small():
        kv.push(keys, values)
        kv.pull(keys, out=outs)
        mx.waitall()

    srcs = [np.ones(SMALL, np.float32) for _ in keys]
    stores = [np.zeros(SMALL, np.float32) for _ in keys]
    dsts = [np.zeros(SMALL, np.float32) for _ in keys]

    def np_small():
        for s, t, d in zip(srcs, stores, dsts, strict=True):
            np.copyto(t, s)
            np.copyto(d, t)

    return [
        row("local push+pull 16 MB", best_of(kv_big, 20), best_of(np_big, 20), 2 * BIG * 4, "numpy copies"),
        row(
            "local push+pull 100 x 4 KB",
            best_of(kv_small, 50),
            best_of(np_small, 50),
            2 * SMALL_KEYS * SMALL * 4,
            "numpy copies",
        ),
    ]


def dist_rows() -> list[str]:
    from mpi4py import MPI

    kv = lazynd_kv.create("dist_sync")
    comm = MPI.COMM_WORLD.Dup()
    value, out = mx.nd.ones((BIG,)), mx.nd.zeros((BIG,))
    grad = mx.nd.ones((BIG,))
    kv.init("big", value)
    buf = np.ones(BIG, np.float32)
    src, dst = np.ones(BIG, np.float32), np.zeros(BIG, np.float32)

    def timed(body, reset=None):
        def sample() -> float:
            if reset is not None:
                reset()  # not timed: keeps in-place sums finite run after run
            mx.waitall()  # the previous case's work (a store copy) must not run in this sample
            comm.Barrier()
            start = time.perf_counter()
            body()
            return time.perf_counter() - start

        return sample

    def reset_buf():
        buf[:] = 1.0

    def reset_grad():
        grad[:] = 1.0

    def push_pull():
        kv.push("big", value)
        kv.pull("big", out=out)
        out.wait_to_read()

    def pushpull():
        kv.pushpull("big", value, out=out)
        out.wait_to_read()  # the store's copy of out may still run: it only reads out

    def pushpull_in_place():  # gradients summed in place: out=None pulls into the pushed array
        kv.pushpull("big", grad)
        grad.wait_to_read()

    def pushpull_all_done():
        kv.pushpull("big", value, out=out)
        mx.waitall()  # the store's copy of out included

    keys = [f"small{i}" for i in range(SMALL_KEYS)]
    kv.init(keys, [mx.nd.zeros((SMALL,)) for _ in keys])
    small_values = [mx.nd.ones((SMALL,)) for _ in keys]
    small_outs = [mx.nd.zeros((SMALL,)) for _ in keys]
    packed = np.ones(SMALL_KEYS * SMALL, np.float32)

    def small_push_pull():
        kv.push(keys, small_values)
        kv.pull(keys, out=small_outs)
        mx.waitall()

    def small_pushpull():
        kv.pushpull(keys, small_values, out=small_outs)
        mx.waitall()

    cases = {
        "raw_small": timed(lambda: comm.Allreduce(MPI.IN_PLACE, packed, op=MPI.SUM), lambda: packed.fill(1.0)),
        "small_push_pull": timed(small_push_pull),
        "small_pushpull": timed(small_pushpull),
        "raw_in_place": timed(lambda: comm.Allreduce(MPI.IN_PLACE, buf, op=MPI.SUM), reset_buf),
        "raw_send_recv": timed(lambda: comm.Allreduce(src, dst, op=MPI.SUM)),
        "push_pull": timed(push_pull),
        "pushpull": timed(pushpull),
        "pushpull_in_place": timed(pushpull_in_place, reset_grad),
        "pushpull_all_done": timed(pushpull_all_done),
    }
    # same processes, same 16 MB; warm up each, then interleave the samples so a noisy neighbour
    # hits all alike; best of the samples on each rank, and the slowest rank decides the step time
    for fn in cases.values():
        for _ in range(3):
            fn()
    samples: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(DIST_REPEAT):
        for name, fn in cases.items():
            samples[name].append(fn())
    best = {name: comm.allreduce(min(times), op=MPI.MAX) for name, times in samples.items()}
    ranks = f"16 MB, {comm.Get_size()} ranks"
    in_place, send_recv = "raw Allreduce(IN_PLACE, buf)", "raw Allreduce(send, recv)"
    small = f"{SMALL_KEYS} x 4 KB, {comm.Get_size()} ranks"
    packed_ref = "raw Allreduce(IN_PLACE) of them packed"
    nbytes = SMALL_KEYS * SMALL * 4
    return [
        row(f"dist_sync push+pull {small}", best["small_push_pull"], best["raw_small"], nbytes, packed_ref),
        row(f"dist_sync pushpull {small}", best["small_pushpull"], best["raw_small"], nbytes, packed_ref),
        row(f"dist_sync push+pull {ranks}", best["push_pull"], best["raw_in_place"], BIG * 4, in_place),
        row(f"dist_sync push+pull {ranks}", best["push_pull"], best["raw_send_recv"], BIG * 4, send_recv),
        row(f"dist_sync pushpull(value, out) {ranks}", best["pushpull"], best["raw_in_place"], BIG * 4, in_place),
        row(f"dist_sync pushpull(value, out) {ranks}", best["pushpull"], best["raw_send_recv"], BIG * 4, send_recv),
        row(
            f"dist_sync pushpull(grad) in place {ranks}",
            best["pushpull_in_place"],
            best["raw_in_place"],
            BIG * 4,
            in_place,
        ),
        row(
            f"dist_sync pushpull(value, out), store copy done {ranks}",
            best["pushpull_all_done"],
            best["raw_in_place"],
            BIG * 4,
            in_place,
        ),
    ]


HEADER = ["| case | lazynd_kv | bandwidth | reference | ours vs ref |", "| --- | --- | --- | --- | --- |"]


def main() -> None:
    if "--dist" in sys.argv:
        rows = dist_rows()
        from mpi4py import MPI

        if MPI.COMM_WORLD.Get_rank() == 0:
            print("\n".join(rows), flush=True)
        return
    print("\n".join(HEADER))
    print("\n".join(local_rows()), flush=True)
    mpiexec = shutil.which("mpiexec")
    if mpiexec is None:
        print("| dist_sync | skipped: mpiexec not found (pip install 'lazynd[dist]') | | | |")
        return
    env = dict(os.environ, LAZYND_CPU_WORKERS="2", OMP_NUM_THREADS="1")
    cmd = [mpiexec, "-launcher", "fork", "-n", "2", sys.executable, __file__, "--dist"]
    result = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    print(result.stdout.strip() or f"| dist_sync | failed: {result.stderr.strip()[-300:]} | | | |")


if __name__ == "__main__":
    main()
