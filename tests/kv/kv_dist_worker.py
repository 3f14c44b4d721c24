"""One worker of the dist_sync tests, started by tests/kv/test_kvstore_dist.py under mpiexec.

``python kv_dist_worker.py MODE [STORE]``; prints ``OK <rank>`` on success.
Modes: ``semantics``, ``large_keys``, ``pushpull``, ``pushpull_errors``, ``uneven_local_sums``, ``train``,
``train_optimizer``, ``key_order_in_a_call``, ``push_order``, ``a_worker_ends_first``, ``finalize_explicitly``, ``init_mismatch``, ``slow_peer``, ``log``,
``raise``, ``raise_before_store``, ``die``, ``die_large``, ``stall``.
The scenarios live in the ``kv_dist_*.py`` modules beside it, one group of behaviours each;
this script picks one by its mode and runs the failure modes itself.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable

from kv_dist_check import check
from kv_dist_disagreement import a_worker_ends_first, init_mismatch, push_order
from kv_dist_lifecycle import finalize_explicitly, log, slow_peer
from kv_dist_pushpull import pushpull, pushpull_errors
from kv_dist_sums import key_order_in_a_call, large_keys, semantics, uneven_local_sums
from kv_dist_training import train

# the modes whose scenario takes the store and the lazynd module, nothing else
SCENARIOS: dict[str, Callable] = {
    "semantics": semantics,
    "large_keys": large_keys,
    "pushpull_errors": pushpull_errors,
    "uneven_local_sums": uneven_local_sums,
    "key_order_in_a_call": key_order_in_a_call,
    "push_order": push_order,
    "a_worker_ends_first": a_worker_ends_first,
    "finalize_explicitly": finalize_explicitly,
    "init_mismatch": init_mismatch,
    "slow_peer": slow_peer,
    "log": log,
}


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
    if mode in SCENARIOS:
        SCENARIOS[mode](kv, mx)
    elif mode == "pushpull":
        pushpull(kv, mx, store)
    elif mode in ("train", "train_optimizer"):
        train(kv, mx, mode == "train_optimizer")
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
