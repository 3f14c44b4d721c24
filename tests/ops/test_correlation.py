"""Correlation: forward against a loop-by-loop NumPy reference (checked against MXNet 1.9.1), gradients."""

from __future__ import annotations

import math

import numpy as np
import pytest

import lazynd as mx
import lazynd_sym as sym
from lazynd.errors import OperatorError, ShapeError
from lazynd.testing import check_forward, check_gradient

rng = np.random.default_rng(0)


def np_correlation(a, b, kernel_size=1, max_displacement=1, stride1=1, stride2=1, pad_size=0, is_multiply=True):
    """FlowNet correlation, one output value at a time."""
    n_batch, channels, height, width = a.shape
    pad = ((0, 0), (0, 0), (pad_size, pad_size), (pad_size, pad_size))
    a, b = np.pad(a, pad), np.pad(b, pad)
    radius_k = (kernel_size - 1) // 2
    border = max_displacement + radius_k
    out_h = math.ceil((height + 2 * pad_size - 2 * border) / stride1)
    out_w = math.ceil((width + 2 * pad_size - 2 * border) / stride1)
    radius = max_displacement // stride2
    side = 2 * radius + 1
    out = np.zeros((n_batch, side * side, out_h, out_w))
    for i in range(out_h):
        for j in range(out_w):
            y1, x1 = i * stride1 + max_displacement, j * stride1 + max_displacement
            for ti in range(-radius, radius + 1):
                for tj in range(-radius, radius + 1):
                    y2, x2 = y1 + ti * stride2, x1 + tj * stride2
                    p1 = a[:, :, y1 : y1 + kernel_size, x1 : x1 + kernel_size]
                    p2 = b[:, :, y2 : y2 + kernel_size, x2 : x2 + kernel_size]
                    value = p1 * p2 if is_multiply else np.abs(p1 - p2)
                    out[:, (ti + radius) * side + tj + radius, i, j] = value.sum(axis=(1, 2, 3))
    return out / (kernel_size * kernel_size * channels)


CASES = [
    {},
    {"kernel_size": 3, "max_displacement": 2, "stride1": 2, "stride2": 1, "pad_size": 2},
    {"kernel_size": 1, "max_displacement": 4, "stride1": 1, "stride2": 2, "pad_size": 4},
    {"kernel_size": 3, "max_displacement": 1, "stride1": 1, "stride2": 1, "pad_size": 1, "is_multiply": False},
]


@pytest.mark.parametrize("params", CASES)
def test_correlation_matches_reference(ctx, params):
    a = rng.standard_normal((2, 3, 7, 8)).astype(np.float32)
    b = rng.standard_normal((2, 3, 7, 8)).astype(np.float32)
    check_forward(
        "Correlation", [a, b], params, lambda x, y: np_correlation(x, y, **params), ctx=ctx, rtol=1e-5, atol=1e-6
    )


@pytest.mark.parametrize("params", [CASES[1], CASES[3]])
def test_correlation_gradient(ctx, params):
    a, b = rng.standard_normal((1, 2, 5, 6)), rng.standard_normal((1, 2, 5, 6))
    check_gradient("Correlation", [a, b], params, ctx=ctx, rtol=1e-3, atol=1e-6)


def test_correlation_symbol_shape():
    net = sym.Correlation(
        sym.Variable("a"), sym.Variable("b"), kernel_size=1, max_displacement=20, stride1=1, stride2=2, pad_size=20
    )
    args, outs, _ = net.infer_shape(a=(4, 256, 48, 64))
    assert args == [(4, 256, 48, 64)] * 2 and outs == [(4, 441, 48, 64)]


def test_correlation_rejects_bad_parameters_and_shapes():
    a = mx.nd.zeros((1, 2, 5, 5))
    with pytest.raises(OperatorError, match="kernel_size must be a positive odd number, got 2"):
        mx.nd.Correlation(a, a, kernel_size=2)
    with pytest.raises(ShapeError, match="too small"):
        mx.nd.Correlation(a, a, max_displacement=3)
    with pytest.raises(ShapeError, match="data2"):
        mx.nd.Correlation(a, mx.nd.zeros((1, 2, 5, 6)))


def test_correlation_of_infinite_data_is_mxnet_s_without_a_numpy_warning():
    import warnings

    a, b = mx.nd.array([[[[np.inf]]]]), mx.nd.array([[[[0.0]]]])
    a.attach_grad()
    b.attach_grad()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # inf * 0 inside would warn and fail the kernel
        with mx.autograd.record():
            out = mx.nd.Correlation(a, b, kernel_size=1, max_displacement=0)
        out.backward()
        # values MXNet 1.9.1 gives
        assert np.isnan(out.asnumpy()).all()
        np.testing.assert_array_equal(a.grad.asnumpy().ravel(), [0.0])
        np.testing.assert_array_equal(b.grad.asnumpy().ravel(), [np.inf])


def test_correlation_gradient_counts_a_tie_as_plus_one_as_mxnet(ctx):
    # |x - y| at x == y: MXNet's backward takes the sign as +1 (values MXNet 1.9.1 gives)
    x = np.array([[[[1.0, 2.0], [3.0, 4.0]]]], dtype=np.float32)
    a, b = mx.nd.array(x, ctx=ctx), mx.nd.array(x, ctx=ctx)
    a.attach_grad()
    b.attach_grad()
    with mx.autograd.record():
        out = mx.nd.Correlation(a, b, kernel_size=1, max_displacement=1, pad_size=1, is_multiply=False)
    out.backward(mx.nd.ones(out.shape, ctx=ctx))
    np.testing.assert_array_equal(a.grad.asnumpy().ravel(), [3.0, 5.0, 7.0, 9.0])
    np.testing.assert_array_equal(b.grad.asnumpy().ravel(), [-4.0, -2.0, 0.0, 2.0])
