"""The loops of bench/user_loops.py as each library's users write them, and the problem they share.

One MNIST epoch of the 784-128-64-10 ReLU MLP (``SIZES``) with a softmax loss: the data, the starting
parameters, the accuracy of the result; then each loop written for lazynd, by hand in NumPy and
in PyTorch eager.  Each loop returns its seconds and its trained parameters as NumPy arrays;
``device`` ("cpu" or "gpu") says where the lazynd and PyTorch loops run.
"""

from __future__ import annotations

import time

import numpy as np

BATCH, SIZES = 128, (784, 128, 64, 10)
# what the loops are timed by: wall-clock seconds; ``user_loops.py --clock cpu`` sets the CPU
# seconds of all the process's threads (time.process_time), which other processes' load barely moves
CLOCK = time.perf_counter
LR = 0.1  # per example: the seed loops scale it by 1/BATCH (SoftmaxOutput's gradient is a sum)


def load_data() -> tuple[np.ndarray, np.ndarray]:
    """MNIST's training set as float32 (n, 784) in [0, 1] and float32 labels; random data without
    it, or when the first layer is not 784 wide (``user_loops.py --sizes``)."""
    if SIZES[0] != 784:
        rng = np.random.default_rng(0)
        return rng.random((60000, SIZES[0]), dtype=np.float32), rng.integers(0, 10, 60000).astype(np.float32)
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
def _lazynd_ctx(device: str) -> object:
    import lazynd as mx

    return mx.gpu(0) if device == "gpu" else mx.cpu()


def _mlp_symbol() -> object:
    import lazynd_sym as sym

    x = sym.Variable("data")
    for i, hidden in enumerate(SIZES[1:], 1):
        x = sym.FullyConnected(x, num_hidden=hidden, name=f"fc{i}")
        if i < 3:
            x = sym.Activation(x, act_type="relu", name=f"relu{i}")
    return sym.SoftmaxOutput(x, name="softmax")


def lazynd_loop(x: np.ndarray, y: np.ndarray, update: str, device: str) -> tuple[float, list[np.ndarray]]:
    import lazynd as mx

    net = _mlp_symbol()
    names = [n for n in net.list_arguments() if n not in ("data", "softmax_label")]
    # gradients of the parameters only, as the hand-written loops compute
    ex = net.simple_bind(
        _lazynd_ctx(device), grad_req={n: "write" for n in names}, data=(BATCH, SIZES[0]), softmax_label=(BATCH,)
    )
    for name, value in zip(names, init_params(), strict=True):
        ex.arg_dict[name][:] = value
    pairs = [(ex.arg_dict[n], ex.grad_dict[n]) for n in names]
    data, label = ex.arg_dict["data"], ex.arg_dict["softmax_label"]
    lr = LR / BATCH
    mx.nd.waitall()
    start = CLOCK()
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
    return CLOCK() - start, [w.asnumpy() for w, _ in pairs]


def lazynd_fit(x: np.ndarray, y: np.ndarray, device: str) -> tuple[float, list[np.ndarray]]:
    import lazynd as mx
    from lazynd_sym.model import FeedForward

    net = _mlp_symbol()
    names = [n for n in net.list_arguments() if n not in ("data", "softmax_label")]
    params = {n: mx.nd.array(v) for n, v in zip(names, init_params(), strict=True)}
    model = FeedForward(
        net, ctx=_lazynd_ctx(device), num_epoch=1, optimizer="sgd", learning_rate=LR, numpy_batch_size=BATCH,
        arg_params=params, progress_bar=False,
    )  # fmt: skip
    mx.random.seed(0)
    np.random.seed(0)  # NDArrayIter shuffles with NumPy's global generator, as MXNet's does
    start = CLOCK()
    model.fit(x, y)
    mx.nd.waitall()
    return CLOCK() - start, [model.arg_params[n].asnumpy() for n in names]


def lazynd_autograd(
    x: np.ndarray, y: np.ndarray, loss_name: str, device: str, layer: str = "FullyConnected"
) -> tuple[float, list[np.ndarray]]:
    import lazynd as mx

    def dense(h: object, w: object, b: object, hidden: int) -> object:
        if layer == "dot":  # written from scratch, as tutorials do: the same product and bias
            return mx.nd.broadcast_add(mx.nd.dot(h, w, transpose_b=True), b)
        return mx.nd.FullyConnected(h, w, b, num_hidden=hidden)

    loss_of = getattr(mx.nd, loss_name)  # SoftmaxOutput or softmax_cross_entropy: the same gradient
    ctx = _lazynd_ctx(device)
    params = [mx.nd.array(p, ctx=ctx) for p in init_params()]
    for p in params:
        p.attach_grad()
    data, label = mx.nd.empty((BATCH, SIZES[0]), ctx=ctx), mx.nd.empty((BATCH,), ctx=ctx)
    lr = LR / BATCH  # both losses sum over the batch
    mx.nd.waitall()
    start = CLOCK()
    for k in range(0, len(x) - BATCH + 1, BATCH):
        data[:] = x[k : k + BATCH]
        label[:] = y[k : k + BATCH]
        with mx.autograd.record():
            h = data
            for i in range(3):
                h = dense(h, params[2 * i], params[2 * i + 1], SIZES[i + 1])
                if i < 2:
                    h = mx.nd.relu(h)
            loss = loss_of(h, label)
        loss.backward()
        for w in params:
            mx.nd.sgd_update(w, w.grad, lr=lr, out=w)
    mx.nd.waitall()
    return CLOCK() - start, [p.asnumpy() for p in params]


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
    data, label = np.empty((BATCH, SIZES[0]), np.float32), np.empty((BATCH,), np.float32)
    lr = LR / BATCH
    start = CLOCK()
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
    return CLOCK() - start, net.params


def numpy_fit(x: np.ndarray, y: np.ndarray) -> tuple[float, list[np.ndarray]]:
    net = NumpyMLP()
    data, label = np.empty((BATCH, SIZES[0]), np.float32), np.empty((BATCH,), np.float32)
    lr = LR / BATCH
    start = CLOCK()
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
    return CLOCK() - start, net.params


# -- PyTorch eager --------------------------------------------------------------------------------
def _torch_model(device: str) -> tuple[object, list]:
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
    model = torch.nn.Sequential(*layers).to(_torch_device(device))
    return model, list(model.parameters())


def _torch_device(device: str) -> object:
    import torch

    return torch.device("cuda" if device == "gpu" else "cpu")


def _torch_batch(device: str) -> tuple[object, object]:
    """The batch tensors a loop copies each batch into, on the device."""
    import torch

    torch_device = _torch_device(device)
    return torch.empty((BATCH, SIZES[0]), device=torch_device), torch.empty(
        (BATCH,), dtype=torch.int64, device=torch_device
    )


def _torch_done(start: float, params: list, device: str) -> tuple[float, list[np.ndarray]]:
    """The loop's time (once the device is done) and its parameters as NumPy arrays."""
    import torch

    if device == "gpu":
        torch.cuda.synchronize()
    return CLOCK() - start, [p.detach().cpu().numpy() for p in params]


def torch_loop(x: np.ndarray, y: np.ndarray, update: str, device: str) -> tuple[float, list[np.ndarray]]:
    import torch

    model, params = _torch_model(device)
    data, label = _torch_batch(device)
    lr = LR / BATCH
    start = CLOCK()
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
    return _torch_done(start, params, device)


def torch_autograd(x: np.ndarray, y: np.ndarray, device: str) -> tuple[float, list[np.ndarray]]:
    import torch

    model, params = _torch_model(device)
    optimizer = torch.optim.SGD(params, lr=LR / BATCH)
    data, label = _torch_batch(device)
    start = CLOCK()
    for k in range(0, len(x) - BATCH + 1, BATCH):
        data[:] = torch.from_numpy(x[k : k + BATCH])
        label[:] = torch.from_numpy(y[k : k + BATCH])
        optimizer.zero_grad()
        torch.nn.functional.cross_entropy(model(data), label, reduction="sum").backward()
        optimizer.step()
    return _torch_done(start, params, device)


def torch_fit(x: np.ndarray, y: np.ndarray, device: str) -> tuple[float, list[np.ndarray]]:
    import torch

    model, params = _torch_model(device)
    optimizer = torch.optim.SGD(params, lr=LR / BATCH)
    data, label = _torch_batch(device)
    xt, yt = torch.from_numpy(x), torch.from_numpy(y)
    start = CLOCK()
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
    return _torch_done(start, params, device)
