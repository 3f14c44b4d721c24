"""BilinearResize2D and AdaptiveAvgPooling2D with inf and NaN inputs, against MXNet 1.9.1: a
non-finite pixel reaches only the outputs that read it (weight matrices multiplied it by every
zero weight, making whole rows and columns NaN)."""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx

INF, NAN = np.inf, np.nan


def _planes() -> np.ndarray:
    x = np.arange(36, dtype=np.float32).reshape(1, 1, 6, 6)
    x[0, 0, 2, 3], x[0, 0, 4, 1], x[0, 0, 0, 5] = INF, NAN, -INF
    return x


def _check(got: np.ndarray, expected: list) -> None:
    np.testing.assert_array_equal(np.isnan(got), np.isnan(expected))  # NaN exactly where MXNet's is
    np.testing.assert_allclose(got, expected, rtol=1e-6)


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        # MXNet 1.9.1: the second tap is read even at weight 0 (0 * inf is NaN there too)
        ({"height": 3, "width": 3}, [[0, 2.5, NAN], [15, INF, 20], [30, 32.5, 35]]),
        (
            {"height": 4, "width": 9, "align_corners": False},
            [
                [1.5, 2, 8 / 3, 10 / 3, 4, 14 / 3, 16 / 3, -INF, -INF],
                [10.5, 11, 35 / 3, 37 / 3, INF, INF, INF, 15, 15.5],
                [NAN, NAN, NAN, NAN, 22, 68 / 3, 70 / 3, 24, 24.5],
                [NAN, NAN, NAN, NAN, 31, 95 / 3, 97 / 3, 33, 33.5],
            ],
        ),
        (
            {"height": 2, "width": 12, "align_corners": False},
            [
                [6, 6.25, 6.75, 7.25, 7.75, NAN, NAN, NAN, NAN, 10.25, 10.75, 11],
                [NAN, NAN, NAN, NAN, NAN, 26.25, 26.75, 27.25, 27.75, 28.25, 28.75, 29],
            ],
        ),
    ],
)
def test_bilinear_resize_spreads_a_non_finite_pixel_only_to_outputs_that_read_it(ctx, params, expected):
    y = mx.nd.contrib.BilinearResize2D(mx.nd.array(_planes(), ctx=ctx), **params)
    _check(y.asnumpy()[0, 0], expected)


@pytest.mark.parametrize("align_corners", [True, False])
def test_bilinear_resize_to_the_same_size_copies_non_finite_pixels(ctx, align_corners):
    # MXNet 1.9.1 copies the input: no tap of weight 0 reads a neighbour
    y = mx.nd.contrib.BilinearResize2D(mx.nd.array(_planes(), ctx=ctx), height=6, width=6, align_corners=align_corners)
    np.testing.assert_array_equal(y.asnumpy(), _planes())


def test_bilinear_resize_like_mode_keeps_non_finite_pixels_local(ctx):
    y = mx.nd.contrib.BilinearResize2D(mx.nd.array(_planes(), ctx=ctx), mx.nd.zeros((1, 1, 3, 3), ctx=ctx), mode="like")
    _check(y.asnumpy()[0, 0], [[0, 2.5, NAN], [15, INF, 20], [30, 32.5, 35]])


@pytest.mark.parametrize(
    ("output_size", "expected"),
    [
        ((3, 3), [[3.5, 5.5, -INF], [15.5, INF, 19.5], [NAN, 29.5, 31.5]]),
        ((4, 4), [[3.5, 4.5, 6.5, -INF], [9.5, 10.5, INF, 13.5], [NAN, NAN, 24.5, 25.5], [NAN, NAN, 30.5, 31.5]]),
        ((5, 2), [[4, -INF], [10, INF], [16, INF], [NAN, 25], [NAN, 31]]),
        ((1, 1), [[NAN]]),
    ],
)
def test_adaptive_average_pooling_spreads_a_non_finite_pixel_only_to_its_bins(ctx, output_size, expected):
    y = mx.nd.contrib.AdaptiveAvgPooling2D(mx.nd.array(_planes(), ctx=ctx), output_size=output_size)
    _check(y.asnumpy()[0, 0], expected)


def test_adaptive_average_pooling_of_opposite_infinities_in_one_bin_is_nan(ctx):
    x = np.ones((1, 1, 4, 4), np.float32)
    x[0, 0, 0, 0], x[0, 0, 1, 1] = INF, -INF
    y = mx.nd.contrib.AdaptiveAvgPooling2D(mx.nd.array(x, ctx=ctx), output_size=2).asnumpy()[0, 0]
    _check(y, [[NAN, 1], [1, 1]])
