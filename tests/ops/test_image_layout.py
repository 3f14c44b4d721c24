"""mx.nd.image.to_tensor and the image flips: MXNet 1.x's channels-last layout operators."""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx
import lazynd_sym as sym
from lazynd.errors import LazyNDError, ShapeError
from lazynd.test_utils import check_numeric_gradient, check_symbolic_backward

IMAGE = np.arange(18).reshape(2, 3, 3)  # (H, W, C)


@pytest.mark.parametrize("dtype", ["uint8", "float32", "float64"])
def test_to_tensor_moves_channels_first_and_scales_into_float32(ctx, dtype):
    out = mx.nd.image.to_tensor(mx.nd.array(IMAGE, dtype=dtype, ctx=ctx))
    assert out.dtype == np.float32 and out.shape == (3, 2, 3)
    np.testing.assert_allclose(out.asnumpy(), IMAGE.transpose(2, 0, 1) / 255.0, rtol=1e-6)


def test_to_tensor_takes_a_batch_and_does_not_clip(ctx):
    batch = mx.nd.array([[[[300.0, -5.0]]]], ctx=ctx)  # (N, H, W, C) = (1, 1, 1, 2)
    out = mx.nd.image.to_tensor(batch)
    assert out.shape == (1, 2, 1, 1)
    np.testing.assert_allclose(out.asnumpy().ravel(), [300 / 255, -5 / 255], rtol=1e-6)


def test_to_tensor_shape_rule_and_gradient():
    net = sym.image.to_tensor(sym.Variable("data"))
    assert net.infer_shape(data=(5, 6, 3))[1] == [(3, 5, 6)]
    x = np.random.default_rng(0).uniform(0, 255, (2, 3, 4))
    head = np.random.default_rng(1).uniform(-1, 1, (4, 2, 3))
    check_symbolic_backward(net, [x], [head], [head.transpose(1, 2, 0) / 255.0], rtol=1e-5)


@pytest.mark.parametrize(("name", "axis"), [("flip_left_right", 1), ("flip_top_bottom", 0)])
def test_flips_reverse_width_or_height_in_any_dtype(ctx, name, axis):
    x = mx.nd.array(IMAGE, dtype="uint8", ctx=ctx)
    out = getattr(mx.nd.image, name)(x)
    assert out.dtype == np.uint8
    np.testing.assert_array_equal(out.asnumpy(), np.flip(IMAGE, axis=axis))
    batch = getattr(mx.nd.image, name)(x.reshape((1, 2, 3, 3)))
    np.testing.assert_array_equal(batch.asnumpy()[0], np.flip(IMAGE, axis=axis))


@pytest.mark.parametrize("name", ["flip_left_right", "flip_top_bottom"])
def test_flip_gradient_is_the_flipped_head(name):
    check_numeric_gradient(
        getattr(sym.image, name)(sym.Variable("data")), [np.random.default_rng(2).normal(size=(3, 4, 2))]
    )


@pytest.mark.parametrize(("name", "axis"), [("random_flip_left_right", 1), ("random_flip_top_bottom", 0)])
def test_random_flips_give_the_image_or_its_flip_both_over_draws(ctx, name, axis):
    mx.random.seed(3)
    x = mx.nd.array(IMAGE, ctx=ctx)
    seen = {getattr(mx.nd.image, name)(x).asnumpy().tobytes() for _ in range(40)}
    expected = {IMAGE.astype(np.float32).tobytes(), np.flip(IMAGE, axis=axis).astype(np.float32).tobytes()}
    assert seen == expected


def test_random_flip_refuses_a_backward_pass_by_name():
    x = mx.nd.ones((2, 2, 1))
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.image.random_flip_left_right(x)
    with pytest.raises(LazyNDError, match="_image_random_flip_left_right"):
        y.backward()


@pytest.mark.parametrize("name", ["to_tensor", "flip_left_right", "random_flip_top_bottom"])
def test_bad_shapes_name_the_operator_and_the_expected_layout(name):
    with pytest.raises(ShapeError, match=rf"_image_{name}: shape of 'data' is \(3, 3\), expected \(H, W, C\)"):
        getattr(mx.nd.image, name)(mx.nd.ones((3, 3)))


def test_crop_keeps_the_window_at_x_y_in_any_dtype(ctx):
    x = mx.nd.array(np.arange(24).reshape(2, 4, 3), dtype="uint8", ctx=ctx)
    out = mx.nd.image.crop(x, 1, 0, 2, 1)  # MXNet 1.9.1: [[[3, 4, 5], [6, 7, 8]]], uint8
    assert out.dtype == np.uint8
    assert out.asnumpy().tolist() == [[[3, 4, 5], [6, 7, 8]]]
    assert mx.nd.image.crop(x.reshape((1, 2, 4, 3)), x=1, y=1, width=3, height=1).shape == (1, 1, 3, 3)


def test_crop_gradient_is_the_head_inside_the_window():
    net = sym.image.crop(sym.Variable("data"), x=1, y=0, width=2, height=1)
    assert net.infer_shape(data=(2, 4, 3))[1] == [(1, 2, 3)]
    head = np.random.default_rng(3).normal(size=(1, 2, 3))
    expected = np.zeros((2, 4, 3))
    expected[0:1, 1:3] = head
    check_symbolic_backward(net, [np.ones((2, 4, 3))], [head], [expected])
    check_numeric_gradient(net, [np.random.default_rng(4).normal(size=(2, 4, 3))])


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ((3, 0, 2, 1), r"_image_crop: window 2 x 1 at \(3, 0\) leaves the image of width 4 and height 2"),
        ((0, 0, 0, 1), "_image_crop: width and height must be positive, got 0 x 1"),
        ((-1, 0, 1, 1), r"_image_crop: x and y must be >= 0, got \(-1, 0\)"),
    ],
)
def test_a_crop_window_outside_the_image_is_refused(params, message):
    with pytest.raises(LazyNDError, match=message):
        mx.nd.image.crop(mx.nd.ones((2, 4, 3)), *params)
