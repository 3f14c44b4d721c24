"""ROIAlign, BilinearResize2D and AdaptiveAvgPooling2D of mx.nd.contrib against MXNet 1.9.1
(they were missing: mx.nd.contrib.<op> raised)."""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx
import lazynd_sym as sym
from lazynd.errors import LazyNDError
from lazynd.testing import check_gradient

PLANES = np.arange(32, dtype=np.float32).reshape(1, 2, 4, 4)
ROIS = np.array([[0, 0, 0, 3, 3], [0, 1, 0.5, 2.5, 3]], np.float32)


def test_roi_align_forward_and_gradient_match_mxnet(ctx):
    x = mx.nd.array(PLANES, ctx=ctx)
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.contrib.ROIAlign(x, mx.nd.array(ROIS, ctx=ctx), pooled_size=(2, 2), spatial_scale=1.0)
    y.backward(mx.nd.ones_like(y))
    np.testing.assert_allclose(
        y.asnumpy(),
        [
            [[[3.75, 5.25], [9.75, 11.25]], [[19.75, 21.25], [25.75, 27.25]]],
            [[[5.875, 6.625], [10.875, 11.625]], [[21.875, 22.625], [26.875, 27.625]]],
        ],
        rtol=1e-6,
    )
    np.testing.assert_allclose(
        x.grad.asnumpy()[0, 0],
        [
            [0.09765625, 0.2734375, 0.33203125, 0.109375],
            [0.21484375, 0.90234375, 1.33203125, 0.30078125],
            [0.21484375, 1.0, 1.52734375, 0.3203125],
            [0.09765625, 0.44921875, 0.68359375, 0.14453125],
        ],
        rtol=1e-6,
    )


def test_roi_align_aligned_with_a_sample_ratio_matches_mxnet():
    y = mx.nd.contrib.ROIAlign(
        mx.nd.array(PLANES), mx.nd.array(ROIS), pooled_size=(2, 2), spatial_scale=1.0, aligned=True, sample_ratio=2
    )
    np.testing.assert_allclose(
        y.asnumpy()[:, 0], [[[1.5625, 3.0], [7.3125, 8.75]], [[3.375, 4.125], [8.375, 9.125]]], rtol=1e-6
    )


def test_roi_align_position_sensitive_reads_a_channel_group_per_bin():
    data = mx.nd.array(np.arange(32, dtype=np.float32).reshape(1, 8, 2, 2))
    y = mx.nd.contrib.ROIAlign(
        data, mx.nd.array([[0, 0, 0, 1, 1]]), pooled_size=(2, 2), spatial_scale=1.0, position_sensitive=True
    )
    np.testing.assert_allclose(y.asnumpy(), [[[[0.75, 5.25], [9.75, 14.25]], [[16.75, 21.25], [25.75, 30.25]]]])


def test_roi_align_numerical_gradient():
    rng = np.random.default_rng(0)
    rois = np.array([[0, 0.3, 0.2, 2.6, 3.1], [1, 1.1, 0.4, 3.3, 2.2]])
    params = {"pooled_size": (2, 3), "spatial_scale": 1.0, "sample_ratio": 2}
    check_gradient("_contrib_ROIAlign", [rng.normal(size=(2, 2, 4, 5)), rois], params, wrt=[0])


def test_roi_align_region_of_negative_batch_index_gives_zero():
    # (MXNet 1.9.1 leaves that output uninitialised)
    rois = np.array([[-1, 0, 0, 3, 3], [0, 0, 0, 3, 3]], np.float32)
    y = mx.nd.contrib.ROIAlign(mx.nd.array(PLANES), mx.nd.array(rois), pooled_size=(2, 2), spatial_scale=1.0)
    assert not y.asnumpy()[0].any() and y.asnumpy()[1].any()


def test_roi_align_refuses_bad_regions_and_channels():
    data = mx.nd.array(PLANES)
    with pytest.raises(LazyNDError, match="ROIAlign.*batch index 3"):
        mx.nd.contrib.ROIAlign(data, mx.nd.array([[3, 0, 0, 1, 1]]), pooled_size=(2, 2), spatial_scale=1.0).asnumpy()
    with pytest.raises(LazyNDError, match="ROIAlign.*aligned.*positive width"):
        rois = mx.nd.array([[0, 1, 1, 1, 2]])
        mx.nd.contrib.ROIAlign(data, rois, pooled_size=(2, 2), spatial_scale=1.0, aligned=True).asnumpy()
    with pytest.raises(LazyNDError, match="ROIAlign.*channels.*divide"):
        mx.nd.contrib.ROIAlign(data, mx.nd.array(ROIS), pooled_size=(2, 2), spatial_scale=1.0, position_sensitive=True)
    with pytest.raises(LazyNDError, match="ROIAlign.*pooled_size"):
        mx.nd.contrib.ROIAlign(data, mx.nd.array(ROIS), spatial_scale=1.0)


def test_roi_align_symbol_gradient_matches_imperative():
    net = sym.contrib.ROIAlign(sym.Variable("data"), sym.Variable("rois"), pooled_size=(2, 2), spatial_scale=1.0)
    ex = net.simple_bind(mx.cpu(), data=(1, 2, 4, 4), rois=(2, 5))
    ex.arg_dict["data"][:] = PLANES
    ex.arg_dict["rois"][:] = ROIS
    ex.forward(is_train=True)
    ex.backward(mx.nd.ones((2, 2, 2, 2)))
    assert abs(float(ex.grad_dict["data"].asnumpy()[0, 0].sum()) - 8.0) < 1e-5  # 2 regions x 4 bins
    assert not ex.grad_dict["rois"].asnumpy().any()


GRID = np.arange(12, dtype=np.float32).reshape(1, 1, 3, 4)


def test_bilinear_resize_matches_mxnet_with_and_without_aligned_corners(ctx):
    x = mx.nd.array(GRID, ctx=ctx)
    np.testing.assert_allclose(
        mx.nd.contrib.BilinearResize2D(x, height=5, width=3).asnumpy()[0, 0],
        [[0, 1.5, 3], [2, 3.5, 5], [4, 5.5, 7], [6, 7.5, 9], [8, 9.5, 11]],
    )
    np.testing.assert_allclose(
        mx.nd.contrib.BilinearResize2D(x, height=5, width=3, align_corners=False).asnumpy()[0, 0, :2],
        [[0.16666669, 1.5, 2.8333335], [1.7666668, 3.1000004, 4.4333334]],
        rtol=1e-5,
    )


def test_bilinear_resize_scales_and_single_rows():
    x = mx.nd.array(GRID)
    assert mx.nd.contrib.BilinearResize2D(x, scale_height=1.5, scale_width=0.6).shape == (1, 1, 4, 2)
    # a single output column reads the first input column, in both modes (MXNet 1.9.1)
    y = mx.nd.contrib.BilinearResize2D(mx.nd.array(GRID[:, :, :1, :3]), height=4, width=1, align_corners=False)
    assert not y.asnumpy().any()


def test_bilinear_resize_gradient_matches_mxnet(ctx):
    x = mx.nd.array(np.arange(6, dtype=np.float32).reshape(1, 1, 2, 3), ctx=ctx)
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.contrib.BilinearResize2D(x, height=3, width=1, align_corners=False)
    y.backward(mx.nd.array(np.arange(1, 4).reshape(1, 1, 3, 1), ctx=ctx))
    np.testing.assert_allclose(y.asnumpy()[0, 0, :, 0], [0, 1.5, 3])
    np.testing.assert_allclose(x.grad.asnumpy()[0, 0], [[2, 0, 0], [4, 0, 0]])
    check_gradient(
        "_contrib_BilinearResize2D", [np.random.default_rng(1).normal(size=(1, 2, 3, 4))], {"height": 5, "width": 2}
    )


def test_bilinear_resize_like_takes_the_second_input_size():
    net = sym.contrib.BilinearResize2D(sym.Variable("data"), sym.Variable("like"), mode="like")
    assert net.infer_shape(data=(1, 2, 3, 4), like=(1, 1, 6, 2))[1] == [(1, 2, 6, 2)]
    y = mx.nd.contrib.BilinearResize2D(mx.nd.array(GRID), mx.nd.zeros((1, 1, 5, 3)), mode="like")
    np.testing.assert_allclose(y.asnumpy()[0, 0, :, 0], [0, 2, 4, 6, 8])


@pytest.mark.parametrize(
    "mode,expected",
    [
        ("to_even_down", [[0, 1, 2, 3], [8, 9, 10, 11]]),
        (
            "to_even_up",
            [[0, 1, 2, 3], [8 / 3, 11 / 3, 14 / 3, 17 / 3], [16 / 3, 19 / 3, 22 / 3, 25 / 3], [8, 9, 10, 11]],
        ),
        ("to_odd_down", [[0, 1.5, 3], [4, 5.5, 7], [8, 9.5, 11]]),
        ("to_odd_up", [[0, 0.75, 1.5, 2.25, 3], [4, 4.75, 5.5, 6.25, 7], [8, 8.75, 9.5, 10.25, 11]]),
    ],
)
def test_bilinear_resize_parity_modes_match_mxnet(mode, expected, ctx):
    # MXNet 1.9.1: each axis of the 3 x 4 input moves by one to an even (odd) size, up or down
    y = mx.nd.contrib.BilinearResize2D(mx.nd.array(GRID, ctx=ctx), mode=mode)
    np.testing.assert_allclose(y.asnumpy()[0, 0], expected, rtol=1e-4)


def test_bilinear_resize_odd_scale_keeps_odd_sizes_odd_and_its_gradient_matches_mxnet():
    # MXNet 1.9.1: an odd size n scales to (n - 1) * scale + 1, an even one to n * scale
    y = mx.nd.contrib.BilinearResize2D(mx.nd.array(GRID), mode="odd_scale", scale_height=2, scale_width=2)
    assert y.shape == (1, 1, 5, 8)
    np.testing.assert_allclose(y.asnumpy()[0, 0, :, 0], [0, 2, 4, 6, 8])
    np.testing.assert_allclose(y.asnumpy()[0, 0, 0], np.arange(8) * 3 / 7, rtol=1e-6)
    x = mx.nd.array(GRID)
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.contrib.BilinearResize2D(x, mode="to_even_up", align_corners=False)
    y.backward(mx.nd.ones(y.shape))
    np.testing.assert_allclose(x.grad.asnumpy()[0, 0], [[1.375] * 4, [1.25] * 4, [1.375] * 4])


def test_bilinear_resize_refuses_odd_scale_without_scales_and_empty_outputs():
    with pytest.raises(LazyNDError, match="BilinearResize2D: mode 'odd_scale' needs scale_height and scale_width"):
        mx.nd.contrib.BilinearResize2D(mx.nd.array(GRID), mode="odd_scale", scale_height=2)
    # (MXNet 1.9.1 returns an empty array)
    with pytest.raises(LazyNDError, match="BilinearResize2D.*height 0"):
        mx.nd.contrib.BilinearResize2D(mx.nd.array(GRID), scale_height=0.2, scale_width=1.0)


def test_adaptive_avg_pooling_matches_mxnet(ctx):
    x = mx.nd.array(GRID, ctx=ctx)
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.contrib.AdaptiveAvgPooling2D(x, output_size=(2, 3))
    y.backward(mx.nd.ones_like(y))
    np.testing.assert_allclose(y.asnumpy()[0, 0], [[2.5, 3.5, 4.5], [6.5, 7.5, 8.5]])
    # overlapping bins: the middle row and columns receive from two bins
    np.testing.assert_allclose(
        x.grad.asnumpy()[0, 0], [[0.25, 0.5, 0.5, 0.25], [0.5, 1, 1, 0.5], [0.25, 0.5, 0.5, 0.25]]
    )


def test_adaptive_avg_pooling_default_and_single_size():
    x = mx.nd.array(GRID)
    np.testing.assert_allclose(mx.nd.contrib.AdaptiveAvgPooling2D(x).asnumpy(), [[[[5.5]]]])
    assert mx.nd.contrib.AdaptiveAvgPooling2D(x, output_size=2).shape == (1, 1, 2, 2)
    check_gradient(
        "_contrib_AdaptiveAvgPooling2D", [np.random.default_rng(2).normal(size=(2, 1, 5, 3))], {"output_size": (2, 2)}
    )


def test_adaptive_avg_pooling_refuses_bad_sizes():
    with pytest.raises(LazyNDError, match="AdaptiveAvgPooling2D.*output_size"):
        mx.nd.contrib.AdaptiveAvgPooling2D(mx.nd.array(GRID), output_size=(1, 2, 3))
    with pytest.raises(LazyNDError, match="AdaptiveAvgPooling2D.*4-D"):
        mx.nd.contrib.AdaptiveAvgPooling2D(mx.nd.zeros((2, 3)))


@pytest.mark.parametrize(
    ("params", "shape"),
    [
        ({"height": 5, "width": 2, "scale_width": 1.5}, (1, 2, 5, 2)),  # scale_width alone is not read
        ({"scale_width": 1.5}, (1, 2, 1, 1)),
        ({"height": 5, "width": 2, "scale_height": 2.0, "scale_width": 1.5}, (1, 2, 6, 6)),
    ],
)
def test_bilinear_resize_scales_only_with_scale_height_as_mxnet(params, shape):
    assert mx.nd.contrib.BilinearResize2D(mx.nd.ones((1, 2, 3, 4)), **params).shape == shape


def test_bilinear_resize_refuses_scale_height_without_scale_width():
    with pytest.raises(mx.LazyNDError, match="scale_height 2.0 needs scale_width too"):
        mx.nd.contrib.BilinearResize2D(mx.nd.ones((1, 2, 3, 4)), height=5, width=2, scale_height=2.0)


def test_resize_weights_are_made_once_per_size_and_kept(ctx):
    # a training step asks for the same weights at every call: made once (on the host with
    # np.add.at, then copied to the device), read-only where they are NumPy arrays
    from lazynd.backend import get_backend

    x = mx.nd.array(np.random.default_rng(0).standard_normal((1, 2, 5, 7)), ctx=ctx)
    first = mx.nd.contrib.BilinearResize2D(x, height=9, width=4).asnumpy()
    constants = get_backend(ctx)._constants
    # MXNet's default align_corners; the host's weight matrices, a GPU's gathered taps' weights
    made = ("_contrib_BilinearResize2D", 5, 9, True)
    if ctx.device_type != "cpu":
        made = ("_contrib_BilinearResize2D", "weights", "bilinear", 5, 9, True)
    key = (made, np.dtype(np.float32))
    kept = constants[key]
    again = mx.nd.contrib.BilinearResize2D(x, height=9, width=4).asnumpy()
    assert constants[key] is kept
    np.testing.assert_array_equal(again, first)
    if ctx.device_type == "cpu":
        assert not kept.flags.writeable
    corners = mx.nd.contrib.BilinearResize2D(x, height=9, width=4, align_corners=False).asnumpy()
    assert not np.allclose(corners, first)  # another key, other weights
