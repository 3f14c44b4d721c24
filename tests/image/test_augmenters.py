"""Augmenters, including how they move detection boxes."""

from __future__ import annotations

import random

import numpy as np
import pytest

import lazynd as mx
from lazynd import image


@pytest.fixture
def src():
    return mx.nd.array(np.arange(40 * 60 * 3).reshape(40, 60, 3) % 251, dtype="uint8")


def test_center_crop_aug_moves_boxes_with_pixels(src):
    # a box covering x 15..45, y 10..30 of the 60x40 image; crop the central 30x20
    label = np.array([[1, 15 / 60, 10 / 40, 45 / 60, 30 / 40], [-1, 0, 0, 0, 0]], np.float32)
    out, new = image.CenterCropAug((30, 20)).augment(src, label)
    assert out.shape == (20, 30, 3)
    np.testing.assert_allclose(new[0], [1, 0, 0, 1, 1], atol=1e-6)
    np.testing.assert_array_equal(new[1], label[1])


def test_crop_drops_boxes_outside_the_crop(src):
    label = np.array([[2, 0.0, 0.0, 0.1, 0.1]], np.float32)
    _, new = image.CenterCropAug((30, 20)).augment(src, label)
    assert new[0, 0] == -1


def test_random_crop_box_matches_pixels(src):
    label = np.array([[0, 0.5, 0.5, 0.6, 0.6]], np.float32)
    for _ in range(5):
        out, new = image.RandomCropAug((50, 30)).augment(src, label)
        if new[0, 0] >= 0:
            assert 0 <= new[0, 1] < new[0, 3] <= 1 and 0 <= new[0, 2] < new[0, 4] <= 1


def test_horizontal_flip_mirrors_pixels_and_boxes(src):
    label = np.array([[3, 0.1, 0.2, 0.4, 0.5]], np.float32)
    out, new = image.HorizontalFlipAug(1.0).augment(src, label)
    np.testing.assert_array_equal(out.asnumpy(), src.asnumpy()[:, ::-1])
    np.testing.assert_allclose(new[0], [3, 0.6, 0.2, 0.9, 0.5], atol=1e-6)


def test_flip_with_zero_probability_is_identity(src):
    assert image.HorizontalFlipAug(0.0)(src) is src


def test_resize_aug_resizes_short_side(src):
    assert image.ResizeAug(20)(src).shape == (20, 30, 3)


def test_cast_aug_gives_float32(src):
    out = image.CastAug()(src)
    assert out.dtype == np.float32
    np.testing.assert_array_equal(out.asnumpy(), src.asnumpy().astype(np.float32))


def test_cast_aug_to_the_same_dtype_gives_a_new_array_so_later_augmenters_leave_src_alone(src):
    # MXNet's CastAug is astype, which copies: the brightness jitter after it, which writes into a
    # float32 image, must not write into the caller's image
    base = image.CastAug()(src)
    before = base.asnumpy().copy()
    cast = image.CastAug()(base)
    assert cast is not base
    image.BrightnessJitterAug(0.5)(cast).wait_to_read()
    np.testing.assert_array_equal(base.asnumpy(), before)


def test_color_jitter_brightness_scales_pixels(src):
    out = image.ColorJitterAug(0.5, 0, 0)(image.CastAug()(src)).asnumpy()
    ratio = out[src.asnumpy() > 0] / src.asnumpy()[src.asnumpy() > 0]
    assert np.allclose(ratio, ratio[0], rtol=1e-4) and 0.5 <= ratio[0] <= 1.5


def test_lighting_adds_one_offset_per_channel(src):
    base = image.CastAug()(src)
    diff = image.LightingAug(0.1, [55.46, 4.794, 1.148], np.eye(3))(base).asnumpy() - base.asnumpy()
    np.testing.assert_allclose(diff, np.broadcast_to(diff[0, 0], diff.shape), atol=1e-3)


def test_color_normalize_aug(src):
    out = image.ColorNormalizeAug(np.array([1.0, 2, 3]), np.array([2.0, 2, 2]))(src).asnumpy()
    np.testing.assert_allclose(out, (src.asnumpy() - [1, 2, 3]) / 2.0, rtol=1e-6)


def test_random_order_applies_all(src):
    out = image.RandomOrderAug([image.CastAug(), image.HorizontalFlipAug(1.0)])(src)
    np.testing.assert_array_equal(out.asnumpy(), src.asnumpy()[:, ::-1].astype(np.float32))


def test_create_augmenter_builds_standard_list():
    augs = image.CreateAugmenter(
        (3, 24, 24), resize=32, rand_crop=True, rand_mirror=True, mean=True, std=True, brightness=0.1, pca_noise=0.1
    )
    names = [type(a).__name__ for a in augs]
    assert names == [
        "ResizeAug",
        "RandomCropAug",
        "HorizontalFlipAug",
        "CastAug",
        "ColorJitterAug",
        "LightingAug",
        "ColorNormalizeAug",
    ]


def test_create_augmenter_output_has_data_shape(src):
    out = src
    for aug in image.CreateAugmenter((3, 24, 24), resize=30, rand_resize=True, rand_mirror=True, mean=True):
        out = aug(out)
    assert out.shape == (24, 24, 3) and out.dtype == np.float32


def test_augmenters_dump_as_mxnet_does():
    # the strings MXNet 1.9.1 gives for the same augmenters
    assert image.ForceResizeAug((20, 10)).dumps() == '["forceresizeaug", {"size": [20, 10], "interp": 2}]'
    assert image.CastAug().dumps() == '["castaug", {"type": "float32"}]'
    assert mx.image.BrightnessJitterAug(0.3).dumps() == '["brightnessjitteraug", {"brightness": 0.3}]'
    assert image.RandomSizedCropAug((20, 10), 0.5, (0.75, 1.33)).dumps() == (
        '["randomsizedcropaug", {"size": [20, 10], "area": 0.5, "ratio": [0.75, 1.33], "interp": 2}]'
    )
    assert image.ColorNormalizeAug(mx.nd.array([1, 2, 3]), None).dumps() == (
        '["colornormalizeaug", {"mean": [1.0, 2.0, 3.0], "std": null}]'
    )
    assert image.SequentialAug([image.CastAug(), image.ResizeAug(3)]).dumps() == [
        "sequentialaug",
        ['["castaug", {"type": "float32"}]', '["resizeaug", {"size": 3, "interp": 2}]'],
    ]
    assert image.ColorJitterAug(0.1, 0, 0.3).dumps() == [
        "colorjitteraug",
        ['["brightnessjitteraug", {"brightness": 0.1}]', '["saturationjitteraug", {"saturation": 0.3}]'],
    ]


@pytest.mark.parametrize(("mean", "std"), [([1.0, 2.0], None), ([1.0, 2.0, 3.0], [1.0, 2.0])])
def test_color_normalize_with_a_mean_or_std_that_does_not_fit_raises_at_the_call(mean, std):
    with pytest.raises(mx.OperatorError, match="color_normalize: (mean|std) of shape \\(2,\\) does not broadcast"):
        image.color_normalize(mx.nd.zeros((4, 4, 3)), mx.nd.array(mean), None if std is None else mx.nd.array(std))


def test_color_normalize_aug_with_a_mean_for_other_channels_raises_at_the_call():
    (aug,) = [a for a in image.CreateAugmenter((3, 4, 4), mean=np.array([1.0, 2.0])) if "Normalize" in type(a).__name__]
    with pytest.raises(mx.OperatorError, match="does not broadcast"):
        aug(mx.nd.zeros((4, 4, 3)))


def test_color_jitter_draws_as_mxnets_random_order_of_its_three_jitters(src):
    # MXNet 1.9.1's ColorJitterAug is a RandomOrderAug of the three jitters, shuffled in place at
    # every call: seeded the same, both give the same images call after call
    x = src.astype("float32")
    random.seed(4)
    fused = image.ColorJitterAug(0.3, 0.3, 0.3)
    got = [fused(x.copy()).asnumpy() for _ in range(3)]  # (each writes into its float32 image)
    random.seed(4)
    jitters = [image.BrightnessJitterAug(0.3), image.ContrastJitterAug(0.3), image.SaturationJitterAug(0.3)]
    ordered = image.RandomOrderAug(jitters)
    expected = [ordered(x.copy()).asnumpy() for _ in range(3)]
    np.testing.assert_allclose(got, expected, rtol=1e-5)


_EIGVAL = [55.46, 4.794, 1.148]
_EIGVEC = [[-0.5675, 0.7192, 0.4009], [-0.5808, -0.0045, -0.814], [-0.5836, -0.6948, 0.4203]]


def test_lighting_aug_dumps_its_eigen_values_as_given():
    # MXNet 1.9.1 keeps eigval/eigvec as given: its dumps() shows 55.46, not float32's 55.459999084472656
    assert image.LightingAug(0.1, np.array(_EIGVAL), np.array(_EIGVEC)).dumps() == (
        '["lightingaug", {"alphastd": 0.1, "eigval": [55.46, 4.794, 1.148], "eigvec": '
        "[[-0.5675, 0.7192, 0.4009], [-0.5808, -0.0045, -0.814], [-0.5836, -0.6948, 0.4203]]}]"
    )


def test_lighting_aug_shift_is_mxnets_formula_in_float64():
    # MXNet: rgb = np.dot(eigvec * alpha, eigval) with alpha ~ N(0, alphastd) float64, then cast to float32
    base = mx.nd.zeros((2, 2, 3))
    np.random.seed(3)
    out = image.LightingAug(0.1, _EIGVAL, _EIGVEC)(base).asnumpy()
    np.random.seed(3)
    alpha = np.random.normal(0, 0.1, size=(3,))
    expected = np.dot(np.array(_EIGVEC) * alpha, np.array(_EIGVAL)).astype(np.float32)
    np.testing.assert_array_equal(out[1, 1], expected)


def test_create_augmenter_imagenet_statistics_are_float32_as_mxnets():
    # MXNet 1.9.1 makes mean=True/std=True NDArrays (float32): its dumps() shows their float32 values
    normalize = image.CreateAugmenter((3, 4, 4), mean=True, std=True)[-1]
    assert normalize.dumps() == (
        '["colornormalizeaug", {"mean": [123.68000030517578, 116.27999877929688, 103.52999877929688], '
        '"std": [58.39500045776367, 57.119998931884766, 57.375]}]'
    )
