"""Image headers are not trusted: sizes above lazynd.image.MAX_IMAGE_PIXELS are refused before allocation."""

from __future__ import annotations

import os
import struct
import subprocess
import sys
import zlib

import cv2
import numpy as np
import pytest

import lazynd as mx
from lazynd import image, recordio
from lazynd.image.header import claimed_size


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def _png_claiming(height: int, width: int) -> bytes:
    """A valid-looking PNG (correct CRCs) whose IHDR claims ``height x width`` RGB pixels."""
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", ihdr) + _chunk(b"IDAT", zlib.compress(b"\0" * 8)) + _chunk(b"IEND", b"")
    )


def _jpeg_claiming(height: int, width: int, exif: bool = False) -> bytes:
    """A real JPEG whose frame header is edited to claim ``height x width``."""
    buf = bytearray(cv2.imencode(".jpg", np.zeros((8, 8, 3), np.uint8))[1].tobytes())
    sof = buf.index(b"\xff\xc0")
    buf[sof + 5 : sof + 9] = struct.pack(">HH", height, width)
    if exif:
        buf[2:2] = b"\xff\xe1" + struct.pack(">H", 8) + b"Exif\0\0"
    return bytes(buf)


@pytest.fixture
def picture():
    return np.random.default_rng(0).integers(0, 255, (37, 53, 3), dtype=np.uint8)


def test_tiny_png_claiming_ten_billion_pixels_is_refused_before_allocation():
    png = _png_claiming(100_000, 100_000)
    assert len(png) < 80
    with pytest.raises(
        mx.FormatError, match=r"bomb\.png claims 100000 x 100000 = 10000000000 pixels.*MAX_IMAGE_PIXELS"
    ):
        image.imdecode(png, source="bomb.png")


@pytest.mark.parametrize("exif", [False, True], ids=["plain", "exif"])
def test_jpeg_claiming_too_many_pixels_is_refused(exif):
    with pytest.raises(mx.FormatError, match=r"claims 65535 x 65535"):
        image.imdecode(_jpeg_claiming(65535, 65535, exif))


def test_jpeg_header_is_found_past_stray_bytes_as_libjpeg_finds_it():
    buf = _jpeg_claiming(60000, 60000)
    sof = buf.index(b"\xff\xc0")
    padded = buf[:sof] + b"junk" + buf[sof:]
    assert claimed_size(padded) == (60000, 60000)


@pytest.mark.parametrize("ext", [".png", ".jpg", ".bmp"])
def test_limit_is_read_when_decoding_and_none_lifts_it(monkeypatch, picture, ext):
    encoded = cv2.imencode(ext, picture)[1].tobytes()
    monkeypatch.setattr(image, "MAX_IMAGE_PIXELS", 37 * 53 - 1)
    with pytest.raises((mx.FormatError, mx.EngineError), match=r"37 x 53 = 1961 pixels, more than .* 1960"):
        image.imdecode(encoded, source="pic").asnumpy()
    monkeypatch.setattr(image, "MAX_IMAGE_PIXELS", None)
    assert image.imdecode(encoded).asnumpy().shape == (37, 53, 3)  # waited: nothing left pending


def test_a_limit_that_is_not_a_positive_int_is_reported(monkeypatch, picture):
    monkeypatch.setattr(image, "MAX_IMAGE_PIXELS", "big")
    with pytest.raises(mx.FormatError, match=r"MAX_IMAGE_PIXELS is 'big'; expected a positive int or None"):
        image.imdecode(cv2.imencode(".png", picture)[1].tobytes())


@pytest.mark.parametrize("buf", [b"", np.zeros(0, np.uint8)], ids=["bytes", "array"])
def test_empty_buffer_is_a_format_error_not_an_opencv_error(buf):
    with pytest.raises(mx.FormatError, match=r"record 3 is empty"):
        image.imdecode(buf, source="record 3")


@pytest.mark.parametrize("cut", [10, 20, 25])
def test_png_cut_inside_its_header_is_refused_at_once(picture, cut):
    png = cv2.imencode(".png", picture)[1].tobytes()[:cut]
    with pytest.raises(mx.FormatError, match="pic.png"):
        image.imdecode(png, source="pic.png")


def test_unpack_img_applies_the_limit():
    record = recordio.pack(recordio.IRHeader(0, 1.0, 4, 0), _png_claiming(100_000, 100_000))
    with pytest.raises(mx.FormatError, match=r"image record id 4 claims 100000 x 100000"):
        recordio.unpack_img(record)


def test_image_iter_names_the_record_that_claims_too_much(tmp_path):
    rec = str(tmp_path / "bomb.rec")
    with recordio.MXRecordIO(rec, "w") as writer:
        writer.write(recordio.pack(recordio.IRHeader(0, 1.0, 0, 0), _png_claiming(100_000, 100_000)))
    it = image.ImageIter(1, (3, 4, 4), path_imgrec=rec, aug_list=[])
    with pytest.raises(mx.FormatError, match=r"record #0 of .*bomb\.rec claims 100000 x 100000"):
        next(iter(it))


@pytest.mark.parametrize(
    ("value", "expected"), [("1000", "1000"), ("none", "None"), ("lots", str(1 << 28))]
)  # fmt: skip
def test_environment_variable_sets_the_initial_limit(value, expected):
    code = "import lazynd.image as i; print(i.MAX_IMAGE_PIXELS)"
    env = {**os.environ, "LAZYND_MAX_IMAGE_PIXELS": value}
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120, check=True
    )
    assert done.stdout.split() == [expected]
    assert ("not a positive integer" in done.stderr) == (value == "lots")


def test_a_pushed_decode_keeps_the_limit_of_its_call(monkeypatch, picture):
    # the decode waits behind a held write; the limit lowered meanwhile must not refuse it
    import threading

    from lazynd.engine import get_engine

    encoded = cv2.imencode(".png", picture)[1].tobytes()
    out = mx.nd.zeros((37, 53, 3), dtype="uint8")
    out.wait_to_read()
    release = threading.Event()
    get_engine().push(lambda: release.wait(10), (), [], [out.var], "hold", mx.cpu())
    monkeypatch.setattr(image, "MAX_IMAGE_PIXELS", None)
    image.imdecode(encoded, out=out)
    monkeypatch.setattr(image, "MAX_IMAGE_PIXELS", 10)
    release.set()
    np.testing.assert_array_equal(out.asnumpy(), picture[:, :, ::-1])
