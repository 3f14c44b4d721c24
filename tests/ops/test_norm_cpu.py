"""BatchNorm's blocked CPU kernels give the plain formula's values, bit for bit in float32 and float64
(but for one channel, where the formula sums in another order)."""

from __future__ import annotations

import numpy as np
import pytest

import lazynd
from lazynd.ops import cpu_blocks, norm_cpu

EPS = 1e-3


def formula(x, gamma, beta, dy, *, axis, fix_gamma, batch_stats, moving_mean, moving_var):
    """BatchNorm's forward and backward as whole-array NumPy expressions, in the data's dtype and
    in the order the kernels take (the CPU kernels before their rewrite into blocks)."""
    shape = x.shape
    axis %= x.ndim
    x3 = x.reshape(int(np.prod(shape[:axis])), shape[axis], int(np.prod(shape[axis + 1 :])))
    dy3 = dy.reshape(x3.shape)
    if batch_stats:
        mean = x3.mean(axis=(0, 2))
        var = np.square(x3 - mean.reshape(1, -1, 1)).mean(axis=(0, 2))
    else:
        mean, var = moving_mean.copy(), moving_var.copy()
    invstd = 1.0 / np.sqrt(var + var.dtype.type(EPS))
    scale = invstd if fix_gamma else invstd * gamma
    shift = beta - mean * scale
    y = x3 * scale.reshape(1, -1, 1) + shift.reshape(1, -1, 1)
    xhat = (x3 - mean.reshape(1, -1, 1)) * invstd.reshape(1, -1, 1)
    sum_dy = dy3.sum(axis=(0, 2))
    sum_dy_xhat = (dy3 * xhat).sum(axis=(0, 2))
    coef = ((np.ones_like(gamma) if fix_gamma else gamma) * invstd).reshape(1, -1, 1)
    m = x3.shape[0] * x3.shape[2]
    if batch_stats:
        dx = (dy3 - (sum_dy / m).reshape(1, -1, 1) - xhat * (sum_dy_xhat / m).reshape(1, -1, 1)) * coef
    else:
        dx = dy3 * coef
    dgamma = np.zeros_like(sum_dy_xhat) if fix_gamma else sum_dy_xhat
    return y.reshape(shape), mean, invstd, dx.reshape(shape), dgamma, sum_dy


def run_op(x, gamma, beta, dy, *, axis, fix_gamma, global_stats, moving_mean, moving_var):
    dtype = x.dtype.name
    data, g, b = (lazynd.nd.array(a, dtype=dtype) for a in (x, gamma, beta))
    for a in (data, g, b):
        a.attach_grad()
    with lazynd.autograd.record():
        y, mean, invstd = lazynd.nd.BatchNorm(
            data,
            g,
            b,
            lazynd.nd.array(moving_mean, dtype=dtype),
            lazynd.nd.array(moving_var, dtype=dtype),
            eps=EPS,
            axis=axis,
            fix_gamma=fix_gamma,
            use_global_stats=global_stats,
            output_mean_var=True,
        )
    y.backward(lazynd.nd.array(dy, dtype=dtype))
    return y.asnumpy(), mean.asnumpy(), invstd.asnumpy(), data.grad.asnumpy(), g.grad.asnumpy(), b.grad.asnumpy()


CASES = {
    "nchw": ((4, 3, 5, 6), 1),
    "one channel": ((6, 1, 7), 1),
    "channel last": ((3, 4, 5, 6), -1),
    "dense": ((9, 5), 1),
    "middle axis": ((2, 3, 4, 5), 2),
    "many blocks with a remainder": ((37, 3, 4, 5), 1),
    "empty spatial axis": ((4, 3, 0, 2), 1),
    "no channels": ((4, 0, 5), 1),
}


@pytest.mark.filterwarnings("ignore:invalid value:RuntimeWarning", "ignore:Mean of empty slice:RuntimeWarning")
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("fix_gamma, global_stats", [(True, False), (False, False), (False, True)])
@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("block_elements", [1 << 16, 7], ids=["default blocks", "blocks smaller than a sample"])
def test_batchnorm_cpu_kernels_match_the_whole_array_formula_bitwise(
    case, fix_gamma, global_stats, dtype, block_elements, monkeypatch
):
    monkeypatch.setattr(cpu_blocks, "BLOCK_ELEMENTS", block_elements)
    shape, axis = CASES[case]
    rng = np.random.default_rng(len(shape) + shape[0])
    channels = shape[axis]
    x = (rng.standard_normal(shape) * 3 + 1.5).astype(dtype)
    dy = rng.standard_normal(shape).astype(dtype)
    gamma, beta = rng.standard_normal(channels).astype(dtype), rng.standard_normal(channels).astype(dtype)
    moving = dict(
        moving_mean=rng.standard_normal(channels).astype(dtype), moving_var=(rng.random(channels) + 0.5).astype(dtype)
    )
    got = run_op(x, gamma, beta, dy, axis=axis, fix_gamma=fix_gamma, global_stats=global_stats, **moving)
    want = formula(x, gamma, beta, dy, axis=axis, fix_gamma=fix_gamma, batch_stats=not global_stats, **moving)
    for name, g, w in zip(("output", "mean", "invstd", "data grad", "gamma grad", "beta grad"), got, want, strict=True):
        assert g.dtype == w.dtype, name
        if channels != 1:
            np.testing.assert_array_equal(g, w, err_msg=name)
        else:
            # one channel: NumPy sums the whole array as one run (its axes merge), the kernels row by row
            tolerance = 1e-5 if dtype == "float32" else 1e-12
            np.testing.assert_allclose(g, w, rtol=tolerance, atol=tolerance, err_msg=name)


def test_batchnorm_cpu_kernels_of_an_empty_batch_give_empty_gradients_and_nan_statistics():
    x = np.zeros((0, 3, 4), np.float32)
    with np.errstate(invalid="ignore"):
        got = run_op(
            x,
            np.ones(3, np.float32),
            np.zeros(3, np.float32),
            x,
            axis=1,
            fix_gamma=False,
            global_stats=False,
            moving_mean=np.zeros(3, np.float32),
            moving_var=np.ones(3, np.float32),
        )
    y, mean, invstd, dx, dgamma, dbeta = got
    assert y.shape == dx.shape == (0, 3, 4)
    assert np.isnan(mean).all() and np.isnan(invstd).all()
    np.testing.assert_array_equal(dbeta, np.zeros(3))


def test_batchnorm_cpu_kernels_write_into_a_strided_output():
    x = np.random.default_rng(1).standard_normal((4, 3, 5))
    moments = np.empty(3), np.empty(6)[::2]
    norm_cpu.batch_moments(x, *moments)
    np.testing.assert_allclose(moments[0], x.mean(axis=(0, 2)), rtol=1e-12)
    np.testing.assert_allclose(moments[1], x.var(axis=(0, 2)), rtol=1e-12)
    out = np.zeros((4, 3, 10))[:, :, ::2]
    norm_cpu.scale_shift(x, np.full(3, 2.0), np.full(3, 1.0), out)
    np.testing.assert_array_equal(out, x * 2 + 1)


def test_batchnorm_cpu_backward_into_its_own_data_reads_the_data_first():
    rng = np.random.default_rng(2)
    x, dy = rng.standard_normal((4, 3, 5)), rng.standard_normal((4, 3, 5))
    mean, invstd = x.mean(axis=(0, 2)), 1 / x.std(axis=(0, 2))
    apart = np.empty_like(x)
    want = norm_cpu.batch_norm_backward(dy, x, mean, invstd, invstd, False, apart)
    got = norm_cpu.batch_norm_backward(dy, x, mean, invstd, invstd, False, x)  # dx written over x
    np.testing.assert_array_equal(x, apart)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_array_equal(g, w)
