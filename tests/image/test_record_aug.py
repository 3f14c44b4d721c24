"""ImageRecordIter's affine warp, pad and HLS offsets (MXNet's default augmenter arguments).

The structural checks below hold for MXNet 1.9.1 too; its pixel-change statistics for the same
parameters were compared on the same kind of file (see the report of the branch s10-aug).
"""

from __future__ import annotations

import warnings

import cv2
import numpy as np
import pytest

import lazynd as mx
from lazynd import recordio
from lazynd.errors import OperatorError


def _write_rec(path: str, images: list[np.ndarray]) -> str:
    """A .rec of PNG images given in RGB, labelled 0, 1, ..."""
    writer = recordio.MXRecordIO(path, "w")
    for i, rgb in enumerate(images):
        writer.write(recordio.pack_img(recordio.IRHeader(0, float(i), i, 0), rgb[:, :, ::-1], img_fmt=".png"))
    writer.close()
    return path


@pytest.fixture
def noise_rec(tmp_path) -> tuple[str, list[np.ndarray]]:
    """Four random 20x20 RGB images."""
    rng = np.random.default_rng(1)
    images = [rng.integers(0, 256, (20, 20, 3), dtype=np.uint8) for _ in range(4)]
    return _write_rec(str(tmp_path / "noise.rec"), images), images


def _uniform_rec(tmp_path, rgb: tuple[int, int, int], count: int = 1, size: int = 20) -> str:
    return _write_rec(str(tmp_path / "uniform.rec"), [np.full((size, size, 3), rgb, np.uint8)] * count)


def _data(path: str, batch_size: int = 4, shape: tuple[int, int, int] = (3, 20, 20), **kwargs) -> np.ndarray:
    it = mx.io.ImageRecordIter(path_imgrec=path, data_shape=shape, batch_size=batch_size, **kwargs)
    return next(it).data[0].asnumpy()


def _as_hwc(chw: np.ndarray) -> np.ndarray:
    return chw.transpose(1, 2, 0).astype(np.uint8)


CHANGING = [
    {"max_rotate_angle": 30},
    {"rotate": 90},
    {"max_shear_ratio": 0.3},
    {"max_aspect_ratio": 0.3},
    {"min_random_scale": 1.2, "max_random_scale": 1.5},
    {"random_h": 30},
    {"random_s": 60},
    {"random_l": 60},
]


@pytest.mark.parametrize("kwargs", CHANGING, ids=lambda kw: ",".join(kw))
def test_each_augmentation_changes_the_images_without_a_warning(noise_rec, kwargs):
    path, _ = noise_rec
    plain = _data(path)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        changed = _data(path, seed_aug=3, **kwargs)
    assert changed.shape == plain.shape
    assert not np.array_equal(changed, plain)


def test_the_defaults_leave_the_images_unchanged(noise_rec):
    path, images = noise_rec
    defaults = {
        "max_rotate_angle": 0,
        "rotate": -1,
        "max_shear_ratio": 0.0,
        "max_aspect_ratio": 0.0,
        "min_random_scale": 1.0,
        "max_random_scale": 1.0,
        "random_h": 0,
        "random_s": 0,
        "random_l": 0,
        "fill_value": 255,
        "pad": 0,
    }
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        data = _data(path, **defaults)
    np.testing.assert_array_equal(data, np.stack([im.transpose(2, 0, 1) for im in images]))


def test_rotate_180_turns_the_image_about_its_centre(noise_rec):
    path, images = noise_rec
    data = _data(path, rotate=180, fill_value=7, inter_method=0)
    # the centre is (w/2, h/2), as MXNet's: pixel x goes to w - x, so row and column 0 are fill
    turned = _as_hwc(data[0])
    np.testing.assert_array_equal(turned[1:, 1:], images[0][:0:-1, :0:-1])
    assert (turned[0] == 7).all() and (turned[:, 0] == 7).all()


def test_a_uniform_image_keeps_its_colour_under_rotation_except_the_fill(tmp_path):
    path = _uniform_rec(tmp_path, (200, 30, 90))
    data = _data(path, batch_size=1, rotate=45, fill_value=5, inter_method=0)
    pixels = _as_hwc(data[0]).reshape(-1, 3)
    colour, fill = (pixels == (200, 30, 90)).all(1), (pixels == 5).all(1)
    assert (colour | fill).all()
    assert fill.sum() > 0 and colour.sum() > fill.sum()
    assert (pixels[(10 * 20 + 10)] == (200, 30, 90)).all() and (pixels[0] == 5).all()


def test_a_fixed_scale_resamples_the_image(noise_rec):
    path, images = noise_rec
    data = _data(path, shape=(3, 10, 10), min_random_scale=0.5, max_random_scale=0.5, inter_method=0)
    np.testing.assert_array_equal(_as_hwc(data[1]), images[1][::2, ::2])


def test_pad_makes_borders_of_fill_value(noise_rec):
    path, images = noise_rec
    data = _data(path, shape=(3, 26, 26), pad=3, fill_value=17)
    padded = _as_hwc(data[2])
    np.testing.assert_array_equal(padded[3:-3, 3:-3], images[2])
    border = np.ones((26, 26), bool)
    border[3:-3, 3:-3] = False
    assert (padded[border] == 17).all()


def _hues(data: np.ndarray) -> np.ndarray:
    return np.array([cv2.cvtColor(_as_hwc(chw)[:1, :1], cv2.COLOR_RGB2HLS)[0, 0, 0] for chw in data], int)


def test_random_h_moves_the_hue_within_its_range(tmp_path):
    path = _uniform_rec(tmp_path, (0, 255, 0), count=32, size=8)  # pure green: hue 60 of 180
    hues = _hues(_data(path, batch_size=32, shape=(3, 8, 8), random_h=20, seed_aug=0))
    assert hues.min() >= 40 - 1 and hues.max() <= 80 + 1
    assert hues.min() < 55 and hues.max() > 65  # both directions around the circle
    # a pure red at hue 0 only moves up: offsets below 0 are clipped (MXNet clips, it does not wrap)
    red = _uniform_rec(tmp_path, (255, 0, 0), count=32, size=8)
    red_hues = _hues(_data(red, batch_size=32, shape=(3, 8, 8), random_h=20, seed_aug=0))
    assert red_hues.min() <= 1 and 10 < red_hues.max() <= 20 + 1


def test_random_l_changes_the_lightness_within_its_range(tmp_path):
    path = _uniform_rec(tmp_path, (128, 128, 128), count=32, size=8)
    data = _data(path, batch_size=32, shape=(3, 8, 8), random_l=40, seed_aug=0)
    grey = data[:, 0, 0, 0]
    assert (data == grey[:, None, None, None]).all()  # grey stays grey
    assert grey.min() >= 128 - 41 and grey.max() <= 128 + 41 and grey.std() > 5


def test_seed_aug_makes_the_augmentation_reproducible(noise_rec):
    path, _ = noise_rec
    kwargs = {"max_rotate_angle": 40, "max_shear_ratio": 0.2, "random_h": 20, "random_l": 30}
    first, again = _data(path, seed_aug=5, **kwargs), _data(path, seed_aug=5, **kwargs)
    np.testing.assert_array_equal(first, again)
    assert not np.array_equal(first, _data(path, seed_aug=6, **kwargs))
    np.testing.assert_array_equal(_data(path, seed=2, **kwargs), _data(path, seed=2, **kwargs))


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"max_rotate_angle": -10}, r"max_rotate_angle must be an integer in \[0, 360\], got -10"),
        ({"rotate": -5}, r"rotate must be an integer"),
        ({"max_shear_ratio": -0.1}, r"max_shear_ratio must be a number in \[0.0, inf\], got -0.1"),
        ({"max_aspect_ratio": 1.5}, r"max_aspect_ratio must be < 1 without min_aspect_ratio .*got 1.5"),
        ({"min_random_scale": 0}, r"min_random_scale must be a number"),
        ({"min_random_scale": 1.5}, r"min_random_scale 1.5 must be <= max_random_scale 1.0"),
        ({"random_h": 200}, r"random_h must be an integer in \[0, 180\], got 200"),
        ({"random_s": -1}, r"random_s must be an integer in \[0, 255\]"),
        ({"random_l": 2.5}, r"random_l must be an integer"),
        ({"fill_value": 300}, r"fill_value must be an integer in \[0, 255\]"),
        ({"pad": -1}, r"pad must be an integer"),
        ({"random_h": "lots"}, r"random_h must be a number, got 'lots'"),
        ({"seed_aug": "x"}, r"seed_aug must be a non-negative integer, got 'x'"),
    ],
)
def test_bad_values_are_refused_by_name(noise_rec, kwargs, message):
    with pytest.raises(OperatorError, match=r"ImageRecordIter: " + message):
        mx.io.ImageRecordIter(path_imgrec=noise_rec[0], data_shape=(3, 20, 20), batch_size=2, **kwargs)


def test_arguments_still_unimplemented_warn(noise_rec):
    with pytest.warns(UserWarning, match="shuffle_chunk_size=4 is not implemented"):
        mx.io.ImageRecordIter(path_imgrec=noise_rec[0], data_shape=(3, 20, 20), batch_size=2, shuffle_chunk_size=4)


def test_hls_offsets_on_grey_images_are_refused_by_name(noise_rec):
    it = mx.io.ImageRecordIter(path_imgrec=noise_rec[0], data_shape=(1, 20, 20), batch_size=2, random_l=10)
    with pytest.raises(OperatorError, match=r"random_h/s/l need 3-channel images, got 1 channel"):
        next(it)


def test_the_uint8_iterator_takes_the_augmentations_too(noise_rec):
    path, images = noise_rec
    it = mx.io.ImageRecordUInt8Iter(path_imgrec=path, data_shape=(3, 24, 24), batch_size=2, pad=2, fill_value=9)
    data = next(it).data[0].asnumpy()
    assert data.dtype == np.uint8 and (data[:, :, :2] == 9).all()
    np.testing.assert_array_equal(data[0, :, 2:-2, 2:-2], images[0].transpose(2, 0, 1))


def test_min_img_size_centres_the_image_in_a_larger_output(noise_rec):
    path, images = noise_rec
    # each side max(24, min(1e10, 20)) = 24, the 20x20 image centred (MXNet 1.9.1: same pixels)
    data = _data(path, shape=(3, 24, 24), min_img_size=24, fill_value=3)
    warped = _as_hwc(data[0])
    np.testing.assert_array_equal(warped[2:-2, 2:-2], images[0])
    assert (warped[:2] == 3).all() and (warped[:, -2:] == 3).all()


def test_max_img_size_bounds_each_side_around_the_centre(noise_rec):
    path, images = noise_rec
    # each side min(16, 20): the central 16x16 of the image, then enlarged to cover data_shape
    # (MXNet 1.9.1 gives these pixels exactly)
    data = _data(path, shape=(3, 20, 20), max_img_size=16)
    expected = cv2.resize(images[1][2:18, 2:18], (20, 20), interpolation=cv2.INTER_LINEAR)
    np.testing.assert_array_equal(_as_hwc(data[1]), expected)


def _slopes(image: np.ndarray) -> tuple[float, float]:
    """Source columns per output column along the middle row, source rows per output row along
    the middle column, of a warped coordinate image (red = column, green = row, blue = 128)."""
    mid_h, mid_w = image.shape[1] // 2, image.shape[2] // 2
    cols = np.nonzero(image[2, mid_h] == 128)[0][2:-2]
    rows = np.nonzero(image[2, :, mid_w] == 128)[0][2:-2]
    return np.polyfit(cols, image[0, mid_h, cols], 1)[0], np.polyfit(rows, image[1, rows, mid_w], 1)[0]


def test_min_aspect_ratio_sets_the_low_end_of_the_warps_aspect(tmp_path):
    coord = np.zeros((40, 50, 3), np.uint8)
    coord[:, :, 0], coord[:, :, 1], coord[:, :, 2] = np.arange(50)[None], np.arange(40)[:, None], 128
    path = _write_rec(str(tmp_path / "coord.rec"), [coord] * 2)
    # r = 2: columns scaled by 2 / (1 + r), rows by 2 r / (1 + r) (MXNet 1.9.1 measured: r uniform in [min, max])
    data = _data(path, batch_size=2, shape=(3, 40, 50), min_aspect_ratio=2.0, max_aspect_ratio=2.0, fill_value=0)
    column_slope, row_slope = _slopes(data[0])
    assert column_slope == pytest.approx(1.5, rel=0.03) and row_slope == pytest.approx(0.75, rel=0.03)


def _grey_values(tmp_path, **kwargs) -> np.ndarray:
    """The data of 64 uniform grey (100) images, one value per image (checked constant)."""
    path = _uniform_rec(tmp_path, (100, 100, 100), count=64, size=8)
    data = _data(path, batch_size=64, shape=(3, 8, 8), **kwargs).astype(np.float64)
    assert (data == data[:, :1, :1, :1]).all()  # one contrast and illumination per image
    return data[:, 0, 0, 0]


def test_random_contrast_scales_the_pixels_even_without_a_mean(tmp_path):
    # MXNet 1.9.1 applies it with the mean at 0: 100 * c, c in [0.5, 1.5]
    values = _grey_values(tmp_path, max_random_contrast=0.5, seed_aug=0)
    assert values.min() >= 50 - 1e-3 and values.max() <= 150 + 1e-3
    assert values.min() < 65 and values.max() > 135


def test_random_illumination_is_added_before_scale_and_std(tmp_path):
    # ((100 - 50) + i) * 0.5 / 2 with i in [-20, 20]: 7.5 .. 17.5 (MXNet 1.9.1: 7.52 .. 17.42)
    normalise = {"mean_r": 50, "mean_g": 50, "mean_b": 50, "std_r": 2, "std_g": 2, "std_b": 2, "scale": 0.5}
    values = _grey_values(tmp_path, max_random_illumination=20, seed_aug=0, **normalise)
    assert values.min() >= 7.5 - 1e-4 and values.max() <= 17.5 + 1e-4
    assert values.min() < 9 and values.max() > 16


def test_contrast_and_illumination_are_reproducible_and_leave_integer_data_alone(tmp_path):
    kwargs = {"max_random_contrast": 0.3, "max_random_illumination": 10}
    first = _grey_values(tmp_path, seed_aug=2, **kwargs)
    np.testing.assert_array_equal(first, _grey_values(tmp_path, seed_aug=2, **kwargs))
    assert not np.array_equal(first, _grey_values(tmp_path, seed_aug=3, **kwargs))
    # MXNet's uint8 and int8 iterators do not draw them
    assert (_grey_values(tmp_path, dtype="uint8", **kwargs) == 100).all()
    assert (_grey_values(tmp_path, dtype="int8", **kwargs) == 100).all()


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"max_random_contrast": -0.5}, r"max_random_contrast must be a number in \[0.0, inf\], got -0.5"),
        ({"max_random_illumination": -3}, r"max_random_illumination must be a number in \[0.0, inf\]"),
        ({"min_img_size": -1}, r"min_img_size must be a number in \[0.0, inf\]"),
        ({"min_img_size": 50, "max_img_size": 40}, r"min_img_size 50.0 must be <= max_img_size 40.0"),
    ],
)
def test_bad_image_size_and_lighting_values_are_refused_by_name(noise_rec, kwargs, message):
    with pytest.raises(OperatorError, match=r"ImageRecordIter: " + message):
        mx.io.ImageRecordIter(path_imgrec=noise_rec[0], data_shape=(3, 20, 20), batch_size=2, **kwargs)
