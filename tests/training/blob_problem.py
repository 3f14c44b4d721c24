"""A small two-class problem shared by the Module and FeedForward tests: its network and its data."""

from __future__ import annotations

import numpy as np

import lazynd_sym as sym


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
