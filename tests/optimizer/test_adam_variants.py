"""``Adamax`` and ``Nadam``: three steps on two parameters give MXNet 1.9.1's weights."""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx


def _three_steps(name: str, **kwargs: float) -> list[np.ndarray]:
    opt = mx.optimizer.create(name, **kwargs)
    weights = [mx.nd.array([1.0, -1.0, 0.25]), mx.nd.array([[2.0, 3.0]])]
    states = [opt.create_state(i, w) for i, w in enumerate(weights)]
    for step in range(3):
        for i, w in enumerate(weights):
            grad = mx.nd.array(np.sin(np.arange(w.size).reshape(w.shape) + step + i) * 2)
            opt.update(i, w, grad, states[i])
    return [w.asnumpy() for w in weights]


# weights after the same three steps in MXNet 1.9.1
CASES = [
    ("adamax", {"learning_rate": 0.1}, [[np.nan, -1.26313, 0.090068], [[1.73687, 2.840068]]]),
    ("nadam", {"learning_rate": 0.1}, [[0.826056, -1.19871, 0.185232], [[1.836669, 2.967179]]]),
    (
        "adamax",
        {"learning_rate": 0.05, "wd": 0.1, "rescale_grad": 0.5, "clip_gradient": 0.3},
        [[0.875753, -1.133497, 0.156732], [[1.85, 2.8869]]],
    ),
    (
        "nadam",
        {"learning_rate": 0.05, "wd": 0.1, "rescale_grad": 0.5, "clip_gradient": 0.3, "schedule_decay": 0.01},
        [[0.863275, -1.096266, 0.204053], [[1.896189, 2.95612]]],
    ),
]


@pytest.mark.parametrize(("name", "kwargs", "expected"), CASES)
def test_three_steps_match_mxnet(name: str, kwargs: dict, expected: list) -> None:
    # adamax's first element: a zero gradient at the first step makes 0/0, NaN in MXNet too
    for got, want in zip(_three_steps(name, **kwargs), expected, strict=True):
        np.testing.assert_allclose(got, np.array(want, dtype=np.float32), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", ["adamax", "nadam"])
def test_bad_beta_is_refused(name: str) -> None:
    with pytest.raises(mx.LazyNDError, match="beta1 must be in"):
        mx.optimizer.create(name, beta1=1.5)
