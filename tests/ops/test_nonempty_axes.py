"""Operators that read every pixel, box or category of an input refuse a zero-size axis there at
the call (``OpDef(nonempty_axes=...)``), naming the operator, the input and the axis, as MXNet 1.9.1
refuses it; before, their kernels failed at the wait with NumPy's message.  Their symbolic shape
inference still takes a 0 for an unknown dim."""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx
import lazynd_sym as sym

ROI = [[0, 0, 0, 3, 3]]
ROTATED = [[0, 2, 2, 2, 2, 30]]

# (operator, input arrays, params, the input, the axis named)
REFUSED = [
    ("SpatialTransformer", [np.zeros((1, 2, 4, 0)), np.zeros((1, 6))], {"target_shape": (3, 3)}, "data", 3),
    ("_contrib_AdaptiveAvgPooling2D", [np.zeros((2, 1, 5, 0))], {"output_size": (2, 2)}, "data", 3),
    ("_contrib_BilinearResize2D", [np.zeros((1, 2, 0, 3))], {"height": 5, "width": 2}, "data", 2),
    (
        "_contrib_DeformablePSROIPooling",
        [np.zeros((1, 8, 4, 0)), ROI],
        {"spatial_scale": 1.0, "output_dim": 2, "pooled_size": 2, "group_size": 2, "no_trans": True},
        "data",
        3,
    ),
    ("_contrib_RROIAlign", [np.zeros((0, 2, 4, 5)), ROTATED], {"pooled_size": (2, 2), "spatial_scale": 1.0}, "data", 0),
    ("_contrib_RROIAlign", [np.zeros((1, 2, 4, 0)), ROTATED], {"pooled_size": (2, 2), "spatial_scale": 1.0}, "data", 3),
    ("_contrib_bipartite_matching", [np.zeros((0, 4))], {"threshold": 0.1}, "data", 0),
    ("_contrib_bipartite_matching", [np.zeros((3, 0))], {"threshold": 0.1}, "data", 1),
    ("_sample_multinomial", [np.zeros((2, 0))], {"shape": (4,)}, "data", 1),
]


def _op(name: str):
    return getattr(mx.nd, name, None) or getattr(mx.nd._internal, name)


@pytest.mark.parametrize(("name", "arrays", "params", "arg", "axis"), REFUSED, ids=[f"{r[0]}-{r[4]}" for r in REFUSED])
def test_a_zero_size_axis_that_is_read_is_refused_at_the_call(name, arrays, params, arg, axis):
    inputs = [mx.nd.array(np.asarray(a, np.float32)) for a in arrays]
    with pytest.raises(mx.LazyNDError, match=rf"{name}: axis {axis} of '{arg}' .* has size 0"):
        _op(name)(*inputs, **params)  # no wait: shape inference raises


def test_other_rules_on_empty_axes_still_name_the_operator():
    with pytest.raises(mx.LazyNDError, match=r"SequenceLast: axis 0 of 'data' \(0, 2, 2\) has size 0"):
        mx.nd.SequenceLast(mx.nd.zeros((0, 2, 2)))
    with pytest.raises(mx.LazyNDError, match=r"linalg_gelqf: A \(2, 0\) must have at least as many columns"):
        mx.nd.linalg_gelqf(mx.nd.zeros((2, 0)))


def test_symbolic_inference_still_takes_a_zero_for_an_unknown_dim():
    data = sym.Variable("data")
    net = sym.ROIPooling(data, sym.Variable("rois"), pooled_size=(2, 2), spatial_scale=1.0)
    _, out_shapes, _ = net.infer_shape_partial(data=(1, 2, 0, 0), rois=(3, 5))
    assert out_shapes == [(3, 2, 2, 2)]


@pytest.mark.parametrize(
    ("name", "params"),
    [
        ("ROIPooling", {"pooled_size": (2, 2), "spatial_scale": 1.0}),
        ("_contrib_PSROIPooling", {"spatial_scale": 1.0, "output_dim": 2, "pooled_size": 2}),
    ],
)
def test_roi_pooling_of_an_empty_feature_map_gives_zeros(name, params):
    # MXNet 1.9.1 gives a value here (every bin is empty: 0), so these are not refused
    out = _op(name)(mx.nd.zeros((1, 8, 4, 0)), mx.nd.array(ROI), **params)
    channels = 8 if name == "ROIPooling" else 2
    np.testing.assert_array_equal(out.asnumpy(), np.zeros((1, channels, 2, 2), np.float32))
