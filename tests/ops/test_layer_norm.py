"""LayerNorm against MXNet 1.9.1's values (it was not registered: mx.nd.LayerNorm missing, 1.x JSON unloadable)."""

from __future__ import annotations

import json

import numpy as np
import pytest

import lazynd as mx
import lazynd_sym as sym
from lazynd.testing import check_gradient

X = np.random.RandomState(0).uniform(-2, 2, (2, 3, 4))

# (axis, first outputs, first data gradients, gamma gradient, beta gradient), from MXNet 1.9.1 with
# gamma = linspace(0.5, 1.5), beta = linspace(-0.2, 0.3), eps = 0.01, head gradient arange(24) / 10
MXNET = [
    (
        -1,
        [-0.56981, 1.245843, 0.130957, -0.890032],
        [-0.800184, -0.069166, 0.142013, 0.727336],
        [0.828256, 2.506598, -3.947477, 0.427583],
        [6.0, 6.6, 7.2, 7.8],
    ),
    (
        1,
        [-0.407986, 0.260799, -0.226999, -0.525798],
        [-0.38573, -0.171282, -1.043518, -1.121579],
        [-2.233082, 1.18891, 2.210815],
        [6.0, 9.2, 12.4],
    ),
]


@pytest.mark.parametrize("axis,output,data_grad,gamma_grad,beta_grad", MXNET)
def test_layer_norm_forward_and_gradients_match_mxnet(axis, output, data_grad, gamma_grad, beta_grad):
    n = X.shape[axis]
    x, gamma, beta = (mx.nd.array(v, dtype="float64") for v in (X, np.linspace(0.5, 1.5, n), np.linspace(-0.2, 0.3, n)))
    for a in (x, gamma, beta):
        a.attach_grad()
    with mx.autograd.record():
        y = mx.nd.LayerNorm(x, gamma, beta, axis=axis, eps=0.01)
    y.backward(mx.nd.array(np.arange(24).reshape(2, 3, 4) / 10, dtype="float64"))
    np.testing.assert_allclose(y.asnumpy().ravel()[:4], output, atol=2e-6)
    np.testing.assert_allclose(x.grad.asnumpy().ravel()[:4], data_grad, atol=2e-6)
    np.testing.assert_allclose(gamma.grad.asnumpy(), gamma_grad, atol=2e-6)
    np.testing.assert_allclose(beta.grad.asnumpy(), beta_grad, atol=2e-6)


def test_layer_norm_outputs_mean_and_std_with_the_axis_kept():
    out, mean, std = mx.nd.LayerNorm(mx.nd.array(X), mx.nd.ones(4), mx.nd.zeros(4), output_mean_var=True)
    assert out.shape == (2, 3, 4) and mean.shape == std.shape == (2, 3, 1)
    np.testing.assert_allclose(std.asnumpy().ravel()[:3], [0.274974, 0.76083, 0.901213], atol=1e-5)  # MXNet 1.9.1
    np.testing.assert_allclose(mean.asnumpy().ravel()[:3], [0.411649, 0.398909, 0.667724], atol=1e-5)


def test_layer_norm_numerical_gradient_on_the_middle_axis():
    check_gradient(
        "LayerNorm", [X, np.linspace(0.5, 1.5, 3), np.linspace(-0.2, 0.3, 3)], {"axis": 1}, rtol=1e-4, atol=1e-6
    )


def test_an_mxnet_1x_symbol_with_layer_norm_loads_and_infers_its_parameters():
    text = {
        "nodes": [
            {"op": "null", "name": "x", "inputs": []},
            {"op": "null", "name": "ln_gamma", "inputs": []},
            {"op": "null", "name": "ln_beta", "inputs": []},
            {"op": "LayerNorm", "name": "ln", "inputs": [[0, 0, 0], [1, 0, 0], [2, 0, 0]]},
        ],
        "arg_nodes": [0, 1, 2],
        "node_row_ptr": [0, 1, 2, 3, 6],
        "heads": [[3, 0, 0]],
        "attrs": {"mxnet_version": ["int", 10901]},
    }
    net = sym.load_json(json.dumps(text))
    assert net.infer_shape(x=(2, 3, 4))[0] == [(2, 3, 4), (4,), (4,)]


def _layer_norm_reference(x: np.ndarray, dy: np.ndarray, eps: float = 1e-5) -> tuple[np.ndarray, np.ndarray]:
    """Output and data gradient of LayerNorm over the last axis (gamma 1, beta 0) in float64."""
    centred = x - x.mean(-1, keepdims=True)
    std = np.sqrt((centred * centred).mean(-1, keepdims=True) + eps)
    xhat = centred / std
    grad = (dy - dy.mean(-1, keepdims=True) - xhat * (dy * xhat).mean(-1, keepdims=True)) / std
    return xhat, grad


def test_float16_statistics_are_taken_in_float32():
    # values near 100 with a spread of 0.3: a float16 mean (steps of 1/16 there) put errors of 0.03
    # into the normalised output and its gradient; MXNet 1.9.1 gives it within 0.0013
    rng = np.random.RandomState(0)
    x = (100 + rng.rand(4, 2048)).astype(np.float16)
    dy = rng.rand(4, 2048).astype(np.float16)
    data = mx.nd.array(x, dtype="float16")
    data.attach_grad()
    with mx.autograd.record():
        out = mx.nd.LayerNorm(data, mx.nd.ones(2048, dtype="float16"), mx.nd.zeros(2048, dtype="float16"))
    out.backward(mx.nd.array(dy, dtype="float16"))
    want_out, want_grad = _layer_norm_reference(x.astype(np.float64), dy.astype(np.float64))
    assert out.dtype == np.float16 and data.grad.dtype == np.float16
    np.testing.assert_allclose(out.asnumpy().astype(np.float64), want_out, atol=2e-3)
    np.testing.assert_allclose(data.grad.asnumpy().astype(np.float64), want_grad, atol=2e-3)


def test_gamma_and_beta_gradients_accumulate_a_large_batch_in_float64(ctx):
    # one huge head gradient then thousands of ones: a float32 running sum loses the ones
    rows = 4096
    x = np.random.default_rng(0).normal(size=(rows, 2)).astype(np.float32)
    dy = np.ones((rows, 2), np.float32)
    dy[0] = 1e8
    data = mx.nd.array(x, ctx=ctx)
    gamma, beta = mx.nd.ones((2,), ctx=ctx), mx.nd.zeros((2,), ctx=ctx)
    for array in (data, gamma, beta):
        array.attach_grad()
    with mx.autograd.record():
        out = mx.nd.LayerNorm(data, gamma, beta, axis=1)
    out.backward(mx.nd.array(dy, ctx=ctx))
    np.testing.assert_allclose(beta.grad.asnumpy(), [1e8 + rows - 1] * 2, rtol=1e-7)
