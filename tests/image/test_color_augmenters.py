"""MXNet 1.x's single-effect colour augmenters, ``SequentialAug``, ``ForceResizeAug`` and
``CreateAugmenter(hue=, rand_gray=)``; expected values are MXNet 1.9.1's for the same draws.
"""

from __future__ import annotations

import random

import numpy as np
import pytest

import lazynd as mx


def _image() -> mx.nd.NDArray:
    return mx.nd.array(np.arange(12).reshape(2, 2, 3))


# first row of the output for random.seed(1), factor 0.5 (MXNet 1.9.1)
JITTERS = [
    ("BrightnessJitterAug", [[0.0, 0.634, 1.269], [1.903, 2.537, 3.172]]),
    ("ContrastJitterAug", [[1.943, 2.578, 3.212], [3.846, 4.481, 5.115]]),
    ("SaturationJitterAug", [[0.298, 0.932, 1.567], [3.298, 3.932, 4.567]]),
]


@pytest.mark.parametrize(
    ("name", "keyword"),
    [("BrightnessJitterAug", "brightness"), ("ContrastJitterAug", "contrast"), ("SaturationJitterAug", "saturation")],
)
def test_single_jitters_take_mxnets_keyword(name: str, keyword: str) -> None:
    # users write BrightnessJitterAug(brightness=0.3), as MXNet names the argument
    random.seed(1)
    by_keyword = getattr(mx.image, name)(**{keyword: 0.5})(_image()).asnumpy()
    random.seed(1)
    np.testing.assert_array_equal(by_keyword, getattr(mx.image, name)(0.5)(_image()).asnumpy())


@pytest.mark.parametrize(("name", "first_row"), JITTERS)
def test_single_jitters_match_mxnet(name: str, first_row: list) -> None:
    random.seed(1)
    out = getattr(mx.image, name)(0.5)(_image()).asnumpy()
    assert out.shape == (2, 2, 3) and out.dtype == np.float32
    np.testing.assert_allclose(out[0], first_row, atol=1e-3)


def test_hue_jitter_rotates_hue_as_mxnet() -> None:
    random.seed(0)
    out = mx.image.HueJitterAug(0.3)(_image()).asnumpy()
    expected = [[[-0.235, 1.337, 0.879], [2.769, 4.336, 3.874]], [[5.773, 7.335, 6.868], [8.776, 10.335, 9.862]]]
    np.testing.assert_allclose(out, expected, atol=1e-3)


def test_random_gray_with_p_one_and_zero() -> None:
    out = mx.image.RandomGrayAug(1.0)(_image()).asnumpy()
    np.testing.assert_allclose(out[0], [[0.86, 0.86, 0.86], [3.86, 3.86, 3.86]], atol=1e-4)
    src = _image()
    assert mx.image.RandomGrayAug(0.0)(src) is src


def test_force_resize_and_sequential() -> None:
    aug = mx.image.SequentialAug([mx.image.ForceResizeAug((3, 1)), mx.image.CastAug()])
    out = aug(mx.nd.ones((2, 2, 3), dtype="uint8"))
    assert out.shape == (1, 3, 3) and out.dtype == np.float32  # MXNet 1.9.1: (1, 3, 3) float32


def test_create_augmenter_takes_hue_and_rand_gray() -> None:
    augs = mx.image.CreateAugmenter(
        (3, 8, 8), resize=10, rand_crop=True, rand_mirror=True, brightness=0.1, contrast=0.1, saturation=0.1,
        hue=0.1, pca_noise=0.1, rand_gray=0.1, mean=True, std=True,
    )  # fmt: skip
    # MXNet 1.9.1's list for the same arguments
    assert [type(a).__name__ for a in augs] == [
        "ResizeAug", "RandomCropAug", "HorizontalFlipAug", "CastAug", "ColorJitterAug", "HueJitterAug",
        "LightingAug", "RandomGrayAug", "ColorNormalizeAug",
    ]  # fmt: skip


def test_gray_needs_three_channels() -> None:
    with pytest.raises(mx.LazyNDError, match="RandomGrayAug: needs 3 channels"):
        mx.image.RandomGrayAug(1.0)(mx.nd.ones((2, 2, 1)))


@pytest.mark.parametrize(
    ("make", "expected"),
    [
        # MXNet 1.9.1's outputs after random.seed(0): its grey weights broadcast over one channel
        (
            lambda: mx.image.ContrastJitterAug(0.5),
            [4.833672523498535, 18.277891159057617, 31.72211074829, 45.16632843017],
        ),
        (lambda: mx.image.SaturationJitterAug(0.5), [10.0, 20.0, 30.0, 40.0]),
        (
            lambda: mx.image.ColorJitterAug(0.5, 0.5, 0.5),
            [5.518931388854, 10.847716331481, 16.1765022277, 21.50528717041],
        ),
    ],
)
def test_contrast_and_saturation_jitter_grey_images_as_mxnet(make, expected) -> None:
    grey = mx.nd.array(np.array([[10, 20], [30, 40]], np.float32).reshape(2, 2, 1))
    random.seed(0)
    out = make()(grey)
    assert out.shape == (2, 2, 1)
    np.testing.assert_allclose(out.asnumpy().ravel(), expected, rtol=1e-6)


def test_contrast_jitter_refuses_four_channels() -> None:
    with pytest.raises(mx.LazyNDError, match=r"ContrastJitterAug: needs 1 or 3 channels.*\(2, 2, 4\)"):
        mx.image.ContrastJitterAug(0.5)(mx.nd.zeros((2, 2, 4)))
