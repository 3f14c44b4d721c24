"""mx.io.ImageRecordIter / ImageRecordUInt8Iter: MXNet's arguments over a small .rec file.

The behaviours checked here (crops, normalisation, round_batch, the byte split of
num_parts, enlarging small images) were compared with MXNet 1.9.1 on the same files.
"""

from __future__ import annotations

import cv2
import numpy as np
import pytest

import lazynd as mx
from lazynd import recordio
from lazynd.errors import FormatError, OperatorError, ShapeError

SIZES = [(10, 12), (12, 10), (9, 9), (16, 14), (11, 13), (10, 10), (14, 9)]


@pytest.fixture
def rec(tmp_path) -> tuple[str, list[np.ndarray]]:
    """Seven PNG images of several sizes, labelled 0..6, with an index; and their RGB pixels."""
    rng = np.random.default_rng(0)
    path = str(tmp_path / "small.rec")
    writer = recordio.MXIndexedRecordIO(str(tmp_path / "small.idx"), path, "w")
    images = []
    for i, (h, w) in enumerate(SIZES):
        bgr = rng.integers(0, 256, (h, w, 3), dtype=np.uint8)
        writer.write_idx(i, recordio.pack_img(recordio.IRHeader(0, float(i), i, 0), bgr, img_fmt=".png"))
        images.append(bgr[:, :, ::-1])
    writer.close()
    return path, images


def center_crop_chw(rgb: np.ndarray, h: int = 8, w: int = 8) -> np.ndarray:
    y, x = (rgb.shape[0] - h) // 2, (rgb.shape[1] - w) // 2
    return rgb[y : y + h, x : x + w].transpose(2, 0, 1).astype(np.float32)


def epochs(it, n: int = 2) -> list[tuple[list[float], int, np.ndarray]]:
    out = []
    for _ in range(n):
        it.reset()
        out.extend((b.label[0].asnumpy().tolist(), b.pad, b.data[0].asnumpy()) for b in it)
    return out


def test_center_crops_normalised_per_channel(rec):
    path, images = rec
    it = mx.io.ImageRecordIter(
        path_imgrec=path, data_shape=(3, 8, 8), batch_size=3, mean_r=10, mean_g=20, mean_b=30, std_r=2, scale=0.5
    )
    assert it.provide_data[0].shape == (3, 3, 8, 8) and it.provide_label[0].shape == (3,)
    batch = next(it)
    mean, factor = np.array([10, 20, 30.0]).reshape(3, 1, 1), np.array([0.25, 0.5, 0.5]).reshape(3, 1, 1)
    for i in range(3):
        expected = (center_crop_chw(images[i]) - mean) * factor
        np.testing.assert_allclose(batch.data[0].asnumpy()[i], expected, rtol=1e-6)
    assert batch.label[0].asnumpy().tolist() == [0.0, 1.0, 2.0]


def test_round_batch_completes_from_the_start_and_the_next_epoch_goes_on(rec):
    it = mx.io.ImageRecordIter(path_imgrec=rec[0], data_shape=(3, 8, 8), batch_size=3)
    seen = [(labels, pad) for labels, pad, _ in epochs(it)]
    # as MXNet 1.9.1: 0 1 2 | 3 4 5 | 6 0 1 (pad 2) || 2 3 4 | 5 6 0 (pad 1)
    assert seen == [([0, 1, 2], 0), ([3, 4, 5], 0), ([6, 0, 1], 2), ([2, 3, 4], 0), ([5, 6, 0], 1)]


def test_without_round_batch_every_epoch_starts_over_and_pads(rec):
    it = mx.io.ImageRecordIter(path_imgrec=rec[0], data_shape=(3, 8, 8), batch_size=3, round_batch=False)
    seen = [(labels[0], pad) for labels, pad, _ in epochs(it)]
    assert seen == [(0, 0), (3, 0), (6, 2)] * 2


def test_images_smaller_than_the_crop_are_enlarged_first(rec):
    path, images = rec
    it = mx.io.ImageRecordIter(path_imgrec=path, data_shape=(3, 10, 10), batch_size=7)
    data = next(it).data[0].asnumpy()
    # 14 x 9 (h x w): width to 10, height 14*10//9 = 15, then the centre 10 x 10 (MXNet 1.9.1)
    enlarged = cv2.resize(images[6], (10, 15), interpolation=cv2.INTER_LINEAR)
    np.testing.assert_array_equal(data[6], center_crop_chw(enlarged, 10, 10))


@pytest.mark.parametrize(
    ("size", "steps"),
    [
        # too short and too narrow, portrait: height first (58 x 64), then width (64 x 70)
        ((25, 23), [(58, 64), (64, 70)]),
        # square: 64/41 in float32 times 41 rounds down to 63, so a second step to 64 x 65
        ((41, 41), [(63, 64), (64, 65)]),
    ],
)
def test_images_short_and_narrow_are_enlarged_in_mxnets_two_steps(tmp_path, size, steps):
    # the sizes of each step are MXNet 1.9.1's: its batches equal these resizes pixel for pixel
    bgr = cv2.GaussianBlur(np.random.default_rng(1).integers(0, 256, (*size, 3), dtype=np.uint8), (3, 3), 0)
    path = str(tmp_path / "one.rec")
    writer = recordio.MXRecordIO(path, "w")
    writer.write(recordio.pack_img(recordio.IRHeader(0, 0.0, 0, 0), bgr, img_fmt=".png"))
    writer.close()
    data = next(mx.io.ImageRecordIter(path_imgrec=path, data_shape=(3, 64, 64), batch_size=1)).data[0].asnumpy()
    enlarged = bgr[:, :, ::-1]
    for width, height in steps:
        enlarged = cv2.resize(enlarged, (width, height), interpolation=cv2.INTER_LINEAR)
    np.testing.assert_array_equal(data[0], center_crop_chw(enlarged, 64, 64))


def test_mirror_flips_every_image(rec):
    path, images = rec
    it = mx.io.ImageRecordIter(path_imgrec=path, data_shape=(3, 8, 8), batch_size=3, mirror=True)
    np.testing.assert_array_equal(next(it).data[0].asnumpy()[1], center_crop_chw(images[1])[:, :, ::-1])


def test_random_crops_are_windows_of_the_image_and_seeded(rec):
    path, images = rec
    first = [
        next(mx.io.ImageRecordIter(path_imgrec=path, data_shape=(3, 8, 8), batch_size=4, rand_crop=True, seed=3))
        .data[0]
        .asnumpy()
        for _ in range(2)
    ]
    np.testing.assert_array_equal(first[0], first[1])
    crop, full = first[0][3], images[3].transpose(2, 0, 1)
    windows = [full[:, y : y + 8, x : x + 8] for y in range(9) for x in range(7)]
    assert any(np.array_equal(crop, window) for window in windows)


def test_mean_img_is_computed_saved_and_then_loaded(rec, tmp_path):
    path, images = rec
    mean_path = tmp_path / "mean.nd"
    it = mx.io.ImageRecordIter(path_imgrec=path, data_shape=(3, 8, 8), batch_size=3, mean_img=str(mean_path), scale=2)
    saved = mx.nd.load(str(mean_path))
    expected = np.mean([center_crop_chw(im) for im in images], axis=0)
    assert list(saved) == ["mean_img"]
    np.testing.assert_allclose(saved["mean_img"].asnumpy(), expected, rtol=1e-6)
    first = next(it).data[0].asnumpy()[0]
    np.testing.assert_allclose(first, (center_crop_chw(images[0]) - expected) * 2, rtol=1e-5, atol=1e-4)
    # a second iterator reads the file instead of computing it again
    mx.nd.save(str(mean_path), {"mean_img": mx.nd.ones((3, 8, 8))})
    again = mx.io.ImageRecordIter(path_imgrec=path, data_shape=(3, 8, 8), batch_size=3, mean_img=str(mean_path))
    np.testing.assert_array_equal(next(again).data[0].asnumpy()[0], center_crop_chw(images[0]) - 1)


def test_mean_img_file_holds_mxnets_float32_sum_times_the_reciprocal(rec, tmp_path):
    # MXNet 1.9.1 adds the images up in float32 and multiplies by 1/count: the file is byte for byte
    # its own, where a float64 mean rounded once differs in the last bit of some pixels
    path, images = rec
    mean_path = tmp_path / "mean.nd"
    mx.io.ImageRecordIter(path_imgrec=path, data_shape=(3, 8, 8), batch_size=3, mean_img=str(mean_path))
    total = np.zeros((3, 8, 8), np.float32)
    for image in images:
        total += center_crop_chw(image)
    np.testing.assert_array_equal(mx.nd.load(str(mean_path))["mean_img"].asnumpy(), total * np.float32(1 / len(images)))


def test_mean_img_of_another_shape_is_an_error(rec, tmp_path):
    mean_path = str(tmp_path / "mean.nd")
    mx.nd.save(mean_path, {"mean_img": mx.nd.ones((3, 4, 4))})
    with pytest.raises(ShapeError, match=r"mean image in .*mean.nd has shape \(3, 4, 4\), expected \(3, 8, 8\)"):
        mx.io.ImageRecordIter(path_imgrec=rec[0], data_shape=(3, 8, 8), batch_size=3, mean_img=mean_path)


def test_num_parts_split_the_file_by_bytes(rec):
    parts = [
        [
            labels
            for labels, _, _ in epochs(
                mx.io.ImageRecordIter(
                    path_imgrec=rec[0], data_shape=(3, 8, 8), batch_size=3, num_parts=2, part_index=i
                ),
                1,
            )
        ]
        for i in range(2)
    ]
    # the larger images sit in the first half of the bytes: part 1 holds records 4, 5, 6 (MXNet 1.9.1)
    assert parts == [[[0, 1, 2], [3, 0, 1]], [[4, 5, 6]]]


def test_uint8_iter_gives_raw_pixels(rec):
    path, images = rec
    it = mx.io.ImageRecordUInt8Iter(path_imgrec=path, data_shape=(3, 8, 8), batch_size=2, mean_r=50)
    batch = next(it)
    assert batch.data[0].dtype == np.uint8 and it.provide_data[0].dtype == np.uint8
    np.testing.assert_array_equal(batch.data[0].asnumpy()[1], center_crop_chw(images[1]).astype(np.uint8))


def test_label_width_must_match_the_records(rec):
    it = mx.io.ImageRecordIter(path_imgrec=rec[0], data_shape=(3, 8, 8), batch_size=2, label_width=2)
    with pytest.raises(FormatError, match="has 1 label"):
        next(it)


def test_unimplemented_arguments_warn_and_unknown_ones_are_errors(rec):
    common = {"path_imgrec": rec[0], "data_shape": (3, 8, 8), "batch_size": 2}
    with pytest.warns(UserWarning, match="shuffle_chunk_size=3 is not implemented"):
        mx.io.ImageRecordIter(shuffle_chunk_size=3, preprocess_threads=2, prefetch_buffer=2, **common)
    with pytest.raises(OperatorError, match="unknown argument 'rand_crops'.*'max_rotate_angle'"):
        mx.io.ImageRecordIter(rand_crops=True, **common)


def test_dtype_uint8_gives_raw_pixels_as_mxnet(rec):
    path, images = rec
    it = mx.io.ImageRecordIter(
        path_imgrec=path, data_shape=(3, 8, 8), batch_size=2, mean_r=50, scale=0.5, dtype="uint8"
    )
    batch = next(it)
    # MXNet 1.9.1: dtype='uint8' is ImageRecordUInt8Iter, mean and scale have no effect
    assert batch.data[0].dtype == np.uint8 and it.provide_data[0].dtype == np.uint8
    np.testing.assert_array_equal(batch.data[0].asnumpy()[1], center_crop_chw(images[1]).astype(np.uint8))


def test_int8_iter_subtracts_the_rounded_mean_and_clips(rec):
    path, images = rec
    it = mx.io.ImageRecordInt8Iter(
        path_imgrec=path, data_shape=(3, 8, 8), batch_size=2, mean_r=2.5, mean_g=-1.5, mean_b=0.4, scale=0.5, std_r=2
    )
    batch = next(it)
    # MXNet 1.9.1: the mean is rounded half away from zero (3, -2, 0), std and scale have no effect,
    # the result is clipped to [-128, 127]
    assert batch.data[0].dtype == np.int8 and it.provide_data[0].dtype == np.int8
    expected = np.clip(center_crop_chw(images[1]) - np.array([3, -2, 0.0]).reshape(3, 1, 1), -128, 127)
    np.testing.assert_array_equal(batch.data[0].asnumpy()[1], expected.astype(np.int8))


def test_dtype_int8_is_the_int8_iter(rec):
    common = {"path_imgrec": rec[0], "data_shape": (3, 8, 8), "batch_size": 2, "mean_r": 50}
    by_dtype = next(mx.io.ImageRecordIter(dtype="int8", **common)).data[0].asnumpy()
    np.testing.assert_array_equal(by_dtype, next(mx.io.ImageRecordInt8Iter(**common)).data[0].asnumpy())


def test_v1_names_are_the_same_iterators(rec):
    # MXNet 1.9.1 gives the same data from ImageRecordIter_v1 / ImageRecordUInt8Iter_v1
    path, images = rec
    it = mx.io.ImageRecordIter_v1(path_imgrec=path, data_shape=(3, 8, 8), batch_size=2, mean_r=50, scale=0.5)
    expected = (center_crop_chw(images[1]) - np.array([50, 0, 0.0]).reshape(3, 1, 1)) * 0.5
    np.testing.assert_allclose(next(it).data[0].asnumpy()[1], expected)
    raw = mx.io.ImageRecordUInt8Iter_v1(path_imgrec=path, data_shape=(3, 8, 8), batch_size=2)
    np.testing.assert_array_equal(next(raw).data[0].asnumpy()[1], center_crop_chw(images[1]).astype(np.uint8))


def test_int8_iter_rounds_a_mean_image_half_away_from_zero(rec, tmp_path):
    path, images = rec
    mean = np.full((3, 8, 8), 100.5, np.float32)
    mean[2] = -0.5
    mx.nd.save(str(tmp_path / "mean.nd"), {"mean_img": mx.nd.array(mean)})
    it = mx.io.ImageRecordInt8Iter(
        path_imgrec=path, data_shape=(3, 8, 8), batch_size=2, mean_img=str(tmp_path / "mean.nd"), mean_r=7
    )
    # MXNet 1.9.1: pixel - round(mean_img), 100.5 -> 101 and -0.5 -> -1; mean_r is not used with mean_img
    rounded = np.where(mean > 0, 101.0, -1.0)
    expected = np.clip(center_crop_chw(images[0]) - rounded, -128, 127).astype(np.int8)
    np.testing.assert_array_equal(next(it).data[0].asnumpy()[0], expected)


def test_iter_next_steps_through_batches_and_the_getters_give_one_ndarray(rec):
    # MXNet 1.9.1's ImageRecordIter: iter_next() then getdata()/getlabel() (NDArrays), getpad()
    batches = list(mx.io.ImageRecordIter(path_imgrec=rec[0], data_shape=(3, 8, 8), batch_size=3))
    it = mx.io.ImageRecordIter(path_imgrec=rec[0], data_shape=(3, 8, 8), batch_size=3)
    steps = []
    while it.iter_next():
        data, label = it.getdata(), it.getlabel()
        assert isinstance(data, mx.nd.NDArray) and isinstance(label, mx.nd.NDArray)
        steps.append((label.asnumpy().tolist(), it.getpad(), data.asnumpy()))
    assert [(s[0], s[1]) for s in steps] == [(b.label[0].asnumpy().tolist(), b.pad) for b in batches]
    for step, batch in zip(steps, batches, strict=True):
        np.testing.assert_array_equal(step[2], batch.data[0].asnumpy())


def test_getdata_before_iter_next_names_the_missing_step(rec):
    it = mx.io.ImageRecordIter(path_imgrec=rec[0], data_shape=(3, 8, 8), batch_size=3)
    with pytest.raises(mx.DataError, match=r"ImageRecordIter.getdata\(\): no current batch; call iter_next\(\) first"):
        it.getdata()


def test_shuffle_needs_no_index_file(rec, tmp_path):
    # MXNet's ImageRecordIter shuffles a .rec file that has no .idx beside it (ApexAI/mxnet-ssd's
    # train_nexar.py trains that way); every record comes once per epoch, in a new order each epoch
    path, _ = rec
    alone = tmp_path / "alone.rec"
    alone.write_bytes(open(path, "rb").read())
    it = mx.io.ImageRecordIter(
        path_imgrec=str(alone), data_shape=(3, 8, 8), batch_size=7, shuffle=True, round_batch=False, seed=3
    )
    orders = [label for label, _, _ in epochs(it, 4)]
    assert all(sorted(order) == list(range(7)) for order in orders)
    assert len({tuple(order) for order in orders}) > 1


def test_num_parts_need_no_index_file(rec, tmp_path):
    # MXNet splits a .rec file without an .idx by bytes too (distributed training, one part per worker)
    alone = tmp_path / "alone.rec"
    alone.write_bytes(open(rec[0], "rb").read())
    parts = []
    for i in range(2):
        it = mx.io.ImageRecordIter(
            path_imgrec=str(alone), data_shape=(3, 8, 8), batch_size=3, num_parts=2, part_index=i
        )
        parts.append([labels for labels, _, _ in epochs(it, 1)])
    assert parts == [[[0, 1, 2], [3, 0, 1]], [[4, 5, 6]]]  # as with the index file


@pytest.mark.parametrize("indexed", [False, True])
def test_an_empty_rec_file_is_refused_as_mxnet_does(tmp_path, indexed):
    # MXNet 1.9.1 refuses it ("Cannot find any files"); lazynd gave epochs of no batches
    path = tmp_path / "empty.rec"
    path.write_bytes(b"")
    index = {}
    if indexed:
        (tmp_path / "empty.idx").write_bytes(b"")
        index = {"path_imgidx": str(tmp_path / "empty.idx"), "shuffle": True}
    named = r" \(as its index .*empty\.idx lists them\)" if indexed else ""
    with pytest.raises(FormatError, match=rf"ImageRecordIter: .*empty\.rec{named} holds no records"):
        mx.io.ImageRecordIter(path_imgrec=str(path), data_shape=(3, 8, 8), batch_size=2, **index)
