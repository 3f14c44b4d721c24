"""ROIPooling's whole-batch kernel (a sparse table of maxima, lazynd/ops/window_max.py) against a
bin-by-bin reference, values and gradients: empty bins, regions outside the map, padding regions
(batch index -1), ties, regions of one cell, NaNs, bins spanning the whole map, every float type."""

from __future__ import annotations

import math

import numpy as np
import pytest

import lazynd as mx
from lazynd.ops import window_max


def reference(data: np.ndarray, rois: np.ndarray, pooled: tuple, scale: float) -> tuple[np.ndarray, np.ndarray]:
    """Output and the gradient of its sum: each bin's maximum, its first cell in row-major order
    (NumPy's argmax: the first NaN where there is one) taking the gradient."""
    _, channels, height, width = data.shape
    out = np.zeros((len(rois), channels, *pooled), data.dtype)
    grad = np.zeros(data.shape, data.dtype)
    for r, roi in enumerate(rois):
        b = int(roi[0])
        if b < 0:
            continue
        # C's round(), in the regions' own type
        x1, y1, x2, y2 = (int(np.sign(v) * np.floor(abs(v) * scale + 0.5)) for v in roi[1:])
        bin_h, bin_w = max(y2 - y1 + 1, 1) / pooled[0], max(x2 - x1 + 1, 1) / pooled[1]
        for i in range(pooled[0]):
            for j in range(pooled[1]):
                h0 = min(max(math.floor(i * bin_h) + y1, 0), height)
                h1 = min(max(math.ceil((i + 1) * bin_h) + y1, 0), height)
                w0 = min(max(math.floor(j * bin_w) + x1, 0), width)
                w1 = min(max(math.ceil((j + 1) * bin_w) + x1, 0), width)
                if h1 <= h0 or w1 <= w0:
                    continue
                for c in range(channels):
                    window = data[b, c, h0:h1, w0:w1]
                    k = int(np.argmax(window))
                    out[r, c, i, j] = window.flat[k]
                    grad[b, c, h0 + k // (w1 - w0), w0 + k % (w1 - w0)] += 1
    return out, grad


def run(data: np.ndarray, rois: np.ndarray, pooled: tuple, scale: float, ctx) -> tuple[np.ndarray, np.ndarray]:
    x = mx.nd.array(data, ctx=ctx, dtype=data.dtype)
    x.attach_grad()
    with mx.autograd.record():
        out = mx.nd.ROIPooling(x, mx.nd.array(rois, ctx=ctx, dtype=data.dtype), pooled_size=pooled, spatial_scale=scale)
    out.backward(mx.nd.ones_like(out))
    return out.asnumpy(), x.grad.asnumpy()


def assert_matches(data, rois, pooled, scale, ctx):
    out, grad = run(data, rois, pooled, scale, ctx)
    want_out, want_grad = reference(data, rois, pooled, scale)
    np.testing.assert_array_equal(out, want_out)
    np.testing.assert_array_equal(grad, want_grad)


def random_regions(rng, batch: int, count: int, low: float, high: float) -> np.ndarray:
    corners = np.sort(rng.uniform(low, high, (count, 2, 2)), axis=1)  # x1 <= x2, y1 <= y2
    return np.column_stack([rng.integers(-1, batch, count), corners[:, 0, 0], corners[:, 0, 1], corners[:, 1, 0],
                            corners[:, 1, 1]])  # fmt: skip


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("seed", range(4))
def test_roi_pooling_matches_the_bin_by_bin_reference(ctx, dtype, seed):
    # regions partly and wholly outside the map, reversed corners, padding ones (batch index -1)
    rng = np.random.default_rng(seed)
    data = rng.standard_normal((2, 3, 9, 11)).astype(dtype)
    rois = np.concatenate([random_regions(rng, 2, 12, -6, 16), rng.uniform(-8, 20, (4, 5))]).astype(dtype)
    rois[-4:, 0] = rng.integers(-1, 2, 4)
    for pooled, scale in (((3, 2), 1.0), ((2, 5), 0.5), ((7, 7), 1 / 16), ((1, 1), 0.75)):
        assert_matches(data, rois, pooled, scale, ctx)


def test_roi_pooling_ties_go_to_the_first_cell_in_row_major_order(ctx):
    # few distinct values: most bins hold their maximum in several cells, of several rows
    rng = np.random.default_rng(5)
    data = rng.integers(0, 3, (1, 4, 10, 10)).astype(np.float32)
    rois = np.array([[0, 0, 0, 9, 9], [0, 1, 2, 8, 6], [0, 3, 0, 5, 9], [0, 0, 4, 9, 5]], np.float32)
    for pooled in ((1, 1), (2, 3), (3, 2), (4, 4)):
        assert_matches(data, rois, pooled, 1.0, ctx)


def test_roi_pooling_of_one_cell_regions_and_empty_bins(ctx):
    # one-cell regions pooled into more bins than cells: the bins repeat the cell; a region at
    # the map's edge and beyond it has empty bins (0, no gradient)
    data = np.arange(2 * 2 * 5 * 6, dtype=np.float32).reshape(2, 2, 5, 6)[..., ::-1].copy()
    rois = np.array([[0, 2, 3, 2, 3], [1, 5, 4, 5, 4], [1, 5, 4, 9, 8], [0, 7, 6, 9, 9], [-1, 0, 0, 5, 4]], np.float32)
    assert_matches(data, rois, (3, 3), 1.0, ctx)


def test_roi_pooling_takes_the_first_nan(ctx):
    rng = np.random.default_rng(6)
    data = rng.standard_normal((1, 2, 8, 8)).astype(np.float32)
    data[0, 0, 2, 5] = data[0, 0, 3, 1] = data[0, 1, 6, 6] = np.nan
    rois = np.array([[0, 0, 0, 7, 7], [0, 1, 1, 6, 6], [0, 0, 2, 7, 3]], np.float32)
    for pooled in ((1, 1), (2, 2), (3, 5)):
        out, grad = run(data, rois, pooled, 1.0, ctx)
        want_out, want_grad = reference(data, rois, pooled, 1.0)
        np.testing.assert_array_equal(out, want_out)  # NaNs in the same places
        np.testing.assert_array_equal(grad, want_grad)


def test_roi_pooling_in_channel_groups_matches_in_one(ctx, monkeypatch):
    # a table too big for TABLE_CELLS is built a group of channels at a time
    rng = np.random.default_rng(7)
    data = rng.standard_normal((2, 5, 12, 13)).astype(np.float32)
    rois = random_regions(rng, 2, 10, -2, 14).astype(np.float32)
    whole = run(data, rois, (2, 3), 1.0, ctx)
    monkeypatch.setattr(window_max, "TABLE_CELLS", 2 * 12 * 13 * 2)
    grouped = run(data, rois, (2, 3), 1.0, ctx)
    for a, b in zip(whole, grouped, strict=True):
        np.testing.assert_array_equal(a, b)
    assert_matches(data, rois, (2, 3), 1.0, ctx)


def test_roi_pooling_of_no_regions_or_an_empty_map(ctx):
    out, grad = run(np.ones((1, 2, 4, 4), np.float32), np.zeros((0, 5), np.float32), (2, 2), 1.0, ctx)
    assert out.shape == (0, 2, 2, 2) and not grad.any()
    out, grad = run(np.ones((1, 2, 0, 4), np.float32), np.array([[0, 0, 0, 3, 3]], np.float32), (2, 2), 1.0, ctx)
    np.testing.assert_array_equal(out, np.zeros((1, 2, 2, 2)))


def test_roi_pooling_of_a_bin_of_minus_infinity_keeps_its_gradient_inside_the_bin(ctx):
    # the loop kernel masked the cells outside a bin with -inf and so took, for a bin of -inf
    # alone, the map's first cell (outside the bin) as its maximum's: the gradient went there
    data = np.full((1, 1, 4, 4), -np.inf, np.float32)
    data[0, 0, 0, 0] = 1
    assert_matches(data, np.array([[0, 2, 2, 3, 3]], np.float32), (1, 1), 1.0, ctx)
