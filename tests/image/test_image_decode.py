"""imdecode and the basic image transforms."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

import lazynd as mx
from lazynd import image
from lazynd.errors import ArgumentTypeError
from lazynd.image.header import image_size


@pytest.fixture
def picture():
    rng = np.random.default_rng(0)
    return rng.integers(0, 255, (37, 53, 3), dtype=np.uint8)


def _encode(ext, pixels):
    return cv2.imencode(ext, pixels)[1].tobytes()


@pytest.mark.parametrize("ext", [".png", ".jpg"])
def test_header_gives_size_without_decoding(ext, picture):
    assert image_size(_encode(ext, picture)) == (37, 53, 3)
    assert image_size(_encode(ext, picture[:, :, 0])) == (37, 53, 1)


def test_imdecode_png_matches_opencv_in_rgb(picture):
    out = image.imdecode(_encode(".png", picture))
    assert out.shape == (37, 53, 3) and out.dtype == np.uint8
    np.testing.assert_array_equal(out.asnumpy(), picture[:, :, ::-1])


def test_imdecode_keeps_bgr_when_asked(picture):
    out = image.imdecode(_encode(".png", picture), to_rgb=False)
    np.testing.assert_array_equal(out.asnumpy(), picture)


def test_imdecode_jpeg_matches_opencv(picture):
    buf = _encode(".jpg", picture)
    expected = cv2.imdecode(np.frombuffer(buf, np.uint8), cv2.IMREAD_COLOR)[:, :, ::-1]
    np.testing.assert_array_equal(image.imdecode(buf).asnumpy(), expected)


def test_imdecode_gray_flag_gives_one_channel(picture):
    out = image.imdecode(_encode(".png", picture), flag=0)
    assert out.shape == (37, 53, 1)


def test_imdecode_other_formats_decode_synchronously(picture):
    out = image.imdecode(_encode(".bmp", picture))
    np.testing.assert_array_equal(out.asnumpy(), picture[:, :, ::-1])


def test_imdecode_writes_into_out(picture):
    out = mx.nd.zeros((37, 53, 3), dtype="uint8")
    assert image.imdecode(_encode(".png", picture), out=out) is out
    np.testing.assert_array_equal(out.asnumpy(), picture[:, :, ::-1])


def test_imdecode_out_of_wrong_shape_is_rejected(picture):
    with pytest.raises(mx.OperatorError, match=r"expected \(37, 53, 3\)"):
        image.imdecode(_encode(".png", picture), out=mx.nd.zeros((2, 2, 3), dtype="uint8"))


def test_non_image_bytes_raise_naming_source():
    with pytest.raises(mx.FormatError, match="record 7"):
        image.imdecode(b"not an image at all", source="record 7")


def test_truncated_jpeg_fails_at_wait_naming_source(picture):
    buf = _encode(".jpg", picture)[:200]
    out = image.imdecode(buf, source="file 'x.jpg'")
    with pytest.raises(mx.EngineError, match="x.jpg"):
        out.asnumpy()


def test_imread_reads_file(tmp_path, picture):
    path = tmp_path / "a.png"
    path.write_bytes(_encode(".png", picture))
    np.testing.assert_array_equal(image.imread(str(path)).asnumpy(), picture[:, :, ::-1])


def test_imread_missing_file_names_it(tmp_path):
    with pytest.raises(mx.FormatError, match="nope.png"):
        image.imread(str(tmp_path / "nope.png"))


def test_imresize_matches_opencv(picture):
    src = mx.nd.array(picture, dtype="uint8")
    out = image.imresize(src, 20, 10, interp=1)
    np.testing.assert_array_equal(out.asnumpy(), cv2.resize(picture, (20, 10), interpolation=1))


def test_resize_short_keeps_aspect(picture):
    out = image.resize_short(mx.nd.array(picture, dtype="uint8"), 20)
    assert out.shape == (20, 28, 3)


def test_fixed_crop_takes_region(picture):
    out = image.fixed_crop(mx.nd.array(picture, dtype="uint8"), 5, 3, 10, 7)
    np.testing.assert_array_equal(out.asnumpy(), picture[3:10, 5:15])


def test_fixed_crop_outside_image_is_rejected(picture):
    with pytest.raises(mx.OperatorError, match="outside the 53x37 image"):
        image.fixed_crop(mx.nd.array(picture, dtype="uint8"), 50, 0, 10, 7)


def test_center_crop_is_centred(picture):
    out, rect = image.center_crop(mx.nd.array(picture, dtype="uint8"), (11, 7))
    assert rect == (21, 15, 11, 7)
    np.testing.assert_array_equal(out.asnumpy(), picture[15:22, 21:32])


def test_random_crop_returns_its_region(picture):
    out, (x0, y0, w, h) = image.random_crop(mx.nd.array(picture, dtype="uint8"), (10, 10))
    np.testing.assert_array_equal(out.asnumpy(), picture[y0 : y0 + h, x0 : x0 + w])


def test_random_size_crop_has_requested_size(picture):
    out, rect = image.random_size_crop(mx.nd.array(picture, dtype="uint8"), (16, 16), 0.3, (0.75, 1.33))
    assert out.shape == (16, 16, 3) and rect[2] <= 53 and rect[3] <= 37


def test_scale_down_fits_crop():
    assert image.scale_down((640, 480), (720, 120)) == (640, 106)


def test_color_normalize_per_channel(picture):
    out = image.color_normalize(mx.nd.array(picture, dtype="uint8"), [10, 20, 30], [2, 4, 5])
    np.testing.assert_allclose(out.asnumpy(), (picture - np.array([10, 20, 30.0])) / np.array([2, 4, 5.0]), rtol=1e-6)


def test_color_normalize_without_mean_only_divides(picture):
    out = image.color_normalize(mx.nd.array(picture, dtype="uint8"), None, [2, 4, 5])
    np.testing.assert_allclose(out.asnumpy(), picture / np.array([2, 4, 5.0]), rtol=1e-6)


@pytest.mark.parametrize(
    ("name", "call"),
    [
        ("imresize", lambda src: image.imresize(src, 4, 3)),
        ("resize_short", lambda src: image.resize_short(src, 4)),
        ("fixed_crop", lambda src: image.fixed_crop(src, 0, 0, 4, 3)),
        ("random_crop", lambda src: image.random_crop(src, (4, 3))),
        ("center_crop", lambda src: image.center_crop(src, (4, 3))),
        ("random_size_crop", lambda src: image.random_size_crop(src, (4, 3), 0.5, (0.75, 1.33))),
        ("copyMakeBorder", lambda src: image.copyMakeBorder(src, 1, 1, 1, 1)),
    ],
)
def test_transforms_of_a_two_dimensional_array_name_the_expected_shape(name, call, picture):
    with pytest.raises(
        mx.OperatorError, match=rf"{name}: src must have shape \(height, width, channels\), got \(37, 53\)"
    ):
        call(mx.nd.array(picture[:, :, 0], dtype="uint8"))


def test_copy_make_border_pads_with_value(picture):
    out = image.copyMakeBorder(mx.nd.array(picture, dtype="uint8"), 1, 2, 3, 4, value=9).asnumpy()
    assert out.shape == (40, 60, 3)
    assert (out[0] == 9).all() and (out[:, -1] == 9).all()
    np.testing.assert_array_equal(out[1:38, 3:56], picture)


@pytest.mark.parametrize(("engine_name", "hands_over"), [("threaded", True), ("naive", False)])
def test_a_decode_loop_hands_the_gil_to_workers_only_when_there_are_workers(
    monkeypatch, picture, engine_name, hands_over
):
    import time
    from types import SimpleNamespace

    from lazynd.image import image as image_module

    buf = _encode(".jpg", picture)
    sleeps = []
    # the image module's own view of ``time`` (the engine's threads keep the real one)
    fake_time = SimpleNamespace(perf_counter_ns=time.perf_counter_ns, sleep=sleeps.append)
    monkeypatch.setattr(image_module, "time", fake_time)
    monkeypatch.setattr(image_module, "_YIELD_NS", 0)  # every push is due for a hand-over
    mx.engine.set_engine(engine_name)
    try:
        decoded = [image.imdecode(buf) for _ in range(3)]
        for arr in decoded:
            np.testing.assert_array_equal(arr.asnumpy(), decoded[0].asnumpy())
    finally:
        mx.engine.set_engine("threaded")
    assert (len(sleeps) == 3) is hands_over and (sleeps == []) is not hands_over


@pytest.mark.parametrize("flag", [None, "abc", [1], 1.5], ids=repr)
def test_imdecode_refuses_a_flag_that_is_no_integer_by_name(flag, picture):
    # a TypeError from a comparison with the flag before
    with pytest.raises(mx.OperatorError, match=r"imdecode: invalid value .* for parameter 'flag': expected an integer"):
        image.imdecode(_encode(".png", picture), flag=flag)


@pytest.mark.parametrize("flag, channels", [(True, 3), ("0", 1)])
def test_imdecode_still_takes_a_bool_or_text_flag(flag, channels, picture):
    assert image.imdecode(_encode(".png", picture), flag=flag).shape == (37, 53, channels)


@pytest.mark.parametrize("filename", [None, 1.5, ["a.jpg"]], ids=repr)
def test_imread_refuses_a_filename_that_is_no_path_by_name(filename):
    # os.fspath()'s TypeError before
    with pytest.raises(ArgumentTypeError, match="imread: filename must be a path"):
        image.imread(filename)


@pytest.mark.parametrize("size", [None, "abc", (1, 2, 3), 1.5], ids=repr)
@pytest.mark.parametrize("which", ["src_size", "size"])
def test_scale_down_refuses_sizes_that_are_no_pairs_by_name(which, size):
    # unpacking's TypeError/ValueError before
    given = {"src_size": (640, 480), "size": (720, 120), which: size}
    with pytest.raises(mx.OperatorError, match=f"scale_down: .*{which}"):
        image.scale_down(given["src_size"], given["size"])
