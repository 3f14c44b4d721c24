"""ROIAlign's region kernels (two matrix products a region, forward and backward) against a
point-by-point bilinear reference: regions outside the map, padding regions (batch index -1),
regions of one cell, ``aligned``, sample ratios, every float type."""

from __future__ import annotations

import math

import numpy as np
import pytest

import lazynd as mx


def bilinear(plane: np.ndarray, y: float, x: float) -> list[tuple[int, int, float]]:
    """The (row, column, weight) cells a point reads; none beyond one cell outside the map."""
    height, width = plane.shape
    if y < -1.0 or y > height or x < -1.0 or x > width:
        return []
    y, x = max(y, 0.0), max(x, 0.0)
    y0, x0 = int(y), int(x)
    if y0 >= height - 1:
        y0 = y1 = height - 1
        y = float(y0)
    else:
        y1 = y0 + 1
    if x0 >= width - 1:
        x0 = x1 = width - 1
        x = float(x0)
    else:
        x1 = x0 + 1
    ly, lx = y - y0, x - x0
    return [(y0, x0, (1 - ly) * (1 - lx)), (y0, x1, (1 - ly) * lx), (y1, x0, ly * (1 - lx)), (y1, x1, ly * lx)]


def reference(data, rois, out_grad, pooled, scale, ratio, aligned):
    """Output and data gradient (for ``out_grad``) in float64, one sample point at a time."""
    _, channels, height, width = data.shape
    out = np.zeros((len(rois), channels, *pooled))
    grad = np.zeros(data.shape)
    offset = 0.5 if aligned else 0.0
    for r, roi in enumerate(rois.astype(np.float64)):
        b = int(roi[0])
        if b < 0:
            continue
        x1, y1, x2, y2 = (v * scale - offset for v in roi[1:])
        roi_w, roi_h = (x2 - x1, y2 - y1) if aligned else (max(x2 - x1, 1.0), max(y2 - y1, 1.0))
        grid_h = ratio if ratio > 0 else math.ceil(roi_h / pooled[0])
        grid_w = ratio if ratio > 0 else math.ceil(roi_w / pooled[1])
        bin_h, bin_w = roi_h / pooled[0], roi_w / pooled[1]
        for i in range(pooled[0]):
            for j in range(pooled[1]):
                for sy in range(grid_h):
                    for sx in range(grid_w):
                        y = y1 + i * bin_h + (sy + 0.5) * bin_h / grid_h
                        x = x1 + j * bin_w + (sx + 0.5) * bin_w / grid_w
                        for h, w, weight in bilinear(data[0, 0], y, x):
                            weight /= grid_h * grid_w
                            out[r, :, i, j] += weight * data[b, :, h, w]
                            grad[b, :, h, w] += weight * out_grad[r, :, i, j]
    return out, grad


def run(data, rois, out_grad, pooled, scale, ratio, aligned, ctx):
    x = mx.nd.array(data, ctx=ctx, dtype=data.dtype)
    x.attach_grad()
    with mx.autograd.record():
        out = mx.nd.contrib.ROIAlign(
            x, mx.nd.array(rois, ctx=ctx, dtype=data.dtype), pooled_size=pooled, spatial_scale=scale, sample_ratio=ratio,
            aligned=aligned,
        )  # fmt: skip
    out.backward(mx.nd.array(out_grad, ctx=ctx, dtype=data.dtype))
    return out.asnumpy(), x.grad.asnumpy()


REGIONS = np.array(
    [
        [0, 0, 0, 10, 8],  # the whole map
        [1, 2.3, 1.7, 7.9, 6.2],
        [0, 4, 3, 4, 3],  # one point
        [1, 5, 4, 6, 5],  # one cell
        [0, -6, -5, 3, 2],  # partly outside
        [1, 14, 12, 20, 18],  # wholly outside: reads 0
        [-1, 1, 1, 6, 6],  # a padding region: 0, no gradient
        [0, 9.5, 7.5, 11.2, 9.9],  # across the last row and column
    ]
)
TOLERANCE = {np.float64: 1e-12, np.float32: 1e-5, np.float16: 1e-2}


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("pooled,scale,ratio,aligned", [((2, 3), 1.0, -1, False), ((3, 3), 0.5, 2, False),
                                                        ((7, 7), 1.0, -1, False), ((2, 2), 1.0, 3, True)])  # fmt: skip
def test_roi_align_matches_the_point_by_point_reference(ctx, dtype, pooled, scale, ratio, aligned):
    rng = np.random.default_rng(3)
    data = rng.standard_normal((2, 6, 9, 11)).astype(dtype)
    rois = REGIONS if not aligned else REGIONS[[0, 1, 3, 4, 5, 6, 7]]  # aligned refuses a point
    out_grad = rng.standard_normal((len(rois), 6, *pooled)).astype(dtype)
    out, grad = run(data, rois.astype(dtype), out_grad, pooled, scale, ratio, aligned, ctx)
    want_out, want_grad = reference(data.astype(np.float64), rois.astype(dtype), out_grad.astype(np.float64), pooled,
                                    scale, ratio, aligned)  # fmt: skip
    tol = TOLERANCE[dtype]
    np.testing.assert_allclose(out, want_out, rtol=tol, atol=tol * 10)
    np.testing.assert_allclose(grad, want_grad, rtol=tol, atol=tol * 10)
    assert not out[list(rois[:, 0]).index(-1)].any()


@pytest.mark.parametrize(("aligned", "nan_bins"), [(False, 1), (True, 2)])
def test_a_nonfinite_pixel_reaches_only_the_bins_that_read_it(aligned, nan_bins):
    # the two matrix products multiplied a NaN or inf cell by the zero weight of every other bin:
    # the whole region came out NaN.  MXNet 1.9.1: NaN in the bins that read (1, 1) (the first, or
    # with aligned's half-cell shift the first two each way), inf in the last, the rest as without them
    x = np.arange(64, dtype=np.float32).reshape(1, 1, 8, 8)
    x[0, 0, 1, 1], x[0, 0, 6, 6] = np.nan, np.inf
    rois = mx.nd.array([[0, 0, 0, 7, 7]])
    params = {"pooled_size": (4, 4), "spatial_scale": 1.0, "sample_ratio": 2, "aligned": aligned}
    out = mx.nd.contrib.ROIAlign(mx.nd.array(x), rois, **params).asnumpy()[0, 0]
    nan = np.zeros((4, 4), dtype=bool)
    nan[:nan_bins, :nan_bins] = True
    np.testing.assert_array_equal(np.isnan(out), nan)
    assert out[3, 3] == np.inf
    clean = x.copy()
    clean[0, 0, 1, 1] = clean[0, 0, 6, 6] = 0
    expected = mx.nd.contrib.ROIAlign(mx.nd.array(clean), rois, **params).asnumpy()[0, 0]
    np.testing.assert_allclose(out[nan_bins:, :3], expected[nan_bins:, :3], rtol=1e-6)


def test_a_nonfinite_head_gradient_reaches_only_the_cells_its_bin_read():
    # as MXNet 1.9.1: the first bin of 2 x 2 over an 8 x 8 region reads cells 0..4 each way
    data = mx.nd.array(np.ones((1, 1, 8, 8), dtype=np.float32))
    data.attach_grad()
    with mx.autograd.record():
        out = mx.nd.contrib.ROIAlign(data, mx.nd.array([[0, 0, 0, 7, 7]]), pooled_size=(2, 2), spatial_scale=1.0)
    head = np.ones((1, 1, 2, 2), dtype=np.float32)
    head[0, 0, 0, 0] = np.inf
    out.backward(mx.nd.array(head))
    read = np.zeros((8, 8), dtype=bool)
    read[:5, :5] = True
    grad = data.grad.asnumpy()[0, 0]
    assert np.isposinf(grad[read]).all() and np.isfinite(grad[~read]).all()


def position_sensitive(x, head, ctx):
    """Output and data gradient of a position-sensitive ROIAlign, 2 x 2 bins over an 8 x 8 region."""
    data = mx.nd.array(x, ctx=ctx)
    data.attach_grad()
    with mx.autograd.record():
        out = mx.nd.contrib.ROIAlign(data, mx.nd.array([[0, 0, 0, 7, 7]], ctx=ctx), pooled_size=(2, 2),
                                     spatial_scale=1.0, sample_ratio=2, position_sensitive=True)  # fmt: skip
    out.backward(mx.nd.array(head, ctx=ctx))
    return out.asnumpy()[0], data.grad.asnumpy()[0]


def test_position_sensitive_a_nonfinite_pixel_reaches_only_its_bin_where_it_is_tapped(ctx):
    # input channel 4k + 2i + j feeds bin (i, j) of output channel k.  The einsum multiplied a
    # NaN or inf cell by the zero weight of a bin that does not tap it: that bin came out NaN.
    # MXNet 1.9.1: a bin is non-finite only where its points tap the cell (bin (0, 0) reads cells 0..3)
    x = np.arange(512, dtype=np.float32).reshape(1, 8, 8, 8) / 10
    x[0, 0, 1, 1], x[0, 3, 6, 6] = np.nan, np.inf  # tapped by bins (0, 0) and (1, 1) of channel 0
    x[0, 4, 6, 6], x[0, 5, 1, 1] = np.inf, np.nan  # not tapped by bins (0, 0) and (0, 1) of channel 1
    out, _ = position_sensitive(x, np.ones((1, 2, 2, 2), np.float32), ctx)
    np.testing.assert_allclose(out, [[[np.nan, 8.325], [17.175, np.inf]], [[27.175, 33.925], [42.775, 49.525]]],
                               rtol=1e-6)  # fmt: skip


def test_position_sensitive_a_nonfinite_head_gradient_reaches_only_the_cells_its_bin_read(ctx):
    # the einsum spread an inf (NaN) head gradient over the whole of its input channel, as NaN where
    # the bin does not read; MXNet 1.9.1: inf on bin (0, 0)'s cells 0..3 of channel 0, NaN on bin
    # (1, 0)'s rows 4..7 and columns 0..3 of channel 6, every other cell finite
    head = np.ones((1, 2, 2, 2), np.float32)
    head[0, 0, 0, 0], head[0, 1, 1, 0] = np.inf, np.nan
    _, grad = position_sensitive(np.ones((1, 8, 8, 8), np.float32), head, ctx)
    expected = np.zeros((8, 8, 8))
    expected[0, :4, :4], expected[6, 4:, :4] = np.inf, np.nan
    np.testing.assert_array_equal(np.where(np.isfinite(grad), 0, grad), expected)
