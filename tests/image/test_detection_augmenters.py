"""Detection augmenters: images and boxes move together, as MXNet 1.9.1's ``mx.image.Det*Aug``."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest

import lazynd as mx
from lazynd import image

LABEL = np.array([[0, 0.1, 0.2, 0.5, 0.8], [1, 0.6, 0.1, 0.9, 0.4]], np.float32)


def _image(h: int = 40, w: int = 60) -> mx.nd.NDArray:
    return mx.nd.array(np.arange(h * w * 3).reshape(h, w, 3) % 251, dtype="uint8")


def test_flip_with_p_one_mirrors_pixels_and_boxes() -> None:
    src = _image()
    out, label = image.DetHorizontalFlipAug(1.0)(src, LABEL)
    np.testing.assert_array_equal(out.asnumpy(), src.asnumpy()[:, ::-1])
    np.testing.assert_allclose(label, [[0, 0.5, 0.2, 0.9, 0.8], [1, 0.1, 0.1, 0.4, 0.4]], atol=1e-6)
    assert LABEL[0, 1] == np.float32(0.1)  # the caller's label is left as it was


def test_flip_with_p_zero_changes_nothing() -> None:
    src = _image()
    out, label = image.DetHorizontalFlipAug(0.0)(src, LABEL)
    assert out is src and label is LABEL


def test_borrow_aug_resizes_pixels_and_keeps_fractional_boxes() -> None:
    out, label = image.DetBorrowAug(image.ForceResizeAug((30, 20)))(_image(), LABEL)
    assert out.shape == (20, 30, 3) and label is LABEL


def test_borrow_aug_refuses_a_non_augmenter() -> None:
    with pytest.raises(mx.LazyNDError, match="DetBorrowAug: expected an mx.image.Augmenter"):
        image.DetBorrowAug(lambda x: x)


def _crop_at(monkeypatch: pytest.MonkeyPatch, aug: image.DetRandomCropAug, x: int, y: int, w: int, h: int) -> None:
    """Make the crop's only attempt draw the window (x, y, w, h): ratio w/h, height h, then y, x."""
    draws = iter([h, y, x])
    monkeypatch.setattr(random, "uniform", lambda a, b: w / h)
    monkeypatch.setattr(random, "randint", lambda a, b: next(draws))


def test_crop_forced_window_moves_clips_and_ejects(monkeypatch: pytest.MonkeyPatch) -> None:
    src = _image(40, 60)
    aug = image.DetRandomCropAug(0.1, (0.1, 10), (0.01, 1.0), min_eject_coverage=0.3, max_attempts=1)
    # window x 0..30, y 0..40: box 0 (x 6..30) stays whole, box 1 (x 36..54) is outside
    _crop_at(monkeypatch, aug, 0, 0, 30, 40)
    out, label = aug(src, LABEL)
    np.testing.assert_array_equal(out.asnumpy(), src.asnumpy()[:, :30])
    np.testing.assert_allclose(label, [[0, 0.2, 0.2, 1.0, 0.8]], atol=1e-6)


def test_crop_ejects_objects_covered_at_most_min_eject_coverage(monkeypatch: pytest.MonkeyPatch) -> None:
    src = _image(40, 60)
    aug = image.DetRandomCropAug(0.0, (0.1, 10), (0.01, 1.0), min_eject_coverage=0.5, max_attempts=1)
    # window x 12..48: box 0 (x 6..30) keeps 18/24 = 0.75 of its width, box 1 (x 36..54) 12/18 = 0.67
    _crop_at(monkeypatch, aug, 12, 0, 36, 40)
    _, label = aug(src, LABEL)
    assert label.shape == (2, 5)
    np.testing.assert_allclose(label[:, 1:], [[0, 0.2, 0.5, 0.8], [2 / 3, 0.1, 1.0, 0.4]], atol=1e-6)
    aug.min_eject_coverage = 0.7
    _crop_at(monkeypatch, aug, 12, 0, 36, 40)
    _, label = aug(src, LABEL)
    np.testing.assert_array_equal(label[:, 0], [0])


def test_crop_refuses_windows_cutting_an_object_below_min_object_covered(monkeypatch: pytest.MonkeyPatch) -> None:
    src = _image(40, 60)
    aug = image.DetRandomCropAug(0.8, (0.1, 10), (0.01, 1.0), max_attempts=1)
    _crop_at(monkeypatch, aug, 12, 0, 36, 40)  # box 1 keeps 0.67 < 0.8: no crop
    out, label = aug(src, LABEL)
    assert out is src and label is LABEL


def test_pad_forced_canvas_shrinks_boxes_and_fills(monkeypatch: pytest.MonkeyPatch) -> None:
    src = _image(40, 60)
    aug = image.DetRandomPadAug((1.5, 1.5), (1.0, 4.0), max_attempts=1, pad_val=(1, 2, 3))
    draws = iter([60, 10, 20])  # height 60 (width 90), image at y=10, x=20
    monkeypatch.setattr(random, "randint", lambda a, b: next(draws))
    out, label = aug(src, LABEL)
    pixels = out.asnumpy()
    assert pixels.shape == (60, 90, 3)
    np.testing.assert_array_equal(pixels[10:50, 20:80], src.asnumpy())
    np.testing.assert_array_equal(pixels[0, 0], [1, 2, 3])
    np.testing.assert_allclose(label[0], [0, (6 + 20) / 90, (8 + 10) / 60, (30 + 20) / 90, (32 + 10) / 60], atol=1e-6)


@pytest.mark.parametrize("seed", range(20))
def test_random_crops_and_pads_keep_boxes_in_the_unit_square(seed: int) -> None:
    random.seed(seed)
    augs = image.CreateDetAugmenter((3, 32, 32), rand_crop=1, rand_pad=0.5, rand_mirror=True, min_object_covered=0.3)
    src, label = _image(), LABEL
    for aug in augs:
        src, label = aug(src, label)
    assert src.shape == (32, 32, 3) and src.dtype == np.float32
    assert len(label) >= 1 and label[:, 1:5].min() >= 0 and label[:, 1:5].max() <= 1
    assert (label[:, 3] > label[:, 1]).all() and (label[:, 4] > label[:, 2]).all()


def test_random_select_skips_with_probability_one() -> None:
    flip = image.DetHorizontalFlipAug(1.0)
    src = _image()
    assert image.DetRandomSelectAug([flip], skip_prob=1)(src, LABEL)[0] is src
    assert image.DetRandomSelectAug([flip], skip_prob=0)(src, LABEL)[0] is not src


def test_invalid_ranges_disable_crop_and_pad_with_a_warning() -> None:
    with pytest.warns(UserWarning, match="DetRandomCropAug: disabled"):
        assert not image.DetRandomCropAug(area_range=(0.5, 0.2)).enabled
    with pytest.warns(UserWarning, match="DetRandomPadAug: disabled"):
        assert not image.DetRandomPadAug(area_range=(1.0, 1.0)).enabled


def test_multi_rand_crop_aligns_list_parameters() -> None:
    aug = image.CreateMultiRandCropAugmenter(min_object_covered=[0.1, 0.5], max_attempts=7, skip_prob=0.25)
    assert [a.min_object_covered for a in aug.aug_list] == [0.1, 0.5]
    assert [a.max_attempts for a in aug.aug_list] == [7, 7] and aug.skip_prob == 0.25
    with pytest.raises(mx.LazyNDError, match="one length or one value"):
        image.CreateMultiRandCropAugmenter(min_object_covered=[0.1, 0.5], max_attempts=[1, 2, 3])


def test_create_det_augmenter_order_matches_mxnet() -> None:
    augs = image.CreateDetAugmenter(
        (3, 300, 300), resize=320, rand_crop=0.5, rand_pad=0.5, rand_mirror=True, mean=True, std=True, brightness=0.1
    )
    # MXNet 1.9.1's list for these arguments
    names = [type(a).__name__ for a in augs]
    assert (
        names
        == ["DetBorrowAug", "DetRandomSelectAug", "DetHorizontalFlipAug", "DetRandomSelectAug"] + ["DetBorrowAug"] * 4
    )
    assert augs[1].skip_prob == 0.5 and augs[3].aug_list[0].area_range == (1.0, 3.0)
    assert json.loads(augs[2].dumps()) == ["dethorizontalflipaug", {"p": 0.5}]


def test_random_crop_and_pad_dump_their_ranges_as_given_as_mxnet_does() -> None:
    # MXNet 1.9.1's strings: the numbers as given (2 stays 2), a single number twice
    assert image.DetRandomCropAug(0.3, (0.5, 2), [0.2, 1], 0.5, 30).dumps() == (
        '["detrandomcropaug", {"min_object_covered": 0.3, "aspect_ratio_range": [0.5, 2], "area_range": [0.2, 1], '
        '"min_eject_coverage": 0.5, "max_attempts": 30}]'
    )
    assert image.DetRandomPadAug(1, 2, 20, 7).dumps() == (
        '["detrandompadaug", {"aspect_ratio_range": [1, 1], "area_range": [2, 2], "max_attempts": 20, "pad_val": 7}]'
    )


def test_create_det_augmenter_dumps_imagenet_statistics_as_mxnet_does() -> None:
    # MXNet's CreateDetAugmenter holds them in float64 (CreateAugmenter's are float32 NDArrays)
    last = image.CreateDetAugmenter((3, 30, 30), mean=True, std=True)[-1]
    assert last.dumps() == [
        "detborrowaug",
        '["colornormalizeaug", {"mean": [123.68, 116.28, 103.53], "std": [58.395, 57.12, 57.375]}]',
    ]
