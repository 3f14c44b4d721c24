"""mx.nd.imdecode as MXNet 0.9 defines it: (channels, height, width), B G R order, float32, clip, index, mean."""

import cv2
import numpy as np
import pytest

import lazynd as mx


@pytest.fixture
def picture():
    """A 5 x 7 BGR picture with a pure colour in its top-left corner, so the channel order shows."""
    rng = np.random.default_rng(3)
    img = rng.integers(0, 256, (5, 7, 3), dtype=np.uint8)
    img[0, 0] = (200, 0, 0)  # blue, as OpenCV stores it
    return img


def _png(img):
    return cv2.imencode(".png", img)[1].tobytes()


def test_layout_is_channels_height_width_float32_in_opencv_channel_order(picture):
    out = mx.nd.imdecode(_png(picture))
    assert out.shape == (3, 5, 7)
    assert out.dtype == np.float32
    assert out.context == mx.cpu()
    np.testing.assert_array_equal(out.asnumpy()[:, 0, 0], [200, 0, 0])  # B first: no swap to RGB
    np.testing.assert_array_equal(out.asnumpy(), picture.transpose(2, 0, 1))


def test_jpeg_matches_opencv_read_unchanged(picture):
    buf = cv2.imencode(".jpg", picture)[1].tobytes()
    expected = cv2.imdecode(np.frombuffer(buf, np.uint8), cv2.IMREAD_UNCHANGED).transpose(2, 0, 1)
    np.testing.assert_array_equal(mx.nd.imdecode(buf).asnumpy(), expected)


def test_clip_rect_keeps_columns_x0_x1_and_rows_y0_y1(picture):
    out = mx.nd.imdecode(_png(picture), clip_rect=(2, 1, 6, 4))
    assert out.shape == (3, 3, 4)
    np.testing.assert_array_equal(out.asnumpy(), picture[1:4, 2:6].transpose(2, 0, 1))


def test_clip_rect_with_equal_rows_means_the_whole_image(picture):
    assert mx.nd.imdecode(_png(picture), clip_rect=(3, 2, 5, 2)).shape == (3, 5, 7)


def test_index_writes_one_slot_of_a_batch_and_returns_out(picture):
    batch = mx.nd.full((3, 3, 5, 7), -1)
    assert mx.nd.imdecode(_png(picture), out=batch, index=1) is batch
    got = batch.asnumpy()
    np.testing.assert_array_equal(got[1], picture.transpose(2, 0, 1))
    assert (got[0] == -1).all() and (got[2] == -1).all()


def test_out_keeps_its_own_dtype(picture):
    out = mx.nd.zeros((3, 5, 7), dtype=np.uint8)
    mx.nd.imdecode(_png(picture), out=out)
    np.testing.assert_array_equal(out.asnumpy(), picture.transpose(2, 0, 1))


def test_mean_is_subtracted_and_gives_its_dtype(picture):
    mean = np.random.default_rng(0).uniform(0, 255, (3, 2, 3))
    out = mx.nd.imdecode(_png(picture), clip_rect=(1, 1, 4, 3), mean=mx.nd.array(mean, dtype=np.float64))
    assert out.dtype == np.float64
    np.testing.assert_allclose(out.asnumpy(), picture[1:3, 1:4].transpose(2, 0, 1) - mean)


def test_one_channel_reads_the_image_as_grey(picture):
    buf = _png(picture)
    expected = cv2.imdecode(np.frombuffer(buf, np.uint8), cv2.IMREAD_GRAYSCALE)
    out = mx.nd.imdecode(buf, channels=1)
    assert out.shape == (1, 5, 7)
    np.testing.assert_array_equal(out.asnumpy()[0], expected)


def test_four_channels_keep_alpha_of_a_bgra_png(picture):
    bgra = np.dstack([picture, np.full((5, 7), 77, np.uint8)])
    out = mx.nd.imdecode(_png(bgra), channels=4)
    np.testing.assert_array_equal(out.asnumpy(), bgra.transpose(2, 0, 1))
    np.testing.assert_array_equal(mx.nd.imdecode(_png(bgra)).asnumpy(), picture.transpose(2, 0, 1))


def test_other_formats_decode_too(picture):
    buf = cv2.imencode(".bmp", picture)[1].tobytes()
    np.testing.assert_array_equal(
        mx.nd.imdecode(buf, clip_rect=(0, 0, 2, 2)).asnumpy(), picture[:2, :2].transpose(2, 0, 1)
    )
    np.testing.assert_array_equal(mx.nd.imdecode(buf).asnumpy(), picture.transpose(2, 0, 1))


def test_more_channels_than_the_image_has_is_an_error(picture):
    grey = _png(picture[:, :, 0])
    with pytest.raises((mx.ShapeError, mx.EngineError), match="channels=3, but image buffer has 1 channel"):
        mx.nd.imdecode(grey).asnumpy()


def test_a_rectangle_outside_the_image_is_refused_at_the_call(picture):
    with pytest.raises(mx.ShapeError, match="reaches outside image buffer of 5 x 7"):
        mx.nd.imdecode(_png(picture), clip_rect=(0, 0, 8, 2))


@pytest.mark.parametrize("rect", [(0, 0, 2), (-1, 0, 2, 2), (3, 0, 2, 2), "abcd"])
def test_a_malformed_rectangle_is_refused(picture, rect):
    with pytest.raises(mx.OperatorError, match="clip_rect"):
        mx.nd.imdecode(_png(picture), clip_rect=rect)


def test_out_of_the_wrong_shape_or_index_is_refused(picture):
    with pytest.raises(mx.ShapeError, match=r"expected \(3, 5, 7\)"):
        mx.nd.imdecode(_png(picture), out=mx.nd.zeros((3, 7, 5)))
    with pytest.raises(mx.OperatorError, match="index 2 is outside out's batch of 2"):
        mx.nd.imdecode(_png(picture), out=mx.nd.zeros((2, 3, 5, 7)), index=2)


def test_mean_of_the_wrong_shape_or_dtype_is_refused(picture):
    with pytest.raises(mx.ShapeError, match="mean has shape"):
        mx.nd.imdecode(_png(picture), mean=mx.nd.zeros((3, 7, 5)))
    with pytest.raises(mx.OperatorError, match="mean has dtype float64, out has float32"):
        mx.nd.imdecode(_png(picture), mean=mx.nd.zeros((3, 5, 7), dtype=np.float64), out=mx.nd.zeros((3, 5, 7)))


def test_sixteen_bit_images_are_refused_not_misread(picture):
    deep = _png(picture.astype(np.uint16) * 257)
    with pytest.raises((mx.FormatError, mx.EngineError), match="8-bit images only"):
        mx.nd.imdecode(deep).asnumpy()


def test_a_text_string_is_refused():
    with pytest.raises(mx.OperatorError, match="imdecode: buf must be bytes"):
        mx.nd.imdecode("not bytes")
