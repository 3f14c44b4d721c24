"""The loops users write, timed against hand-written NumPy and PyTorch eager doing the same work.

Four loops over one MNIST epoch (60,000 images, batch 128) of the 784-128-64-10 ReLU MLP with
a softmax loss, each written as a user would:

- ``seed``: bind with ``simple_bind``; per batch ``arg_dict['data'][:] = batch`` from NumPy
  batches, ``forward(is_train=True)``, ``backward()``, then ``W[:] = W - G * lr`` per weight;
- ``sgd_update``: the same loop with ``mx.nd.sgd_update(W, G, lr=lr, out=W)`` as the update;
- ``fit``: ``FeedForward.fit`` for one epoch (shuffled batches, SGD, the accuracy metric);
- ``autograd``: no symbol: ``nd.FullyConnected``/``nd.relu`` and the same ``SoftmaxOutput`` loss
  head under ``mx.autograd.record()``, ``loss.backward()``, ``mx.nd.sgd_update(W, W.grad, lr=lr,
  out=W)`` (``--autograd-loss softmax_cross_entropy`` for that loss instead); its PyTorch row is
  ``nn.Linear`` layers, ``loss.backward()`` and ``optim.SGD``.

Each has a hand NumPy and a PyTorch eager counterpart doing the same work (the same batch
copies, the same update expression, the same metric).  Every row runs in its own process
(``--row NAME``), with the libraries' default thread settings; the rows are alternated over
``--rounds`` rounds and the table gives each row's median.  Run::

    LAZYND_DATA_DIR=../shared/data python bench/user_loops.py --rounds 3

``--ctx gpu`` runs the lazynd rows on gpu(0) and the PyTorch rows on CUDA (each batch still
copied from NumPy; the hand NumPy rows stay on the CPU as the common reference).

Before the timed epoch every row runs its loop over the first ``--warmup`` batches (default 5)
from fresh parameters, untimed: what a process pays once (kernels compiled or loaded, cuBLAS
handles, memory pools growing) is not part of an epoch.  Those seconds are printed as each
row's cold start; ``--warmup 0`` times a cold first epoch instead.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # this checkout's lazynd, not an installed one
BATCH, SIZES = 128, (784, 128, 64, 10)
LR = 0.1  # per example: the seed loops scale it by 1/BATCH (SoftmaxOutput's gradient is a sum)
AUTOGRAD_LOSSES = ("SoftmaxOutput", "softmax_cross_entropy")
AUTOGRAD_LOSS = AUTOGRAD_LOSSES[0]  # the autograd loop's loss (--autograd-loss)
DEVICE = "cpu"  # where the lazynd and PyTorch rows run (--ctx); hand NumPy always runs on the CPU


def load_data() -> tuple[np.ndarray, np.ndarray]:
    """MNIST's training set as float32 (n, 784) in [0, 1] and float32 labels; random data without it."""
    try:
        from lazynd.datasets import load_mnist

        images, labels = load_mnist(train=True, download=False)
        return (images.reshape(-1, 784) / 255.0).astype(np.float32), labels.astype(np.float32)
    except Exception:  # noqa: BLE001 - the benchmark still runs, on random data
        rng = np.random.default_rng(0)
        return rng.random((60000, 784), dtype=np.float32), rng.integers(0, 10, 60000).astype(np.float32)


def init_params() -> list[np.ndarray]:
    """Weights in FullyConnected's (out, in) layout and biases (out,), the same for every row."""
    rng = np.random.default_rng(1)
    params = []
    for fan_in, fan_out in zip(SIZES[:-1], SIZES[1:], strict=True):
        params.append((rng.standard_normal((fan_out, fan_in)) * np.sqrt(2.0 / fan_in)).astype(np.float32))
        params.append(np.zeros((fan_out,), np.float32))
    return params


def accuracy(params: list[np.ndarray], x: np.ndarray, y: np.ndarray) -> float:
    h = x
    for i in range(3):
        h = h @ params[2 * i].T + params[2 * i + 1]
        if i < 2:
            h = np.maximum(h, 0)
    return float((h.argmax(axis=1) == y).mean())


# -- lazynd ---------------------------------------------------------------------------------------
def _lazynd_ctx() -> object:
    import lazynd as mx

    return mx.gpu(0) if DEVICE == "gpu" else mx.cpu()


def _mlp_symbol() -> object:
    import lazynd_sym as sym

    x = sym.Variable("data")
    for i, hidden in enumerate(SIZES[1:], 1):
        x = sym.FullyConnected(x, num_hidden=hidden, name=f"fc{i}")
        if i < 3:
            x = sym.Activation(x, act_type="relu", name=f"relu{i}")
    return sym.SoftmaxOutput(x, name="softmax")


def lazynd_loop(x: np.ndarray, y: np.ndarray, update: str) -> tuple[float, list[np.ndarray]]:
    import lazynd as mx

    net = _mlp_symbol()
    names = [n for n in net.list_arguments() if n not in ("data", "softmax_label")]
    # gradients of the parameters only, as the hand-written loops compute
    ex = net.simple_bind(_lazynd_ctx(), grad_req={n: "write" for n in names}, data=(BATCH, 784), softmax_label=(BATCH,))
    for name, value in zip(names, init_params(), strict=True):
        ex.arg_dict[name][:] = value
    pairs = [(ex.arg_dict[n], ex.grad_dict[n]) for n in names]
    data, label = ex.arg_dict["data"], ex.arg_dict["softmax_label"]
    lr = LR / BATCH
    mx.nd.waitall()
    start = time.perf_counter()
    for k in range(0, len(x) - BATCH + 1, BATCH):
        data[:] = x[k : k + BATCH]
        label[:] = y[k : k + BATCH]
        ex.forward(is_train=True)
        ex.backward()
        if update == "seed":
            for w, g in pairs:
                w[:] = w - g * lr
        else:
            for w, g in pairs:
                mx.nd.sgd_update(w, g, lr=lr, out=w)
    mx.nd.waitall()
    return time.perf_counter() - start, [w.asnumpy() for w, _ in pairs]


def lazynd_fit(x: np.ndarray, y: np.ndarray) -> tuple[float, list[np.ndarray]]:
    import lazynd as mx
    from lazynd_sym.model import FeedForward

    net = _mlp_symbol()
    names = [n for n in net.list_arguments() if n not in ("data", "softmax_label")]
    params = {n: mx.nd.array(v) for n, v in zip(names, init_params(), strict=True)}
    model = FeedForward(
        net, ctx=_lazynd_ctx(), num_epoch=1, optimizer="sgd", learning_rate=LR, numpy_batch_size=BATCH,
        arg_params=params, progress_bar=False,
    )  # fmt: skip
    mx.random.seed(0)
    np.random.seed(0)  # NDArrayIter shuffles with NumPy's global generator, as MXNet's does
    start = time.perf_counter()
    model.fit(x, y)
    mx.nd.waitall()
    return time.perf_counter() - start, [model.arg_params[n].asnumpy() for n in names]


def lazynd_autograd(x: np.ndarray, y: np.ndarray, loss_name: str) -> tuple[float, list[np.ndarray]]:
    import lazynd as mx

    loss_of = getattr(mx.nd, loss_name)  # SoftmaxOutput or softmax_cross_entropy: the same gradient
    ctx = _lazynd_ctx()
    params = [mx.nd.array(p, ctx=ctx) for p in init_params()]
    for p in params:
        p.attach_grad()
    data, label = mx.nd.empty((BATCH, 784), ctx=ctx), mx.nd.empty((BATCH,), ctx=ctx)
    lr = LR / BATCH  # both losses sum over the batch
    mx.nd.waitall()
    start = time.perf_counter()
    for k in range(0, len(x) - BATCH + 1, BATCH):
        data[:] = x[k : k + BATCH]
        label[:] = y[k : k + BATCH]
        with mx.autograd.record():
            h = data
            for i in range(3):
                h = mx.nd.FullyConnected(h, params[2 * i], params[2 * i + 1], num_hidden=SIZES[i + 1])
                if i < 2:
                    h = mx.nd.relu(h)
            loss = loss_of(h, label)
        loss.backward()
        for w in params:
            mx.nd.sgd_update(w, w.grad, lr=lr, out=w)
    mx.nd.waitall()
    return time.perf_counter() - start, [p.asnumpy() for p in params]


# -- hand NumPy -----------------------------------------------------------------------------------
class NumpyMLP:
    """The MLP's forward and backward by hand, into the gradients of ``params``."""

    def __init__(self) -> None:
        self.params = init_params()
        self.grads = [np.empty_like(p) for p in self.params]
        self.eye = np.eye(10, dtype=np.float32)

    def step(self, xb: np.ndarray, yb: np.ndarray) -> np.ndarray:
        w1, b1, w2, b2, w3, b3 = self.params
        h1 = np.maximum(xb @ w1.T + b1, 0)
        h2 = np.maximum(h1 @ w2.T + b2, 0)
        z = h2 @ w3.T + b3
        p = np.exp(z - z.max(axis=1, keepdims=True))
        p /= p.sum(axis=1, keepdims=True)
        d3 = p - self.eye[yb.astype(np.int64)]
        d2 = (d3 @ w3) * (h2 > 0)
        d1 = (d2 @ w2) * (h1 > 0)
        g = self.grads
        np.matmul(d3.T, h2, out=g[4])
        np.sum(d3, axis=0, out=g[5])
        np.matmul(d2.T, h1, out=g[2])
        np.sum(d2, axis=0, out=g[3])
        np.matmul(d1.T, xb, out=g[0])
        np.sum(d1, axis=0, out=g[1])
        return p


def numpy_loop(x: np.ndarray, y: np.ndarray, update: str) -> tuple[float, list[np.ndarray]]:
    net = NumpyMLP()
    data, label = np.empty((BATCH, 784), np.float32), np.empty((BATCH,), np.float32)
    lr = LR / BATCH
    start = time.perf_counter()
    for k in range(0, len(x) - BATCH + 1, BATCH):
        data[:] = x[k : k + BATCH]
        label[:] = y[k : k + BATCH]
        net.step(data, label)
        if update == "seed":
            for w, g in zip(net.params, net.grads, strict=True):
                w[:] = w - g * lr
        else:
            for w, g in zip(net.params, net.grads, strict=True):
                w -= lr * g
    return time.perf_counter() - start, net.params


def numpy_fit(x: np.ndarray, y: np.ndarray) -> tuple[float, list[np.ndarray]]:
    net = NumpyMLP()
    data, label = np.empty((BATCH, 784), np.float32), np.empty((BATCH,), np.float32)
    lr = LR / BATCH
    start = time.perf_counter()
    order = np.random.default_rng(0).permutation(len(x))
    correct = 0
    for k in range(0, len(x) - BATCH + 1, BATCH):
        index = order[k : k + BATCH]
        data[:] = x[index]
        label[:] = y[index]
        p = net.step(data, label)
        for w, g in zip(net.params, net.grads, strict=True):
            w -= lr * g
        correct += int((p.argmax(axis=1) == label).sum())
    return time.perf_counter() - start, net.params


# -- PyTorch eager --------------------------------------------------------------------------------
def _torch_model() -> tuple[object, list]:
    import torch

    layers = []
    params = init_params()
    for i in range(3):
        linear = torch.nn.Linear(SIZES[i], SIZES[i + 1])
        with torch.no_grad():
            linear.weight.copy_(torch.from_numpy(params[2 * i]))
            linear.bias.copy_(torch.from_numpy(params[2 * i + 1]))
        layers.append(linear)
        if i < 2:
            layers.append(torch.nn.ReLU())
    model = torch.nn.Sequential(*layers).to(_torch_device())
    return model, list(model.parameters())


def _torch_device() -> object:
    import torch

    return torch.device("cuda" if DEVICE == "gpu" else "cpu")


def _torch_batch() -> tuple[object, object]:
    """The batch tensors a loop copies each batch into, on the device."""
    import torch

    device = _torch_device()
    return torch.empty((BATCH, 784), device=device), torch.empty((BATCH,), dtype=torch.int64, device=device)


def _torch_done(start: float, params: list) -> tuple[float, list[np.ndarray]]:
    """The loop's time (once the device is done) and its parameters as NumPy arrays."""
    import torch

    if DEVICE == "gpu":
        torch.cuda.synchronize()
    return time.perf_counter() - start, [p.detach().cpu().numpy() for p in params]


def torch_loop(x: np.ndarray, y: np.ndarray, update: str) -> tuple[float, list[np.ndarray]]:
    import torch

    model, params = _torch_model()
    data, label = _torch_batch()
    lr = LR / BATCH
    start = time.perf_counter()
    for k in range(0, len(x) - BATCH + 1, BATCH):
        data[:] = torch.from_numpy(x[k : k + BATCH])
        label[:] = torch.from_numpy(y[k : k + BATCH])
        for p in params:
            p.grad = None
        loss = torch.nn.functional.cross_entropy(model(data), label, reduction="sum")
        loss.backward()
        with torch.no_grad():
            if update == "seed":
                for w in params:
                    w[:] = w - w.grad * lr
            else:
                for w in params:
                    w.add_(w.grad, alpha=-lr)
    return _torch_done(start, params)


def torch_autograd(x: np.ndarray, y: np.ndarray) -> tuple[float, list[np.ndarray]]:
    import torch

    model, params = _torch_model()
    optimizer = torch.optim.SGD(params, lr=LR / BATCH)
    data, label = _torch_batch()
    start = time.perf_counter()
    for k in range(0, len(x) - BATCH + 1, BATCH):
        data[:] = torch.from_numpy(x[k : k + BATCH])
        label[:] = torch.from_numpy(y[k : k + BATCH])
        optimizer.zero_grad()
        torch.nn.functional.cross_entropy(model(data), label, reduction="sum").backward()
        optimizer.step()
    return _torch_done(start, params)


def torch_fit(x: np.ndarray, y: np.ndarray) -> tuple[float, list[np.ndarray]]:
    import torch

    model, params = _torch_model()
    optimizer = torch.optim.SGD(params, lr=LR / BATCH)
    data, label = _torch_batch()
    xt, yt = torch.from_numpy(x), torch.from_numpy(y)
    start = time.perf_counter()
    order = torch.from_numpy(np.random.default_rng(0).permutation(len(x)))
    correct = 0
    for k in range(0, len(x) - BATCH + 1, BATCH):
        index = order[k : k + BATCH]
        data[:] = xt[index]
        label[:] = yt[index]
        optimizer.zero_grad()
        out = model(data)
        torch.nn.functional.cross_entropy(out, label, reduction="sum").backward()
        optimizer.step()
        correct += int((out.argmax(dim=1) == label).sum())
    return _torch_done(start, params)


ROWS: dict[str, Callable[[np.ndarray, np.ndarray], tuple[float, list[np.ndarray]]]] = {
    "seed/lazynd": lambda x, y: lazynd_loop(x, y, "seed"),
    "seed/numpy": lambda x, y: numpy_loop(x, y, "seed"),
    "seed/torch": lambda x, y: torch_loop(x, y, "seed"),
    "sgd_update/lazynd": lambda x, y: lazynd_loop(x, y, "sgd_update"),
    "sgd_update/numpy": lambda x, y: numpy_loop(x, y, "sgd_update"),
    "sgd_update/torch": lambda x, y: torch_loop(x, y, "sgd_update"),
    "fit/lazynd": lazynd_fit,
    "fit/numpy": numpy_fit,
    "fit/torch": torch_fit,
    "autograd/lazynd": lambda x, y: lazynd_autograd(x, y, AUTOGRAD_LOSS),
    "autograd/numpy": lambda x, y: numpy_loop(x, y, "sgd_update"),
    "autograd/torch": torch_autograd,
}


def run_row(name: str, limit: int | None, warmup: int = 0) -> None:
    """Run one row in this process, after ``warmup`` batches of it from fresh parameters;
    print ``{"seconds": ..., "accuracy": ..., "cold": <the warm-up's seconds>}``."""
    x, y = load_data()
    if limit:
        x, y = x[:limit], y[:limit]
    cold = ROWS[name](x[: warmup * BATCH], y[: warmup * BATCH])[0] if warmup else 0.0
    seconds, params = ROWS[name](x, y)
    print(json.dumps({"seconds": seconds, "accuracy": accuracy(params, x[:10000], y[:10000]), "cold": cold}))


def torch_available() -> bool:
    try:
        import torch  # noqa: F401
    except ImportError:
        return False
    return True


def main() -> None:
    global AUTOGRAD_LOSS, DEVICE  # the row processes' autograd loss and device, from the options
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3, help="rounds of every row; the table gives medians")
    parser.add_argument("--loops", default="seed,sgd_update,fit,autograd", help="which loops (comma-separated)")
    parser.add_argument("--limit", type=int, default=0, help="train on the first N images only (0: all)")
    parser.add_argument(
        "--autograd-loss", choices=AUTOGRAD_LOSSES, default=AUTOGRAD_LOSS, help="the autograd loop's loss"
    )
    parser.add_argument(
        "--ctx", choices=("cpu", "gpu"), default=DEVICE, help="device of the lazynd and PyTorch rows (NumPy: the CPU)"
    )
    parser.add_argument(
        "--warmup", type=int, default=5, help="batches each row runs untimed first (0: time a cold epoch)"
    )
    parser.add_argument("--row", help=argparse.SUPPRESS)
    opts = parser.parse_args()
    AUTOGRAD_LOSS, DEVICE = opts.autograd_loss, opts.ctx
    if opts.row:
        run_row(opts.row, opts.limit, opts.warmup)
        return
    faces = ["lazynd", "numpy"] + (["torch"] if torch_available() else [])
    loops = [loop for loop in opts.loops.split(",") if loop]
    rows = [f"{loop}/{face}" for loop in loops for face in faces]
    times: dict[str, list[float]] = {row: [] for row in rows}
    colds: dict[str, list[float]] = {row: [] for row in rows}
    accuracies: dict[str, float] = {}
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    for r in range(opts.rounds):
        # alternate: each round starts one row further on, so no row always runs first
        for row in rows[r % len(rows) :] + rows[: r % len(rows)]:
            command = [sys.executable, __file__, "--row", row, "--limit", str(opts.limit)]
            command += ["--autograd-loss", opts.autograd_loss, "--ctx", opts.ctx, "--warmup", str(opts.warmup)]
            result = subprocess.run(command, env=env, capture_output=True, text=True, timeout=1800, check=False)
            if result.returncode != 0:
                raise SystemExit(f"row {row} failed:\n{result.stderr[-3000:]}")
            record = json.loads(result.stdout.strip().splitlines()[-1])
            times[row].append(record["seconds"])
            colds[row].append(record["cold"])
            accuracies[row] = record["accuracy"]
    where = "gpu(0) and CUDA (NumPy on the CPU)" if opts.ctx == "gpu" else "the CPU"
    print(
        f"user loops: one MNIST epoch, batch {BATCH}, on {where}, median of {opts.rounds} rounds (s), default threads, "
        f"after {opts.warmup} warm-up batches"
    )
    print(
        "| loop | lazynd s | hand NumPy s | PyTorch eager s | lazynd / NumPy | lazynd / PyTorch | accuracy (lazynd, NumPy, torch) |"
    )
    print("|---|---|---|---|---|---|---|")
    for loop in loops:
        med = {face: statistics.median(times[f"{loop}/{face}"]) for face in faces}
        torch_s = f"{med['torch']:.3f}" if "torch" in med else "not installed"
        vs_torch = f"{med['lazynd'] / med['torch']:.2f}" if "torch" in med else "-"
        acc = ", ".join(f"{accuracies[f'{loop}/{face}']:.3f}" for face in faces)
        print(
            f"| {loop} | {med['lazynd']:.3f} | {med['numpy']:.3f} | {torch_s} | "
            f"{med['lazynd'] / med['numpy']:.2f} | {vs_torch} | {acc} |"
        )
    print("\nper round (s): " + "; ".join(f"{row} " + ", ".join(f"{t:.3f}" for t in times[row]) for row in rows))
    if opts.warmup:
        print(
            f"cold start ({opts.warmup} warm-up batches, s, median): "
            + "; ".join(f"{row} {statistics.median(colds[row]):.3f}" for row in rows)
        )


if __name__ == "__main__":
    main()
