"""dist_sync scenarios of kv_dist_worker.py: push and pull give every worker the sum over workers, small keys and large."""

from __future__ import annotations

import numpy as np
from kv_dist_check import BIG, check


def semantics(kv, mx) -> None:
    rank, n = kv.rank, kv.num_workers
    shape = (3, 5)
    kv.init("w", mx.nd.ones(shape) * (rank + 7))  # rank 0's value wins
    out = mx.nd.zeros(shape)
    kv.pull("w", out=out)
    check(np.all(out.asnumpy() == 7), f"init broadcast: {out.asnumpy()[0]}")
    kv.push("w", mx.nd.ones(shape) * (rank + 1))  # assign the sum over workers
    outs = [mx.nd.zeros(shape) for _ in range(3)]
    kv.pull("w", out=outs)
    total = n * (n + 1) / 2
    check(all(np.all(o.asnumpy() == total) for o in outs), "push sums workers")
    kv.push("w", [mx.nd.ones(shape)] * 4)  # four local values, then all workers
    kv.pull("w", out=out)
    check(np.all(out.asnumpy() == 4 * n), "list of four values")
    # small keys are batched into one buffer, the large one goes alone
    big = 300_000
    keys = ["a", "b", "big", "d"]
    kv.init(keys, [mx.nd.zeros((10,)), mx.nd.zeros((2, 2)), mx.nd.zeros((big,)), mx.nd.zeros((7,), dtype="float64")])
    kv.set_updater(lambda key, recv, stored: stored.__iadd__(recv * 2))
    for step in range(3):
        values = [
            mx.nd.ones((10,)) * rank,
            mx.nd.ones((2, 2)),
            mx.nd.ones((big,)) * (rank + step),
            mx.nd.ones((7,), dtype="float64"),
        ]
        kv.push(keys, values)
    outs = [mx.nd.zeros((10,)), mx.nd.zeros((2, 2)), mx.nd.zeros((big,)), mx.nd.zeros((7,), dtype="float64")]
    kv.pull(keys, out=outs)
    expect = [3 * 2 * n * (n - 1) / 2, 3 * 2 * n, 2 * sum(n * (n - 1) / 2 + n * s for s in range(3)), 3 * 2 * n]
    for k, o, e in zip(keys, outs, expect, strict=True):
        check(np.all(o.asnumpy() == e), f"key {k}: {o.asnumpy().ravel()[:3]} != {e}")
    kv.barrier()


def large_keys(kv, mx) -> None:
    """Keys of 1 MB and more are reduced alone; with no updater straight into the stored value."""
    rank, n = kv.rank, kv.num_workers
    size = 300_001  # not a multiple of 2 or 3: uneven blocks in the reduce-scatter
    ramp = np.arange(size, dtype=np.float32) % 97
    kv.init(["f32", "f64"], [mx.nd.zeros((size,)), mx.nd.zeros((size,), dtype="float64")])
    pushed = mx.nd.array(ramp * (rank + 1))
    out = mx.nd.zeros((size,))
    for _ in range(2):  # the second push replaces the first sum (no updater)
        kv.push("f32", pushed)
        kv.pull("f32", out=out)
        check(np.array_equal(out.asnumpy(), ramp * (n * (n + 1) // 2)), f"f32 sum: {out.asnumpy()[:4]}")
    check(np.array_equal(pushed.asnumpy(), ramp * (rank + 1)), "the pushed array is left unchanged")
    # the pulled array pushed back: a new sum, the old one read before it is overwritten
    kv.push("f32", out)
    kv.pull("f32", out=out)
    check(np.array_equal(out.asnumpy(), ramp * (n * n * (n + 1) // 2)), "push of the pulled array")
    # a list is summed locally into the stored value, then reduced in place
    kv.push("f64", [mx.nd.ones((size,), dtype="float64") * (rank + 1)] * 3)
    out64 = mx.nd.zeros((size,), dtype="float64")
    kv.pull("f64", out=out64)
    check(np.all(out64.asnumpy() == 3 * n * (n + 1) / 2), f"f64 list sum: {out64.asnumpy()[:4]}")
    everyone = kv._comm.allgather(out.asnumpy().tobytes())
    check(all(b == everyone[0] for b in everyone), "every rank holds identical sums")
    kv.barrier()


def uneven_local_sums(kv, mx) -> None:
    """Ranks that sum a large key differently before the Allreduce (one array or several, in place
    or into the store, push or pushpull) still exchange matching messages and agree."""
    rank, n = kv.rank, kv.num_workers
    kv.init("big", mx.nd.zeros((BIG,)))
    out = mx.nd.zeros((BIG,))
    for step in range(4):
        parts = [mx.nd.ones((BIG,)) for _ in range(1 + (rank + step) % 2)]
        if (rank + step) % 3 == 0:
            kv.pushpull("big", parts)
            kv.pull("big", out=out)
        elif (rank + step) % 3 == 1:
            kv.push("big", parts)
            kv.pull("big", out=out)
        else:
            kv.pushpull("big", parts, out=out)
        expect = sum(1 + (r + step) % 2 for r in range(n))
        check(np.all(out.asnumpy() == expect), f"step {step}: {out.asnumpy()[:3]} != {expect}")
    kv.barrier()


def key_order_in_a_call(kv, mx) -> None:
    """The keys of one call may come in any order on each rank: the sums are those of MXNet."""
    rank, n = kv.rank, kv.num_workers
    keys = ["a", "b", "c", "big", "0"]  # one kind of key per store, as in MXNet 1.9.1
    shapes = [(10,), (2, 2), (5,), (BIG,), (3,)]
    dtypes = ["float32", "float64", "float32", "float32", "int32"]
    kv.init(keys, [mx.nd.zeros(s, dtype=d) for s, d in zip(shapes, dtypes, strict=True)])
    order = np.random.default_rng(rank).permutation(len(keys)) if rank else np.arange(len(keys))
    for _ in range(2):
        kv.push([keys[i] for i in order], [mx.nd.ones(shapes[i], dtype=dtypes[i]) * (i + rank + 1) for i in order])
    outs = [mx.nd.zeros(s, dtype=d) for s, d in zip(shapes, dtypes, strict=True)]
    kv.pull(keys, out=outs)
    for i, (key, out) in enumerate(zip(keys, outs, strict=True)):
        expect = sum(i + r + 1 for r in range(n))
        check(np.all(out.asnumpy() == expect), f"key {key!r}: {out.asnumpy().ravel()[:3]} != {expect}")
    kv.barrier()
