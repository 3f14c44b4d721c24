"""ftml_update, lamb_update_phase1/2, mp_lamb_update_phase1/2 and multi_lars: MXNet 1.9.1's formulas.

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
# lamb_update_phase1(W, G, zeros, zeros, t=1, wd=0.01, rescale_grad=2, clip_gradient=0.5), MXNet 1.9.1
DIRECTION = [[1.004995, -1.009998, 1.019997], [1.002498, -0.984990, 0.992498]]


def test_ftml_update_matches_mxnet_over_two_steps(ctx):
    weight = mx.nd.array(W, ctx=ctx)
    d, v, z = (mx.nd.zeros((2, 3), ctx=ctx) for _ in range(3))
    grad = mx.nd.array(G, ctx=ctx)
    for t in (1, 2):
        result = mx.nd.ftml_update(
            weight, grad, d, v, z, out=weight, lr=0.1, t=t, wd=0.01, rescale_grad=2.0, clip_grad=0.5
        )
    assert result is weight
    # MXNet 1.9.1
    assert_almost_equal(weight.asnumpy(), [[0.337653, -0.8375, 1.837575], [0.0875, 1.662129, -0.9125]], rtol=1e-5)
    assert_almost_equal(d.asnumpy(), [[1.308807, 3.20001, 2.684809], [3.20001, 0.54081, 3.20001]], rtol=1e-5)
    assert_almost_equal(z.asnumpy(), [[-0.441923, 2.68001, -4.933537], [-0.280002, -0.898896, 2.920009]], rtol=1e-5)


def test_ftml_update_takes_clip_grad_not_clip_gradient():
    w = mx.nd.ones((2,))
    with pytest.raises(LazyNDError, match="clip_gradient"):
        mx.nd.ftml_update(w, w, w, w, w, lr=0.1, t=1, clip_gradient=1.0)


def test_update_count_zero_is_refused():
    w = mx.nd.ones((2,))
    with pytest.raises(LazyNDError, match="t"):
        mx.nd.lamb_update_phase1(w, w, w, w, t=0, wd=0.0)


def test_lamb_phase1_matches_mxnet(ctx):
    weight, grad = mx.nd.array(W, ctx=ctx), mx.nd.array(G, ctx=ctx)
    mean, var = mx.nd.zeros((2, 3), ctx=ctx), mx.nd.zeros((2, 3), ctx=ctx)
    g = mx.nd.lamb_update_phase1(weight, grad, mean, var, t=1, wd=0.01, rescale_grad=2.0, clip_gradient=0.5)
    assert_almost_equal(g.asnumpy(), DIRECTION, rtol=1e-5)
    # MXNet 1.9.1: the moments are updated in place from the clipped, rescaled gradient
    assert_almost_equal(mean.asnumpy(), [[0.02, -0.05, 0.04], [0.05, -0.01, 0.05]], rtol=1e-5)
    assert_almost_equal(var.asnumpy()[0], [4.0e-05, 2.5e-04, 1.6e-04], rtol=1e-4)


def test_lamb_phase1_without_bias_correction_matches_mxnet(ctx):
    weight, grad = mx.nd.array(W, ctx=ctx), mx.nd.array(G, ctx=ctx)
    zeros = [mx.nd.zeros((2, 3), ctx=ctx) for _ in range(2)]
    g = mx.nd.lamb_update_phase1(weight, grad, *zeros, t=3, wd=0.01, bias_correction=False)
    # MXNet 1.9.1
    assert_almost_equal(g.asnumpy()[0], [3.166299, -3.171965, 3.181799], rtol=1e-4)


@pytest.mark.parametrize(
    ("r1", "r2", "bounds", "step"),
    [
        (2.0, 4.0, {}, 0.05),  # lr * r1 / r2
        (0.0, 4.0, {}, 0.1),  # a zero norm: ratio 1
        (2.0, 0.0, {}, 0.1),
        (2.0, 4.0, {"lower_bound": 3.0}, 0.075),
        (2.0, 4.0, {"upper_bound": 1.0}, 0.025),
        (0.0, 4.0, {"lower_bound": 0.5}, 0.0125),  # the bound is applied before the zero test
        (2.0, 4.0, {"upper_bound": 0.0}, 0.1),  # a bound of 0 applies (MXNet 1.9.1), making r1 zero
        (2.0, 4.0, {"lower_bound": 3.0, "upper_bound": 1.0}, 0.025),
    ],
)
def test_lamb_phase2_trust_ratio_matches_mxnet(ctx, r1, r2, bounds, step):
    weight, g = mx.nd.array(W, ctx=ctx), mx.nd.ones((2, 3), ctx=ctx)
    out = mx.nd.lamb_update_phase2(weight, g, mx.nd.array([r1], ctx=ctx), mx.nd.array([r2], ctx=ctx), lr=0.1, **bounds)
    assert_almost_equal(out.asnumpy(), np.array(W, np.float32) - step, rtol=1e-6)


def test_lamb_phase2_refuses_a_norm_of_several_elements():
    w = mx.nd.ones((2, 3))
    with pytest.raises(ShapeError, match="lamb_update_phase2: input 'r1' has shape \\(2,\\)"):
        mx.nd.lamb_update_phase2(w, w, mx.nd.ones((2,)), mx.nd.ones((1,)), lr=0.1)


def test_mp_lamb_phases_match_mxnet_and_move_the_master_copy(ctx):
    weight16 = mx.nd.array(W, ctx=ctx, dtype="float16")
    weight32 = mx.nd.array(W, ctx=ctx)
    mean, var = mx.nd.zeros((2, 3), ctx=ctx), mx.nd.zeros((2, 3), ctx=ctx)
    g = mx.nd.mp_lamb_update_phase1(
        weight16, mx.nd.array(G, ctx=ctx, dtype="float16"), mean, var, weight32, t=1, wd=0.01
    )
    assert g.dtype == np.float32
    # MXNet 1.9.1
    assert_almost_equal(g.asnumpy()[0], [1.00499, -1.009997, 1.019995], rtol=1e-5)
    out = mx.nd.mp_lamb_update_phase2(
        weight16, g, mx.nd.array([2.0], ctx=ctx), mx.nd.array([4.0], ctx=ctx), weight32, lr=0.1
    )
    assert out.dtype == np.float16
    # MXNet 1.9.1's output; its kernel leaves weight32 unchanged, here it holds the new value
    assert_almost_equal(out.asnumpy()[0], [0.449707, -0.949707, 1.949219], rtol=1e-3)
    assert_almost_equal(weight32.asnumpy(), np.array(W) - 0.05 * g.asnumpy(), rtol=1e-6)


def test_mp_lamb_phase1_refuses_a_float16_state():
    w16 = mx.nd.ones((2,), dtype="float16")
    with pytest.raises(LazyNDError, match="mp_lamb_update_phase1: input 'mean' has dtype float16"):
        mx.nd.mp_lamb_update_phase1(w16, w16, w16, mx.nd.ones((2,)), mx.nd.ones((2,)), t=1, wd=0.0)


def test_multi_lars_matches_mxnet(ctx):
    lrs = mx.nd.array([0.1, 0.2, 0.3, 0.4], ctx=ctx)
    weights_sum_sq = mx.nd.array([4.0, 0.0, 9.0, 1.0], ctx=ctx)
    grads_sum_sq = mx.nd.array([1.0, 1.0, 0.0, 16.0], ctx=ctx)
    wds = mx.nd.array([0.01, 0.0, 0.1, 0.5], ctx=ctx)
    out = mx.nd.multi_lars(lrs, weights_sum_sq, grads_sum_sq, wds, eta=0.5, eps=1e-3, rescale_grad=2.0)
    # MXNet 1.9.1: a zero norm keeps the layer's rate
    assert_almost_equal(out.asnumpy(), [0.04948046, 0.2, 0.3, 0.02352664], rtol=1e-6)


def test_multi_lars_refuses_mismatched_lengths():
    with pytest.raises(ShapeError, match="multi_lars: shape of 'wds'"):
        mx.nd.multi_lars(mx.nd.ones((3,)), mx.nd.ones((3,)), mx.nd.ones((3,)), mx.nd.ones((2,)), eta=1.0, eps=0.0)


def test_lamb_phases_run_in_a_symbol():
    names = ("weight", "grad", "mean", "var")
    arrays = {n: mx.nd.array(a) for n, a in zip(names, (W, G, np.zeros((2, 3)), np.zeros((2, 3))), strict=True)}
    sym = mx.sym.lamb_update_phase1(*[mx.sym.var(n) for n in names], t=1, wd=0.01, rescale_grad=2.0, clip_gradient=0.5)
    out = sym.bind(mx.cpu(), arrays).forward()[0]
    assert_almost_equal(out.asnumpy(), DIRECTION, rtol=1e-5)


@pytest.mark.parametrize(
    ("betas", "expected"), [({"beta1": 10.0}, [0.0, 0.0, 0.0]), ({"beta2": 10.0}, [100000.0, 149999.97, 65000.004])]
)
def test_lamb_bias_correction_past_the_float_range_is_infinite_as_mxnet(betas: dict, expected: list) -> None:
    # 10.0 ** 400 raised OverflowError inside the kernel; MXNet 1.9.1's pow gives infinity: these outputs
    weight, grad = mx.nd.array([1.0, 2.0, -1.0]), mx.nd.array([0.1, -0.3, 0.2])
    mean, var = mx.nd.array([0.1, 0.2, 0.05]), mx.nd.array([0.1, 0.3, 0.2])
    out = mx.nd.lamb_update_phase1(weight, grad, mean, var, t=400, wd=0.0, **betas)
    assert_almost_equal(out.asnumpy(), np.array(expected), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("norms", [((0,), (0,)), ((1,), (0,))])
def test_lamb_phase2_refuses_an_empty_norm(norms: tuple) -> None:
    # MXNet 1.9.1: "r1 shape incorrect"; lazynd took a (0,) norm for an unknown shape and its kernel
    # failed inside the engine reshaping nothing into one value
    w, g = mx.nd.ones((3,)), mx.nd.ones((3,))
    with pytest.raises(ShapeError, match=r"lamb_update_phase2: input 'r[12]' has shape \(0,\), expected one element"):
        mx.nd.lamb_update_phase2(w, g, mx.nd.ones(norms[0]), mx.nd.ones(norms[1]), lr=0.1)
