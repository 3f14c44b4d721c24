"""ftrl_update, rmspropalex_update, signsgd_update, signum_update: MXNet's formulas, in place.

The literal expectations marked "MXNet 1.9.1" were computed by MXNet 1.9.1 on the same inputs.
"""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx
from lazynd.ops import registry
from lazynd.testing import assert_almost_equal

W = np.array([[1.0, -2.0, 0.5]], np.float32)
G = np.array([[3.0, -0.1, 0.0]], np.float32)


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(23)


def steps(rng: np.random.Generator, n: int = 3) -> tuple[np.ndarray, list[np.ndarray]]:
    shape = (3, 4)
    return rng.standard_normal(shape).astype(np.float32), [
        rng.standard_normal(shape).astype(np.float32) * 2 for _ in range(n)
    ]


def test_ftrl_update_matches_mxnet(ctx):
    weight, z, n = mx.nd.array(W, ctx=ctx), mx.nd.zeros((1, 3), ctx=ctx), mx.nd.zeros((1, 3), ctx=ctx)
    result = mx.nd.ftrl_update(
        weight, mx.nd.array(G, ctx=ctx), z, n, out=weight, lr=0.1, wd=0.5, clip_gradient=1.0, rescale_grad=0.5
    )
    assert result is weight
    # MXNet 1.9.1
    assert_almost_equal(weight.asnumpy(), [[0.43853658, -0.08545455, 0.0]], rtol=1e-6)
    assert_almost_equal(z.asnumpy(), [[-9.0, 0.95, 0.0]], rtol=1e-6)
    assert_almost_equal(n.asnumpy(), [[1.0, 0.0025, 0.0]], rtol=1e-6)


def test_ftrl_update_matches_reference_over_steps(ctx, rng):
    w0, grads = steps(rng)
    p = {"lr": 0.2, "wd": 0.01, "lamda1": 0.05, "beta": 0.7, "rescale_grad": 0.5, "clip_gradient": 0.8}
    weight = mx.nd.array(w0, ctx=ctx)
    z, n = mx.nd.zeros(w0.shape, ctx=ctx), mx.nd.zeros(w0.shape, ctx=ctx)
    ref_w, ref_z, ref_n = w0.astype(np.float64), np.zeros(w0.shape), np.zeros(w0.shape)
    for g in grads:
        mx.nd.ftrl_update(weight, mx.nd.array(g, ctx=ctx), z, n, out=weight, **p)
        eff = np.clip(0.5 * g, -0.8, 0.8)
        ref_z += eff - (np.sqrt(ref_n + eff**2) - np.sqrt(ref_n)) * ref_w / 0.2
        ref_n += eff**2
        ref_w = (np.sign(ref_z) * 0.05 - ref_z) / ((0.7 + np.sqrt(ref_n)) / 0.2 + 0.01) * (np.abs(ref_z) > 0.05)
    assert_almost_equal(z.asnumpy(), ref_z, rtol=1e-5, atol=1e-5)
    assert_almost_equal(n.asnumpy(), ref_n, rtol=1e-5, atol=1e-6)
    assert_almost_equal(weight.asnumpy(), ref_w, rtol=1e-4, atol=1e-6)


def test_rmspropalex_update_matches_mxnet(ctx):
    weight = mx.nd.array(W, ctx=ctx)
    n, g, delta = (mx.nd.zeros((1, 3), ctx=ctx) for _ in range(3))
    mx.nd.rmspropalex_update(
        weight,
        mx.nd.array(G, ctx=ctx),
        n,
        g,
        delta,
        out=weight,
        lr=0.1,
        wd=0.5,
        clip_gradient=1.0,
        gamma1=0.9,
        gamma2=0.8,
        epsilon=1e-3,
    )
    # MXNet 1.9.1: weight decay joins the gradient before clipping
    assert_almost_equal(weight.asnumpy(), [[0.6685033, -1.6685033, 0.19285247]], rtol=1e-6)
    assert_almost_equal(n.asnumpy(), [[0.1, 0.1, 0.00625]], rtol=1e-6)
    assert_almost_equal(g.asnumpy(), [[0.1, -0.1, 0.025]], rtol=1e-6)
    assert_almost_equal(delta.asnumpy(), [[-0.33149675, 0.33149675, -0.30714753]], rtol=1e-6)


@pytest.mark.parametrize("clip_weights", [-1.0, 1.2])
def test_rmspropalex_update_matches_reference_over_steps(ctx, rng, clip_weights):
    w0, grads = steps(rng)
    p = {"lr": 0.01, "gamma1": 0.9, "gamma2": 0.8, "epsilon": 1e-4, "wd": 0.02, "rescale_grad": 0.5}
    weight = mx.nd.array(w0, ctx=ctx)
    states = [mx.nd.zeros(w0.shape, ctx=ctx) for _ in range(3)]
    ref_w, ref_n, ref_g, ref_d = w0.astype(np.float64), np.zeros(w0.shape), np.zeros(w0.shape), np.zeros(w0.shape)
    for g in grads:
        mx.nd.rmspropalex_update(
            weight, mx.nd.array(g, ctx=ctx), *states, out=weight, clip_gradient=0.8, clip_weights=clip_weights, **p
        )
        eff = np.clip(0.5 * g + 0.02 * ref_w, -0.8, 0.8)
        ref_n = 0.9 * ref_n + 0.1 * eff**2
        ref_g = 0.9 * ref_g + 0.1 * eff
        ref_d = 0.8 * ref_d - 0.01 * eff / np.sqrt(ref_n - ref_g**2 + 1e-4)
        ref_w = ref_w + ref_d
        if clip_weights >= 0:
            ref_w = np.clip(ref_w, -clip_weights, clip_weights)
    for state, ref in zip(states, (ref_n, ref_g, ref_d), strict=True):
        assert_almost_equal(state.asnumpy(), ref, rtol=1e-4, atol=1e-6)
    assert_almost_equal(weight.asnumpy(), ref_w, rtol=1e-5, atol=1e-6)


def test_signsgd_update_steps_along_the_sign_of_the_raw_gradient(ctx):
    weight = mx.nd.array(W, ctx=ctx)
    # MXNet 1.9.1: rescale_grad (even negative) and clipping do not change the step
    mx.nd.signsgd_update(weight, mx.nd.array(G, ctx=ctx), out=weight, lr=0.1, wd=0.5, rescale_grad=-0.5)
    assert_almost_equal(weight.asnumpy(), [[0.85, -1.8, 0.475]], rtol=1e-6)


def test_signum_update_matches_mxnet(ctx):
    weight, mom = mx.nd.array(W, ctx=ctx), mx.nd.full((1, 3), 0.2, ctx=ctx)
    mx.nd.signum_update(
        weight,
        mx.nd.array(G, ctx=ctx),
        mom,
        out=weight,
        lr=0.1,
        momentum=0.9,
        wd=0.5,
        wd_lh=0.2,
        clip_gradient=1.0,
        rescale_grad=0.5,
    )
    # MXNet 1.9.1: the state holds minus the running average of clip(rescale_grad*grad) + wd*weight
    assert_almost_equal(mom.asnumpy(), [[0.03, 0.285, 0.155]], rtol=1e-5)
    assert_almost_equal(weight.asnumpy(), [[1.08, -1.86, 0.59]], rtol=1e-6)


def test_updates_keep_float64(rng):
    w0, (g,) = steps(rng, n=1)
    weight = mx.nd.array(w0, dtype="float64")
    z, n = mx.nd.zeros(w0.shape, dtype="float64"), mx.nd.zeros(w0.shape, dtype="float64")
    mx.nd.ftrl_update(weight, mx.nd.array(g, dtype="float64"), z, n, out=weight, lr=0.1)
    assert weight.dtype == z.dtype == n.dtype == np.float64


@pytest.mark.parametrize(
    ("name", "states"),
    [
        ("ftrl_update", ("z", "n")),
        ("rmspropalex_update", ("n", "g", "delta")),
        ("signsgd_update", ()),
        ("signum_update", ("mom",)),
    ],
)
def test_state_inputs_are_declared_as_written(name, states):
    op = registry.get(name)
    names = op.input_names(op.parse({"lr": 0.1}))
    assert [names[i] for i in op.mutates] == list(states)


@pytest.mark.parametrize(
    ("name", "params", "message"),
    [
        ("ftrl_update", {"lr": 0.0}, "lr"),
        ("ftrl_update", {"lamda1": -1}, "lamda1"),
        ("rmspropalex_update", {"gamma2": 1.0}, "gamma2"),
        ("signum_update", {"momentum": 1.0}, "momentum"),
        ("signum_update", {"wd_lh": -0.1}, "wd_lh"),
    ],
)
def test_hyperparameters_outside_the_usual_range_run_as_in_mxnet(name, params, message):
    # MXNet 1.9.1 bounds none of these (tests/ops/test_float_param_ranges.py holds its answers)
    n_inputs = len(registry.get(name).input_names({}))
    arrays = [mx.nd.ones((2,)) for _ in range(n_inputs)]
    out = getattr(mx.nd, name)(*arrays, **{"lr": 0.1, **params})
    assert out.shape == (2,) and message in registry.get(name).params


def test_updates_are_symbols_too():
    weight, grad, z, n = (mx.sym.Variable(s) for s in ("weight", "grad", "z", "n"))
    out = mx.sym.ftrl_update(weight, grad, z, n, lr=0.1)
    _, out_shapes, _ = out.infer_shape(weight=(2, 3))
    assert out_shapes == [(2, 3)]
