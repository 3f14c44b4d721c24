"""BatchNorm's ``fix_gamma``: the data is scaled by 1, and 1 is written into gamma at every forward
pass, as MXNet's kernels write it (MXNet 1.9.1 and 0.9 alike, in prediction and training, through
an executor and under ``autograd.record``).  (A Module's parameters read after an update still
hold what the optimizer's weight decay made of gamma, as MXNet's: the 1 comes with the next forward.)"""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx
import lazynd_sym as sym

X = np.sin(np.arange(48) * 0.9).reshape(4, 3, 2, 2)
GAMMA = [2.0, 3.0, 4.0]
# each operator that is BatchNorm under another name (lazynd/ops/norm_variants.py), with its extras
VARIANTS = [
    ("BatchNorm", {}),
    ("BatchNorm_v1", {}),
    ("_contrib_SyncBatchNorm", {"key": "k"}),
    ("_contrib_BatchNormWithReLU", {}),
]


def _call(name, ctx, gamma, train, fix_gamma=True, **extra):
    x = mx.nd.array(X, ctx=ctx)
    beta, mm, mv = mx.nd.zeros(3, ctx=ctx), mx.nd.zeros(3, ctx=ctx), mx.nd.ones(3, ctx=ctx)
    return getattr(mx.nd, name)(x, gamma, beta, mm, mv, fix_gamma=fix_gamma, is_train=train, **extra)


@pytest.mark.parametrize("train", [True, False])
@pytest.mark.parametrize("name, extra", VARIANTS)
def test_fix_gamma_writes_one_into_gamma(name, extra, train, ctx):
    gamma = mx.nd.array(GAMMA, ctx=ctx)
    y = _call(name, ctx, gamma, train, **extra)
    np.testing.assert_array_equal(gamma.asnumpy(), [1, 1, 1])
    # the output is the one scaled by 1: fix_gamma=False with a gamma of ones
    ones = _call(name, ctx, mx.nd.ones(3, ctx=ctx), train, fix_gamma=False, **extra)
    np.testing.assert_allclose(y.asnumpy(), ones.asnumpy(), rtol=1e-6, atol=1e-6)


def test_without_fix_gamma_gamma_is_left_as_it_is(ctx):
    gamma = mx.nd.array(GAMMA, ctx=ctx)
    _call("BatchNorm", ctx, gamma, True, fix_gamma=False).wait_to_read()
    np.testing.assert_array_equal(gamma.asnumpy(), GAMMA)


def test_a_recorded_gamma_is_written_and_gets_no_gradient(ctx):
    """MXNet writes the 1 into a gamma that autograd records too; its gradient is 0."""
    data, gamma = mx.nd.array(X, ctx=ctx), mx.nd.array(GAMMA, ctx=ctx)
    data.attach_grad()
    gamma.attach_grad()
    beta, mm, mv = mx.nd.zeros(3, ctx=ctx), mx.nd.zeros(3, ctx=ctx), mx.nd.ones(3, ctx=ctx)
    with mx.autograd.record():
        y = mx.nd.BatchNorm(data, gamma, beta, mm, mv, fix_gamma=True)
        loss = (y * mx.nd.array(X[::-1].copy(), ctx=ctx)).sum()
    loss.backward()
    np.testing.assert_array_equal(gamma.asnumpy(), [1, 1, 1])
    np.testing.assert_array_equal(gamma.grad.asnumpy(), [0, 0, 0])
    # the data gradient is the one of a gamma of ones
    ones, data2 = mx.nd.ones(3, ctx=ctx), mx.nd.array(X, ctx=ctx)
    data2.attach_grad()
    with mx.autograd.record():
        y2 = mx.nd.BatchNorm(data2, ones, beta, mm, mv, fix_gamma=False)
        loss2 = (y2 * mx.nd.array(X[::-1].copy(), ctx=ctx)).sum()
    loss2.backward()
    np.testing.assert_allclose(data.grad.asnumpy(), data2.grad.asnumpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("train", [True, False])
def test_an_executor_writes_one_into_its_gamma_argument(train, ctx):
    net = sym.BatchNorm(sym.var("data"), fix_gamma=True, name="bn")
    exe = net.simple_bind(ctx, data=X.shape)
    exe.arg_dict["data"][:] = X
    exe.arg_dict["bn_gamma"][:] = GAMMA
    exe.forward(is_train=train)
    if train:
        exe.backward(mx.nd.ones(X.shape, ctx=ctx))
        np.testing.assert_array_equal(exe.grad_dict["bn_gamma"].asnumpy(), [0, 0, 0])
    np.testing.assert_array_equal(exe.arg_dict["bn_gamma"].asnumpy(), [1, 1, 1])


def test_a_float16_gamma_is_written_too(ctx):
    """On the GPU float16 BatchNorm runs its float32 kernels on widened copies: the 1 written into
    gamma's copy is narrowed back into gamma as the outputs are."""
    x = mx.nd.array(X, ctx=ctx, dtype="float16")
    gamma, beta = mx.nd.array(GAMMA, ctx=ctx, dtype="float16"), mx.nd.zeros(3, ctx=ctx, dtype="float16")
    mm, mv = mx.nd.zeros(3, ctx=ctx, dtype="float16"), mx.nd.ones(3, ctx=ctx, dtype="float16")
    mx.nd.BatchNorm(x, gamma, beta, mm, mv, fix_gamma=True).wait_to_read()
    np.testing.assert_array_equal(gamma.asnumpy(), [1, 1, 1])
