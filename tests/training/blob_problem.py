"""A small two-class problem shared by the Module and FeedForward tests: its network, its data, a model fitted to it."""

from __future__ import annotations

import numpy as np

import lazynd as mx
import lazynd_sym as sym
from lazynd_sym.model import FeedForward


def two_class_net(num_classes: int = 2) -> sym.Symbol:
    """Data -> 16 relu units -> `num_classes` softmax outputs, with MXNet's default names (fc1, fc2, softmax)."""
    net = sym.FullyConnected(sym.Variable("data"), num_hidden=16, name="fc1")
    net = sym.Activation(net, act_type="relu", name="relu1")
    net = sym.FullyConnected(net, num_hidden=num_classes, name="fc2")
    return sym.SoftmaxOutput(net, name="softmax")


def two_class_blobs(count: int = 400, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """`count` points in 5 dimensions from two separable Gaussian blobs, with their 0/1 labels (float32)."""
    rng = np.random.default_rng(seed)
    label = rng.integers(0, 2, count)
    data = rng.normal(size=(count, 5)).astype(np.float32) + (label[:, None] * 2.0 - 1.0) * 1.5
    return data, label.astype(np.float32)


def fitted_feedforward(**kwargs) -> FeedForward:
    """A FeedForward fitted to the blobs (seed 0, Xavier, SGD with momentum); `kwargs` go to FeedForward."""
    mx.random.seed(0)
    data, label = two_class_blobs()
    ff = FeedForward(
        two_class_net(),
        num_epoch=kwargs.pop("num_epoch", 5),
        numpy_batch_size=40,
        learning_rate=0.1,
        momentum=0.9,
        initializer=mx.init.Xavier(),
        progress_bar=False,
        **kwargs,
    )
    return ff.fit(data, label)
