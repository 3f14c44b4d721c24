"""The gradients of BilinearResize2D and AdaptiveAvgPooling2D with inf and NaN in the head gradient,
against MXNet 1.9.1: a non-finite gradient reaches only the pixels its output read (weight matrices
multiplied it by every zero weight, making the whole input gradient NaN)."""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx

INF, NAN = np.inf, np.nan


def _head(out: tuple[int, int]) -> np.ndarray:
    g = np.ones(out, np.float32)
    g[min(1, out[0] - 1), min(1, out[1] - 1)], g[-1, 0], g[0, -1] = INF, NAN, -INF
    return g[None, None]


def _gradient(ctx, op, out: tuple[int, int], *extra, **params) -> np.ndarray:
    x = mx.nd.zeros((1, 1, 5, 5), ctx=ctx)
    x.attach_grad()
    with mx.autograd.record():
        y = op(x, *extra, **params)
    assert y.shape[2:] == out
    y.backward(mx.nd.array(_head(out), ctx=ctx))
    return x.grad.asnumpy()[0, 0]


def _check(got: np.ndarray, expected: list) -> None:
    np.testing.assert_array_equal(np.isnan(got), np.isnan(expected))  # NaN exactly where MXNet's is
    np.testing.assert_allclose(got, expected, rtol=1e-5)


@pytest.mark.parametrize(
    ("params", "out", "expected"),
    [
        # MXNet 1.9.1: a tap of weight 0 gets 0 * inf, NaN
        (
            {"height": 3, "width": 3},
            (3, 3),
            [[1, 0, 1, 0, NAN], [0, 0, 0, 0, NAN], [1, 0, INF, NAN, 1], [0, 0, NAN, NAN, 0], [NAN, NAN, 1, 0, 1]],
        ),
        (
            {"height": 3, "width": 8, "align_corners": False},
            (3, 8),
            [
                [1.04167, 1.125, 1, 1.125, -INF],
                [0.520833, 0.5625, 0.5, 0.5625, -INF],
                [INF, INF, 1.5, 1.6875, 1.5625],
                [NAN, NAN, 0.5, 0.5625, 0.520834],
                [NAN, NAN, 1, 1.125, 1.04167],
            ],
        ),
        (
            {"height": 8, "width": 3},
            (8, 3),
            [
                [1.42857, 0, INF, NAN, NAN],
                [1.71429, 0, INF, NAN, NAN],
                [1.71429, 0, 1.71429, 0, 1.71429],
                [1.71429, 0, 1.71429, 0, 1.71429],
                [NAN, NAN, 1.42857, 0, 1.42857],
            ],
        ),
        (
            {"height": 1, "width": 3, "align_corners": False},
            (1, 3),
            [[NAN, NAN, INF, NAN, -INF], [NAN] * 5, [0] * 5, [0] * 5, [0] * 5],
        ),
        (
            {"mode": "to_even_down", "align_corners": False},
            (4, 4),
            [
                [0.765625, 0.65625, 0.65625, -INF, -INF],
                [0.65625, INF, INF, -INF, -INF],
                [0.65625, INF, INF, 0.5625, 0.65625],
                [NAN, NAN, 0.5625, 0.5625, 0.65625],
                [NAN, NAN, 0.65625, 0.65625, 0.765625],
            ],
        ),
    ],
)
def test_bilinear_resize_gradient_spreads_a_non_finite_head_only_to_pixels_it_read(ctx, params, out, expected):
    _check(_gradient(ctx, mx.nd.contrib.BilinearResize2D, out, **params), expected)


@pytest.mark.parametrize("align_corners", [True, False])
def test_bilinear_resize_gradient_to_the_same_size_copies_the_head(ctx, align_corners):
    got = _gradient(ctx, mx.nd.contrib.BilinearResize2D, (5, 5), height=5, width=5, align_corners=align_corners)
    np.testing.assert_array_equal(got, _head((5, 5))[0, 0])


def test_bilinear_resize_like_mode_gradient_keeps_non_finite_heads_local(ctx):
    like = mx.nd.zeros((1, 1, 3, 3), ctx=ctx)
    got = _gradient(ctx, mx.nd.contrib.BilinearResize2D, (3, 3), like, mode="like")
    _check(got, [[1, 0, 1, 0, NAN], [0, 0, 0, 0, NAN], [1, 0, INF, NAN, 1], [0, 0, NAN, NAN, 0], [NAN, NAN, 1, 0, 1]])


@pytest.mark.parametrize(
    ("output_size", "expected"),
    [
        (
            (3, 3),
            [
                [0.25, 0.416667, 0.166667, -INF, -INF],
                [0.416667, INF, INF, NAN, -INF],
                [0.166667, INF, INF, INF, 0.166667],
                [NAN, NAN, INF, INF, 0.416667],
                [NAN, NAN, 0.166667, 0.416667, 0.25],
            ],
        ),
        (
            (2, 4),
            [
                [0.166667, 0.333333, 0.333333, -INF, -INF],
                [0.166667, 0.333333, 0.333333, -INF, -INF],
                [NAN, NAN, INF, -INF, -INF],
                [NAN, NAN, INF, 0.333333, 0.166667],
                [NAN, NAN, INF, 0.333333, 0.166667],
            ],
        ),
        (
            (7, 6),
            [
                [INF, INF, 1.5, 1.5, -INF],
                [INF, INF, 1, 1, 1.5],
                [3, 2, 2, 2, 3],
                [1.5, 1, 1, 1, 1.5],
                [NAN, 1.5, 1.5, 1.5, 2.25],
            ],
        ),
    ],
)
def test_adaptive_average_pooling_gradient_spreads_a_non_finite_head_only_over_its_bin(ctx, output_size, expected):
    _check(_gradient(ctx, mx.nd.contrib.AdaptiveAvgPooling2D, output_size, output_size=output_size), expected)


def test_finite_gradients_are_unchanged_by_the_non_finite_path(ctx):
    # the products (host) and the scatter (GPU, or after a non-finite product) give one answer
    x = mx.nd.array(np.random.default_rng(0).standard_normal((2, 3, 5, 7)), ctx=ctx)
    x.attach_grad()
    head = np.random.default_rng(1).standard_normal((2, 3, 4, 9)).astype(np.float32)
    with mx.autograd.record():
        y = mx.nd.contrib.BilinearResize2D(x, height=4, width=9, align_corners=False)
    y.backward(mx.nd.array(head, ctx=ctx))
    expected = np.zeros((2, 3, 5, 7), np.float32)
    for i in range(5):
        for j in range(7):
            basis = np.zeros((1, 1, 5, 7), np.float32)
            basis[0, 0, i, j] = 1
            resized = mx.nd.contrib.BilinearResize2D(mx.nd.array(basis), height=4, width=9, align_corners=False)
            expected[:, :, i, j] = (resized.asnumpy()[0, 0] * head).sum(axis=(2, 3))
    np.testing.assert_allclose(x.grad.asnumpy(), expected, rtol=1e-4, atol=1e-5)
