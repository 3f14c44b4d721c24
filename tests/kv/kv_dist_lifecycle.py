"""dist_sync scenarios of kv_dist_worker.py: how a worker waits for a slow peer, logs, and ends its program."""

from __future__ import annotations

import time

import numpy as np
from kv_dist_check import check


def finalize_explicitly(kv, mx) -> None:
    """A program that calls MPI.Finalize() itself after its last push ends cleanly."""
    from mpi4py import MPI

    kv.init("a", mx.nd.zeros((10,)))
    kv.push("a", mx.nd.ones((10,)))
    out = mx.nd.zeros((10,))
    kv.pull("a", out=out)
    check(np.all(out.asnumpy() == kv.num_workers), f"sum: {out.asnumpy()[:3]}")
    MPI.Finalize()


def slow_peer(kv, mx) -> None:
    """A worker waiting for a slower one sleeps between polls instead of spinning a core."""
    kv.init("w", mx.nd.zeros((4,)))
    kv.barrier()
    out = mx.nd.zeros((4,))
    if kv.rank == 1:
        time.sleep(3)
    start_cpu, start = time.process_time(), time.monotonic()
    kv.push("w", mx.nd.ones((4,)))
    kv.pull("w", out=out)
    check(np.all(out.asnumpy() == kv.num_workers), "the sum once the slow worker arrives")
    if kv.rank == 0:
        busy = (time.process_time() - start_cpu) / (time.monotonic() - start)
        check(busy < 0.3, f"the waiting worker used {busy:.0%} of a core")


def log(kv, mx) -> None:
    """lazynd's log lines say the rank under mpiexec, through the application's logging setup."""
    import logging

    logging.basicConfig(level=logging.INFO, format="%(name)s: %(message)s")
    meter = mx.callback.Speedometer(batch_size=4, frequent=1)
    for nbatch in range(2):
        meter(mx.callback.BatchEndParam(epoch=0, nbatch=nbatch, eval_metric=None, locals=None))
