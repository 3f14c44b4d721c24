"""mx.nd.image.resize: MXNet 1.x's resize of (H, W, C) and (N, H, W, C) images."""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx
import lazynd_sym as sym
from lazynd.errors import LazyNDError, ShapeError

IMAGE = np.arange(4 * 6 * 3).reshape(4, 6, 3)  # (H, W, C)


def _block_means(x: np.ndarray) -> np.ndarray:
    """Halving both sides bilinearly (half-pixel centres) averages each 2 x 2 block."""
    height, width, channels = x.shape
    return x.reshape(height // 2, 2, width // 2, 2, channels).mean(axis=(1, 3))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_resize_to_width_height_is_bilinear_by_default(ctx, dtype):
    out = mx.nd.image.resize(mx.nd.array(IMAGE, dtype=dtype, ctx=ctx), size=(3, 2))
    assert out.dtype == np.dtype(dtype) and out.shape == (2, 3, 3)
    np.testing.assert_allclose(out.asnumpy(), _block_means(IMAGE), rtol=1e-6)


def test_resize_keeps_uint8_rounding_halves_up(ctx):
    out = mx.nd.image.resize(mx.nd.array(IMAGE, dtype="uint8", ctx=ctx), size=(3, 2))
    assert out.dtype == np.uint8
    np.testing.assert_array_equal(out.asnumpy(), np.floor(_block_means(IMAGE) + 0.5))  # MXNet: 10.5 -> 11


def test_resize_nearest_picks_every_other_pixel(ctx):
    out = mx.nd.image.resize(mx.nd.array(IMAGE, dtype="uint8", ctx=ctx), size=(3, 2), interp=0)
    np.testing.assert_array_equal(out.asnumpy(), IMAGE[::2, ::2])


def test_resize_a_batch_resizes_each_image(ctx):
    batch = np.stack([IMAGE, IMAGE[::-1]]).astype(np.float32)
    out = mx.nd.image.resize(mx.nd.array(batch, ctx=ctx), size=(3, 2))
    assert out.shape == (2, 2, 3, 3)
    np.testing.assert_allclose(out.asnumpy()[1], _block_means(IMAGE[::-1]), rtol=1e-6)


@pytest.mark.parametrize(
    ("size", "keep_ratio", "shape"),
    [
        (3, False, (3, 3, 3)),
        ((5,), False, (5, 5, 3)),
        (3, True, (3, 4, 3)),
        (8, True, (8, 12, 3)),
        ((3, 2), True, (2, 3, 3)),
    ],
)
def test_resize_output_shape_follows_size_and_keep_ratio(size, keep_ratio, shape):
    # (MXNet 1.9.1: keep_ratio scales the long side as long * size // short; ignored for (w, h))
    assert mx.nd.image.resize(mx.nd.zeros((4, 6, 3)), size=size, keep_ratio=keep_ratio).shape == shape


def test_resize_keep_ratio_of_a_tall_batch_in_a_symbol():
    net = sym.image.resize(sym.Variable("data"), size=3, keep_ratio=True)
    assert net.infer_shape(data=(2, 6, 4, 1))[1] == [(2, 4, 3, 1)]


def test_resize_refuses_a_backward_pass_by_name():
    x = mx.nd.ones((4, 4, 1))
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.image.resize(x, size=2)
    with pytest.raises(LazyNDError, match="_image_resize"):
        y.backward()


@pytest.mark.parametrize(
    ("data", "params", "message"),
    [
        ((4, 6), {"size": 3}, r"_image_resize: shape of 'data' is \(4, 6\), expected \(H, W, C\) or \(N, H, W, C\)"),
        ((4, 6, 3), {"size": (1, 2, 3)}, r"_image_resize: size must hold 1 or 2 values \(width, height\), got"),
        ((4, 6, 3), {}, r"_image_resize: size must hold 1 or 2 values"),
        ((4, 6, 3), {"size": 0}, r"_image_resize: size must be positive, got \(0,\)"),
        ((4, 6, 3), {"size": 2, "interp": 7}, r"_image_resize: interp must be 0-4, 9 \(by scale\) or 10"),
    ],
)
def test_bad_shapes_and_sizes_are_refused_by_name(data, params, message):
    with pytest.raises(LazyNDError, match=message):
        mx.nd.image.resize(mx.nd.zeros(data), **params)


def test_dtypes_opencv_cannot_resize_are_refused_by_name():
    with pytest.raises(LazyNDError, match="_image_resize: 'data' has dtype int32, expected one of uint8, float32"):
        mx.nd.image.resize(mx.nd.zeros((4, 6, 3), dtype="int32"), size=2)


def test_shape_errors_are_shape_errors():
    with pytest.raises(ShapeError):
        mx.nd.image.resize(mx.nd.zeros((4,)), size=2)
