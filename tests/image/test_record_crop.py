"""ImageRecordIter's ``max/min_crop_size`` and ``random_resized_crop`` (MXNet's default augmenter).

The images encode each pixel's column in red and its row in green, so the region a crop took is
read back from the data: upsampled with ``inter_method=0`` (nearest), every source pixel of the
region appears, and the red/green ranges give its offset and size.  The expected rules and the
statistics are MXNet 1.9.1's, measured the same way on 200x160 images (400 crops each).
"""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx
from lazynd import recordio
from lazynd.errors import OperatorError

WIDTH, HEIGHT = 40, 32  # the aspect (1.25) of the 200x160 images MXNet was measured on
OUT = 64  # data_shape's side: larger than the image, so a nearest resize shows every pixel


@pytest.fixture(scope="module")
def coord_rec(tmp_path_factory) -> str:
    """200 copies of a WIDTH x HEIGHT image with red = column, green = row, blue = 128."""
    image = np.zeros((HEIGHT, WIDTH, 3), np.uint8)
    image[:, :, 0], image[:, :, 1], image[:, :, 2] = np.arange(WIDTH)[None], np.arange(HEIGHT)[:, None], 128
    path = str(tmp_path_factory.mktemp("crop") / "coord.rec")
    writer = recordio.MXRecordIO(path, "w")
    for i in range(200):
        writer.write(recordio.pack_img(recordio.IRHeader(0, float(i), i, 0), image[:, :, ::-1], img_fmt=".png"))
    writer.close()
    return path


def _regions(path: str, shape: tuple[int, int, int] = (3, OUT, OUT), **kwargs) -> np.ndarray:
    """(x0, y0, w, h) of the region each of the 200 images was cropped from."""
    it = mx.io.ImageRecordIter(
        path_imgrec=path, data_shape=shape, batch_size=100, inter_method=0, seed_aug=kwargs.pop("seed_aug", 1), **kwargs
    )
    rows = []
    for batch in it:
        for image in batch.data[0].asnumpy():
            x0, x1, y0, y1 = image[0].min(), image[0].max(), image[1].min(), image[1].max()
            rows.append((x0, y0, x1 - x0 + 1, y1 - y0 + 1))
    return np.array(rows, int)


def test_crop_size_draws_centred_squares_of_every_side_in_range(coord_rec):
    x0, y0, w, h = _regions(coord_rec, max_crop_size=20, min_crop_size=10).T
    assert (w == h).all() and w.min() == 10 and w.max() == 20
    assert len(set(w)) == 11  # integers, each side drawn
    np.testing.assert_array_equal(x0, (WIDTH - w) // 2)
    np.testing.assert_array_equal(y0, (HEIGHT - h) // 2)


def test_crop_size_with_rand_crop_takes_uniform_offsets(coord_rec):
    x0, y0, w, h = _regions(coord_rec, max_crop_size=16, min_crop_size=16, rand_crop=True).T
    assert (w == 16).all() and (h == 16).all()
    assert x0.min() == 0 and x0.max() == WIDTH - 16 and y0.min() == 0 and y0.max() == HEIGHT - 16
    assert 0.4 < np.mean(x0 / (WIDTH - 16)) < 0.6 and 0.4 < np.mean(y0 / (HEIGHT - 16)) < 0.6


def test_crop_size_comes_after_the_pad_and_needs_an_image_that_large(coord_rec):
    # the pad makes the 40x32 image 44x36, so a 36-pixel crop fits (MXNet crops the padded image):
    # all of its rows (pad ones too) and the central 36 of its columns
    it = mx.io.ImageRecordIter(
        path_imgrec=coord_rec,
        data_shape=(3, 36, 36),
        batch_size=2,
        max_crop_size=36,
        min_crop_size=36,
        pad=2,
        fill_value=0,
    )
    image = next(it).data[0].asnumpy()[0]
    content = image[2] == 128
    assert not content[:2].any() and not content[-2:].any() and content[2:-2].all()
    assert image[0][content].min() == 2 and image[0][content].max() == 37
    it = mx.io.ImageRecordIter(
        path_imgrec=coord_rec, data_shape=(3, 8, 8), batch_size=2, max_crop_size=33, min_crop_size=10
    )
    with pytest.raises(OperatorError, match=r"max_crop_size 33 needs an image of at least 33x33 .*got 40x32"):
        next(it)


def test_resized_crop_draws_area_and_aspect_with_sides_swapped_half_the_time(coord_rec):
    regions = _regions(
        coord_rec, random_resized_crop=True, min_random_area=0.3, max_random_area=0.3, max_aspect_ratio=0.25
    )
    x0, y0, w, h = regions.T
    area, aspect = w * h / (WIDTH * HEIGHT), w / h
    # round(sqrt(...)) of each side: the area within a rounding of 0.3
    assert np.abs(area - 0.3).max() < 0.04
    # r in [0.75, 1.25], and 1 / r as often: up to 1 / 0.75 (MXNet 1.9.1 measured: 0.75 .. 1.338)
    assert aspect.min() >= 0.75 - 0.05 and aspect.max() <= 1 / 0.75 + 0.05
    assert (aspect > 1.26).any()
    assert 0.35 < (aspect > 1).mean() < 0.65
    assert (x0 + w <= WIDTH).all() and (y0 + h <= HEIGHT).all()
    assert 0.35 < np.mean(x0 / (WIDTH - w)) < 0.65  # a uniform position


def test_resized_crop_takes_min_aspect_ratio_as_the_low_end_of_the_range(coord_rec):
    x0, y0, w, h = _regions(
        coord_rec,
        random_resized_crop=True,
        min_random_area=0.2,
        max_random_area=0.2,
        min_aspect_ratio=1.0,
        max_aspect_ratio=2.0,
    ).T
    aspect = w / h
    wide = aspect[aspect > 1]
    # r uniform in [1, 2] (MXNet: 42% of the wide crops below sqrt(2); log-uniform would give 50%)
    assert wide.max() > 1.7 and (1 / aspect[aspect < 1]).max() > 1.7
    assert 0.3 < (wide < 2**0.5).mean() < 0.55


def test_resized_crop_falls_back_to_the_centre_crop_when_no_region_fits(coord_rec):
    # area 1 with aspect 2 never fits: data_shape's size scaled down to fit, centred, as MXNet
    x0, y0, w, h = _regions(coord_rec, random_resized_crop=True, min_aspect_ratio=2.0, max_aspect_ratio=2.0).T
    assert (w == HEIGHT).all() and (h == HEIGHT).all() and (x0 == (WIDTH - HEIGHT) // 2).all() and (y0 == 0).all()
    x0, y0, w, h = _regions(
        coord_rec, shape=(3, 16, 24), random_resized_crop=True, min_aspect_ratio=2.0, max_aspect_ratio=2.0
    ).T
    assert (w == 24).all() and (h == 16).all() and (x0 == 8).all() and (y0 == 8).all()


def test_resized_crop_tries_ten_regions_before_the_fallback(coord_rec):
    # area 0.85 and r in [1, 3]: a try fits about 10% of the time, so 10 tries leave ~33% to the
    # fallback (MXNet 1.9.1: 31.8% of 400); one try would leave ~90%, endless tries none
    x0, y0, w, h = _regions(
        coord_rec,
        random_resized_crop=True,
        min_random_area=0.85,
        max_random_area=0.85,
        min_aspect_ratio=1.0,
        max_aspect_ratio=3.0,
    ).T
    fallback = (w == HEIGHT) & (h == HEIGHT)
    assert 0.18 < fallback.mean() < 0.5


def test_resized_crop_is_reproducible_with_seed_aug(coord_rec):
    kwargs = {"random_resized_crop": True, "min_random_area": 0.1}
    first = _regions(coord_rec, seed_aug=4, **kwargs)
    assert len({tuple(region) for region in first}) > 20
    np.testing.assert_array_equal(first, _regions(coord_rec, seed_aug=4, **kwargs))
    assert not np.array_equal(first, _regions(coord_rec, seed_aug=5, **kwargs))


def test_the_uint8_iterator_takes_the_crops_too(coord_rec):
    it = mx.io.ImageRecordUInt8Iter(
        path_imgrec=coord_rec, data_shape=(3, 8, 8), batch_size=2, max_crop_size=16, min_crop_size=16
    )
    data = next(it).data[0].asnumpy()
    assert data.shape == (2, 3, 8, 8) and data.dtype == np.uint8
    # the central 16x16 (columns 12..27) shrunk to 8x8, not the central 8x8 (columns 16..23)
    assert data[0, 0].min() < 14 and data[0, 0].max() > 25


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"random_resized_crop": True, "min_random_area": -0.1}, r"min_random_area must be a number in \[0.0, 1.0\]"),
        ({"random_resized_crop": True, "max_random_area": 1.5}, r"max_random_area must be a number in \[0.0, 1.0\]"),
        ({"min_random_area": 0.8, "max_random_area": 0.5}, r"min_random_area 0.8 must be <= max_random_area 0.5"),
        ({"min_aspect_ratio": 0.0, "max_aspect_ratio": 1.0}, r"min_aspect_ratio must be in \(0, max_aspect_ratio"),
        ({"min_aspect_ratio": 2.0, "max_aspect_ratio": 1.0}, r"min_aspect_ratio must be in .*got 2.0"),
        ({"random_resized_crop": True, "rand_crop": True}, r"random_resized_crop=True conflicts with rand_crop"),
        (
            {"random_resized_crop": True, "max_random_scale": 1.5},
            r"random_resized_crop=True conflicts with max_random_scale",
        ),
        ({"random_resized_crop": True, "max_crop_size": 20, "min_crop_size": 10}, r".*conflicts with max_crop_size"),
        ({"max_crop_size": 20}, r"min_crop_size must be >= 1 when max_crop_size is given, got -1"),
        ({"min_crop_size": 20}, r"min_crop_size 20 must be <= max_crop_size -1"),
        ({"max_crop_size": 2.5, "min_crop_size": 1}, r"max_crop_size must be an integer"),
    ],
)
def test_bad_crop_arguments_are_refused_by_name(coord_rec, kwargs, message):
    with pytest.raises(OperatorError, match=r"ImageRecordIter: " + message):
        mx.io.ImageRecordIter(path_imgrec=coord_rec, data_shape=(3, 8, 8), batch_size=2, **kwargs)
