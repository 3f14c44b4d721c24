"""Host-to-device copies overlapping with compute on one GPU, as a training loop that prefetches
the next batch sees it.  Run: ``python bench/gpu_overlap.py``; prints one table.

Each step copies a fresh 64 MiB float32 batch from host memory to the GPU and runs GEMMs on a batch.
*In order*: step k copies batch k, then computes on it (the compute waits for its copy).
*Prefetch*: step k copies batch k + 1, then computes on batch k (the copy runs on the h2d stream
beside the GEMMs on the compute stream).  Also: the copies alone and the GEMMs alone; perfect
overlap would make the prefetch loop as long as the longer of the two.  The copy loops run
twice: from pageable NumPy batches (``mx.nd.array(host, ctx=gpu)``: a host copy into a
page-locked staging buffer on the pushing thread, then the DMA) and from batches already in
``mx.cpu_pinned()`` memory (``(pinned)`` rows: the DMA alone, asynchronous).
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import numpy as np


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--gemms", type=int, default=4, help="2048x2048 GEMMs per step")
    args = parser.parse_args()

    import lazynd as mx

    if mx.num_gpus() == 0:
        print("bench/gpu_overlap.py: no GPU visible; nothing to measure")
        return
    ctx = mx.gpu(0)
    rows = (64 << 20) // 4 // 2048
    hosts = [np.full((rows, 2048), float(k % 7), np.float32) for k in range(args.steps + 1)]
    weight = mx.nd.ones((2048, 2048), ctx=ctx) * 1e-3

    def compute(batch: mx.nd.NDArray) -> mx.nd.NDArray:
        out = batch[:2048]
        for _ in range(args.gemms):
            out = mx.nd.dot(out, weight)
        return out

    def timed(run: object) -> float:
        mx.nd.waitall()
        start = time.perf_counter()
        run()  # type: ignore[operator]
        mx.nd.waitall()
        return time.perf_counter() - start

    # the same batches already in page-locked memory (mx.cpu_pinned()): a copy is a DMA the pushing
    # thread does not wait for, with no host copy into a staging buffer first
    from lazynd.backend import pinned_backend

    pinned = [mx.nd.array(h, ctx=mx.cpu_pinned()) for h in hosts]
    mx.nd.waitall()
    sources = {
        "": lambda k: mx.nd.array(hosts[k], ctx=ctx),  # pageable NumPy data: staged, then copied
        " (pinned)": lambda k: pinned[k].copyto(ctx),
    }

    def loops(to_gpu: Callable[[int], mx.nd.NDArray]) -> list[tuple[str, Callable[[], None]]]:
        def copies_only() -> None:
            for k in range(args.steps):
                to_gpu(k)

        def in_order() -> None:
            for k in range(args.steps):
                compute(to_gpu(k)).wait_to_read()

        def prefetch() -> None:
            batch = to_gpu(0)
            for k in range(args.steps):
                following = to_gpu(k + 1)
                compute(batch).wait_to_read()
                batch = following

        return [("copies only", copies_only), ("in order", in_order), ("prefetch", prefetch)]

    def compute_only() -> None:
        batch = mx.nd.array(hosts[0], ctx=ctx)
        for _ in range(args.steps):
            compute(batch)

    runs = [("GEMMs only", compute_only)]
    for suffix, to_gpu in sources.items():
        runs += [(name + suffix, run) for name, run in loops(to_gpu)]
    rows_out = []
    for name, run in runs:
        timed(run)  # warm-up
        rows_out.append((name, min(timed(run) for _ in range(3))))
    print(
        f"copy/compute overlap on gpu(0): {args.steps} steps of a 64 MiB batch copy and {args.gemms} 2048^2 GEMMs; best of 3"
    )
    print(f"cpu_pinned memory page-locked: {pinned_backend.page_locked}")
    print(f"{'loop':<24}{'ms/step':>10}")
    for name, seconds in rows_out:
        print(f"{name:<24}{seconds / args.steps * 1e3:>10.2f}")
    measured = dict(rows_out)
    for suffix in sources:
        copies, prefetched = measured["copies only" + suffix], measured["prefetch" + suffix]
        hidden = (copies + measured["GEMMs only"] - prefetched) / copies
        print(f"copy time hidden by prefetch{suffix or ' (pageable)'}: {min(max(hidden, 0.0), 1.0):.0%}")
    print(profiled_overlap(dict(loops(sources[" (pinned)"]))["prefetch"]))


def profiled_overlap(run: Callable[[], None]) -> str:
    """Run ``run`` under the profiler and say how much of the copy events' time, on their own
    stream's row of the trace, overlaps compute-stream events."""
    from lazynd.profiler import trace_of

    events = trace_of(run)
    rows = {(e["pid"], e["tid"]): e["args"]["name"] for e in events if e["name"] == "thread_name"}
    spans: dict[str, list[tuple[float, float]]] = {}
    for e in events:
        if e["ph"] == "X":
            spans.setdefault(rows[(e["pid"], e["tid"])], []).append((e["ts"], e["ts"] + e["dur"]))
    copies, computes = spans.get("stream h2d", []), spans.get("stream compute", [])
    total = sum(end - start for start, end in copies)
    covered = sum(
        max(0.0, min(end, c_end) - max(start, c_start)) for start, end in copies for c_start, c_end in computes
    )
    return (
        f"profiler trace of the pinned prefetch loop: rows {sorted(spans)}; {len(copies)} copy events on "
        f"'stream h2d', {covered / total if total else 0.0:.0%} of their time overlapping 'stream compute' events"
    )


if __name__ == "__main__":
    main()
