"""hard_sigmoid against MXNet 1.9.1 (it was not registered: mx.nd.hard_sigmoid missing)."""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx
import lazynd_sym as sym
from lazynd.errors import LazyNDError
from lazynd.testing import check_gradient

X = np.array([-3.0, -2.5, -1.0, 0.0, 1.0, 2.5, 3.0])


@pytest.mark.parametrize("alpha,beta", [(0.2, 0.5), (1.0, 0.25), (0.5, -0.1)])
def test_hard_sigmoid_forward_and_gradient_match_mxnet(alpha, beta, ctx):
    # MXNet 1.9.1: clip(alpha x + beta, 0, 1); gradient alpha strictly inside (0, 1), zero at the corners
    x = mx.nd.array(X, ctx=ctx)
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.hard_sigmoid(x, alpha=alpha, beta=beta)
    y.backward(mx.nd.array(np.arange(1, 8), ctx=ctx))
    line = alpha * X + beta
    np.testing.assert_allclose(y.asnumpy(), np.clip(line, 0, 1), rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(x.grad.asnumpy(), np.where((line > 0) & (line < 1), alpha, 0) * np.arange(1, 8), 1e-6)


def test_hard_sigmoid_defaults_are_mxnets():
    # MXNet 1.9.1's mx.nd.hard_sigmoid(X) with alpha=0.2, beta=0.5
    np.testing.assert_allclose(mx.nd.hard_sigmoid(mx.nd.array(X)).asnumpy(), [0, 0, 0.3, 0.5, 0.7, 1, 1], atol=1e-7)


def test_hard_sigmoid_numerical_gradient_away_from_the_corners():
    check_gradient("hard_sigmoid", [np.array([[-4.0, -1.2, 0.3], [1.7, 2.2, 5.0]])], {"alpha": 0.3, "beta": 0.4})


def test_hard_sigmoid_symbol_runs_through_an_executor():
    net = sym.hard_sigmoid(sym.Variable("x"), alpha=0.5)
    ex = net.simple_bind(mx.cpu(), x=(7,))
    ex.arg_dict["x"][:] = X
    ex.forward()
    np.testing.assert_allclose(ex.outputs[0].asnumpy(), np.clip(0.5 * X + 0.5, 0, 1), atol=1e-7)


def test_hard_sigmoid_bad_parameter_is_a_clear_error():
    with pytest.raises(LazyNDError, match="hard_sigmoid.*alpha"):
        mx.nd.hard_sigmoid(mx.nd.array(X), alpha="steep")
