"""One MNIST-sized epoch of a 784-128-64-10 MLP three ways: lazynd executor, hand NumPy, PyTorch CPU.

ReLU, softmax cross-entropy, plain SGD, batch 128, float32.  Run:
``python bench/mlp_epoch.py [--ctx gpu] [--repeat 3]``; prints one table.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

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


def run_lazynd(x: np.ndarray, y: np.ndarray, ctx_name: str) -> float:
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
    data, label = ex.arg_dict["data"], ex.arg_dict["softmax_label"]
    pairs = [(ex.arg_dict[n], ex.grad_dict[n]) for n in names]
    mx.nd.waitall()
    start = time.perf_counter()
    for k in range(0, len(x) - BATCH + 1, BATCH):
        xs[k : k + BATCH].copyto(data)
        ys[k : k + BATCH].copyto(label)
        ex.forward(is_train=True)
        ex.backward()
        for w, g in pairs:
            mx.nd.sgd_update(w, g, lr=LR, rescale_grad=1.0 / BATCH, out=w)
    mx.nd.waitall()
    return time.perf_counter() - start


def run_numpy(x: np.ndarray, y: np.ndarray) -> float:
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
    return time.perf_counter() - start


def run_torch(x: np.ndarray, y: np.ndarray) -> float | None:
    try:
        import torch
    except ImportError:
        return None
    params = [torch.tensor(p.T.copy() if p.shape[0] != 1 else p[0], requires_grad=True) for p in init_params()]
    xs, ys = torch.from_numpy(x), torch.from_numpy(y.astype(np.int64))
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
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--ctx", default="cpu", choices=("cpu", "gpu"))
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    x, y = data()
    results = {"lazynd executor": [], "hand NumPy": [], "PyTorch CPU": []}
    for _ in range(args.repeat):
        results["lazynd executor"].append(run_lazynd(x, y, args.ctx))
        results["hand NumPy"].append(run_numpy(x, y))
        t = run_torch(x, y)
        if t is not None:
            results["PyTorch CPU"].append(t)
    base = min(results["hand NumPy"])
    print(f"MLP 784-128-64-10, batch {BATCH}, one epoch of {len(x)} ({args.ctx} for lazynd); best of {args.repeat}")
    print(f"{'implementation':<18}{'seconds':>10}{'vs NumPy':>10}")
    for name, times in results.items():
        if times:
            print(f"{name:<18}{min(times):>10.3f}{min(times) / base:>9.2f}x")


if __name__ == "__main__":
    main()
