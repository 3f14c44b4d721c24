"""ImageRecordIter's 4-channel data (colour and alpha) with ``mean_a``/``std_a``, and ``aug_seq``.

The expected values are MXNet 1.9.1's, for PNG records whose pixels are B=10, G=20, R=30, A=40 in
OpenCV's order: MXNet gives the channels as R, G, B, A and normalises the alpha channel with
``(a - mean_a) / std_a * scale``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import lazynd as mx
from lazynd.errors import FormatError, OperatorError, ShapeError


def _write_rec(path: Path, image: np.ndarray, count: int = 2) -> str:
    writer = mx.recordio.MXIndexedRecordIO(str(path.with_suffix(".idx")), str(path), "w")
    for i in range(count):
        writer.write_idx(i, mx.recordio.pack_img(mx.recordio.IRHeader(0, float(i), i, 0), image, img_fmt=".png"))
    writer.close()
    return str(path)


@pytest.fixture
def rgba_rec(tmp_path: Path) -> str:
    image = np.zeros((4, 4, 4), np.uint8)
    image[...] = (10, 20, 30, 40)
    return _write_rec(tmp_path / "rgba.rec", image)


@pytest.fixture
def rgb_rec(tmp_path: Path) -> str:
    image = np.zeros((4, 4, 3), np.uint8)
    image[...] = (10, 20, 30)
    return _write_rec(tmp_path / "rgb.rec", image)


def _first_pixel(path: str, data_shape: tuple[int, ...] = (4, 4, 4), **kwargs) -> list[float]:
    it = mx.io.ImageRecordIter(path_imgrec=path, data_shape=data_shape, batch_size=2, **kwargs)
    return next(iter(it)).data[0].asnumpy()[0, :, 0, 0].tolist()


@pytest.mark.parametrize(
    "kwargs, expected",
    [
        ({}, [30, 20, 10, 40]),
        ({"mean_a": 5, "std_a": 2}, [30, 20, 10, 17.5]),
        (
            {"mean_r": 1, "mean_g": 2, "mean_b": 3, "mean_a": 5, "std_r": 2, "std_g": 4, "std_b": 5, "std_a": 2},
            [14.5, 4.5, 1.4, 17.5],
        ),
        ({"mean_a": 5, "std_a": 2, "scale": 0.5}, [15, 10, 5, 8.75]),
        ({"dtype": "uint8", "mean_a": 5}, [30, 20, 10, 40]),
        ({"dtype": "int8", "mean_a": 5, "mean_r": 3}, [27, 20, 10, 35]),
        ({"mirror": True, "resize": 6}, [30, 20, 10, 40]),
        ({"aug_seq": ""}, [30, 20, 10, 40]),
    ],
)
def test_four_channel_data_normalises_the_alpha_channel_with_mean_a_and_std_a_as_mxnet(rgba_rec, kwargs, expected):
    assert _first_pixel(rgba_rec, **kwargs) == pytest.approx(expected)


def test_mean_a_and_std_a_leave_three_channel_data_alone_as_in_mxnet(rgba_rec):
    assert _first_pixel(rgba_rec, (3, 4, 4), mean_a=5, std_a=2) == pytest.approx([30, 20, 10])


def test_a_record_without_alpha_for_four_channel_data_is_refused_naming_it(rgb_rec):
    with pytest.raises(FormatError, match=r"record #0 of .*rgb.rec is an image of 3 channel\(s\); data_shape"):
        _first_pixel(rgb_rec)


def test_colour_jitter_of_four_channel_data_is_refused_by_name(rgba_rec):
    with pytest.raises(OperatorError, match="brightness, contrast, saturation and pca_noise work on RGB images"):
        _first_pixel(rgba_rec, brightness=0.1)


@pytest.mark.parametrize("data_shape", [(2, 4, 4), (5, 4, 4)])
def test_other_channel_counts_are_refused_by_name(rgba_rec, data_shape):
    with pytest.raises(OperatorError, match=r"ImageRecordIter: data_shape must be .* \(1, 3, 4\) channels"):
        _first_pixel(rgba_rec, data_shape)


def test_an_empty_aug_seq_applies_no_augmentation(rgb_rec):
    assert _first_pixel(rgb_rec, (3, 4, 4), aug_seq="", rand_mirror=True, resize=8) == pytest.approx([30, 20, 10])
    with pytest.raises(ShapeError, match=r"has shape \(4, 4, 3\) after augmentation, expected \(2, 2, 3\)"):
        _first_pixel(rgb_rec, (3, 2, 2), aug_seq="")


@pytest.mark.parametrize(
    "aug_seq, message",
    [
        ("bogus", "aug_seq must be 'aug_default' .* or '' \\(none\\), got 'bogus'"),
        ("aug_default, aug_default", "aug_seq must be 'aug_default'"),
        (None, "aug_seq must be 'aug_default'"),
        ("det_aug_default", "aug_seq .det_aug_default. is the detection augmenter: use ImageDetRecordIter"),
    ],
)
def test_an_aug_seq_other_than_mxnets_two_is_refused_by_name(rgb_rec, aug_seq, message):
    # MXNet 1.9.1 crashes (segmentation fault) on an unknown augmenter name
    with pytest.raises(OperatorError, match=f"ImageRecordIter: {message}"):
        _first_pixel(rgb_rec, (3, 4, 4), aug_seq=aug_seq)


@pytest.mark.parametrize("channel", ["r", "g", "b", "a"])
def test_a_zero_std_is_refused_naming_the_channel(rgba_rec, channel):
    # MXNet 1.9.1 gives NaN pixels
    with pytest.raises(OperatorError, match=f"ImageRecordIter: std_{channel} must not be 0"):
        _first_pixel(rgba_rec, **{f"std_{channel}": 0})


def test_a_zero_std_of_a_channel_the_data_does_not_have_is_ignored(rgb_rec):
    assert _first_pixel(rgb_rec, (3, 4, 4), std_a=0) == pytest.approx([30, 20, 10])
