"""One MNIST-sized epoch of a 784-128-64-10 MLP three ways: lazynd executor, hand NumPy, PyTorch CPU.

ReLU, softmax cross-entropy, plain SGD, batch 128, float32.  Run:
``python bench/mlp_epoch.py [--ctx gpu] [--repeat 5] [--threads 1] [--batches N]``; prints one table.

All three run the same batches from the same initial weights; the table also gives each
one's accuracy on the first 10,000 training images after the epoch, so a faster but wrong
implementation shows.  BLAS (NumPy's OpenBLAS) and PyTorch get the same thread count
(``--threads``, default 1): on a shared machine a multithreaded BLAS that waits for busy
cores makes every figure noise.

A fourth row, "NumPy, same work", is hand NumPy doing what MXNet's semantics ask of the
executor and the plain hand NumPy skips: weights in FullyConnected's ``(out, in)`` layout and
each batch copied into bound input arrays.  It is a reference for lazynd's own overhead; the
goal (issue 4) is measured against plain hand NumPy.
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
import time
from collections.abc import Callable


def _threads_from_argv(default: int = 1) -> int:
    # the BLAS thread count must be in the environment before NumPy is first imported
    for i, arg in enumerate(sys.argv):
        if arg == "--threads" and i + 1 < len(sys.argv):
            return int(sys.argv[i + 1])
        if arg.startswith("--threads="):
            return int(arg.split("=", 1)[1])
    return default


if __name__ == "__main__":
    for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[_var] = str(_threads_from_argv())

import numpy as np  # noqa: E402
from _table import paired_ratios  # noqa: E402

BATCH, LR, SIZES = 128, 0.1, (784, 128, 64, 10)


def data(n: int = 60000) -> tuple[np.ndarray, np.ndarray]:
    try:
        from lazynd.datasets import load_mnist

        images, labels = load_mnist(train=True, download=False)
        return (images.reshape(-1, 784) / 255.0).astype(np.float32), labels.astype(np.float32)
    except Exception:  # noqa: BLE001 - a benchmark without the data set runs on random data
        rng = np.random.default_rng(0)
        return rng.random((n, 784), dtype=np.float32), rng.integers(0, 10, n).astype(np.float32)


def init_params() -> list[np.ndarray]:
    rng = np.random.default_rng(1)
    params = []
    for fan_in, fan_out in zip(SIZES[:-1], SIZES[1:], strict=False):
        params += [
            (rng.standard_normal((fan_in, fan_out)) * np.sqrt(2.0 / fan_in)).astype(np.float32),
            np.zeros((1, fan_out), np.float32),
        ]
    return params


def mlp_symbol() -> object:
    import lazynd_sym as sym
    from lazynd.ops import registry

    x = sym.Variable("data")
    for i, hidden in enumerate(SIZES[1:], 1):
        if registry.exists("FullyConnected"):
            x = sym.FullyConnected(x, sym.Variable(f"w{i}"), sym.Variable(f"b{i}"), num_hidden=hidden, name=f"fc{i}")
        else:
            x = sym.broadcast_add(sym.dot(x, sym.Variable(f"w{i}")), sym.Variable(f"b{i}"))
        if hidden != SIZES[-1]:
            x = sym.relu(x)
    return sym.SoftmaxOutput(x, name="softmax")


def accuracy(params: list[np.ndarray], x: np.ndarray, y: np.ndarray) -> float:
    """Share of ``x`` classified as ``y`` by the MLP with ``params`` (NumPy layout: w (in, out), b (1, out))."""
    h = x
    for i in range(3):
        h = h @ params[2 * i] + params[2 * i + 1]
        if i < 2:
            h = np.maximum(h, 0)
    return float((h.argmax(axis=1) == y).mean())


def lazynd_trainer(
    x: np.ndarray, y: np.ndarray, ctx_name: str = "cpu"
) -> tuple[Callable[[], None], Callable[[], list[np.ndarray]], int]:
    """Bind the MLP with the shared initial weights.

    Returns a function training one pass over ``x``/``y`` (waiting at the end), one giving the
    parameters as NumPy arrays, and the number of parameters (one update each per batch).
    """
    import lazynd as mx
    from lazynd.ops import registry

    ctx = mx.gpu() if ctx_name == "gpu" else mx.cpu()
    net = mlp_symbol()
    fc = registry.exists("FullyConnected")
    params = init_params()
    shapes = {"data": (BATCH, 784), "softmax_label": (BATCH,)}
    for i in range(3):
        w, b = params[2 * i], params[2 * i + 1]
        shapes[f"w{i + 1}"] = w.T.shape if fc else w.shape
        shapes[f"b{i + 1}"] = (b.shape[1],) if fc else b.shape
    names = [n for n in shapes if n not in ("data", "softmax_label")]
    ex = net.simple_bind(ctx, grad_req={n: "write" for n in names}, **shapes)
    for i in range(3):
        w, b = params[2 * i], params[2 * i + 1]
        ex.arg_dict[f"w{i + 1}"][:] = mx.nd.array(w.T.copy() if fc else w, ctx=ctx)
        ex.arg_dict[f"b{i + 1}"][:] = mx.nd.array(b.reshape(shapes[f"b{i + 1}"]), ctx=ctx)
    xs, ys = mx.nd.array(x, ctx=ctx), mx.nd.array(y, ctx=ctx)
    pairs = [(ex.arg_dict[n], ex.grad_dict[n]) for n in names]
    weights = [w for w, _ in pairs]
    interleaved = [a for pair in pairs for a in pair]
    mx.nd.waitall()

    def update() -> None:
        if registry.exists("multi_sgd_update"):  # every parameter in one operation
            mx.nd.multi_sgd_update(
                *interleaved, out=weights, lrs=(LR,) * len(pairs), wds=(0.0,) * len(pairs),
                rescale_grad=1.0 / BATCH, num_weights=len(pairs),
            )  # fmt: skip
        else:
            for w, g in pairs:
                mx.nd.sgd_update(w, g, lr=LR, rescale_grad=1.0 / BATCH, out=w)

    def train() -> None:
        for k in range(0, len(x) - BATCH + 1, BATCH):
            # the batch copies into the bound data/label arrays run as the first steps of the pass
            ex.forward(is_train=True, data=xs[k : k + BATCH], softmax_label=ys[k : k + BATCH])
            ex.backward()
            update()
        mx.nd.waitall()

    def final_params() -> list[np.ndarray]:
        final = []
        for i in range(3):
            w, b = ex.arg_dict[f"w{i + 1}"].asnumpy(), ex.arg_dict[f"b{i + 1}"].asnumpy()
            final += [w.T if fc else w, b.reshape(1, -1)]
        return final

    return train, final_params, len(pairs)


def run_lazynd(x: np.ndarray, y: np.ndarray, ctx_name: str) -> tuple[float, list[np.ndarray]]:
    train, final_params, _ = lazynd_trainer(x, y, ctx_name)
    start = time.perf_counter()
    train()
    elapsed = time.perf_counter() - start
    return elapsed, final_params()


def run_numpy(x: np.ndarray, y: np.ndarray) -> tuple[float, list[np.ndarray]]:
    w1, b1, w2, b2, w3, b3 = init_params()
    start = time.perf_counter()
    eye = np.eye(10, dtype=np.float32)
    for k in range(0, len(x) - BATCH + 1, BATCH):
        xb, yb = x[k : k + BATCH], y[k : k + BATCH].astype(np.int64)
        h1 = np.maximum(xb @ w1 + b1, 0)
        h2 = np.maximum(h1 @ w2 + b2, 0)
        z = h2 @ w3 + b3
        p = np.exp(z - z.max(axis=1, keepdims=True))
        p /= p.sum(axis=1, keepdims=True)
        d3 = (p - eye[yb]) / BATCH
        d2 = (d3 @ w3.T) * (h2 > 0)
        d1 = (d2 @ w2.T) * (h1 > 0)
        for w, g in (
            (w3, h2.T @ d3),
            (b3, d3.sum(0, keepdims=True)),
            (w2, h1.T @ d2),
            (b2, d2.sum(0, keepdims=True)),
            (w1, xb.T @ d1),
            (b1, d1.sum(0, keepdims=True)),
        ):
            w -= LR * g
    return time.perf_counter() - start, [w1, b1, w2, b2, w3, b3]


def run_numpy_same_work(x: np.ndarray, y: np.ndarray) -> tuple[float, list[np.ndarray]]:
    """Hand NumPy doing the work MXNet's semantics ask of the executor (a reference row, not the goal's).

    Weights in FullyConnected's layout ``(out, in)``, so each layer is ``x @ W.T`` (OpenBLAS
    runs this form about 13% slower than ``x @ W`` for the first layer here), and each batch
    copied into bound input buffers first, as ``Executor.forward(data=...)`` does.
    """
    w1, b1, w2, b2, w3, b3 = (p.T.copy() if p.shape[0] != 1 else p for p in init_params())
    data, label = np.empty((BATCH, x.shape[1]), np.float32), np.empty((BATCH,), np.float32)
    start = time.perf_counter()
    eye = np.eye(10, dtype=np.float32)
    for k in range(0, len(x) - BATCH + 1, BATCH):
        np.copyto(data, x[k : k + BATCH])
        np.copyto(label, y[k : k + BATCH])
        yb = label.astype(np.int64)
        h1 = np.maximum(data @ w1.T + b1, 0)
        h2 = np.maximum(h1 @ w2.T + b2, 0)
        z = h2 @ w3.T + b3
        p = np.exp(z - z.max(axis=1, keepdims=True))
        p /= p.sum(axis=1, keepdims=True)
        d3 = (p - eye[yb]) / BATCH
        d2 = (d3 @ w3) * (h2 > 0)
        d1 = (d2 @ w2) * (h1 > 0)
        for w, g in (
            (w3, d3.T @ h2),
            (b3, d3.sum(0, keepdims=True)),
            (w2, d2.T @ h1),
            (b2, d2.sum(0, keepdims=True)),
            (w1, d1.T @ data),
            (b1, d1.sum(0, keepdims=True)),
        ):
            w -= LR * g
    return time.perf_counter() - start, [w1.T, b1, w2.T, b2, w3.T, b3]


def run_torch(x: np.ndarray, y: np.ndarray, threads: int, device: str = "cpu") -> tuple[float, list[np.ndarray]] | None:
    try:
        import torch
    except ImportError:
        return None
    if device == "cuda" and not torch.cuda.is_available():
        return None
    torch.set_num_threads(threads)
    params = [
        torch.tensor(p.T.copy() if p.shape[0] != 1 else p[0], requires_grad=True, device=device) for p in init_params()
    ]
    # the data set sits on the device, as lazynd's executor row holds it
    xs, ys = torch.from_numpy(x).to(device), torch.from_numpy(y.astype(np.int64)).to(device)
    if device == "cuda":
        torch.cuda.synchronize()
    start = time.perf_counter()
    for k in range(0, len(x) - BATCH + 1, BATCH):
        h = xs[k : k + BATCH]
        for i in range(3):
            h = torch.nn.functional.linear(h, params[2 * i], params[2 * i + 1])
            if i < 2:
                h = torch.relu(h)
        loss = torch.nn.functional.cross_entropy(h, ys[k : k + BATCH])
        for p in params:
            p.grad = None
        loss.backward()
        with torch.no_grad():
            for p in params:
                p -= LR * p.grad
    if device == "cuda":
        torch.cuda.synchronize()
    elapsed = time.perf_counter() - start
    final = [p.detach().cpu().numpy() for p in params]
    return elapsed, [final[i].T if i % 2 == 0 else final[i].reshape(1, -1) for i in range(6)]


def set_batch(size: int) -> None:
    """Use ``size`` images per batch in every implementation."""
    global BATCH
    BATCH = size


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--ctx", default="cpu", choices=("cpu", "gpu"))
    parser.add_argument(
        "--repeat", type=int, default=5, help="epochs per implementation, taken in turns (best is shown)"
    )
    parser.add_argument("--threads", type=int, default=1, help="BLAS / PyTorch threads for every implementation")
    parser.add_argument("--batches", type=int, default=0, help="run only this many batches (0: the whole epoch)")
    parser.add_argument("--batch", type=int, default=BATCH, help="images per batch (default 128)")
    args = parser.parse_args()
    set_batch(args.batch)
    all_x, all_y = data()
    check_x, check_y = all_x[:10000], all_y[:10000]
    x, y = (all_x[: args.batches * BATCH], all_y[: args.batches * BATCH]) if args.batches else (all_x, all_y)
    runs = {
        "lazynd executor": lambda: run_lazynd(x, y, args.ctx),
        "hand NumPy": lambda: run_numpy(x, y),
        "PyTorch CPU": lambda: run_torch(x, y, args.threads),
        **({"PyTorch CUDA": lambda: run_torch(x, y, args.threads, "cuda")} if args.ctx == "gpu" else {}),
        "NumPy, same work": lambda: run_numpy_same_work(x, y),
    }
    times: dict[str, list[float]] = {name: [] for name in runs}
    accuracies: dict[str, float] = {}
    for _ in range(args.repeat):
        for name, run in runs.items():
            gc.collect()  # the last run's garbage is collected before this one, not during it
            result = run()
            if result is not None:
                times[name].append(result[0])
                accuracies[name] = accuracy(result[1], check_x, check_y)
    base = min(times["hand NumPy"])
    print(
        f"MLP 784-128-64-10, batch {BATCH}, {len(x) // BATCH} batches ({len(x) // BATCH * BATCH} images) "
        f"({args.ctx} for lazynd, {args.threads} BLAS/torch thread(s)); best of {args.repeat}"
    )
    print(f"{'implementation':<18}{'seconds':>10}{'vs NumPy':>10}{'accuracy':>10}")
    for name, measured in times.items():
        if measured:
            print(f"{name:<18}{min(measured):>10.3f}{min(measured) / base:>9.2f}x{accuracies[name]:>10.4f}")
    # the host may swing between rounds: the two rows run back to back in each round, so the
    # ratio of one round's pair is the steadier figure
    median, low, high = paired_ratios(times["lazynd executor"], times["hand NumPy"])
    print(
        f"lazynd / hand NumPy, round by round: median {median:.2f}x "
        f"(from {low:.2f}x to {high:.2f}x over {len(times['hand NumPy'])} rounds)"
    )
    same = min(times["NumPy, same work"])
    print(
        f"lazynd vs 'NumPy, same work' (FullyConnected's (out, in) weights, batch copied into bound "
        f"inputs, as the executor must): {min(times['lazynd executor']) / same:.2f}x"
    )


if __name__ == "__main__":
    main()
