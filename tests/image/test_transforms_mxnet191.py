"""mx.image transforms and augmenters against MXNet 1.9.1's choices (interp 9, min_area, borders, std)."""

from __future__ import annotations

import random

import numpy as np
import pytest

import lazynd as mx
from lazynd import image
from lazynd.errors import OperatorError


def _img(h: int = 10, w: int = 20) -> mx.nd.NDArray:
    rng = np.random.default_rng(3)
    return mx.nd.array(rng.integers(0, 256, (h, w, 3)), dtype="uint8")


@pytest.mark.parametrize(
    ("size", "code"),
    [((30, 5), 1), ((20, 5), 1), ((40, 20), 2), ((8, 4), 3)],  # one side grows: bilinear; both: cubic/area
)
def test_interp_9_picks_mxnets_method(size, code):
    src = _img()
    want = image.imresize(src, size[0], size[1], interp=code).asnumpy()
    np.testing.assert_array_equal(image.ForceResizeAug(size, 9)(src).asnumpy(), want)
    np.testing.assert_array_equal(image.fixed_crop(src, 0, 0, 20, 10, size=size, interp=9).asnumpy(), want)
    np.testing.assert_array_equal(image.imresize(src, size[0], size[1], interp=9).asnumpy(), want)


def test_fixed_crop_without_resize_draws_no_random_method():
    random.seed(5)
    expected = random.random()
    random.seed(5)
    image.fixed_crop(_img(), 1, 1, 5, 5, interp=10).wait_to_read()
    assert random.random() == expected


def test_random_size_crop_takes_mxnets_min_area():
    src = _img(30, 30)
    random.seed(1)
    out, rect = image.random_size_crop(src, (8, 8), 0.1, (0.75, 1.33), min_area=0.6)
    random.seed(1)
    ref, ref_rect = image.random_size_crop(src, (8, 8), 0.6, (0.75, 1.33))
    assert rect == ref_rect
    np.testing.assert_array_equal(out.asnumpy(), ref.asnumpy())
    with pytest.raises(OperatorError, match="random_size_crop: unexpected arguments"):
        image.random_size_crop(src, (8, 8), 0.1, (0.75, 1.33), max_area=0.6)


@pytest.mark.parametrize("border", [5, 6, 7, -1, 32, 2.0])
def test_copy_make_border_refuses_an_unknown_type_at_the_call(border):
    with pytest.raises(OperatorError, match=f"copyMakeBorder: type must be .*got {border!r}"):
        image.copyMakeBorder(_img(), 1, 1, 1, 1, type=border)


@pytest.mark.parametrize("border", [0, 1, 2, 3, 4, 16, 17, 20])
def test_copy_make_border_types_and_isolated_flag(border):
    out = image.copyMakeBorder(_img(), 1, 2, 3, 4, type=border).asnumpy()
    assert out.shape == (13, 27, 3)


def test_copy_make_border_values_fill_each_channel():
    out = image.copyMakeBorder(_img(), 1, 1, 1, 1, 0, 0, values=(10, 20, 30)).asnumpy()
    np.testing.assert_array_equal(out[0, 0], [10, 20, 30])
    np.testing.assert_array_equal(out[-1, 5], [10, 20, 30])


@pytest.mark.parametrize(
    ("values", "corner"),
    # MXNet 1.9.1 parses values as a tuple of numbers: a single number is the first channel's alone,
    # a short tuple leaves the other channels 0, and a fraction rounds in the uint8 image
    [(7, [7, 0, 0]), (7.6, [8, 0, 0]), ([1, 2], [1, 2, 0]), ((), [5, 5, 5])],
)
def test_copy_make_border_values_are_parsed_as_mxnet(values, corner):
    out = image.copyMakeBorder(_img(), 1, 0, 0, 0, value=5 if values == () else 0, values=values).asnumpy()
    np.testing.assert_array_equal(out[0, 0], corner)


@pytest.mark.parametrize("values", ["ab", [None]])
def test_copy_make_border_values_not_numbers_is_a_clear_error(values):
    with pytest.raises(TypeError, match="copyMakeBorder: values must be a number or a sequence of numbers"):
        image.copyMakeBorder(_img(), 1, 0, 0, 0, values=values)


def test_create_augmenter_with_std_alone_divides():
    augs = image.CreateAugmenter((3, 8, 8), std=True)
    assert [type(a).__name__ for a in augs] == ["CenterCropAug", "CastAug", "ColorNormalizeAug"]
    x = _img(8, 8)
    for aug in augs:
        x = aug(x)
    want = _img(8, 8).asnumpy().astype(np.float32) / np.array([58.395, 57.12, 57.375], np.float32)
    np.testing.assert_allclose(x.asnumpy(), want, rtol=1e-6)


def test_imresize_and_copy_make_border_write_into_out_as_mxnet():
    src = _img()
    resized = mx.nd.zeros((7, 9, 3), dtype="uint8")
    assert image.imresize(src, 9, 7, interp=1, out=resized) is resized
    np.testing.assert_array_equal(resized.asnumpy(), image.imresize(src, 9, 7, interp=1).asnumpy())
    padded = mx.nd.zeros((13, 27, 3), dtype="uint8")
    assert image.copyMakeBorder(src, 1, 2, 3, 4, type=1, out=padded) is padded
    np.testing.assert_array_equal(padded.asnumpy(), image.copyMakeBorder(src, 1, 2, 3, 4, type=1).asnumpy())


@pytest.mark.parametrize(
    ("out", "message"),
    [
        (np.zeros((7, 9, 3), np.uint8), "imresize: out must be an NDArray, got ndarray"),
        (mx.nd.zeros((9, 7, 3), dtype="uint8"), r"imresize: out has shape \(9, 7, 3\), expected \(7, 9, 3\)"),
        (mx.nd.zeros((7, 9, 3)), "imresize: out has dtype float32, expected uint8"),
    ],
)
def test_imresize_refuses_an_out_that_cannot_take_the_result(out, message):
    with pytest.raises(OperatorError, match=message):
        image.imresize(_img(), 9, 7, out=out)


def test_color_normalize_writes_into_a_float32_image_as_mxnet():
    # MXNet 1.9.1 runs ``src -= mean; src /= std`` and returns src: a program may call it for its effect
    src = mx.nd.ones((2, 2, 3)) * 10
    result = image.color_normalize(src, mx.nd.array([1, 2, 3]), mx.nd.array([3, 2, 1]))
    assert result is src
    np.testing.assert_allclose(src.asnumpy()[0, 0], [3, 4, 7])
    u8 = mx.nd.ones((2, 2, 3), dtype="uint8") * 10  # (MXNet refuses a uint8 image; lazynd gives a new float32 one)
    fresh = image.color_normalize(u8, mx.nd.array([1, 2, 3]))
    assert fresh is not u8 and fresh.dtype == np.float32 and u8.asnumpy()[0, 0, 0] == 10


@pytest.mark.parametrize(
    "make",
    [
        lambda: image.BrightnessJitterAug(0.5),
        lambda: image.ContrastJitterAug(0.5),
        lambda: image.SaturationJitterAug(0.5),
        lambda: image.ColorJitterAug(0.5, 0.5, 0.5),
        lambda: image.LightingAug(0.5, np.array([55.46, 4.794, 1.148]), np.eye(3)),
        lambda: image.ColorNormalizeAug(mx.nd.array([1, 2, 3]), mx.nd.array([2, 2, 2])),
    ],
    ids=["brightness", "contrast", "saturation", "color-jitter", "lighting", "color-normalize"],
)
def test_colour_augmenters_write_into_a_float32_image_as_mxnet(make):
    # MXNet 1.9.1's are ``src *= alpha``, ``src += gray``, ``src += rgb``...: the image given changes
    src = _img().astype("float32")
    before = src.asnumpy().copy()
    random.seed(2)
    np.random.seed(2)
    out = make()(src)
    assert out is src
    random.seed(2)
    np.random.seed(2)
    np.testing.assert_allclose(make()(mx.nd.array(before)).asnumpy(), src.asnumpy(), rtol=1e-6)
    assert not np.allclose(src.asnumpy(), before)
