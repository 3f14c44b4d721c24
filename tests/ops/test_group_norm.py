"""GroupNorm against MXNet 1.9.1 (it was not registered: mx.nd.GroupNorm missing)."""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx
import lazynd_sym as sym
from lazynd.errors import LazyNDError
from lazynd.testing import check_gradient


def group_norm(x, gamma, beta, groups, eps, head):
    """MXNet 1.9.1's GroupNorm (checked against it to 1e-9 on the shapes below): output, mean, std,
    and the gradients of data, gamma and beta for the head gradient ``head`` of the output."""
    n = x.shape[0]
    grouped = x.reshape(n, groups, -1)
    mean = grouped.mean(-1, keepdims=True)
    std = np.sqrt(grouped.var(-1, keepdims=True) + eps)
    xhat = (grouped - mean) / std
    out = (xhat * gamma[None, :, None] + beta[None, :, None]).reshape(x.shape)
    dy = head.reshape(n, groups, -1)
    scaled = dy * gamma[None, :, None]
    dx = (scaled - scaled.mean(-1, keepdims=True) - xhat * (scaled * xhat).mean(-1, keepdims=True)) / std
    return out, mean[..., 0], std[..., 0], dx.reshape(x.shape), (dy * xhat).sum((0, 2)), dy.sum((0, 2))


@pytest.mark.parametrize("shape,groups", [((2, 4, 3), 2), ((2, 6, 2, 3), 3), ((3, 2, 5), 1), ((1, 4, 2, 2, 2), 4)])
def test_group_norm_forward_and_gradients_match_mxnet(shape, groups, ctx):
    rng = np.random.default_rng(0)
    x_np, head = rng.uniform(-1, 2, shape), rng.uniform(-1, 1, shape)
    gamma_np, beta_np = rng.uniform(0.5, 1.5, groups), rng.uniform(-1, 1, groups)
    x, gamma, beta = (mx.nd.array(v, ctx=ctx, dtype="float64") for v in (x_np, gamma_np, beta_np))
    for a in (x, gamma, beta):
        a.attach_grad()
    with mx.autograd.record():
        out, mean, std = mx.nd.GroupNorm(x, gamma, beta, num_groups=groups, eps=0.01, output_mean_var=True)
    out.backward(mx.nd.array(head, ctx=ctx, dtype="float64"))
    want = group_norm(x_np, gamma_np, beta_np, groups, 0.01, head)
    got = (out, mean, std, x.grad, gamma.grad, beta.grad)
    for name, a, b in zip(("output", "mean", "std", "data grad", "gamma grad", "beta grad"), got, want, strict=True):
        np.testing.assert_allclose(a.asnumpy(), b, 1e-10, 1e-12, err_msg=name)


def test_group_norm_numerical_gradient():
    rng = np.random.default_rng(2)
    inputs = [rng.uniform(-1, 1, (2, 6, 2)), rng.uniform(0.5, 1.5, 3), rng.uniform(-1, 1, 3)]
    check_gradient("GroupNorm", inputs, {"num_groups": 3, "eps": 0.01}, rtol=1e-4, atol=1e-6)


def test_group_norm_symbol_creates_one_gamma_and_beta_per_group():
    # MXNet 1.9.1: ['data', 'gn_gamma', 'gn_beta'], gamma and beta (2,), one output unless output_mean_var
    net = sym.GroupNorm(sym.Variable("data"), num_groups=2, name="gn")
    assert net.list_arguments() == ["data", "gn_gamma", "gn_beta"]
    assert net.list_outputs() == ["gn_output"]
    args, outs, _ = net.infer_shape(data=(2, 4, 3, 3))
    assert args == [(2, 4, 3, 3), (2,), (2,)] and outs == [(2, 4, 3, 3)]
    with_stats = sym.GroupNorm(sym.Variable("data"), num_groups=2, output_mean_var=True)
    assert with_stats.infer_shape(data=(2, 4, 3, 3))[1] == [(2, 4, 3, 3), (2, 2), (2, 2)]


@pytest.mark.parametrize(
    "shape,params,gamma,match",
    [
        ((2, 4, 3), {"num_groups": 3}, 3, "4 channels.*multiple of num_groups=3"),
        ((4,), {}, 1, "at least 3-D"),
        ((2, 4, 3), {"num_groups": 2}, 4, "one gamma per group"),
        ((2, 4, 3), {"num_groups": 0}, 1, "num_groups=0"),
    ],
)
def test_group_norm_bad_input_is_a_clear_error(shape, params, gamma, match):
    with pytest.raises(LazyNDError, match=match):
        mx.nd.GroupNorm(mx.nd.ones(shape), mx.nd.ones(gamma), mx.nd.zeros(gamma), **params)


def test_an_empty_batch_gives_an_empty_output_and_gradient(ctx):
    x = mx.nd.zeros((0, 4, 3), ctx=ctx)
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.GroupNorm(x, mx.nd.ones((2,), ctx=ctx), mx.nd.zeros((2,), ctx=ctx), num_groups=2)
    y.backward()
    assert y.asnumpy().shape == x.grad.asnumpy().shape == (0, 4, 3)
