"""The MNIST MLP and LeNet trained imperatively (``mx.autograd`` + ``mx.nd.sgd_update``) against the
executor path trained the same way: the same initial weights, the same batches, the same updates.

Both paths run the same kernels, so after the same batches the weights agree to float32 rounding
and the held-out accuracy matches.  The default tests train on a subset (``$LAZYND_DATA_DIR``);
the ``slow`` ones train a full epoch.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

import lazynd as mx
import lazynd_sym as sym
from lazynd.datasets import load_mnist

LR = 0.1  # per example: SoftmaxOutput's gradient, and the summed cross entropy's, add over the batch

Layers = list[tuple[str, dict]]
# (operator, parameters): the networks, read by both paths
MLP: Layers = [
    ("Flatten", {}),
    ("FullyConnected", {"num_hidden": 128}),
    ("relu", {}),
    ("FullyConnected", {"num_hidden": 64}),
    ("relu", {}),
    ("FullyConnected", {"num_hidden": 10}),
]
LENET: Layers = [
    ("Convolution", {"kernel": (5, 5), "num_filter": 20}),
    ("Activation", {"act_type": "tanh"}),
    ("Pooling", {"pool_type": "max", "kernel": (2, 2), "stride": (2, 2)}),
    ("Convolution", {"kernel": (5, 5), "num_filter": 50}),
    ("Activation", {"act_type": "tanh"}),
    ("Pooling", {"pool_type": "max", "kernel": (2, 2), "stride": (2, 2)}),
    ("Flatten", {}),
    ("FullyConnected", {"num_hidden": 500}),
    ("Activation", {"act_type": "tanh"}),
    ("FullyConnected", {"num_hidden": 10}),
]
WEIGHTED = ("FullyConnected", "Convolution")


def _mnist(data_dir, train: bool, count: int) -> tuple[np.ndarray, np.ndarray]:
    images, labels = load_mnist(data_dir=data_dir, train=train, download=False)
    x = (images[:count] / 255.0).astype(np.float32).reshape(-1, 1, 28, 28)
    return x, labels[:count].astype(np.float32)


def _symbol(layers: Layers) -> sym.Symbol:
    net = sym.Variable("data")
    for k, (op, params) in enumerate(layers):
        if op == "relu":
            op, params = "Activation", {"act_type": "relu"}
        net = getattr(sym, op)(net, name=f"layer{k}", **params)
    return sym.SoftmaxOutput(net, name="softmax")


def _initial_weights(layers: Layers, batch: int) -> dict[str, np.ndarray]:
    """Weights drawn once, by argument name (``layer<k>_weight``, ``layer<k>_bias``), for both paths."""
    shapes, _, _ = _symbol(layers).infer_shape(data=(batch, 1, 28, 28))
    names = _symbol(layers).list_arguments()
    rng = np.random.default_rng(0)
    weights = {}
    for name, shape in zip(names, shapes, strict=True):
        if name.endswith("_weight"):
            fan_in = int(np.prod(shape[1:]))
            weights[name] = (rng.standard_normal(shape) * np.sqrt(2.0 / fan_in)).astype(np.float32)
        elif name.endswith("_bias"):
            weights[name] = np.zeros(shape, np.float32)
    return weights


def _batches(x: np.ndarray, y: np.ndarray, batch: int):
    for k in range(0, len(x) - batch + 1, batch):
        yield x[k : k + batch], y[k : k + batch]


def train_with_executor(layers: Layers, x: np.ndarray, y: np.ndarray, batch: int) -> dict[str, np.ndarray]:
    """Bind, then per batch: forward, backward, ``sgd_update`` of each parameter."""
    net = _symbol(layers)
    weights = _initial_weights(layers, batch)
    ex = net.simple_bind(
        mx.cpu(), grad_req={n: "write" for n in weights}, data=(batch, 1, 28, 28), softmax_label=(batch,)
    )
    for name, value in weights.items():
        ex.arg_dict[name][:] = value
    for xb, yb in _batches(x, y, batch):
        ex.arg_dict["data"][:] = xb
        ex.arg_dict["softmax_label"][:] = yb
        ex.forward(is_train=True)
        ex.backward()
        for name in weights:
            mx.nd.sgd_update(ex.arg_dict[name], ex.grad_dict[name], lr=LR / batch, out=ex.arg_dict[name])
    return {name: ex.arg_dict[name].asnumpy() for name in weights}


def _forward(layers: Layers, params: dict[str, mx.nd.NDArray], data: mx.nd.NDArray) -> mx.nd.NDArray:
    """The network's scores, with the ``mx.nd`` operators a user calls."""
    h = data
    for k, (op, kwargs) in enumerate(layers):
        if op in WEIGHTED:
            h = getattr(mx.nd, op)(h, params[f"layer{k}_weight"], params[f"layer{k}_bias"], **kwargs)
        else:
            h = getattr(mx.nd, op)(h, **kwargs)
    return h


LOSSES: dict[str, Callable[[mx.nd.NDArray, mx.nd.NDArray], mx.nd.NDArray]] = {
    "SoftmaxOutput": lambda scores, label: mx.nd.SoftmaxOutput(scores, label),
    "softmax_cross_entropy": lambda scores, label: mx.nd.softmax_cross_entropy(scores, label),
    "log_softmax+pick": lambda scores, label: -mx.nd.sum(mx.nd.pick(mx.nd.log_softmax(scores), label)),
}


def train_with_autograd(
    layers: Layers, x: np.ndarray, y: np.ndarray, batch: int, loss: str = "SoftmaxOutput"
) -> dict[str, np.ndarray]:
    """Per batch: the forward pass under ``autograd.record()``, ``backward()``, ``sgd_update``."""
    params = {name: mx.nd.array(value) for name, value in _initial_weights(layers, batch).items()}
    for w in params.values():
        w.attach_grad()
    for xb, yb in _batches(x, y, batch):
        data, label = mx.nd.array(xb), mx.nd.array(yb)
        with mx.autograd.record():
            out = LOSSES[loss](_forward(layers, params, data), label)
        out.backward()
        for w in params.values():
            mx.nd.sgd_update(w, w.grad, lr=LR / batch, out=w)
    return {name: w.asnumpy() for name, w in params.items()}


def accuracy(layers: Layers, weights: dict[str, np.ndarray], x: np.ndarray, y: np.ndarray) -> float:
    params = {name: mx.nd.array(value) for name, value in weights.items()}
    scores = _forward(layers, params, mx.nd.array(x)).asnumpy()
    return float((scores.argmax(axis=1) == y).mean())


def _assert_same_training(layers: Layers, data_dir, count: int, batch: int, loss: str, at_least: float) -> None:
    x, y = _mnist(data_dir, train=True, count=count)
    x_test, y_test = _mnist(data_dir, train=False, count=1000)
    by_executor = train_with_executor(layers, x, y, batch)
    by_autograd = train_with_autograd(layers, x, y, batch, loss)
    for name, value in by_executor.items():
        np.testing.assert_allclose(by_autograd[name], value, rtol=1e-3, atol=1e-4, err_msg=name)
    acc_executor = accuracy(layers, by_executor, x_test, y_test)
    acc_autograd = accuracy(layers, by_autograd, x_test, y_test)
    assert acc_executor > at_least  # the comparison means something: both have learnt
    assert abs(acc_autograd - acc_executor) <= 0.002


@pytest.mark.parametrize("loss", list(LOSSES))
def test_mlp_trained_with_autograd_matches_the_executor_path(data_dir, loss) -> None:
    # 100 batches of 50: every loss a user would write gives the executor's SoftmaxOutput gradient
    _assert_same_training(MLP, data_dir, count=5000, batch=50, loss=loss, at_least=0.8)


def test_lenet_trained_with_autograd_matches_the_executor_path(data_dir) -> None:
    _assert_same_training(LENET, data_dir, count=1000, batch=50, loss="SoftmaxOutput", at_least=0.75)


# a full epoch with SoftmaxOutput, the executor's loss: the same kernels, so no rounding difference
# grows over 600 updates (the other losses agree to float tolerance over the 100 batches above)
@pytest.mark.slow
def test_mlp_trained_with_autograd_for_an_epoch_matches_the_executor_path(data_dir) -> None:
    _assert_same_training(MLP, data_dir, count=60000, batch=100, loss="SoftmaxOutput", at_least=0.9)


@pytest.mark.slow
def test_lenet_trained_with_autograd_for_an_epoch_matches_the_executor_path(data_dir) -> None:
    _assert_same_training(LENET, data_dir, count=60000, batch=100, loss="SoftmaxOutput", at_least=0.97)
