"""LeNet on MNIST-sized batches: lazynd's executor against PyTorch eager (cuDNN on a GPU).

The network is ``tutorials/mnist_lenet.py``'s: conv 5x5x20, tanh, max-pool 2, conv 5x5x50, tanh,
max-pool 2, fully connected 500, tanh, fully connected 10, softmax cross-entropy; plain SGD,
float32.  Both sides train on the same batches, already on the device, from the same initial
weights, and the table gives each one's loss after the run so that a fast but wrong side shows.
A second table splits lazynd's step into forward, backward and updates, each timed as pushed
(the host's share) and as done (a wait after each phase).
Each run of each side is a process of its own (the sides taken in turns), so that neither one's
thread pools nor the allocator state it leaves behind change the other's time.
Run: ``python bench/lenet_epoch.py [--ctx gpu|cpu] [--batch 128] [--batches 200] [--repeat 3]``; on gpu(0)
(the default) against PyTorch on CUDA, on the CPU against PyTorch on the CPU.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np

LR = 0.05


def data(count: int) -> tuple[np.ndarray, np.ndarray]:
    try:
        from lazynd.datasets import load_mnist

        images, labels = load_mnist(train=True, download=False)
        images = (images.reshape(-1, 1, 28, 28) / 255.0).astype(np.float32)
        labels = labels.astype(np.float32)
    except Exception:  # noqa: BLE001 - without the data set the benchmark runs on random images
        rng = np.random.default_rng(0)
        images = rng.random((count, 1, 28, 28), dtype=np.float32)
        labels = rng.integers(0, 10, count).astype(np.float32)
    reps = -(-count // len(images))
    return np.concatenate([images] * reps)[:count], np.concatenate([labels] * reps)[:count]


def init_params() -> dict[str, np.ndarray]:
    """Initial weights in MXNet's layouts (conv (out, in, kh, kw), fully connected (out, in))."""
    rng = np.random.default_rng(1)
    shapes = {
        "conv1_weight": (20, 1, 5, 5),
        "conv2_weight": (50, 20, 5, 5),
        "fc1_weight": (500, 800),
        "fc2_weight": (10, 500),
    }
    params = {}
    for name, shape in shapes.items():
        fan_in = int(np.prod(shape[1:]))
        params[name] = (rng.uniform(-1, 1, shape) * np.sqrt(3.0 / fan_in)).astype(np.float32)
        params[name.replace("weight", "bias")] = np.zeros(shape[0], np.float32)
    return params


class LazyndTrainer:
    """LeNet bound on ``ctx_name``'s device with the shared initial weights and the batches ``x``,
    ``y`` on the device: one step's forward, backward and updates, each pushed without waiting.
    As in a Module or FeedForward, only the parameters take gradients (not the data)."""

    def __init__(self, x: np.ndarray, y: np.ndarray, batch: int, ctx_name: str = "gpu") -> None:
        import sys
        from pathlib import Path

        sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tutorials"))
        from mnist_lenet import lenet

        import lazynd as mx

        self.mx, self.batch, ctx = mx, batch, mx.gpu(0) if ctx_name == "gpu" else mx.cpu()
        params = init_params()
        grad_req = {"data": "null", "softmax_label": "null", **dict.fromkeys(params, "write")}
        self.ex = lenet().simple_bind(ctx, grad_req=grad_req, data=(batch, 1, 28, 28), softmax_label=(batch,))
        for name, value in params.items():
            self.ex.arg_dict[name][:] = mx.nd.array(value, ctx=ctx)
        self.pairs = [(self.ex.arg_dict[n], self.ex.grad_dict[n]) for n in params]
        self.xs, self.ys = mx.nd.array(x, ctx=ctx), mx.nd.array(y, ctx=ctx)
        mx.nd.waitall()

    def forward(self, k: int) -> None:
        """Batch ``k`` of the data through the network."""
        b = self.batch
        self.ex.forward(is_train=True, data=self.xs[k * b : (k + 1) * b], softmax_label=self.ys[k * b : (k + 1) * b])

    def backward(self, _: int = 0) -> None:
        self.ex.backward()

    def update(self, _: int = 0) -> None:
        for w, g in self.pairs:
            self.mx.nd.sgd_update(w, g, lr=LR, rescale_grad=1.0 / self.batch, out=w)


def run_lazynd(x: np.ndarray, y: np.ndarray, batch: int, ctx_name: str = "gpu") -> tuple[float, float]:
    trainer = LazyndTrainer(x, y, batch, ctx_name)
    steps = len(x) // batch
    start = time.perf_counter()
    for k in range(steps):
        trainer.forward(k)
        trainer.backward()
        trainer.update()
    trainer.mx.nd.waitall()
    elapsed = time.perf_counter() - start
    prob = trainer.ex.outputs[0].asnumpy()
    label = y[(steps - 1) * batch : steps * batch].astype(np.int64)
    loss = float(-np.log(np.maximum(prob[np.arange(batch), label], 1e-12)).mean())
    return elapsed, loss


def run_lazynd_eager(x: np.ndarray, y: np.ndarray, batch: int, ctx_name: str = "gpu") -> tuple[float, float]:
    """:func:`run_lazynd` with the executor's passes run eagerly (``LAZYND_CUDA_GRAPHS=0`` at its bind)."""
    saved = os.environ.get("LAZYND_CUDA_GRAPHS")
    os.environ["LAZYND_CUDA_GRAPHS"] = "0"
    try:
        return run_lazynd(x, y, batch, ctx_name)
    finally:
        if saved is None:
            del os.environ["LAZYND_CUDA_GRAPHS"]
        else:
            os.environ["LAZYND_CUDA_GRAPHS"] = saved


def phases(
    x: np.ndarray, y: np.ndarray, batch: int, steps: int = 50, ctx_name: str = "gpu"
) -> list[tuple[str, float, float]]:
    """Where a lazynd training step's time goes: for forward, backward and the updates, the host's
    time to push the phase and the time until the device has run it (a wait after each phase),
    in ms a batch.  A phase whose push time is close to its total is bound by the host."""
    trainer = LazyndTrainer(x[: batch * steps], y[: batch * steps], batch, ctx_name)
    wait = trainer.mx.nd.waitall
    parts = [("forward", trainer.forward), ("backward", trainer.backward), ("updates", trainer.update)]
    pushed = {name: 0.0 for name, _ in parts}
    total = {name: 0.0 for name, _ in parts}
    for k in range(steps):
        for name, run in parts:
            wait()
            start = time.perf_counter()
            run(k)
            pushed[name] += time.perf_counter() - start
            wait()
            total[name] += time.perf_counter() - start
    return [(name, pushed[name] / steps * 1e3, total[name] / steps * 1e3) for name, _ in parts]


def run_torch(x: np.ndarray, y: np.ndarray, batch: int, ctx_name: str = "gpu") -> tuple[float, float] | None:
    try:
        import torch
        import torch.nn.functional as F
    except ImportError:
        return None
    if ctx_name == "gpu" and not torch.cuda.is_available():
        return None
    dev = "cuda" if ctx_name == "gpu" else "cpu"
    sync = torch.cuda.synchronize if dev == "cuda" else (lambda: None)
    p = {n: torch.tensor(v, device=dev, requires_grad=True) for n, v in init_params().items()}
    xs, ys = torch.from_numpy(x).to(dev), torch.from_numpy(y.astype(np.int64)).to(dev)
    sync()
    start = time.perf_counter()
    loss = None
    for k in range(0, len(x) - batch + 1, batch):
        h = F.max_pool2d(torch.tanh(F.conv2d(xs[k : k + batch], p["conv1_weight"], p["conv1_bias"])), 2)
        h = F.max_pool2d(torch.tanh(F.conv2d(h, p["conv2_weight"], p["conv2_bias"])), 2)
        h = torch.tanh(F.linear(h.flatten(1), p["fc1_weight"], p["fc1_bias"]))
        logits = F.linear(h, p["fc2_weight"], p["fc2_bias"])
        loss = F.cross_entropy(logits, ys[k : k + batch])
        for v in p.values():
            v.grad = None
        loss.backward()
        with torch.no_grad():
            for v in p.values():
                v -= LR * v.grad
    sync()
    elapsed = time.perf_counter() - start
    return elapsed, float(loss.detach()) if loss is not None else float("nan")


ROWS = {"lazynd": run_lazynd, "torch": run_torch, "lazynd_eager": run_lazynd_eager}


def run_in_process(row: str, args: argparse.Namespace) -> tuple[float, float] | None:
    """One run of ``row`` in a fresh process: (seconds, last loss), or None where the side is missing."""
    command = [sys.executable, __file__, "--row", row, "--ctx", args.ctx, "--batch", str(args.batch)]
    command += ["--batches", str(args.batches)]
    result = subprocess.run(command, capture_output=True, text=True, timeout=1800, check=False)
    if result.returncode != 0:
        raise SystemExit(f"bench/lenet_epoch.py: the {row} run failed:\n{result.stderr[-3000:]}")
    record = json.loads(result.stdout.strip().splitlines()[-1])
    return None if record is None else (record[0], record[1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--ctx", choices=("gpu", "cpu"), default="gpu", help="where both sides train")
    parser.add_argument("--batch", type=int, default=128)
    parser.add_argument("--batches", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=3, help="runs per implementation, in turns (best is shown)")
    parser.add_argument("--row", choices=sorted(ROWS), help=argparse.SUPPRESS)  # one run, in this process
    args = parser.parse_args()
    if args.row:
        x, y = data(args.batch * args.batches)
        warm = args.batch * min(args.batches, 5)  # a few batches first: the process's first kernels, plans, pools
        ROWS[args.row](x[:warm], y[:warm], args.batch, args.ctx)
        print(json.dumps(ROWS[args.row](x, y, args.batch, args.ctx)))
        return
    import lazynd as mx

    if args.ctx == "gpu" and mx.num_gpus() == 0:
        print("bench/lenet_epoch.py: no GPU visible; nothing to measure (--ctx cpu runs on the CPU)")
        return
    x, y = data(args.batch * args.batches)
    where = "gpu(0)" if args.ctx == "gpu" else "the CPU"
    theirs = "PyTorch eager, cuDNN" if args.ctx == "gpu" else "PyTorch eager, CPU"
    ours = f"lazynd executor, {args.ctx}"
    runs = {ours: "lazynd", theirs: "torch"}
    if args.ctx == "gpu":  # the executor's passes replay as CUDA graphs by default; eager for comparison
        runs["lazynd, eager passes"] = "lazynd_eager"
    best: dict[str, tuple[float, float]] = {}
    for _ in range(args.repeat):
        for name, row in runs.items():
            result = run_in_process(row, args)
            if result is not None and (name not in best or result[0] < best[name][0]):
                best[name] = result
    print(f"LeNet, batch {args.batch}, {args.batches} batches on {where}; best of {args.repeat}")
    print(f"{'implementation':<26}{'ms/batch':>10}{'last loss':>11}")
    for name, (seconds, loss) in best.items():
        print(f"{name:<26}{seconds / args.batches * 1e3:>10.3f}{loss:>11.4f}")
    if ours in best and theirs in best:
        print(f"lazynd / PyTorch: {best[ours][0] / best[theirs][0]:.2f}x")
    print("lazynd's step by phase, waiting after each (ms a batch): host push time, then until done")
    for name, push_ms, total_ms in phases(x, y, args.batch, min(args.batches, 50), args.ctx):
        print(f"  {name:<10}{push_ms:>8.3f}{total_ms:>8.3f}")


if __name__ == "__main__":
    main()
