"""One worker of the dist_sync tests, started by tests/kv/test_kvstore_dist.py under mpiexec.

``python kv_dist_worker.py MODE [STORE]``; prints ``OK <rank>`` on success.
Modes: ``semantics``, ``large_keys``, ``pushpull``, ``pushpull_errors``, ``uneven_local_sums``, ``train``,
``train_optimizer``, ``key_order_in_a_call``, ``push_order``, ``a_worker_ends_first``, ``finalize_explicitly``, ``init_mismatch``, ``slow_peer``, ``log``,
``raise``, ``raise_before_store``, ``die``, ``die_large``, ``stall``.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time

import numpy as np


def check(cond: bool, what: str) -> None:
    if not cond:
        raise AssertionError(what)


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
    keys = ["a", "b", "big", 4]
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


BIG = 300_001  # 1.2 MB of float32: reduced alone; not a multiple of 2 or 3


def _pushpull_keys(mx):
    keys = ["small", "big", "big64"]
    shapes = [(3, 4), (BIG,), (BIG,)]
    dtypes = ["float32", "float32", "float64"]
    return keys, shapes, dtypes


def _same_everywhere(kv, arrays, what: str) -> None:
    mine = b"".join(a.asnumpy().tobytes() for a in arrays)
    everyone = kv._comm.allgather(mine)
    check(all(b == everyone[0] for b in everyone), f"{what}: every rank holds identical results")


def pushpull(kv, mx, store) -> None:
    """pushpull gives what push then pull gives on a twin store, for small and large keys, lists,
    several outputs, in place, with and without an updater; the store keeps the sum."""
    rank, n = kv.rank, kv.num_workers
    twin = mx.kv.create(store)
    keys, shapes, dtypes = _pushpull_keys(mx)
    ramp = [np.arange(int(np.prod(s)), dtype=d).reshape(s) % 89 for s, d in zip(shapes, dtypes, strict=True)]
    for store_ in (kv, twin):
        store_.init(keys, [mx.nd.array(r, dtype=d) for r, d in zip(ramp, dtypes, strict=True)])

    def values(step):
        return [
            [mx.nd.array(r * (rank + step + 1) + d, dtype=dt) for d in range(2)]
            for r, dt in zip(ramp, dtypes, strict=True)
        ]

    def zeros():
        return [[mx.nd.zeros(s, dtype=d) for _ in range(2)] for s, d in zip(shapes, dtypes, strict=True)]

    for phase in ("assign", "updater"):
        if phase == "updater":
            for store_ in (kv, twin):
                store_.set_updater(lambda key, recv, stored: stored.__isub__(recv * 0.5))
        for step in range(3):
            pushed, outs, expect = values(step), zeros(), zeros()
            kv.pushpull(keys, pushed, out=outs)
            twin.push(keys, values(step))
            twin.pull(keys, out=expect)
            for k, got, want in zip(keys, outs, expect, strict=True):
                for g, w in zip(got, want, strict=True):
                    check(np.array_equal(g.asnumpy(), w.asnumpy()), f"{phase} key {k}: {g.asnumpy().ravel()[:3]}")
            for p, q in zip(sum(pushed, []), sum(values(step), []), strict=True):
                check(np.array_equal(p.asnumpy(), q.asnumpy()), "the pushed arrays are left unchanged")
            _same_everywhere(kv, sum(outs, []), phase)
            # the store keeps the sum though every output is written afterwards
            for o in sum(outs, []):
                o[:] = -7
            later = zeros()
            kv.pull(keys, out=later)
            for k, got, want in zip(keys, later, expect, strict=True):
                check(np.array_equal(got[0].asnumpy(), want[0].asnumpy()), f"{phase} key {k} kept by the store")
        # out=None: the sum lands in the pushed arrays themselves (gradients summed in place)
        grads, expect = values(5), zeros()
        kv.pushpull(keys, grads)
        twin.push(keys, values(5))
        twin.pull(keys, out=expect)
        for k, got, want in zip(keys, grads, expect, strict=True):
            for g, w in zip(got, want, strict=True):
                check(np.array_equal(g.asnumpy(), w.asnumpy()), f"{phase} in place, key {k}")
        _same_everywhere(kv, sum(grads, []), f"{phase} in place")
    # one key, one array, into itself and into two outputs
    kv.set_updater(lambda key, recv, stored: recv.copyto(stored))
    one = mx.nd.ones((BIG,)) * (rank + 1)
    kv.pushpull("big", one)
    check(np.all(one.asnumpy() == n * (n + 1) / 2), f"one array in place: {one.asnumpy()[:3]}")
    kv._updater = None  # back to the default assign
    first, second = mx.nd.zeros((BIG,)), mx.nd.zeros((BIG,))
    kv.pushpull("big", mx.nd.ones((BIG,)) * (rank + 1), out=[first, second])
    first[:] = 0
    check(np.all(second.asnumpy() == n * (n + 1) / 2), "the second output is a copy of the sum")
    kept = mx.nd.zeros((BIG,))
    kv.pull("big", out=kept)
    check(np.all(kept.asnumpy() == n * (n + 1) / 2), "the store keeps the sum after the first output is cleared")
    # an output of one key that is pushed for a later key: every value is read before any output is written
    kv.init("big2", mx.nd.zeros((BIG,)))
    a, b, c = (mx.nd.ones((BIG,)) * (rank + 1) * m for m in (1, 10, 0))
    kv.pushpull(["big", "big2"], [a, b], out=[b, c])
    check(np.all(b.asnumpy() == n * (n + 1) / 2), f"first key into the second key's value: {b.asnumpy()[:3]}")
    check(np.all(c.asnumpy() == 10 * n * (n + 1) / 2), f"the second key summed the value before: {c.asnumpy()[:3]}")
    # two keys pulled into one output: it ends with the last key's sum, and each key keeps its own
    shared, kept2 = mx.nd.zeros((BIG,)), mx.nd.zeros((BIG,))
    kv.pushpull(["big", "big2"], [mx.nd.ones((BIG,)), mx.nd.ones((BIG,)) * 10], out=[shared, shared])
    kv.pull(["big", "big2"], out=[kept, kept2])
    check(np.all(shared.asnumpy() == 10 * n), f"one output of two keys holds the last: {shared.asnumpy()[:3]}")
    check(np.all(kept.asnumpy() == n), f"the first key keeps its own sum: {kept.asnumpy()[:3]}")
    check(np.all(kept2.asnumpy() == 10 * n), f"the second key keeps its own sum: {kept2.asnumpy()[:3]}")
    other = mx.nd.zeros((BIG,))
    kv.pushpull(["big", "big2"], [mx.nd.ones((BIG,)), mx.nd.ones((BIG,)) * 10], out=[[other, shared], shared])
    kv.pull(["big", "big2"], out=[kept, kept2])
    check(
        np.all(shared.asnumpy() == 10 * n), f"the second output of one key, first of the next: {shared.asnumpy()[:3]}"
    )
    check(np.all(kept.asnumpy() == n) and np.all(other.asnumpy() == n), f"the first key's sum: {kept.asnumpy()[:3]}")
    check(np.all(kept2.asnumpy() == 10 * n), f"the second key keeps its own sum: {kept2.asnumpy()[:3]}")
    kv.barrier()


def pushpull_errors(kv, mx) -> None:
    """Bad pushpull calls raise the push/pull errors on every rank before any collective starts."""
    from lazynd.errors import LazyNDError, ShapeError

    kv.init(["w", "big"], [mx.nd.ones((4,)), mx.nd.ones((BIG,))])
    bad = [
        (lambda: kv.pushpull("nope", mx.nd.ones((4,))), LazyNDError, "KVStore.pushpull: key 'nope' is not initialised"),
        (lambda: kv.pushpull("big", mx.nd.ones((5,))), ShapeError, "key 'big' holds shape (300001,), pushed value"),
        (
            lambda: kv.pushpull("big", mx.nd.ones((BIG,)), out=mx.nd.zeros((4,))),
            ShapeError,
            "key 'big' holds shape (300001,), output has shape (4,)",
        ),
        (
            lambda: kv.pushpull("w", mx.nd.ones((4,), dtype="float64")),
            ShapeError,
            "key 'w' holds dtype float32, pushed value has dtype float64",
        ),
        (
            lambda: kv.pushpull(["w", "big"], [mx.nd.ones((4,)), mx.nd.ones((BIG,))], out=[mx.nd.zeros((4,))]),
            LazyNDError,
            "pushpull: 2 keys need a list of 2 values (or lists), got 1",
        ),
    ]
    for call, kind, message in bad:
        try:
            call()
        except kind as err:
            check(message in str(err), f"error message: {err}")
        else:
            raise AssertionError(f"no error for: {message}")
    out = mx.nd.zeros((BIG,))
    kv.pushpull("big", mx.nd.ones((BIG,)), out=out)  # the collectives still line up
    check(np.all(out.asnumpy() == kv.num_workers), "a good pushpull after the bad ones")
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
    keys = ["a", "b", 3, "big", 1]
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


def _expect_disagreement(call, *fragments: str) -> None:
    from lazynd.errors import LazyNDError

    try:
        call()
    except LazyNDError as err:
        for fragment in fragments:
            check(fragment in str(err), f"{fragment!r} not in: {err}")
    else:
        raise AssertionError(f"no error; expected one saying {fragments}")


def push_order(kv, mx) -> None:
    """Keys pushed in a different order on different ranks: a clear error on every rank, not garbage."""
    rank = kv.rank
    kv.init(["a", "b"], [mx.nd.zeros((10,)), mx.nd.zeros((4,), dtype="float64")])
    pushes = [("a", mx.nd.ones((10,))), ("b", mx.nd.ones((4,), dtype="float64"))]
    for key, value in pushes if rank == 0 else pushes[::-1]:
        kv.push(key, value)
    out = mx.nd.zeros((10,))
    kv.pull("a", out=out)
    _expect_disagreement(
        out.asnumpy,
        "KVStore dist_sync: the workers disagree on the next collective operation",
        "rank 0 is about to run the Allreduce of keys ['a'] (10 elements of float32)",
        "rank 1 is about to run the Allreduce of keys ['b'] (4 elements of float64)",
        "in the same order",
    )
    # the store is out of use from then on: the next call says so at once
    _expect_disagreement(lambda: kv.push("a", mx.nd.ones((10,))), "the workers disagree")


def a_worker_ends_first(kv, mx) -> None:
    """A worker that ends its program with fewer pushes than rank 0: rank 0's next push fails at once,
    naming both, instead of waiting out the watchdog as for a dead worker."""
    kv.init("a", mx.nd.zeros((10,)))
    for _ in range(2 if kv.rank == 0 else 1):
        kv.push("a", mx.nd.ones((10,)))
    out = mx.nd.zeros((10,))
    kv.pull("a", out=out)
    if kv.rank == 0:
        _expect_disagreement(
            out.asnumpy,
            "rank 0 is about to run the Allreduce of keys ['a'] (10 elements of float32)",
            "rank 1 is about to run the end of its program",
        )


def finalize_explicitly(kv, mx) -> None:
    """A program that calls MPI.Finalize() itself after its last push ends cleanly."""
    from mpi4py import MPI

    kv.init("a", mx.nd.zeros((10,)))
    kv.push("a", mx.nd.ones((10,)))
    out = mx.nd.zeros((10,))
    kv.pull("a", out=out)
    check(np.all(out.asnumpy() == kv.num_workers), f"sum: {out.asnumpy()[:3]}")
    MPI.Finalize()


def init_mismatch(kv, mx) -> None:
    """Ranks that init a key with another shape, or another dtype, get a clear error from init itself."""
    rank = kv.rank
    _expect_disagreement(
        lambda: kv.init("w", mx.nd.zeros((3 + rank, 2))),
        "rank 0 is about to run the broadcast of key 'w' (init) (shape (3, 2), float32)",
        "rank 1 is about to run the broadcast of key 'w' (init) (shape (4, 2), float32)",
    )
    other = mx.kv.create("dist_sync")
    _expect_disagreement(
        lambda: other.init(["x", "w"], [mx.nd.zeros((2,)), mx.nd.zeros((5,), dtype="float64" if rank else "float32")]),
        "rank 1 is about to run the broadcast of key 'w' (init) (shape (5,), float64)",
    )


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


def make_data(n_workers: int, per_worker: int, steps: int):
    rng = np.random.default_rng(0)
    n = n_workers * per_worker
    xs = rng.standard_normal((steps, n, 6)).astype(np.float32)
    ys = rng.standard_normal((steps, n, 3)).astype(np.float32)
    params = {
        "w1": (rng.standard_normal((6, 8)) * 0.5).astype(np.float32),
        "b1": np.zeros((1, 8), np.float32),
        "w2": (rng.standard_normal((8, 3)) * 0.5).astype(np.float32),
        "b2": np.zeros((1, 3), np.float32),
    }
    return xs, ys, params


def gradients(F, dot, badd, ones, x, y, p, n_total):
    """MLP with a sigmoid hidden layer and squared error; the same code runs on NumPy and on lazynd."""
    h = 1.0 / (1.0 + F.exp(-badd(dot(x, p["w1"]), p["b1"])))
    err = (badd(dot(h, p["w2"]), p["b2"]) - y) * (1.0 / n_total)
    dz = dot(err, p["w2"], transpose_b=True) * h * (1.0 - h)
    row = ones((1, x.shape[0]))
    return {
        "w1": dot(x, dz, transpose_a=True),
        "b1": dot(row, dz),
        "w2": dot(h, err, transpose_a=True),
        "b2": dot(row, err),
    }


def np_dot(a, b, transpose_a=False, transpose_b=False):
    return (a.T if transpose_a else a) @ (b.T if transpose_b else b)


def train(kv, mx, use_optimizer: bool) -> None:
    rank, n = kv.rank, kv.num_workers
    steps, per_worker, lr, momentum = 8, 5, 0.5, 0.9
    xs, ys, init = make_data(n, per_worker, steps)
    names = sorted(init)
    # every rank starts from its own weights: init must hand out rank 0's
    params = {k: mx.nd.array(v + rank) for k, v in init.items()}
    kv.init(names, [params[k] for k in names])
    if use_optimizer:
        kv.set_optimizer(mx.optimizer.create("sgd", learning_rate=lr, momentum=momentum, rescale_grad=1.0))
    else:
        kv.set_updater(lambda key, grad, weight: weight.__isub__(grad * lr))
    kv.pull(names, out=[params[k] for k in names])
    lo, hi = rank * per_worker, (rank + 1) * per_worker
    for step in range(steps):
        x, y = mx.nd.array(xs[step, lo:hi]), mx.nd.array(ys[step, lo:hi])
        grads = gradients(mx.nd, mx.nd.dot, mx.nd.broadcast_add, mx.nd.ones, x, y, params, n * per_worker)
        kv.push(names, [grads[k] for k in names])
        kv.pull(names, out=[params[k] for k in names])
        if use_optimizer and step == steps // 2:
            path = os.path.join(tempfile.gettempdir(), f"lazynd-kv-{os.getpid()}.states")
            kv.save_optimizer_states(path)
            kv.load_optimizer_states(path)
            os.unlink(path)
    # the same training in one process, on the combined batch, in float64
    ref = {k: v.astype(np.float64) for k, v in init.items()}
    moms = {k: np.zeros_like(v) for k, v in ref.items()}
    for step in range(steps):
        g = gradients(np, np_dot, np.add, np.ones, xs[step].astype(np.float64), ys[step], ref, n * per_worker)
        for k in names:
            if use_optimizer:
                moms[k] = momentum * moms[k] - lr * g[k]
                ref[k] = ref[k] + moms[k]
            else:
                ref[k] = ref[k] - lr * g[k]
    mine = np.concatenate([params[k].asnumpy().ravel() for k in names])
    expect = np.concatenate([ref[k].ravel() for k in names])
    np.testing.assert_allclose(mine, expect, rtol=1e-4, atol=1e-5)
    check(not np.allclose(mine, np.concatenate([init[k].ravel() for k in names])), "training changed the weights")
    everyone = kv._comm.allgather(mine.tobytes())
    check(all(b == everyone[0] for b in everyone), "every rank holds identical weights")


def main() -> None:
    mode = sys.argv[1]
    store = sys.argv[2] if len(sys.argv) > 2 else "dist_sync"
    import lazynd as mx

    if mode == "raise_before_store":
        from mpi4py import MPI

        if MPI.COMM_WORLD.Get_rank() == 1:
            raise ValueError("rank 1 fails before creating its store")
    kv = mx.kv.create(store)
    check(kv.type == store and kv.num_workers >= 1, "store properties")
    if mode == "semantics":
        semantics(kv, mx)
    elif mode == "large_keys":
        large_keys(kv, mx)
    elif mode == "pushpull":
        pushpull(kv, mx, store)
    elif mode == "pushpull_errors":
        pushpull_errors(kv, mx)
    elif mode == "uneven_local_sums":
        uneven_local_sums(kv, mx)
    elif mode in ("train", "train_optimizer"):
        train(kv, mx, mode == "train_optimizer")
    elif mode in (
        "key_order_in_a_call",
        "push_order",
        "a_worker_ends_first",
        "finalize_explicitly",
        "init_mismatch",
        "slow_peer",
        "log",
    ):
        globals()[mode](kv, mx)
    elif mode == "raise":
        kv.init(0, mx.nd.ones((4,)))
        if kv.rank == 1:
            raise ValueError("rank 1 fails here")
        kv.push(0, mx.nd.ones((4,)))
        mx.nd.waitall()
        kv.barrier()
        raise AssertionError("a push with a failed worker must not complete")
    elif mode in ("die", "stall", "die_large"):
        shape = (500_000,) if mode == "die_large" else (4,)  # 2 MB: the reduce-scatter path
        kv.init(0, mx.nd.ones(shape))
        kv.barrier()
        if kv.rank == 1:
            if mode != "stall":
                os._exit(3)
            time.sleep(600)
        kv.push(0, mx.nd.ones(shape))
        out = mx.nd.zeros(shape)
        kv.pull(0, out=out)
        out.asnumpy()
        raise AssertionError("a push with a dead worker must not complete")
    else:
        raise SystemExit(f"unknown mode {mode!r}")
    print(f"OK {kv.rank}", flush=True)


if __name__ == "__main__":
    main()
