"""Shared pieces of the optimizer tests: the updater loop and the gradient preprocessing every rule applies."""

from __future__ import annotations

import numpy as np

import lazynd as mx
from lazynd import optimizer


def run(opt: optimizer.Optimizer, w0: np.ndarray, grads: list[np.ndarray], index=0) -> np.ndarray:
    updater = optimizer.get_updater(opt)
    weight = mx.nd.array(w0)
    for g in grads:
        updater(index, mx.nd.array(g), weight)
    return weight.asnumpy()


def prep(g: np.ndarray, rescale: float = 0.5, clip: float = 1.0) -> np.ndarray:
    return np.clip(g * rescale, -clip, clip)


KW = {"wd": 0.01, "rescale_grad": 0.5, "clip_gradient": 1.0}
