"""mx.nd.contrib's AdamW, multi-tensor LAMB and group AdaGrad updates: MXNet 1.9.1's formulas.

The literal expectations marked "MXNet 1.9.1" were computed by MXNet 1.9.1 on the same inputs.
"""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx
from lazynd.errors import LazyNDError, ShapeError
from lazynd.testing import assert_almost_equal

W = [[0.5, -1.0, 2.0], [0.25, 1.5, -0.75]]
G = [[0.1, -0.3, 0.2], [0.4, -0.05, 0.6]]
W1, G1 = [1.0, -2.0], [0.3, 0.1]
# mp_adamw_update(W, G, zeros, zeros, W, rescale_grad=2, lr=0.1, eta=0.5, wd=0.01): weight32, MXNet 1.9.1
MP_ADAMW = [[0.339385, -0.836885, 1.831885], [0.090635, 1.650614, -0.904365]]


def _zeros(*arrays: mx.nd.NDArray) -> list:
    return [mx.nd.zeros(a.shape, ctx=a.context) for a in arrays]


@pytest.mark.parametrize("scale", [2.0, "array"])
def test_adamw_update_matches_mxnet_over_two_steps(ctx, scale):
    weight, grad = mx.nd.array(W, ctx=ctx), mx.nd.array(G, ctx=ctx)
    mean, var = _zeros(weight, weight)
    rescale = mx.nd.array([2.0], ctx=ctx) if scale == "array" else scale
    for _ in range(2):
        mx.nd.contrib.adamw_update(
            weight, grad, mean, var, rescale, lr=0.1, eta=0.5, wd=0.01, clip_gradient=0.5, out=weight
        )
    # MXNet 1.9.1
    assert_almost_equal(weight.asnumpy(), [[0.125208, -0.62022, 1.610245], [-0.122299, 1.854842, -1.112324]], rtol=1e-5)
    assert_almost_equal(mean.asnumpy(), [[0.038, -0.095, 0.076], [0.095, -0.019, 0.095]], rtol=1e-5)


@pytest.mark.parametrize("scale", [0.0, np.inf, np.nan])
def test_adamw_update_is_skipped_for_a_zero_or_non_finite_scale(ctx, scale):
    weight, grad = mx.nd.array(W, ctx=ctx), mx.nd.array(G, ctx=ctx)
    mean, var = _zeros(weight, weight)
    out = mx.nd.contrib.adamw_update(weight, grad, mean, var, mx.nd.array([scale], ctx=ctx), lr=0.1, eta=0.5)
    assert_almost_equal(out.asnumpy(), W)
    assert not mean.asnumpy().any() and not var.asnumpy().any()


def test_mp_adamw_update_matches_mxnet(ctx):
    weight16 = mx.nd.array(W, ctx=ctx, dtype="float16")
    weight32 = mx.nd.array(W, ctx=ctx)
    mean, var = _zeros(weight32, weight32)
    grad16 = mx.nd.array(G, ctx=ctx, dtype="float16")
    out = mx.nd.contrib.mp_adamw_update(weight16, grad16, mean, var, weight32, 2.0, lr=0.1, eta=0.5, wd=0.01)
    assert out.dtype == np.float16
    assert_almost_equal(weight32.asnumpy(), MP_ADAMW, rtol=1e-5)
    assert_almost_equal(out.asnumpy(), MP_ADAMW, rtol=1e-3)


def test_multi_adamw_update_matches_mxnet(ctx):
    weights = [mx.nd.array(W, ctx=ctx), mx.nd.array(W1, ctx=ctx)]
    grads = [mx.nd.array(G, ctx=ctx), mx.nd.array(G1, ctx=ctx)]
    means, variances = _zeros(*weights), _zeros(*weights)
    mx.nd.contrib.multi_adamw_update(
        weights, grads, means, variances, mx.nd.array([2.0], ctx=ctx),
        lrs=[0.1, 0.2], wds=[0.01, 0.0], etas=[0.5, 1.0], out=weights, clip_gradient=0.5,
    )  # fmt: skip
    # MXNet 1.9.1
    assert_almost_equal(weights[0].asnumpy(), MP_ADAMW, rtol=1e-5)
    assert_almost_equal(weights[1].asnumpy(), [0.367541, -2.632467], rtol=1e-5)


def test_multi_mp_adamw_update_moves_each_master_copy(ctx):
    weights = [mx.nd.array(W, ctx=ctx, dtype="float16")]
    masters = [mx.nd.array(W, ctx=ctx)]
    grads = [mx.nd.array(G, ctx=ctx, dtype="float16")]
    means, variances = _zeros(*masters), _zeros(*masters)
    mx.nd.contrib.multi_mp_adamw_update(
        weights, grads, means, variances, masters, 2.0, lrs=[0.1], wds=[0.01], etas=[0.5], out=weights
    )
    assert_almost_equal(masters[0].asnumpy(), MP_ADAMW, rtol=1e-5)
    assert weights[0].dtype == np.float16


def test_multi_lamb_update_matches_mxnet_and_the_two_phases(ctx):
    weights = [mx.nd.array(W, ctx=ctx), mx.nd.array(W1, ctx=ctx)]
    grads = [mx.nd.array(G, ctx=ctx), mx.nd.array(G1, ctx=ctx)]
    means, variances = _zeros(*weights), _zeros(*weights)
    for t in (1, 2):
        mx.nd.contrib.multi_lamb_update(
            weights, grads, means, variances, step_count=[t, t], lrs=[0.1, 0.2], wds=[0.01, 0.0], out=weights,
            rescale_grad=2.0, clip_gradient=0.5, lower_bound=0.5, upper_bound=3.0,
        )  # fmt: skip
    # MXNet 1.9.1 (the same as lamb_update_phase1, the norms and lamb_update_phase2 there)
    expected = [[0.268768, -0.767617, 1.765316], [0.019342, 1.72663, -0.978357]]
    assert_almost_equal(weights[0].asnumpy(), expected, rtol=1e-5, atol=1e-6)
    assert_almost_equal(weights[1].asnumpy(), [0.342232, -2.657766], rtol=1e-5)


def test_multi_mp_lamb_update_matches_mxnet(ctx):
    weights = [mx.nd.array(W, ctx=ctx, dtype="float16"), mx.nd.array(W1, ctx=ctx, dtype="float16")]
    masters = [mx.nd.array(W, ctx=ctx), mx.nd.array(W1, ctx=ctx)]
    grads = [mx.nd.array(G, ctx=ctx, dtype="float16"), mx.nd.array(G1, ctx=ctx, dtype="float16")]
    means, variances = _zeros(*masters), _zeros(*masters)
    mx.nd.contrib.multi_mp_lamb_update(
        weights, grads, means, variances, masters, step_count=[1, 1], lrs=[0.1, 0.2], wds=[0.01, 0.0], out=weights
    )
    # MXNet 1.9.1: the master copies move
    assert_almost_equal(masters[0].asnumpy()[0], [0.383349, -0.882768, 1.881607], rtol=1e-5)
    assert_almost_equal(masters[1].asnumpy(), [0.683771, -2.316227], rtol=1e-5)
    assert weights[1].dtype == np.float16


def test_multi_lamb_update_refuses_a_step_count_of_zero():
    w = mx.nd.ones((2,))
    with pytest.raises(LazyNDError, match="_multi_lamb_update: step_count must be >= 1, got 0"):
        mx.nd.contrib.multi_lamb_update([w], [w], [w], [w], step_count=[0], lrs=[0.1], wds=[0.0])


def test_multi_adamw_update_refuses_rates_of_another_length():
    w = mx.nd.ones((2,))
    with pytest.raises(LazyNDError, match="_multi_adamw_update: etas has 2 value"):
        mx.nd.contrib.multi_adamw_update([w], [w], [w], [w], 1.0, lrs=[0.1], wds=[0.0], etas=[1.0, 1.0])


def test_group_adagrad_update_matches_mxnet(ctx):
    weight, grad = mx.nd.array(W, ctx=ctx), mx.nd.array(G, ctx=ctx)
    history = mx.nd.zeros((2, 1), ctx=ctx)
    for _ in range(2):
        mx.nd.contrib.group_adagrad_update(
            weight, grad, history, lr=0.1, rescale_grad=2.0, clip_gradient=0.5, out=weight
        )
    # MXNet 1.9.1 (a dense weight and a row_sparse gradient holding every row)
    assert_almost_equal(weight.asnumpy(), [[0.411848, -0.779619, 1.823695], [0.042988, 1.541402, -0.957012]], rtol=1e-5)
    assert_almost_equal(history.asnumpy(), [[0.3], [0.34]], rtol=1e-5)


def test_group_adagrad_update_averages_over_every_trailing_axis(ctx):
    weight = mx.nd.ones((2, 2, 2), ctx=ctx)
    history = mx.nd.zeros((2,), ctx=ctx)
    out = mx.nd.contrib.group_adagrad_update(weight, mx.nd.arange(8, ctx=ctx).reshape((2, 2, 2)), history, lr=0.1)
    # MXNet 1.9.1
    assert_almost_equal(history.asnumpy(), [3.5, 31.5])
    assert_almost_equal(out.asnumpy()[0], [[1.0, 0.946548], [0.893096, 0.839644]], rtol=1e-5)


def test_group_adagrad_update_refuses_a_history_of_another_shape():
    w = mx.nd.ones((2, 3))
    with pytest.raises(ShapeError, match="input 'history' has shape \\(2, 2\\), expected \\(2, 1\\)"):
        mx.nd.contrib.group_adagrad_update(w, w, mx.nd.zeros((2, 2)), lr=0.1)


def test_the_contrib_updates_compose_symbols():
    names = ("weight", "grad", "mean", "var")
    sym = mx.sym.contrib.adamw_update(*[mx.sym.var(n) for n in names], rescale_grad=2.0, lr=0.1, eta=0.5, wd=0.01)
    arrays = {"weight": mx.nd.array(W), "grad": mx.nd.array(G), "mean": mx.nd.zeros((2, 3)), "var": mx.nd.zeros((2, 3))}
    out = sym.bind(mx.cpu(), arrays).forward()[0]
    assert_almost_equal(out.asnumpy(), MP_ADAMW, rtol=1e-5)
    lamb = mx.sym.contrib.multi_lamb_update(
        [mx.sym.var("w")], [mx.sym.var("g")], [mx.sym.var("m")], [mx.sym.var("v")], step_count=[1], lrs=[0.1], wds=[0.0]
    )
    assert lamb.list_arguments() == ["w", "g", "m", "v"]
    assert "adamw_update" in dir(mx.nd.contrib) and "group_adagrad_update" in dir(mx.sym.contrib)
