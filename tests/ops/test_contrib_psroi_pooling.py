"""mx.nd.contrib PSROIPooling and DeformablePSROIPooling (R-FCN) against MXNet 1.9.1 and central
differences (they were missing: mx.nd.contrib.<op> raised).  The expected values were computed with
MXNet 1.9.1's CPU operators on the inputs below and pasted here."""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx
import lazynd_sym as sym
from lazynd.errors import LazyNDError
from lazynd.testing import check_gradient

_RNG = np.random.RandomState(3)
DATA = _RNG.rand(1, 8, 4, 5).astype(np.float32)
ROIS = np.array([[0, 0.6, 0.2, 3.4, 2.7], [0, 1.5, -0.7, 4.4, 3.5]], np.float32)
TRANS = (_RNG.randn(2, 2, 2, 2) * 0.4).astype(np.float32)
PS = {"spatial_scale": 0.8, "output_dim": 2, "pooled_size": 3, "group_size": 2}
DEFORMABLE = {
    "spatial_scale": 0.8,
    "output_dim": 2,
    "pooled_size": 2,
    "group_size": 2,
    "sample_per_part": 2,
    "trans_std": 0.3,
}


def test_psroi_pooling_matches_mxnet_with_fewer_groups_than_bins(ctx):
    out = mx.nd.contrib.PSROIPooling(mx.nd.array(DATA, ctx=ctx), mx.nd.array(ROIS, ctx=ctx), **PS)
    expected = [
        0.570206, 0.33297, 0.301813, 0.377147, 0.359701, 0.589629, 0.369163, 0.542462, 0.387466,
        0.482693, 0.42804, 0.793461, 0.61369, 0.573353, 0.453002, 0.498725, 0.772004, 0.400899,
        0.499526, 0.400866, 0.156868, 0.40631, 0.331346, 0.46353, 0.542462, 0.509776, 0.313475,
        0.370546, 0.569958, 0.972098, 0.50575, 0.652897, 0.692416, 0.772004, 0.65362, 0.17934,
    ]  # fmt: skip
    np.testing.assert_allclose(out.asnumpy().ravel(), expected, rtol=1e-5)


@pytest.mark.parametrize("group_size", [0, 2])
def test_psroi_pooling_gradient_matches_central_differences(ctx, group_size):
    params = {**PS, "group_size": group_size, "output_dim": 2 if group_size else 1, "pooled_size": 2 + bool(group_size)}
    data = DATA[:, : params["output_dim"] * (group_size or params["pooled_size"]) ** 2].astype(np.float64)
    check_gradient("_contrib_PSROIPooling", [data, ROIS.astype(np.float64)], params, ctx=ctx, wrt=[0])


def test_deformable_psroi_pooling_matches_mxnet_with_its_trans_gradient(ctx):
    data, trans = mx.nd.array(DATA, ctx=ctx), mx.nd.array(TRANS, ctx=ctx)
    trans.attach_grad()
    with mx.autograd.record():
        out = mx.nd.contrib.DeformablePSROIPooling(data, mx.nd.array(ROIS, ctx=ctx), trans, **DEFORMABLE)
    out.backward(mx.nd.array(np.arange(out.size).reshape(out.shape) % 3 + 1.0, ctx=ctx))
    expected = [
        0.594777, 0.334118, 0.475381, 0.487851, 0.432498, 0.826235, 0.796684, 0.6359,
        0.589638, 0.318197, 0.402346, 0.455651, 0.442138, 0.649717, 0.785671, 0.406757,
    ]  # fmt: skip
    np.testing.assert_allclose(out.asnumpy().ravel(), expected, rtol=1e-5)
    # the 0: the bin's samples are clamped to the map's edge, where the offsets get no gradient
    expected_grad = [
        0.456402, 0.13449, -0.239892, 0.223717, 0.178855, -0.716331, -0.254097, 0.075664,
        -0.259617, 0.383293, 0.117357, -0.06216, 0, -0.992226, 0.056263, -1.375469,
    ]  # fmt: skip
    np.testing.assert_allclose(trans.grad.asnumpy().ravel(), expected_grad, rtol=1e-4, atol=1e-6)


def test_deformable_psroi_pooling_gradients_match_central_differences(ctx):
    # two classes of one channel each, a 3 x 3 offset grid under 2 x 2 bins
    trans = np.random.RandomState(4).randn(2, 4, 3, 3) * 0.2
    params = {**DEFORMABLE, "part_size": 3, "trans_std": 0.25}
    inputs = [DATA.astype(np.float64), ROIS.astype(np.float64), trans]
    check_gradient("_contrib_DeformablePSROIPooling", inputs, params, ctx=ctx, wrt=[0, 2], eps=1e-6)


def test_deformable_psroi_pooling_without_trans_takes_two_inputs(ctx):
    params = {**DEFORMABLE, "no_trans": True}
    assert sym.contrib.DeformablePSROIPooling(name="p", **params).list_arguments() == ["p_data", "p_rois"]
    out = mx.nd.contrib.DeformablePSROIPooling(mx.nd.array(DATA, ctx=ctx), mx.nd.array(ROIS, ctx=ctx), **params)
    zero = mx.nd.contrib.DeformablePSROIPooling(
        mx.nd.array(DATA, ctx=ctx), mx.nd.array(ROIS, ctx=ctx), mx.nd.zeros((2, 2, 2, 2), ctx=ctx), **DEFORMABLE
    )
    np.testing.assert_allclose(out.asnumpy(), zero.asnumpy(), rtol=1e-6)
    check_gradient("_contrib_DeformablePSROIPooling", [DATA.astype(np.float64), ROIS], params, ctx=ctx, wrt=[0])


def test_psroi_pooling_refuses_too_few_channels_and_bad_shapes():
    with pytest.raises(LazyNDError, match=r"PSROIPooling: 'data' must be 4-D with at least .* = 18 channels"):
        mx.nd.contrib.PSROIPooling(
            mx.nd.zeros((1, 8, 4, 4)), mx.nd.array(ROIS), spatial_scale=1, output_dim=2, pooled_size=3
        )
    with pytest.raises(LazyNDError, match=r"'rois' must be \(num_rois, 5\), got shape \(2, 4\)"):
        mx.nd.contrib.PSROIPooling(
            mx.nd.zeros((1, 8, 4, 4)), mx.nd.zeros((2, 4)), spatial_scale=1, output_dim=2, pooled_size=2
        )
    with pytest.raises(
        LazyNDError, match=r"'trans' must be \(num_rois, 2 \* classes, 2, 2\).*got shape \(2, 2, 3, 3\)"
    ):
        mx.nd.contrib.DeformablePSROIPooling(
            mx.nd.array(DATA), mx.nd.array(ROIS), mx.nd.zeros((2, 2, 3, 3)), **DEFORMABLE
        )
    with pytest.raises(LazyNDError, match="batch index 1 is outside the batch of 1"):
        mx.nd.contrib.PSROIPooling(mx.nd.array(DATA), mx.nd.array([[1, 0, 0, 2, 2]]), **PS).asnumpy()
    with pytest.raises(LazyNDError, match="batch index 3 is outside the batch of 1"):
        mx.nd.contrib.DeformablePSROIPooling(
            mx.nd.array(DATA), mx.nd.array([[3, 0, 0, 2, 2]]), **{**DEFORMABLE, "no_trans": True}
        ).asnumpy()
