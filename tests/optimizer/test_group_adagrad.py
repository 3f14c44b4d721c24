"""``mx.optimizer.contrib.GroupAdaGrad`` (MXNet 1.x): AdaGrad with one history value per row."""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx
from lazynd.errors import LazyNDError


def _numpy_group_adagrad(weight, grad, history, lr, eps, rescale_grad=1.0, clip=None):
    g = grad * rescale_grad
    if clip is not None:
        g = np.clip(g, -clip, clip)
    history = history + np.mean(g * g, axis=1, keepdims=True)
    return weight - lr * g / np.sqrt(history + eps), history


@pytest.mark.parametrize("options", [{}, {"clip_gradient": 0.4, "rescale_grad": 0.8}, {"eps": 1e-8}])
def test_two_updates_match_the_numpy_rule(options) -> None:
    rng = np.random.default_rng(3)
    weight = rng.uniform(size=(3, 4)).astype(np.float32)
    opt = mx.optimizer.contrib.GroupAdaGrad(learning_rate=0.1, **options)
    w = mx.nd.array(weight)
    state = opt.create_state(0, w)
    assert state.shape == (3, 1)
    expected, history = weight, np.zeros((3, 1), np.float32)
    for _ in range(2):
        grad = rng.uniform(-1, 1, size=(3, 4)).astype(np.float32)
        opt.update(0, w, mx.nd.array(grad), state)
        expected, history = _numpy_group_adagrad(
            expected,
            grad,
            history,
            0.1,
            options.get("eps", 1e-5),
            options.get("rescale_grad", 1.0),
            options.get("clip_gradient"),
        )
    np.testing.assert_allclose(w.asnumpy(), expected, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(state.asnumpy(), history, rtol=1e-5)


def test_it_is_registered_by_name() -> None:
    assert isinstance(mx.optimizer.create("groupadagrad"), mx.optimizer.contrib.GroupAdaGrad)


def test_weight_decay_is_refused_by_name() -> None:
    opt = mx.optimizer.contrib.GroupAdaGrad(wd=0.1)
    w = mx.nd.ones((2, 2))
    with pytest.raises(LazyNDError, match=r"GroupAdaGrad: weight decay is not supported, got wd=0.1"):
        opt.update(0, w, mx.nd.ones((2, 2)), opt.create_state(0, w))


def test_a_one_dimensional_parameter_is_refused_by_name() -> None:
    with pytest.raises(LazyNDError, match=r"GroupAdaGrad: parameter 7 has shape \(5,\), expected at least 2"):
        mx.optimizer.contrib.GroupAdaGrad().create_state(7, mx.nd.ones((5,)))
