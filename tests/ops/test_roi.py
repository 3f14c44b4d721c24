"""ROIPooling: forward against a loop-by-loop NumPy reference (checked against MXNet 1.9.1), gradient."""

from __future__ import annotations

import math

import numpy as np
import pytest

import lazynd as mx
import lazynd_sym as sym
from lazynd.errors import EngineError, OperatorError, ShapeError
from lazynd.testing import check_forward, check_gradient

rng = np.random.default_rng(0)


def c_round(v: float) -> int:
    return int(math.floor(v + 0.5)) if v >= 0 else -int(math.floor(-v + 0.5))


def np_roi_pooling(data, rois, pooled_size, spatial_scale):
    """Fast R-CNN's ROI max pooling, one bin at a time."""
    _, channels, height, width = data.shape
    ph_n, pw_n = pooled_size
    out = np.zeros((len(rois), channels, ph_n, pw_n), data.dtype)
    for r, roi in enumerate(rois):
        b = int(roi[0])
        x1, y1, x2, y2 = (c_round(v * spatial_scale) for v in roi[1:])
        bin_h = max(y2 - y1 + 1, 1) / ph_n
        bin_w = max(x2 - x1 + 1, 1) / pw_n
        for ph in range(ph_n):
            for pw in range(pw_n):
                h0 = min(max(math.floor(ph * bin_h) + y1, 0), height)
                h1 = min(max(math.ceil((ph + 1) * bin_h) + y1, 0), height)
                w0 = min(max(math.floor(pw * bin_w) + x1, 0), width)
                w1 = min(max(math.ceil((pw + 1) * bin_w) + x1, 0), width)
                if h1 > h0 and w1 > w0:
                    out[r, :, ph, pw] = data[b, :, h0:h1, w0:w1].max(axis=(1, 2))
    return out


DATA = rng.standard_normal((2, 3, 8, 10)).astype(np.float32)
ROIS = np.array(
    [[0, 0, 0, 9, 7], [1, 2.4, 1.6, 7.5, 5.2], [0, 4, 4, 4, 4], [1, -3, -2, 30, 3], [0, 12, 12, 20, 20]],
    np.float32,
)


@pytest.mark.parametrize("pooled_size,scale", [((2, 2), 1.0), ((3, 4), 0.5), ((4, 3), 0.8)])
def test_roi_pooling_matches_reference(ctx, pooled_size, scale):
    params = {"pooled_size": pooled_size, "spatial_scale": scale}
    check_forward("ROIPooling", [DATA, ROIS], params, lambda d, r: np_roi_pooling(d, r, pooled_size, scale), ctx=ctx)


def test_roi_pooling_empty_bins_give_zero(ctx):
    # a region entirely outside the map: every bin is empty
    out = mx.nd.ROIPooling(
        mx.nd.array(DATA, ctx=ctx), mx.nd.array(ROIS[4:], ctx=ctx), pooled_size=(2, 2), spatial_scale=1.0
    )
    np.testing.assert_array_equal(out.asnumpy(), np.zeros((1, 3, 2, 2)))


def test_roi_pooling_gradient(ctx):
    data = rng.permutation(2 * 2 * 5 * 6).reshape(2, 2, 5, 6) / 7.0  # distinct values: no ties
    rois = np.array([[0, 0, 0, 5, 4], [1, 1, 1, 3, 4], [1, 0, 2, 2, 2]], np.float64)
    grads = check_gradient("ROIPooling", [data, rois], {"pooled_size": (2, 3), "spatial_scale": 1.0}, ctx=ctx)
    assert grads[1] is None


def test_roi_pooling_of_a_negative_batch_index_is_zero_without_gradient(ctx):
    # the padding regions of a batch (index -1) pool to 0, as MXNet 1.9.1's and lazynd's ROIAlign;
    # ROIPooling refused them, so a program with padded regions failed at the wait
    data = mx.nd.array(np.arange(32, dtype=np.float32).reshape(2, 1, 4, 4), ctx=ctx)
    data.attach_grad()
    rois = mx.nd.array([[-1, 0, 0, 3, 3], [0, 1, 1, 2, 2], [-2, 0, 0, 1, 1]], ctx=ctx)
    with mx.autograd.record():
        out = mx.nd.ROIPooling(data, rois, pooled_size=(2, 2), spatial_scale=1.0)
    out.backward(mx.nd.ones_like(out))
    np.testing.assert_array_equal(out.asnumpy().reshape(3, 4), [[0] * 4, [5, 6, 9, 10], [0] * 4])  # MXNet's values
    grad = np.zeros((2, 1, 4, 4), np.float32)
    grad[0, 0, 1:3, 1:3] = 1
    np.testing.assert_array_equal(data.grad.asnumpy(), grad)


def test_roi_pooling_symbol_shapes_and_arguments():
    net = sym.ROIPooling(sym.Variable("data"), sym.Variable("rois"), pooled_size=(7, 7), spatial_scale=0.0625)
    args, outs, _ = net.infer_shape(data=(1, 512, 38, 50), rois=(128, 5))
    assert net.list_arguments() == ["data", "rois"] and outs == [(128, 512, 7, 7)]


def test_roi_pooling_rejects_bad_inputs():
    data = mx.nd.zeros((1, 2, 4, 4))
    with pytest.raises(ShapeError, match="rois must be \\(num_rois, 5\\)"):
        mx.nd.ROIPooling(data, mx.nd.zeros((3, 4)), pooled_size=(2, 2), spatial_scale=1.0)
    with pytest.raises(OperatorError, match="pooled_size"):
        mx.nd.ROIPooling(data, mx.nd.zeros((3, 5)), pooled_size=(2,), spatial_scale=1.0)
    with pytest.raises((OperatorError, EngineError), match="batch index 3 is out of range for a batch of 1"):
        mx.nd.ROIPooling(data, mx.nd.array([[3, 0, 0, 1, 1]]), pooled_size=(2, 2), spatial_scale=1.0).asnumpy()


NONFINITE_REGIONS = {
    "ROIPooling": lambda rois: mx.nd.ROIPooling(mx.nd.ones((1, 1, 4, 4)), rois, pooled_size=(2, 2), spatial_scale=1.0),
    "_contrib_ROIAlign": lambda rois: mx.nd.contrib.ROIAlign(
        mx.nd.ones((1, 1, 4, 4)), rois, pooled_size=(2, 2), spatial_scale=1.0
    ),
    "_contrib_RROIAlign": lambda rois: mx.nd.contrib.RROIAlign(
        mx.nd.ones((1, 1, 4, 4)), mx.nd.concat(rois, mx.nd.zeros((2, 1)), dim=1), pooled_size=(2, 2), spatial_scale=1.0
    ),
}


@pytest.mark.parametrize("value", [math.inf, math.nan])
@pytest.mark.parametrize("op", sorted(NONFINITE_REGIONS))
def test_region_poolings_refuse_a_non_finite_region(op, value):
    # they failed inside the kernel with NumPy's "cannot convert float infinity (NaN) to integer"
    rois = mx.nd.array([[0, 0, 0, 3, 3], [0, 1, 1, value, 3]])
    with pytest.raises(EngineError, match=rf"{op}: region 1 of 'rois' holds a non-finite value .*{value}"):
        NONFINITE_REGIONS[op](rois).asnumpy()
