"""spatial_scale of the region ops as MXNet 1.9.1 bounds it: [0, 1] for all five (ROIAlign and the
PS pooling ops took any positive scale; ROIPooling refused 0, which MXNet takes)."""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx
from lazynd.errors import LazyNDError

RAMP = np.arange(36, dtype=np.float32).reshape(1, 1, 6, 6)
REGION = np.array([[0, 0, 0, 3, 3]], np.float32)


def _region_ops() -> dict:
    data, rois = mx.nd.ones((1, 8, 6, 6)), mx.nd.array(REGION)
    return {
        "ROIPooling": lambda s: mx.nd.ROIPooling(data, rois, pooled_size=(2, 2), spatial_scale=s),
        "ROIAlign": lambda s: mx.nd.contrib.ROIAlign(data, rois, pooled_size=(2, 2), spatial_scale=s),
        "RROIAlign": lambda s: mx.nd.contrib.RROIAlign(
            data, mx.nd.array([[0, 2, 2, 2, 2, 0]]), pooled_size=(2, 2), spatial_scale=s
        ),
        "PSROIPooling": lambda s: mx.nd.contrib.PSROIPooling(data, rois, pooled_size=2, output_dim=2, spatial_scale=s),
        "DeformablePSROIPooling": lambda s: mx.nd.contrib.DeformablePSROIPooling(
            data, rois, pooled_size=2, output_dim=2, group_size=2, spatial_scale=s, no_trans=True
        ),
    }


@pytest.mark.parametrize("op", sorted(_region_ops()))
@pytest.mark.parametrize("scale", [1.5, 1.0001, -1.0, float("inf"), float("nan")])
def test_region_ops_refuse_a_spatial_scale_outside_zero_to_one(op, scale):
    with pytest.raises(LazyNDError, match=rf"{op}: invalid value .* for parameter 'spatial_scale': .*\[0, 1\]"):
        _region_ops()[op](scale).wait_to_read()


@pytest.mark.parametrize("op", sorted(_region_ops()))
@pytest.mark.parametrize("scale", [0.0, 1.0])
def test_region_ops_take_the_bounds_of_spatial_scale(op, scale):
    assert np.isfinite(_region_ops()[op](scale).asnumpy()).all()


def test_spatial_scale_zero_maps_every_region_to_the_first_pixel_as_mxnet():
    # MXNet 1.9.1's outputs at spatial_scale 0
    data, rois = mx.nd.array(RAMP), mx.nd.array(REGION)
    np.testing.assert_allclose(
        mx.nd.contrib.ROIAlign(data, rois, pooled_size=(2, 2), spatial_scale=0.0).asnumpy().ravel(),
        [1.75, 2.25, 4.75, 5.25],
    )
    np.testing.assert_array_equal(
        mx.nd.ROIPooling(data, rois, pooled_size=(2, 2), spatial_scale=0.0).asnumpy().ravel(), [0, 0, 0, 0]
    )
    planes = mx.nd.array(np.arange(288, dtype=np.float32).reshape(1, 8, 6, 6))
    np.testing.assert_array_equal(
        mx.nd.contrib.PSROIPooling(planes, rois, pooled_size=2, output_dim=2, spatial_scale=0.0).asnumpy().ravel(),
        [0, 36, 72, 108, 144, 180, 216, 252],
    )
