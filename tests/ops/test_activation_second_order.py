"""Second-order gradients of the activations: the fused backward rows (``_backward_tanh``...) have
gradient rules, so ``autograd.grad(..., create_graph=True)`` followed by a backward works through
``tanh``, ``sigmoid``, ``relu``, ``softsign`` and ``softrelu``, as in MXNet 1.9.1."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

import lazynd as mx
from lazynd import autograd
from lazynd.ops.elemwise_unary import BACKWARD
from lazynd.testing import check_gradient

# backward row -> (low, high, both signs) of its second input (the forward's output, or its input
# for _backward_softsign): inside the output's range, away from the points where the row is not
# differentiable (relu's and softsign's 0); with both signs, half of the values are negated
SECOND_INPUT_RANGE: dict[str, tuple[float, float, bool]] = {
    "_backward_relu": (0.1, 2.0, True),
    "_backward_sigmoid": (0.05, 0.95, False),
    "_backward_tanh": (0.05, 0.95, True),
    "_backward_softsign": (0.1, 3.0, True),
    "_backward_softrelu": (0.05, 3.0, False),
    "_backward_softsign_of_output": (0.05, 0.95, True),
}


def test_every_backward_row_has_a_gradient_rule() -> None:
    assert set(SECOND_INPUT_RANGE) == set(BACKWARD)
    for name in BACKWARD:
        assert mx.ops.registry.get(name).gradient is not None, name


@pytest.mark.parametrize("name", sorted(BACKWARD))
def test_a_backward_rows_gradient_matches_central_differences(ctx, name) -> None:
    rng = np.random.default_rng(7)
    low, high, both_signs = SECOND_INPUT_RANGE[name]
    out_grad = rng.uniform(-2.0, 2.0, size=(3, 4))
    data = rng.uniform(low, high, size=(3, 4))
    if both_signs:
        data[:, ::2] *= -1.0
    check_gradient(name, [out_grad, data], ctx=ctx, rtol=1e-3, atol=1e-5)


def _second_derivative(ctx: mx.Context, fn: Callable, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``f'(x)`` by ``autograd.grad(create_graph=True)`` and ``f''(x)`` by a backward through it."""
    x = mx.nd.array(values, ctx=ctx)
    x.attach_grad()
    with autograd.record():
        (first,) = autograd.grad(fn(x), [x], create_graph=True)
    first.backward()
    return first.asnumpy(), x.grad.asnumpy()


POINTS = np.array([-1.5, -0.3, 0.2, 0.7, 2.0], dtype=np.float32)

# f''(x) at POINTS, from MXNet 1.9.1 (x.grad after dy = autograd.grad(y, x, create_graph=True)[0];
# dy.backward())
MXNET_SECOND_DERIVATIVES = {
    "tanh": [0.32713, 0.53318, -0.37937, -0.76723, -0.13622],
    "sigmoid": [0.09473, 0.0364, -0.02467, -0.07458, -0.07996],
    "relu": [0.0, 0.0, 0.0, 0.0, 0.0],
}


@pytest.mark.parametrize("name", sorted(MXNET_SECOND_DERIVATIVES))
def test_second_derivative_of_an_activation_matches_mxnet(ctx, name) -> None:
    _, second = _second_derivative(ctx, getattr(mx.nd, name), POINTS)
    np.testing.assert_allclose(second, MXNET_SECOND_DERIVATIVES[name], rtol=1e-4, atol=1e-5)


def _softrelu_second(x: np.ndarray) -> np.ndarray:
    s = 1.0 / (1.0 + np.exp(-x))
    return s * (1.0 - s)


ANALYTIC_SECOND_DERIVATIVES: dict[str, tuple[Callable, Callable]] = {
    "tanh": (mx.nd.tanh, lambda x: -2.0 * np.tanh(x) * (1.0 - np.tanh(x) ** 2)),
    "softsign": (mx.nd.softsign, lambda x: -2.0 * np.sign(x) / (1.0 + np.abs(x)) ** 3),
    "softrelu": (mx.nd.softrelu, _softrelu_second),
    # MXNet 1.9.1 gives both of these with the opposite sign
    "arcsinh": (mx.nd.arcsinh, lambda x: -x / (x**2 + 1.0) ** 1.5),
    "arccosh": (lambda x: mx.nd.arccosh(x + 3.0), lambda x: -(x + 3.0) / ((x + 3.0) ** 2 - 1.0) ** 1.5),
}


@pytest.mark.parametrize("name", sorted(ANALYTIC_SECOND_DERIVATIVES))
def test_second_derivative_of_an_activation_is_the_analytic_one(ctx, name) -> None:
    fn, reference = ANALYTIC_SECOND_DERIVATIVES[name]
    _, second = _second_derivative(ctx, fn, POINTS)
    np.testing.assert_allclose(second, reference(POINTS.astype(np.float64)), rtol=1e-4, atol=1e-6)


def test_third_derivative_of_tanh_flows_through_the_rules() -> None:
    x = mx.nd.array(POINTS)
    x.attach_grad()
    with autograd.record():
        (first,) = autograd.grad(mx.nd.tanh(x), [x], create_graph=True)
        (second,) = autograd.grad(first, [x], create_graph=True)
    second.backward()
    t = np.tanh(POINTS.astype(np.float64))
    np.testing.assert_allclose(x.grad.asnumpy(), (1 - t**2) * (6 * t**2 - 2), rtol=1e-4, atol=1e-6)
