"""dist_sync scenarios of kv_dist_worker.py: training an MLP on several workers matches one process on the combined batch."""

from __future__ import annotations

import os
import tempfile

import numpy as np
from kv_dist_check import check


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
