"""mx.image.imrotate and mx.image.random_rotate against MXNet 1.9.1 (fingerprints of its
outputs pasted in: [sum, sum of out * cos(arange(out.size))])."""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx
from lazynd.errors import LazyNDError

IMAGES = np.sin(np.arange(2 * 3 * 5 * 7) * 0.37).reshape(2, 3, 5, 7).astype("float32")
# MXNet 1.9.1: imrotate(IMAGES, nd.array([30, -75]), ...) and imrotate(IMAGES[1], 123, ...)
MXNET = {
    (False, False): ([0.8888, -1.0801], [-1.3764, 0.1279]),
    (True, False): ([-2.2229, 5.9101], [-2.1908, -0.4112]),
    (False, True): ([4.7904, -3.7619], [1.5796, 0.0751]),
}


def fingerprint(a: np.ndarray) -> list[float]:
    a = a.astype("float64")
    return [a.sum(), (a * np.cos(np.arange(a.size)).reshape(a.shape)).sum()]


@pytest.mark.parametrize("zoom_in,zoom_out", list(MXNET))
def test_imrotate_matches_mxnet_for_batches_and_single_images(zoom_in, zoom_out, ctx):
    batch = mx.image.imrotate(mx.nd.array(IMAGES, ctx=ctx), mx.nd.array([30.0, -75.0]), zoom_in, zoom_out)
    single = mx.image.imrotate(mx.nd.array(IMAGES[1], ctx=ctx), 123.0, zoom_in=zoom_in, zoom_out=zoom_out)
    assert batch.shape == IMAGES.shape and single.shape == IMAGES.shape[1:] and single.context == ctx
    expected_batch, expected_single = MXNET[(zoom_in, zoom_out)]
    np.testing.assert_allclose(fingerprint(batch.asnumpy()), expected_batch, atol=1e-3)
    np.testing.assert_allclose(fingerprint(single.asnumpy()), expected_single, atol=1e-3)


def test_quarter_turn_turns_a_column_into_a_row():
    img = mx.nd.array([[[0, 1, 0], [0, 1, 0], [0, 1, 0]]])
    np.testing.assert_allclose(mx.image.imrotate(img, 90).asnumpy(), [[[0, 0, 0], [1, 1, 1], [0, 0, 0]]], atol=1e-6)
    np.testing.assert_allclose(mx.image.imrotate(img, 0).asnumpy(), img.asnumpy(), atol=1e-6)


def test_zoom_in_shows_no_padding():
    rotated = mx.image.imrotate(mx.nd.ones((1, 1, 8, 8)), 45, zoom_in=True).asnumpy()
    np.testing.assert_allclose(rotated, 1, atol=1e-5)
    padded = mx.image.imrotate(mx.nd.ones((1, 1, 8, 8)), 45).asnumpy()
    assert padded[0, 0, 0, 0] < 0.5


def test_random_rotate_draws_from_numpys_generator():
    np.random.seed(7)
    got = mx.image.random_rotate(mx.nd.array(IMAGES), (-40, 40)).asnumpy()
    np.random.seed(7)
    angles = np.random.uniform(-40, 40, size=2)
    np.testing.assert_allclose(got, mx.image.imrotate(mx.nd.array(IMAGES), mx.nd.array(angles)).asnumpy(), atol=1e-6)
    assert mx.image.random_rotate(mx.nd.array(IMAGES[0]), (10, 10)).shape == (3, 5, 7)


def test_bad_arguments_are_clear_errors():
    img = mx.nd.array(IMAGES)
    with pytest.raises(LazyNDError, match="imrotate: zoom_in and zoom_out cannot both be True"):
        mx.image.imrotate(img, 3, zoom_in=True, zoom_out=True)
    with pytest.raises(LazyNDError, match="imrotate: a single image .* one number"):
        mx.image.imrotate(img[0], mx.nd.array([3]))
    with pytest.raises(LazyNDError, match="imrotate: 'src' must be float32, got uint8"):
        mx.image.imrotate(img.astype("uint8"), 3)
    with pytest.raises(LazyNDError, match="one angle per image, shape \\(2,\\), got shape \\(3,\\)"):
        mx.image.imrotate(img, mx.nd.array([1, 2, 3]))
    with pytest.raises(LazyNDError, match="'src' must be CHW or NCHW, got shape \\(5, 7\\)"):
        mx.image.imrotate(img[0, 0], mx.nd.array([1]))


def test_wrong_kinds_of_argument_are_type_errors_as_in_mxnet():
    # MXNet raises TypeError for these two (ValueError for the others above), and scripts catch it
    img = mx.nd.array(IMAGES)
    with pytest.raises(TypeError, match="imrotate: a single image .* one number"):
        mx.image.imrotate(img[0], mx.nd.array([3]))
    with pytest.raises(TypeError, match="imrotate: 'src' must be float32, got uint8"):
        mx.image.imrotate(img.astype("uint8"), 3)
    with pytest.raises(ValueError, match="zoom_in and zoom_out"):
        mx.image.imrotate(img, 3, zoom_in=True, zoom_out=True)
