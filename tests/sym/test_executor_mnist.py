"""A 2-layer MLP trained with the low-level executor loop on MNIST beats 90% test accuracy."""

from __future__ import annotations

import numpy as np

import lazynd as mx
import lazynd_sym as sym
from lazynd.datasets import load_mnist


def _mlp():
    x = sym.Variable("data")
    h = sym.relu(sym.broadcast_add(sym.dot(x, sym.Variable("w1")), sym.Variable("b1")))
    z = sym.broadcast_add(sym.dot(h, sym.Variable("w2")), sym.Variable("b2"))
    return sym.SoftmaxOutput(z, name="softmax")


def test_two_layer_mlp_trains_on_mnist(data_dir):
    images, labels = load_mnist(data_dir=f"{data_dir}/mnist", train=True, download=False)
    test_images, test_labels = load_mnist(data_dir=f"{data_dir}/mnist", train=False, download=False)
    x = (images.reshape(-1, 784) / 255.0).astype(np.float32)
    batch, lr = 100, 0.5
    shapes = {
        "data": (batch, 784),
        "w1": (784, 64),
        "b1": (1, 64),
        "w2": (64, 10),
        "b2": (1, 10),
        "softmax_label": (batch,),
    }
    params = ["w1", "b1", "w2", "b2"]
    train = _mlp().simple_bind(mx.cpu(), grad_req={p: "write" for p in params}, **shapes)
    rng = np.random.default_rng(0)
    for name in ("w1", "w2"):
        fan_in = shapes[name][0]
        train.arg_dict[name][:] = mx.nd.array(
            rng.standard_normal(shapes[name]).astype(np.float32) * np.sqrt(2 / fan_in)
        )
    test = _mlp().bind(
        mx.cpu(), {**train.arg_dict, "data": mx.nd.zeros((batch, 784)), "softmax_label": mx.nd.zeros((batch,))}
    )
    for step in range(400):
        k = (step * batch) % len(x)
        train.forward(
            is_train=True, data=mx.nd.array(x[k : k + batch]), softmax_label=mx.nd.array(labels[k : k + batch])
        )
        train.backward()
        for name in params:
            w, g = train.arg_dict[name], train.grad_dict[name]
            w[:] = w - g * (lr / batch)
    correct = 0
    tx = (test_images.reshape(-1, 784) / 255.0).astype(np.float32)
    for k in range(0, 2000, batch):
        probs = test.forward(data=mx.nd.array(tx[k : k + batch]))[0].asnumpy()
        correct += int((probs.argmax(1) == test_labels[k : k + batch]).sum())
    assert correct / 2000 > 0.90
