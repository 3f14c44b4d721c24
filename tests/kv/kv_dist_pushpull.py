"""dist_sync scenarios of kv_dist_worker.py: pushpull gives what push then pull gives, and rejects bad calls on every rank."""

from __future__ import annotations

import numpy as np
from kv_dist_check import BIG, check


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
    mixed = mx.nd.ones((BIG,), dtype="float64")  # another dtype than the key's: converted, as in MXNet
    kv.pushpull("big", mixed)
    check(mixed.dtype == np.float64 and np.all(mixed.asnumpy() == kv.num_workers), "a float64 pushpull")
    kv.barrier()
