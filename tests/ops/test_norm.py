"""BatchNorm (training/inference, moving statistics), InstanceNorm, L2Normalization, LRN."""

from __future__ import annotations

import numpy as np
import pytest

import lazynd
import lazynd_sym as sym
from lazynd.errors import OperatorError, ShapeError
from lazynd.testing import check_gradient

rng = np.random.default_rng(0)


def nd64(a):
    return lazynd.nd.array(a, dtype="float64")


def test_batchnorm_training_normalises_with_batch_statistics():
    x, g, b = rng.standard_normal((4, 3, 2, 2)), rng.standard_normal(3), rng.standard_normal(3)
    y = lazynd.nd.BatchNorm(
        nd64(x), nd64(g), nd64(b), nd64(np.zeros(3)), nd64(np.ones(3)), fix_gamma=False, eps=1e-5, is_train=True
    )
    mean, var = x.mean(axis=(0, 2, 3), keepdims=True), x.var(axis=(0, 2, 3), keepdims=True)
    expected = (x - mean) / np.sqrt(var + 1e-5) * g.reshape(1, 3, 1, 1) + b.reshape(1, 3, 1, 1)
    np.testing.assert_allclose(y.asnumpy(), expected, rtol=1e-8, atol=1e-10)


def test_batchnorm_training_updates_moving_statistics():
    x = rng.standard_normal((8, 2, 3)) * 2 + 1
    mm, mv = nd64(np.zeros(2)), nd64(np.ones(2))
    lazynd.nd.BatchNorm(
        nd64(x), nd64(np.ones(2)), nd64(np.zeros(2)), mm, mv, momentum=0.9, is_train=True
    ).wait_to_read()
    np.testing.assert_allclose(mm.asnumpy(), 0.1 * x.mean(axis=(0, 2)), rtol=1e-10)
    np.testing.assert_allclose(mv.asnumpy(), 0.9 + 0.1 * x.var(axis=(0, 2)), rtol=1e-10)


def test_batchnorm_inference_uses_moving_statistics_and_leaves_them():
    x = rng.standard_normal((3, 2))
    mm, mv = nd64(np.array([0.5, -1.0])), nd64(np.array([4.0, 0.25]))
    y = lazynd.nd.BatchNorm(nd64(x), nd64(np.ones(2)), nd64(np.array([0.0, 1.0])), mm, mv, eps=0.0)
    np.testing.assert_allclose(y.asnumpy(), (x - [0.5, -1.0]) / [2.0, 0.5] + [0.0, 1.0], rtol=1e-10)
    np.testing.assert_array_equal(mm.asnumpy(), [0.5, -1.0])


def test_batchnorm_channel_last_axis():
    x = rng.standard_normal((5, 4, 3))
    y = lazynd.nd.BatchNorm(
        nd64(x),
        nd64(np.ones(3)),
        nd64(np.zeros(3)),
        nd64(np.zeros(3)),
        nd64(np.ones(3)),
        axis=-1,
        eps=0.0,
        is_train=True,
    )
    np.testing.assert_allclose(y.asnumpy(), (x - x.mean(axis=(0, 1))) / x.std(axis=(0, 1)), rtol=1e-8, atol=1e-10)


def batchnorm_train(x, g, b, **params):
    """Training-mode BatchNorm returning all three outputs (the gradient rule needs the hidden mean/var)."""
    c = g.shape[0]
    outs = [
        lazynd.nd.zeros(x.shape, dtype="float64"),
        lazynd.nd.zeros((c,), dtype="float64"),
        lazynd.nd.zeros((c,), dtype="float64"),
    ]
    lazynd.nd.BatchNorm(
        nd64(x), nd64(g), nd64(b), nd64(np.zeros(c)), nd64(np.ones(c)), out=outs, is_train=True, **params
    )
    return outs


@pytest.mark.parametrize("fix_gamma", [True, False])
def test_batchnorm_gradient(fix_gamma):
    # check_gradient hands the rule only visible outputs, so central differences are taken here
    from lazynd.ops import registry

    op = registry.get("BatchNorm")
    x, g, b = rng.standard_normal((3, 2, 4)), rng.standard_normal(2) + 2, rng.standard_normal(2)
    head = rng.standard_normal(x.shape)
    outs = batchnorm_train(x, g, b, fix_gamma=fix_gamma)
    inputs = [nd64(x), nd64(g), nd64(b)]
    with lazynd.autograd.train_mode():  # the batch statistics' gradient (outside training they are constants)
        grads = op.gradient(lazynd.nd, op.parse(dict(fix_gamma=fix_gamma)), inputs, outs, [nd64(head)])
    arrays, eps = [x, g, b], 1e-6
    for i, a in enumerate(arrays):
        numeric = np.zeros_like(a)
        for j in range(a.size):
            values = []
            for sign in (1, -1):
                moved = [v.copy() for v in arrays]
                moved[i].flat[j] += sign * eps
                values.append((batchnorm_train(*moved, fix_gamma=fix_gamma)[0].asnumpy() * head).sum())
            numeric.flat[j] = (values[0] - values[1]) / (2 * eps)
        np.testing.assert_allclose(grads[i].asnumpy(), numeric, rtol=1e-4, atol=1e-6, err_msg=f"input {i}")


def test_batchnorm_of_float16_data_keeps_float32_parameters_as_mxnet():
    # MXNet infers (and its float16 checkpoints hold) float32 gamma, beta and statistics
    _, outs, aux = sym.BatchNorm(sym.Variable("data"), name="bn").infer_type(data="float16")
    assert outs == [np.float16] and aux == [np.float32, np.float32]
    x = np.array([1, 2, 3, 5, -1, 0, 2, 2, 0, 1, 1, 4, 3, 3, -2, 1], np.float32).reshape(2, 2, 2, 2)
    params = [lazynd.nd.array(v) for v in ([1.5, 0.5], [0.1, -0.2], [0.5, 1.0], [2.0, 0.5])]
    y = lazynd.nd.BatchNorm(lazynd.nd.array(x, dtype="float16"), *params, fix_gamma=False)
    # values from MXNet 1.9.1 (float16 rounding apart)
    want = [0.6299, 1.6904, 2.75, 4.871, -1.6133, -0.9067, 0.5063, 0.5063]
    want += [-0.4297, 0.6299, 0.6299, 3.8105, 1.2129, 1.2129, -2.3184, -0.2]
    assert y.dtype == np.float16
    np.testing.assert_allclose(y.asnumpy().ravel(), want, rtol=2e-3, atol=2e-3)
    with pytest.raises(lazynd.LazyNDError, match="BatchNorm: gamma has dtype float64, expected float32 or float16"):
        lazynd.nd.BatchNorm(lazynd.nd.array(x, dtype="float16"), lazynd.nd.ones(2, dtype="float64"), *params[1:])


def test_batchnorm_float16_gradient_sums_over_the_batch_in_float32():
    # a training batch of 16384 values per channel whose output gradients add up past float16's
    # largest value (65504): the sums of the backward pass overflowed to inf (beta's gradient) and
    # made the data's gradient NaN; MXNet 1.9.1 accumulates them in float32, as here
    gen = np.random.default_rng(1)
    x = (gen.standard_normal((16, 2, 32, 32)) + 3).astype(np.float16)
    dy = (gen.standard_normal(x.shape) + 5).astype(np.float16)
    data = lazynd.nd.array(x, dtype="float16")
    gamma, beta = lazynd.nd.array([1.5, 0.5]), lazynd.nd.array([0.1, -0.2])
    for v in (data, gamma, beta):
        v.attach_grad()
    with lazynd.autograd.record():
        y = lazynd.nd.BatchNorm(data, gamma, beta, lazynd.nd.zeros(2), lazynd.nd.ones(2), fix_gamma=False, eps=1e-5)
    y.backward(lazynd.nd.array(dy, dtype="float16"))
    x64, dy64, g64 = x.astype(np.float64), dy.astype(np.float64), np.array([1.5, 0.5]).reshape(1, 2, 1, 1)
    axes = (0, 2, 3)
    invstd = 1 / np.sqrt(x64.var(axis=axes, keepdims=True) + 1e-5)
    xhat = (x64 - x64.mean(axis=axes, keepdims=True)) * invstd
    want_dbeta, want_dgamma = dy64.sum(axis=axes), (dy64 * xhat).sum(axis=axes)
    centred = dy64 - dy64.mean(axis=axes, keepdims=True) - xhat * (dy64 * xhat).mean(axis=axes, keepdims=True)
    assert data.grad.dtype == np.float16 and beta.grad.dtype == np.float32
    np.testing.assert_allclose(beta.grad.asnumpy(), want_dbeta, rtol=1e-4)
    np.testing.assert_allclose(gamma.grad.asnumpy(), want_dgamma, rtol=2e-2, atol=20)
    np.testing.assert_allclose(data.grad.asnumpy().astype(np.float64), centred * g64 * invstd, atol=5e-3)


def test_batchnorm_float16_output_is_rounded_once():
    # float16 data near 3 with a batch std near 1: x * (1 / std) was rounded to float16 before the
    # shift was added, which pulled it back onto x's own grid and left a bias of 1.5e-4 in the
    # normalised mean; computed in float32 and rounded once it is 3e-5, float16's noise, as MXNet 1.9.1's
    gen = np.random.default_rng(2)
    x = (gen.standard_normal((32, 4, 64, 64)) + 3).astype(np.float16)
    params = [lazynd.nd.ones(4), lazynd.nd.zeros(4), lazynd.nd.zeros(4), lazynd.nd.ones(4)]
    with lazynd.autograd.train_mode():
        y = lazynd.nd.BatchNorm(lazynd.nd.array(x, dtype="float16"), *params, fix_gamma=False, eps=1e-3)
    x64 = x.astype(np.float64)
    want = (x64 - x64.mean(axis=(0, 2, 3), keepdims=True)) / np.sqrt(x64.var(axis=(0, 2, 3), keepdims=True) + 1e-3)
    error = y.asnumpy().astype(np.float64) - want
    assert np.abs(error.mean(axis=(0, 2, 3))).max() < 6e-5
    assert np.abs(error).max() < 2**-8  # a float16 step of the largest outputs (4 <= |y| < 8)


def test_batchnorm_rejects_wrong_gamma_shape():
    with pytest.raises(ShapeError, match="gamma"):
        z = lazynd.nd.zeros
        lazynd.nd.BatchNorm(z((2, 3)), z((2,)), z((3,)), z((3,)), z((3,)))


def test_instance_norm_forward_and_gradient():
    x, g, b = rng.standard_normal((2, 3, 5)), rng.standard_normal(3), rng.standard_normal(3)
    y = lazynd.nd.InstanceNorm(nd64(x), nd64(g), nd64(b), eps=1e-5).asnumpy()
    xhat = (x - x.mean(axis=2, keepdims=True)) / np.sqrt(x.var(axis=2, keepdims=True) + 1e-5)
    np.testing.assert_allclose(y, xhat * g.reshape(1, 3, 1) + b.reshape(1, 3, 1), rtol=1e-8, atol=1e-10)
    check_gradient("InstanceNorm", [x, g, b], dict(eps=1e-5), rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("mode,axes", [("instance", (1, 2, 3)), ("channel", (1,)), ("spatial", (2, 3))])
def test_l2_normalization_forward_and_gradient(mode, axes):
    x = rng.standard_normal((2, 3, 2, 2))
    y = lazynd.nd.L2Normalization(nd64(x), mode=mode).asnumpy()
    np.testing.assert_allclose(y, x / np.sqrt((x * x).sum(axis=axes, keepdims=True) + 1e-10), rtol=1e-8)
    check_gradient("L2Normalization", [x], dict(mode=mode), rtol=1e-4, atol=1e-6)


def test_lrn_forward_and_gradient():
    x = rng.standard_normal((2, 5, 2, 2))
    params = dict(alpha=0.1, beta=0.75, knorm=2.0, nsize=3)
    y = lazynd.nd.LRN(nd64(x), **params).asnumpy()
    sq = np.pad(x * x, [(0, 0), (1, 1), (0, 0), (0, 0)])
    window = sq[:, :-2] + sq[:, 1:-1] + sq[:, 2:]
    np.testing.assert_allclose(y, x * (2.0 + 0.1 / 3 * window) ** -0.75, rtol=1e-8)
    check_gradient("LRN", [x], params, rtol=1e-4, atol=1e-6)


def test_l2normalization_refuses_a_mode_the_data_lacks_axes_for_at_the_call():
    # MXNet refuses it too; lazynd failed only at the next wait, as an EngineError
    with pytest.raises(ShapeError, match="L2Normalization: mode channel needs more axes than 1"):
        lazynd.nd.L2Normalization(lazynd.nd.ones(3), mode="channel")


def test_lrn_refuses_an_even_window_at_the_call():
    # it failed only at the next wait, as an EngineError
    with pytest.raises(OperatorError, match="LRN: nsize must be a positive odd number, got 2"):
        lazynd.nd.LRN(lazynd.nd.ones((1, 2, 3, 4)), nsize=2)


@pytest.mark.parametrize("train", [True, False])
def test_batchnorm_takes_parameters_that_are_strided_views(train, ctx):
    """gamma, beta and the moving statistics as every other element of longer arrays."""
    x = rng.standard_normal((2, 3, 4, 5))
    params = rng.uniform(0.5, 1.5, 6)
    shifts = rng.standard_normal(6)
    data = lazynd.nd.array(x, ctx=ctx, dtype="float64")
    gamma = lazynd.nd.array(params, ctx=ctx, dtype="float64")
    beta = lazynd.nd.array(shifts, ctx=ctx, dtype="float64")
    moving_mean = lazynd.nd.array(shifts, ctx=ctx, dtype="float64")
    moving_var = lazynd.nd.array(params, ctx=ctx, dtype="float64")
    data.attach_grad()
    with lazynd.autograd.record(train_mode=train):
        y = lazynd.nd.BatchNorm(
            data, gamma[::2], beta[1::2], moving_mean[::2], moving_var[1::2], fix_gamma=False, eps=1e-5
        )
    head = np.linspace(-1, 1, x.size).reshape(x.shape)
    y.backward(lazynd.nd.array(head, ctx=ctx, dtype="float64"), train_mode=train)
    g, b = params[::2].reshape(1, 3, 1, 1), shifts[1::2].reshape(1, 3, 1, 1)
    if train:
        mean, var = x.mean(axis=(0, 2, 3), keepdims=True), x.var(axis=(0, 2, 3), keepdims=True)
    else:
        mean, var = shifts[::2].reshape(1, 3, 1, 1), params[1::2].reshape(1, 3, 1, 1)
    inv = 1 / np.sqrt(var + 1e-5)
    xhat = (x - mean) * inv
    np.testing.assert_allclose(y.asnumpy(), xhat * g + b, rtol=1e-7, atol=1e-9)
    if train:
        m = x.size // 3
        sum_dy = head.sum(axis=(0, 2, 3), keepdims=True)
        sum_dy_xhat = (head * xhat).sum(axis=(0, 2, 3), keepdims=True)
        expected_dx = g * inv * (head - sum_dy / m - xhat * sum_dy_xhat / m)
    else:
        expected_dx = head * g * inv
    np.testing.assert_allclose(data.grad.asnumpy(), expected_dx, rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("train, global_stats", [(True, False), (True, True), (False, False)])
def test_batchnorm_output_mean_var_gives_the_mean_and_inverse_std_as_mxnet(train, global_stats, ctx):
    """MXNet 1.9.1's third output is 1 / sqrt(var + eps) of the statistics the data was normalised with."""
    x = rng.standard_normal((4, 2, 3))
    moving_mean, moving_var = np.array([0.5, -0.5]), np.array([2.0, 3.0])
    data = lazynd.nd.array(x, ctx=ctx, dtype="float64")
    data.attach_grad()
    with lazynd.autograd.record(train_mode=train):
        y, mean, invstd = lazynd.nd.BatchNorm(
            data,
            lazynd.nd.array([1.5, 0.5], ctx=ctx, dtype="float64"),
            lazynd.nd.array([0.1, -0.2], ctx=ctx, dtype="float64"),
            lazynd.nd.array(moving_mean, ctx=ctx, dtype="float64"),
            lazynd.nd.array(moving_var, ctx=ctx, dtype="float64"),
            fix_gamma=False,
            use_global_stats=global_stats,
            eps=1e-3,
            output_mean_var=True,
        )
    y.backward(lazynd.nd.ones(y.shape, ctx=ctx, dtype="float64"), train_mode=train)
    batch = train and not global_stats
    want_mean = x.mean(axis=(0, 2)) if batch else moving_mean
    want_invstd = 1 / np.sqrt((x.var(axis=(0, 2)) if batch else moving_var) + 1e-3)
    np.testing.assert_allclose(mean.asnumpy(), want_mean, rtol=1e-12)
    np.testing.assert_allclose(invstd.asnumpy(), want_invstd, rtol=1e-12)
    xhat = (x - want_mean.reshape(1, 2, 1)) * want_invstd.reshape(1, 2, 1)
    np.testing.assert_allclose(
        y.asnumpy(), xhat * np.array([1.5, 0.5]).reshape(1, 2, 1) + [[[0.1], [-0.2]]], rtol=1e-10
    )
    # a head gradient of ones: the batch statistics' gradient cancels it, constant ones pass it on scaled
    want_grad = np.zeros_like(x) if batch else np.ones_like(x) * (np.array([1.5, 0.5]) * want_invstd).reshape(1, 2, 1)
    np.testing.assert_allclose(data.grad.asnumpy(), want_grad, rtol=1e-10, atol=1e-12)


def test_l2_normalization_of_zeros_without_eps_is_nan_without_a_numpy_warning():
    import warnings

    x = lazynd.nd.zeros((2, 3))
    x.attach_grad()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # NumPy's "invalid value" warning would fail the kernel
        with lazynd.autograd.record():
            y = lazynd.nd.L2Normalization(x, eps=0)
        y.backward()
        # 0 / 0, as MXNet 1.9.1 gives
        assert np.isnan(y.asnumpy()).all() and np.isnan(x.grad.asnumpy()).all()


@pytest.mark.parametrize(
    "make",
    [
        lambda x: lazynd.nd.InstanceNorm(x, lazynd.nd.ones(3), lazynd.nd.zeros(3), eps=0),
        lambda x: lazynd.nd.LayerNorm(x, lazynd.nd.ones(2), lazynd.nd.zeros(2), eps=0),
        lambda x: lazynd.nd.GroupNorm(x, lazynd.nd.ones(1), lazynd.nd.zeros(1), num_groups=1, eps=0),
        lambda x: lazynd.nd.LRN(x * 0, knorm=0, nsize=3),
    ],
    ids=["InstanceNorm", "LayerNorm", "GroupNorm", "LRN"],
)
def test_normalising_nothing_is_nan_without_a_numpy_warning(make):
    import warnings

    x = lazynd.nd.ones((2, 3, 2))
    x.attach_grad()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # NumPy's divide warnings would fail the kernel
        with lazynd.autograd.record():
            y = make(x)
        y.backward()
        # constant data with eps=0 (zeros with knorm=0 for LRN): NaN, as MXNet 1.9.1 gives
        assert np.isnan(y.asnumpy()).all() and np.isnan(x.grad.asnumpy()).all()
