"""mx.nd.contrib RROIAlign (rotated regions) against MXNet 1.9.1 (it was missing: mx.nd.contrib.RROIAlign
raised).  The expected values were computed with MXNet 1.9.1's CPU operator on the inputs below and
pasted here."""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx
from lazynd.errors import LazyNDError

DATA = np.random.RandomState(11).rand(1, 2, 5, 6).astype(np.float32)
# rotated by 30 and -120 degrees (partly off the map), and one below a cell's size
ROIS = np.array([[0, 2.6, 2.2, 4.0, 2.5, 30], [0, 5.0, 1.0, 7.0, 3.0, -120], [0, 1.0, 4.0, 0.4, 0.8, 0]], np.float32)


def test_rroi_align_matches_mxnet_with_adaptive_sampling(ctx):
    out = mx.nd.contrib.RROIAlign(
        mx.nd.array(DATA, ctx=ctx), mx.nd.array(ROIS, ctx=ctx), pooled_size=(2, 2), spatial_scale=0.9
    )
    expected = [
        0.581798, 0.779954, 0.519291, 0.440899, 0.263335, 0.495633, 0.434337, 0.457296,
        0.202491, 0.242016, 0.292573, 0.63593, 0.439582, 0.498505, 0.43806, 0.404545,
        0.171469, 0.223641, 0.111609, 0.18874, 0.521768, 0.390264, 0.349151, 0.133572,
    ]  # fmt: skip
    assert out.shape == (3, 2, 2, 2)
    np.testing.assert_allclose(out.asnumpy().ravel(), expected, rtol=1e-5)


def test_rroi_align_matches_mxnet_with_a_fixed_sampling_ratio(ctx):
    out = mx.nd.contrib.RROIAlign(
        mx.nd.array(DATA, ctx=ctx), mx.nd.array(ROIS, ctx=ctx), pooled_size=(1, 3), spatial_scale=1.0, sampling_ratio=3
    )
    expected = [
        0.54294, 0.621454, 0.463329, 0.364309, 0.319508, 0.547977, 0.107233, 0.28389, 0.419168,
        0.207022, 0.519887, 0.440957, 0.106249, 0.116909, 0.300736, 0.325373, 0.140165, 0.107842,
    ]  # fmt: skip
    np.testing.assert_allclose(out.asnumpy().ravel(), expected, rtol=1e-5)


def test_rroi_align_has_no_gradient_as_in_mxnet():
    data = mx.nd.array(DATA)
    data.attach_grad()
    with mx.autograd.record():
        out = mx.nd.contrib.RROIAlign(data, mx.nd.array(ROIS), pooled_size=(2, 2), spatial_scale=1.0)
    with pytest.raises(LazyNDError, match="'_contrib_RROIAlign' has no gradient rule"):
        out.backward()


def test_rroi_align_refuses_bad_regions():
    with pytest.raises(LazyNDError, match=r"RROIAlign: 'rois' must be \(num_rois, 6\).*got shape \(3, 5\)"):
        mx.nd.contrib.RROIAlign(mx.nd.array(DATA), mx.nd.zeros((3, 5)), pooled_size=(2, 2), spatial_scale=1.0)
    with pytest.raises(LazyNDError, match="batch index 2 is outside the batch of 1"):
        rois = mx.nd.array([[2, 1, 1, 2, 2, 0]])
        mx.nd.contrib.RROIAlign(mx.nd.array(DATA), rois, pooled_size=(2, 2), spatial_scale=1.0).asnumpy()
    with pytest.raises(LazyNDError, match="pooled_size must be two positive sizes"):
        mx.nd.contrib.RROIAlign(mx.nd.array(DATA), mx.nd.array(ROIS), pooled_size=(2,), spatial_scale=1.0)
