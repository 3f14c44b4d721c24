"""RecordIO image records: headers with scalar and array labels, pack/unpack, images and the errors they raise."""

from __future__ import annotations

import pickle
import re
import struct

import numpy as np
import pytest

from lazynd import recordio
from lazynd.errors import FormatError


def test_scalar_label_is_stored_in_the_header() -> None:
    record = recordio.pack(recordio.IRHeader(9, 2.5, 3, 4), b"payload")
    assert record[:24] == struct.pack("<IfQQ", 0, 2.5, 3, 4)
    assert recordio.unpack(record) == (recordio.IRHeader(0, 2.5, 3, 4), b"payload")


def test_a_header_prints_as_mxnet_prints_it_and_pickles() -> None:
    header = recordio.unpack(recordio.pack(recordio.IRHeader(0, 2.5, 7, 0), b""))[0]
    assert repr(header) == "HEADER(flag=0, label=2.5, id=7, id2=0)"
    assert pickle.loads(pickle.dumps(header)) == header


def test_array_label_follows_the_header_with_flag_set_to_its_length() -> None:
    record = recordio.pack((0, np.array([1.5, -2.0, 3.0]), 7, 0), b"p")
    assert record == struct.pack("<IfQQ3f", 3, 0.0, 7, 0, 1.5, -2.0, 3.0) + b"p"
    header, payload = recordio.unpack(record)
    assert header.flag == 3 and payload == b"p"
    np.testing.assert_array_equal(header.label, [1.5, -2.0, 3.0])


def test_unpack_of_a_short_record_raises_format_error() -> None:
    with pytest.raises(FormatError, match="at least 24 bytes"):
        recordio.unpack(b"short")
    with pytest.raises(FormatError, match="announces 4 float32 labels"):
        recordio.unpack(struct.pack("<IfQQ", 4, 0.0, 0, 0) + b"\0" * 8)


def test_png_image_record_round_trips_exactly() -> None:
    image = np.random.default_rng(0).integers(0, 256, (5, 7, 3), dtype=np.uint8)
    record = recordio.pack_img(recordio.IRHeader(0, 1.0, 2, 0), image, img_fmt=".png")
    header, decoded = recordio.unpack_img(record)
    assert header == recordio.IRHeader(0, 1.0, 2, 0)
    np.testing.assert_array_equal(decoded, image)


def test_undecodable_image_record_raises_format_error() -> None:
    record = recordio.pack(recordio.IRHeader(0, 0.0, 11, 0), b"not an image")
    with pytest.raises(FormatError, match=r"cannot decode image record id 11: not a valid image \(12 bytes\)"):
        recordio.unpack_img(record)


def test_bad_image_or_quality_raises_value_error() -> None:
    header = recordio.IRHeader(0, 0.0, 0, 0)
    with pytest.raises(ValueError, match="JPEG quality must be in"):
        recordio.pack_img(header, np.zeros((2, 2), np.uint8), quality=101)
    with pytest.raises(ValueError, match="shape"):
        recordio.pack_img(header, np.zeros(4, np.uint8))


@pytest.mark.parametrize(
    ("header", "message"),
    [
        (recordio.IRHeader(0, "cat", 1, 0), "label must be a number or an array of numbers"),
        (recordio.IRHeader(0, 1.0, -1, 0), "id and id2 integers"),
        (recordio.IRHeader(0, 1e40, 1, 0), "label 1e\\+40 is beyond float32's range"),
        (recordio.IRHeader(0, -1e40, 1, 0), "label -1e\\+40 is beyond float32's range"),
        (recordio.IRHeader(0, 10**400, 1, 0), "is beyond float32.s range"),
    ],
)
def test_pack_of_a_header_the_format_cannot_hold_raises_format_error(header, message) -> None:
    with pytest.raises(FormatError, match=message):
        recordio.pack(header, b"payload")


def test_pack_img_that_opencv_cannot_encode_raises_format_error() -> None:
    with pytest.raises(FormatError, match="pack_img: OpenCV cannot encode"):
        recordio.pack_img(recordio.IRHeader(0, 1.0, 0, 0), np.zeros((4, 4, 3), np.uint8), img_fmt=".nope")


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"quality": None}, "pack_img: quality must be a number; given None"),
        ({"quality": "x"}, "pack_img: quality must be a number; given 'x'"),
        ({"quality": True}, "pack_img: quality must be a number; given True"),
        ({"img_fmt": None}, "pack_img: img_fmt must be an extension such as '.jpg' or '.png'; given None"),
        ({"img_fmt": 5}, "pack_img: img_fmt must be an extension"),
    ],
)
def test_pack_img_quality_or_format_of_the_wrong_type_is_a_format_error(kwargs, message) -> None:
    header = recordio.IRHeader(0, 1.0, 0, 0)
    with pytest.raises(FormatError, match=re.escape(message)):
        recordio.pack_img(header, np.zeros((2, 2, 3), np.uint8), **kwargs)
