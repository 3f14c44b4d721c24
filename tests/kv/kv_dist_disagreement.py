"""dist_sync scenarios of kv_dist_worker.py: workers that disagree on the next collective get a clear error, not garbage."""

from __future__ import annotations

from kv_dist_check import check


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
