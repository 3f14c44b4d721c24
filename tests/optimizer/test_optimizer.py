"""Each optimizer's update rule against a NumPy reference, and the rules' edge cases (clipping, lazy_update)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from optimizer_reference import KW, prep, run

import lazynd as mx
from lazynd import optimizer
from lazynd.testing import assert_almost_equal


def test_sgd_with_momentum_matches_reference(problem):
    w0, grads = problem
    w, m = w0.astype(np.float64), np.zeros(6)
    for g in grads:
        m = 0.9 * m - 0.1 * (prep(g) + 0.01 * w)
        w = w + m
    assert_almost_equal(run(optimizer.create("sgd", learning_rate=0.1, momentum=0.9, **KW), w0, grads), w, rtol=1e-5)


def test_plain_sgd_and_ccsgd_alias_match_reference(problem):
    w0, grads = problem
    w = w0.astype(np.float64)
    for g in grads:
        w = w - 0.1 * (prep(g) + 0.01 * w)
    assert_almost_equal(run(optimizer.create("ccsgd", learning_rate=0.1, **KW), w0, grads), w, rtol=1e-5)
    assert isinstance(optimizer.create("ccsgd"), optimizer.SGD)


def test_nag_matches_reference(problem):
    w0, grads = problem
    w, m = w0.astype(np.float64), np.zeros(6)
    for g in grads:
        eff = prep(g) + 0.01 * w
        m = 0.9 * m - 0.1 * eff
        w = w + 0.9 * m - 0.1 * eff
    assert_almost_equal(run(optimizer.create("nag", learning_rate=0.1, momentum=0.9, **KW), w0, grads), w, rtol=1e-5)


def test_nag_given_lists_of_parameters_is_still_nesterov(problem):
    # a Module's updater hands lists; they went to SGD's fused multi_sgd_mom_update (heavy-ball
    # momentum). MXNet 1.9.1, updater([0, 1], ...) with lr 0.1, momentum 0.9, rescale_grad 0.1:
    updater = optimizer.get_updater(optimizer.create("nag", learning_rate=0.1, momentum=0.9, rescale_grad=0.1))
    weights = [mx.nd.array([1.0, 2.0]), mx.nd.array([3.0])]
    for g in ([0.5, -1.0], [0.25, 0.5], [1.0, 1.0]):
        updater([0, 1], [mx.nd.array(g), mx.nd.array([1.0])], weights)
    assert_almost_equal(weights[0].asnumpy(), np.array([0.95702994, 2.00184], np.float32), rtol=1e-6)
    assert_almost_equal(weights[1].asnumpy(), np.array([2.9195101], np.float32), rtol=1e-6)
    w0, grads = problem
    one_by_one = run(optimizer.create("nag", learning_rate=0.1, momentum=0.9, **KW), w0, grads)
    updater = optimizer.get_updater(optimizer.create("nag", learning_rate=0.1, momentum=0.9, **KW))
    pair = [mx.nd.array(w0), mx.nd.array(w0)]
    for g in grads:
        updater([0, 1], [mx.nd.array(g), mx.nd.array(g)], pair)
    assert_almost_equal(pair[0].asnumpy(), one_by_one, rtol=1e-6)


def test_adam_applies_bias_correction_to_the_learning_rate(problem):
    w0, grads = problem
    w, m, v = w0.astype(np.float64), np.zeros(6), np.zeros(6)
    for t, g in enumerate(grads, 1):
        eff = np.clip(0.5 * g + 0.01 * w, -1, 1)
        m = 0.9 * m + 0.1 * eff
        v = 0.999 * v + 0.001 * eff**2
        lr = 0.01 * math.sqrt(1 - 0.999**t) / (1 - 0.9**t)
        w = w - lr * m / (np.sqrt(v) + 1e-8)
    assert_almost_equal(run(optimizer.create("adam", learning_rate=0.01, **KW), w0, grads), w, rtol=1e-4, atol=1e-6)


def test_rmsprop_matches_reference(problem):
    w0, grads = problem
    w, n = w0.astype(np.float64), np.zeros(6)
    for g in grads:
        eff = np.clip(0.5 * g + 0.01 * w, -1, 1)
        n = 0.1 * eff**2 + 0.9 * n
        w = w - 0.01 * eff / np.sqrt(n + 1e-8)
    assert_almost_equal(run(optimizer.create("rmsprop", learning_rate=0.01, **KW), w0, grads), w, rtol=1e-4, atol=1e-6)


def test_centered_rmsprop_matches_reference(problem):
    w0, grads = problem
    w, n, gm, delta = w0.astype(np.float64), np.zeros(6), np.zeros(6), np.zeros(6)
    for g in grads:
        eff = np.clip(0.5 * g + 0.01 * w, -1, 1)
        n = 0.1 * eff**2 + 0.9 * n
        gm = 0.1 * eff + 0.9 * gm
        delta = 0.9 * delta - 0.01 * eff / np.sqrt(n - gm**2 + 1e-8)
        w = np.clip(w + delta, -1, 1)
    opt = optimizer.create("rmsprop", learning_rate=0.01, centered=True, clip_weights=1.0, **KW)
    assert_almost_equal(run(opt, w0, grads), w, rtol=1e-4, atol=1e-5)


def test_adagrad_matches_reference(problem):
    w0, grads = problem
    w, h = w0.astype(np.float64), np.zeros(6)
    for g in grads:
        eff = prep(g)
        h = h + eff**2
        w = w - 0.1 * (eff / np.sqrt(h + 1e-7) + 0.01 * w)
    assert_almost_equal(run(optimizer.create("adagrad", learning_rate=0.1, **KW), w0, grads), w, rtol=1e-5)


def test_adadelta_matches_reference(problem):
    w0, grads = problem
    w, acc_g, acc_d = w0.astype(np.float64), np.zeros(6), np.zeros(6)
    for g in grads:
        eff = prep(g)
        acc_g = 0.9 * acc_g + 0.1 * eff**2
        step = np.sqrt(acc_d + 1e-5) / np.sqrt(acc_g + 1e-5) * eff
        acc_d = 0.9 * acc_d + 0.1 * step**2
        w = w - step - 0.01 * w
    assert_almost_equal(run(optimizer.create("adadelta", **KW), w0, grads), w, rtol=1e-5)


def test_ftrl_matches_reference(problem):
    w0, grads = problem
    w, z, n = w0.astype(np.float64), np.zeros(6), np.zeros(6)
    for g in grads:
        eff = prep(g)
        z += eff - (np.sqrt(n + eff**2) - np.sqrt(n)) * w / 0.1
        n += eff**2
        w = (np.sign(z) * 0.02 - z) / ((1.0 + np.sqrt(n)) / 0.1 + 0.01) * (np.abs(z) > 0.02)
    opt = optimizer.create("ftrl", lamda1=0.02, **KW)
    assert opt.lr == 0.1  # Ftrl's own default learning rate
    assert_almost_equal(run(opt, w0, grads), w, rtol=1e-4, atol=1e-6)


def test_sgld_takes_half_a_step_plus_seeded_gaussian_noise(problem):
    w0, grads = problem
    mx.random.seed(7)
    got = run(optimizer.create("sgld", learning_rate=0.04, **KW), w0, grads[:1])
    mx.random.seed(7)
    noise = mx.random.normal(0.0, 0.2, shape=w0.shape).asnumpy()
    expected = w0 - 0.02 * (prep(grads[0]) + 0.01 * w0) + noise
    assert_almost_equal(got, expected, rtol=1e-5, atol=1e-6)


def test_sgld_noise_has_variance_lr():
    weight = mx.nd.zeros((100_000,))
    optimizer.create("sgld", learning_rate=0.04).update(0, weight, mx.nd.zeros((100_000,)), None)
    values = weight.asnumpy()
    assert abs(values.mean()) < 0.005 and abs(values.std() - 0.2) < 0.005


def test_sgld_at_a_rate_of_zero_leaves_the_weight():
    # a schedule decayed to final_lr=0 (PolyScheduler at max_update) or an lr_mult of 0: no step
    # and no noise (the normal sampler refused the scale of 0 in the middle of training)
    schedule = mx.lr_scheduler.PolyScheduler(max_update=2, base_lr=0.1)
    opt = optimizer.create("sgld", learning_rate=0.1, lr_scheduler=schedule, param_idx2name={0: "w", 1: "frozen"})
    opt.set_lr_mult({"frozen": 0.0})
    updater = optimizer.get_updater(opt)
    weight, frozen = mx.nd.array([1.0, -2.0]), mx.nd.array([3.0, 4.0])
    for _ in range(2):
        updater(0, mx.nd.array([0.5, 0.25]), weight)
        updater(1, mx.nd.array([0.5, 0.25]), frozen)
    decayed = weight.asnumpy()
    updater(0, mx.nd.array([0.5, 0.25]), weight)
    assert opt.learning_rate == 0.0
    np.testing.assert_array_equal(weight.asnumpy(), decayed)
    np.testing.assert_array_equal(frozen.asnumpy(), [3.0, 4.0])


@pytest.mark.parametrize("momentum", [0.0, 0.9])
def test_dcasgd_matches_reference(problem, momentum):
    w0, grads = problem
    w, previous, mom = w0.astype(np.float64), w0.astype(np.float64), np.zeros(6)
    for g in grads:
        eff = prep(g)
        step = -0.05 * (eff + 0.01 * w + 0.1 * eff * eff * (w - previous))
        mom = momentum * mom + step
        previous = w
        w = w + mom
    opt = optimizer.create("dcasgd", learning_rate=0.05, momentum=momentum, lamda=0.1, **KW)
    assert_almost_equal(run(opt, w0, grads), w, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("momentum", [0.0, 0.8])
def test_signum_matches_reference(problem, momentum):
    w0, grads = problem
    w, mom = w0.astype(np.float64), np.zeros(6)
    for g in grads:
        if momentum:
            mom = momentum * mom - (1 - momentum) * (prep(g) + 0.01 * w)
            w = (1 - 0.05 * 0.02) * w + 0.05 * np.sign(mom)
        else:  # signSGD: wd_lh decays the weight too, as MXNet's own reference (its kernel refuses wd_lh)
            w = (1 - 0.05 * (0.01 + 0.02)) * w - 0.05 * np.sign(g)
    opt = optimizer.create("signum", learning_rate=0.05, momentum=momentum, wd_lh=0.02, **KW)
    assert_almost_equal(run(opt, w0, grads), w, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name, kwargs", [("sgd", {"momentum": 0.9}), ("adam", {})])
def test_lazy_update_is_accepted_and_changes_nothing_on_dense_arrays(name, kwargs, problem):
    # MXNet 1.x programs pass lazy_update (a row-sparse option) to SGD and Adam
    w0, grads = problem
    lazy = run(optimizer.create(name, lazy_update=True, **kwargs), w0, grads)
    eager = run(optimizer.create(name, lazy_update=False, **kwargs), w0, grads)
    np.testing.assert_array_equal(lazy, eager)


@pytest.mark.parametrize(
    "name, kwargs",
    [
        ("sgd", {}),
        ("sgd", {"momentum": 0.9}),
        ("nag", {"momentum": 0.9}),
        ("adam", {}),
        ("rmsprop", {}),
        ("rmsprop", {"centered": True}),
        ("signum", {}),
        ("ftrl", {}),
    ],
)
def test_clip_gradient_zero_does_not_clip_the_fused_optimizers(name, kwargs, problem):
    # MXNet 1.9.1 hands clip_gradient to the fused operators only when it is truthy
    w0, grads = problem
    unclipped = run(optimizer.create(name, wd=0.01, **kwargs), w0, grads)
    np.testing.assert_allclose(run(optimizer.create(name, wd=0.01, clip_gradient=0.0, **kwargs), w0, grads), unclipped)


@pytest.mark.parametrize("centered", [False, True])
def test_rmsprop_clip_weights_zero_does_not_clip(centered, problem):
    # MXNet 1.9.1 hands clip_weights to rmsprop_update only when it is truthy: 0 left the weights
    # as they were, where clipping them to [0, 0] set every weight to 0
    w0, grads = problem
    plain = run(optimizer.create("rmsprop", centered=centered), w0, grads)
    np.testing.assert_allclose(run(optimizer.create("rmsprop", centered=centered, clip_weights=0.0), w0, grads), plain)
    assert np.abs(plain).min() > 0


def test_clip_gradient_zero_does_not_clip_sgd_given_lists(problem):
    w0, grads = problem
    plain = optimizer.get_updater(optimizer.create("sgd", momentum=0.9))
    zero = optimizer.get_updater(optimizer.create("sgd", momentum=0.9, clip_gradient=0))
    a, b = [mx.nd.array(w0), mx.nd.array(w0 * 2)], [mx.nd.array(w0), mx.nd.array(w0 * 2)]
    for g in grads:
        plain([0, 1], [mx.nd.array(g), mx.nd.array(g)], a)
        zero([0, 1], [mx.nd.array(g), mx.nd.array(g)], b)
    for x, y in zip(a, b, strict=True):
        np.testing.assert_allclose(y.asnumpy(), x.asnumpy())


@pytest.mark.parametrize("name", ["adagrad", "adadelta", "nadam", "dcasgd"])
def test_clip_gradient_zero_zeroes_the_gradient_of_the_optimizers_written_with_operators(name, problem):
    # as MXNet 1.9.1 clips there (``if clip_gradient is not None``): no weight decay, so no step
    w0, grads = problem
    np.testing.assert_allclose(run(optimizer.create(name, clip_gradient=0.0), w0, grads), w0)
