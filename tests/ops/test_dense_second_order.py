"""Second-order gradients through FullyConnected: ``_backward_FullyConnected`` has a gradient rule, so a
gradient of a gradient (a gradient penalty on a dense critic) works, as in MXNet 1.9.1."""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx
from lazynd import autograd
from lazynd.testing import check_gradient


@pytest.mark.parametrize(
    ("data_shape", "params"),
    [
        ((4, 3), {"num_hidden": 5}),
        ((4, 3), {"num_hidden": 5, "no_bias": True}),
        ((2, 3, 2), {"num_hidden": 4}),  # flattened to (2, 6)
        ((2, 3, 2), {"num_hidden": 4, "flatten": False}),  # (6, 2) rows
    ],
)
def test_the_dense_backward_s_gradient_matches_central_differences(ctx, data_shape, params) -> None:
    rng = np.random.default_rng(3)
    hidden = params["num_hidden"]
    data = rng.uniform(-1.0, 1.0, size=data_shape)
    in_dim = data_shape[-1] if params.get("flatten", True) is False else int(np.prod(data_shape[1:]))
    out_shape = (*data_shape[:-1], hidden) if params.get("flatten", True) is False else (data_shape[0], hidden)
    weight = rng.uniform(-1.0, 1.0, size=(hidden, in_dim))
    out_grad = rng.uniform(-1.0, 1.0, size=out_shape)
    check_gradient("_backward_FullyConnected", [out_grad, data, weight], params=params, ctx=ctx, rtol=1e-3, atol=1e-5)


def test_second_derivative_through_a_dense_layer_matches_mxnet() -> None:
    # MXNet 1.9.1: x used as data and as weight, dx = grad(FC(x, x), x, create_graph=True), then
    # (dx * dx).sum().backward()
    x = mx.nd.array([[0.3, 0.5, 0.7], [0.2, 0.4, 0.9]])
    x.attach_grad()
    with autograd.record():
        (dx,) = autograd.grad(mx.nd.FullyConnected(x, x, num_hidden=2, no_bias=True), [x], create_graph=True)
        z = (dx * dx).sum()
    z.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), [[8.0, 14.4, 25.6], [8.0, 14.4, 25.6]], rtol=1e-5)


def test_a_gradient_penalty_on_a_dense_critic_trains_its_weights() -> None:
    # d/dW of sum((d critic / d x)^2) for critic(x) = sum(tanh(x W1^T + b1) W2^T): against central differences
    rng = np.random.default_rng(5)
    x0 = rng.standard_normal((3, 4))
    w1, b1, w2 = rng.standard_normal((5, 4)), rng.standard_normal(5), rng.standard_normal((1, 5))

    def penalty(w1_value: np.ndarray) -> float:
        h = np.tanh(x0 @ w1_value.T + b1)
        dx = ((1 - h**2) * w2) @ w1_value  # d critic / d x
        return float((dx**2).sum())

    x = mx.nd.array(x0, dtype="float64")
    x.attach_grad()
    W1 = mx.nd.array(w1, dtype="float64")
    W1.attach_grad()
    B1, W2 = mx.nd.array(b1, dtype="float64"), mx.nd.array(w2, dtype="float64")
    with autograd.record():
        critic = mx.nd.FullyConnected(
            mx.nd.tanh(mx.nd.FullyConnected(x, W1, B1, num_hidden=5)), W2, num_hidden=1, no_bias=True
        )
        (dx,) = autograd.grad(critic, [x], create_graph=True)
        loss = (dx * dx).sum()
    loss.backward()
    eps, numeric = 1e-6, np.zeros_like(w1)
    for index in np.ndindex(*w1.shape):
        up, down = w1.copy(), w1.copy()
        up[index] += eps
        down[index] -= eps
        numeric[index] = (penalty(up) - penalty(down)) / (2 * eps)
    np.testing.assert_allclose(loss.asscalar(), penalty(w1), rtol=1e-10)
    np.testing.assert_allclose(W1.grad.asnumpy(), numeric, rtol=1e-5, atol=1e-7)
