"""Pooling's CPU kernels (blocks of samples, gradients in place) give, bit for bit, what the
whole-batch formula over a padded copy gives."""

from __future__ import annotations

import numpy as np
import pytest

import lazynd
from lazynd.ops import cpu_blocks
from lazynd.ops.pooling import PoolGeometry
from lazynd.ops.pooling_cpu import avg_divisor, lowest


def padded_formula(attrs, x, dy):
    """Forward and gradient of max/avg/sum pooling, (N, C, ...) order, over a padded copy of the
    whole batch, window after window (the kernels before their rewrite into blocks)."""
    g = PoolGeometry(attrs, x.shape)
    mode = attrs["pool_type"]
    source = np.full(x.shape[:2] + g.padded(), lowest(x.dtype) if mode == "max" else 0, dtype=x.dtype)
    source[g.inner()] = x
    windows = list(g.windows())
    accumulate = x.dtype if mode == "max" else np.promote_types(x.dtype, np.float32)
    total = source[windows[0]].astype(accumulate)
    for window in windows[1:]:
        total = np.maximum(total, source[window]) if mode == "max" else total + source[window]
    if mode == "avg":
        total = total / avg_divisor(g, x.dtype)
    y = total.astype(x.dtype)
    grad = np.zeros(source.shape, dtype=x.dtype)
    unclaimed = np.ones(y.shape, dtype=bool)
    share = dy / avg_divisor(g, x.dtype) if mode == "avg" else dy
    for window in windows:
        if mode == "max":
            hit = unclaimed & (source[window] == y)
            grad[window] += np.where(hit, dy, 0)
            unclaimed &= ~hit
        else:
            grad[window] += share
    return y, grad[g.inner()]


def run_op(attrs, x, dy):
    data = lazynd.nd.array(x, dtype=x.dtype.name)
    data.attach_grad()
    with lazynd.autograd.record():
        y = lazynd.nd.Pooling(data, **attrs)
    y.backward(lazynd.nd.array(dy, dtype=x.dtype.name))
    return y.asnumpy(), data.grad.asnumpy()


CASES = {
    "2x2 stride 2 (LeNet)": ((5, 3, 8, 10), dict(kernel=(2, 2), stride=(2, 2))),
    "2x2 stride (2, 1), overlapping": ((5, 3, 8, 9), dict(kernel=(2, 2), stride=(2, 1))),
    "3x3 stride 1, overlapping": ((3, 2, 7, 6), dict(kernel=(3, 3), stride=(1, 1))),
    "2x2 stride 3, gaps": ((3, 2, 8, 8), dict(kernel=(2, 2), stride=(3, 3))),
    "2x2 stride 2, odd size": ((3, 2, 7, 9), dict(kernel=(2, 2), stride=(2, 2))),
    "padded": ((3, 2, 7, 6), dict(kernel=(3, 3), stride=(2, 2), pad=(1, 1))),
    "full convention": ((3, 2, 7, 8), dict(kernel=(2, 2), stride=(2, 2), pooling_convention="full")),
    "1-D": ((4, 3, 11), dict(kernel=(3,), stride=(2,))),
    "3-D": ((2, 2, 4, 5, 6), dict(kernel=(2, 2, 2), stride=(2, 1, 2))),
    "one sample, one channel": ((1, 1, 6, 6), dict(kernel=(2, 2), stride=(2, 2))),
    "empty batch": ((0, 2, 6, 6), dict(kernel=(2, 2), stride=(2, 1))),
    # one window per sample: one reduction over the spatial axes instead of a pass per offset
    "global": ((3, 4, 5, 6), dict(global_pool=True)),
    "global 1-D": ((3, 4, 7), dict(global_pool=True)),
    "one window, smaller than the input": ((3, 2, 5, 6), dict(kernel=(3, 4), stride=(3, 3))),
}


def data_with_ties(shape, dtype, seed):
    """Small integers, so that windows often hold several equal maxima (the first takes the gradient)."""
    rng = np.random.default_rng(seed)
    return rng.integers(-3, 4, size=shape).astype(dtype), rng.standard_normal(shape).astype(dtype)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
@pytest.mark.parametrize("pool_type", ["max", "avg", "sum"])
@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("block_elements", [1 << 16, 50], ids=["default blocks", "small blocks"])
def test_pooling_cpu_kernels_match_the_padded_formula_bitwise(case, pool_type, dtype, block_elements, monkeypatch):
    monkeypatch.setattr(cpu_blocks, "BLOCK_ELEMENTS", block_elements)
    shape, params = CASES[case]
    attrs = dict(pool_type=pool_type, **params)
    x, _ = data_with_ties(shape, dtype, seed=len(shape) + shape[-1])
    y_shape = PoolGeometry(_defaults(attrs), shape).out_shape(shape)
    dy = np.random.default_rng(1).standard_normal(y_shape).astype(dtype)
    got_y, got_dx = run_op(attrs, x, dy)
    want_y, want_dx = padded_formula(_defaults(attrs), x, dy)
    np.testing.assert_array_equal(got_y, want_y)
    np.testing.assert_array_equal(got_dx, want_dx)


@pytest.mark.parametrize("pool_type", ["max", "avg"])
def test_pooling_cpu_kernels_of_channel_last_data_match_the_padded_formula(pool_type):
    x, _ = data_with_ties((3, 6, 8, 4), "float32", seed=5)
    dy = np.random.default_rng(2).standard_normal((3, 5, 4, 4)).astype("float32")
    attrs = dict(pool_type=pool_type, kernel=(2, 2), stride=(1, 2), layout="NHWC")
    got_y, got_dx = run_op(attrs, x, dy)
    to_nc, to_nhwc = (0, 3, 1, 2), (0, 2, 3, 1)
    want_y, want_dx = padded_formula(_defaults({**attrs, "layout": None}), x.transpose(to_nc), dy.transpose(to_nc))
    np.testing.assert_array_equal(got_y, want_y.transpose(to_nhwc))
    np.testing.assert_array_equal(got_dx, want_dx.transpose(to_nhwc))


def test_overlapping_max_pooling_gives_a_non_finite_head_gradient_to_the_maximum_only():
    x = np.array([[[[1.0, 5.0, 2.0], [0.0, 3.0, 4.0]]]], dtype=np.float32)
    dy = np.array([[[[np.inf, np.nan]]]], dtype=np.float32)
    _, dx = run_op(dict(pool_type="max", kernel=(2, 2), stride=(1, 1)), x, dy)
    # both windows' maximum is the 5: inf + nan there, 0 elsewhere (no 0 * inf)
    want = np.zeros_like(x)
    want[0, 0, 0, 1] = np.nan
    np.testing.assert_array_equal(dx, want)


def test_global_max_pooling_of_a_nan_or_of_an_infinite_head_gradient_as_the_window_loop_gives():
    x = np.array([[[[1.0, np.nan], [3.0, 3.0]], [[2.0, 7.0], [7.0, 0.0]]]], dtype=np.float32)
    dy = np.array([[[[1.0]], [[np.inf]]]], dtype=np.float32)
    got_y, got_dx = run_op(dict(pool_type="max", global_pool=True), x, dy)
    want_y, _ = padded_formula(_defaults(dict(pool_type="max", global_pool=True)), x, dy)
    np.testing.assert_array_equal(got_y, want_y)
    # the NaN window matches no element; in the other, the first 7 takes the infinite gradient
    # and the others get 0, not 0 * inf
    want_dx = np.array([[[[0.0, 0.0], [0.0, 0.0]], [[0.0, np.inf], [0.0, 0.0]]]], dtype=np.float32)
    np.testing.assert_array_equal(got_dx, want_dx)


def _defaults(attrs):
    params = dict(global_pool=False, pooling_convention="valid", stride=(), pad=(), layout=None, p_value=None)
    return {**params, **attrs}
