"""One worker of the FeedForward ``dist_sync`` test, started by test_feedforward_dist.py under mpiexec.

``python ff_dist_worker.py OUT_DIR NUM_DEVICES [gradients_only]``: trains the small network of
:func:`problem` with ``FeedForward.fit(kvstore=dist_sync)`` on this rank's part
of every combined batch, starting from weights that differ per rank (the store
must hand out rank 0's), then writes its weights to ``OUT_DIR/rank<r>.npz`` and
prints ``OK <rank>``.  The test compares the files across ranks and with
single-process training on the combined batches (:func:`train_single`).
With ``gradients_only`` the store is handed over without ``set_optimizer``, so
``fit`` only sums the gradients through it (``pushpull`` in place) and every
device updates its own weights.
"""

from __future__ import annotations

import os
import sys

import numpy as np

PER_WORKER = 8
STEPS = 4
EPOCHS = 2


def problem(num_workers: int) -> tuple[np.ndarray, np.ndarray, dict[str, np.ndarray]]:
    """``STEPS`` combined batches of ``PER_WORKER * num_workers`` examples, and starting weights."""
    rng = np.random.default_rng(11)
    count = STEPS * PER_WORKER * num_workers
    data = rng.normal(size=(count, 6)).astype(np.float32)
    label = rng.integers(0, 3, count).astype(np.float32)
    params = {
        "fc1_weight": rng.normal(scale=0.5, size=(10, 6)).astype(np.float32),
        "fc1_bias": np.zeros(10, np.float32),
        "fc2_weight": rng.normal(scale=0.5, size=(3, 10)).astype(np.float32),
        "fc2_bias": np.zeros(3, np.float32),
    }
    return data, label, params


def model(mx, ctx, params: dict[str, np.ndarray]):
    import lazynd_sym as sym

    net = sym.FullyConnected(sym.Variable("data"), num_hidden=10, name="fc1")
    net = sym.Activation(net, act_type="tanh", name="tanh1")
    net = sym.FullyConnected(net, num_hidden=3, name="fc2")
    net = sym.SoftmaxOutput(net, name="softmax")
    return mx.model.FeedForward(
        net,
        ctx=ctx,
        num_epoch=EPOCHS,
        optimizer="sgd",
        learning_rate=0.5,
        momentum=0.9,
        wd=1e-3,
        arg_params={k: mx.nd.array(v) for k, v in params.items()},
        progress_bar=False,
    )


def rank_part(data: np.ndarray, num_workers: int, rank: int) -> np.ndarray:
    """This rank's ``PER_WORKER`` rows of every combined batch."""
    batches = data.reshape(STEPS, num_workers, PER_WORKER, *data.shape[1:])
    return batches[:, rank].reshape(STEPS * PER_WORKER, *data.shape[1:])


def train_single(mx, num_workers: int) -> dict[str, np.ndarray]:
    """The reference: one process, one device, the combined batches."""
    data, label, params = problem(num_workers)
    ff = model(mx, mx.cpu(), params)
    ff.fit(mx.io.NDArrayIter(data, label, batch_size=PER_WORKER * num_workers), kvstore=None)
    return {k: v.asnumpy() for k, v in ff.arg_params.items()}


class GradientsOnly:
    """A dist store seen without ``set_optimizer``: ``fit`` then sums gradients through it, updating locally."""

    def __init__(self, store) -> None:
        self._store = store
        self.type, self.num_workers = store.type, store.num_workers
        self.init, self.push, self.pull, self.pushpull = store.init, store.push, store.pull, store.pushpull


def main() -> None:
    out_dir, num_devices = sys.argv[1], int(sys.argv[2])
    gradients_only = sys.argv[3:] == ["gradients_only"]
    import lazynd as mx

    kv = mx.kv.create("dist_sync")
    rank, n = kv.rank, kv.num_workers
    data, label, params = problem(n)
    params = {k: v + rank for k, v in params.items()}  # differs per rank until the store broadcasts rank 0's
    ctx = [mx.cpu(i) for i in range(num_devices)] if num_devices > 1 else mx.cpu()
    ff = model(mx, ctx, params)
    train = mx.io.NDArrayIter(rank_part(data, n, rank), rank_part(label, n, rank), batch_size=PER_WORKER)
    ff.fit(train, kvstore=GradientsOnly(kv) if gradients_only else kv)
    np.savez(os.path.join(out_dir, f"rank{rank}.npz"), **{k: v.asnumpy() for k, v in ff.arg_params.items()})
    kv.barrier()
    print(f"OK {rank}", flush=True)


if __name__ == "__main__":
    main()
