"""ImageDetIter: detection records in, (data, padded object rows) batches out, as MXNet 1.9.1."""

from __future__ import annotations

import random

import numpy as np
import pytest

import lazynd as mx
from lazynd import image, recordio

RESIZE_ONLY = [image.DetBorrowAug(image.ForceResizeAug((32, 32)))]


def test_label_shape_is_the_largest_object_count(standard_det_rec: str) -> None:
    it = image.ImageDetIter(2, (3, 32, 32), path_imgrec=standard_det_rec, aug_list=RESIZE_ONLY)
    assert it.label_shape == (3, 5)
    assert it.provide_label[0].name == "label" and it.provide_label[0].shape == (2, 3, 5)


def test_batches_hold_objects_then_rows_of_minus_one(standard_det_rec: str) -> None:
    it = image.ImageDetIter(2, (3, 32, 32), path_imgrec=standard_det_rec, aug_list=RESIZE_ONLY)
    batches = list(it)
    assert [b.pad for b in batches] == [0, 0, 1]
    label = batches[0].label[0].asnumpy()
    np.testing.assert_allclose(label[0], [[0, 0.1, 0.2, 0.5, 0.8], [-1] * 5, [-1] * 5], atol=1e-6)
    np.testing.assert_allclose(label[1], [[0, 0.1, 0.2, 0.5, 0.8], [1, 0.2, 0.2, 0.6, 0.8], [-1] * 5], atol=1e-6)
    assert batches[0].data[0].shape == (2, 3, 32, 32)


def test_pixels_are_the_decoded_image(standard_det_rec: str) -> None:
    # image 0 is 40 x 60 already
    it = image.ImageDetIter(1, (3, 40, 60), path_imgrec=standard_det_rec, aug_list=[])
    batch = it.next()
    reader = recordio.MXIndexedRecordIO(standard_det_rec[:-4] + ".idx", standard_det_rec, "r")
    _, pixels = recordio.unpack_img(reader.read_idx(0))
    np.testing.assert_array_equal(batch.data[0].asnumpy()[0], pixels[:, :, ::-1].transpose(2, 0, 1))


def test_seeded_augmentation_draws_mxnet_windows(standard_det_rec: str) -> None:
    random.seed(1)
    np.random.seed(1)
    it = image.ImageDetIter(
        2,
        (3, 32, 32),
        path_imgrec=standard_det_rec,
        path_imgidx=standard_det_rec[:-4] + ".idx",
        rand_crop=1,
        rand_pad=0.5,
        rand_mirror=True,
        min_object_covered=0.5,
        area_range=(0.3, 2.0),
    )
    label = it.next().label[0].asnumpy()
    # MXNet 1.9.1, same seed, arguments and records
    expected = [
        [[0.0, 0.156250, 0.153846, 0.906250, 1.0], [-1] * 5, [-1] * 5],
        [[0.0, 0.171429, 0.0, 0.857143, 0.696552], [1.0, 0.342857, 0.0, 1.0, 0.696552], [-1] * 5],
    ]
    np.testing.assert_allclose(label, expected, atol=2e-6)


def test_imglist_with_detection_labels(tmp_path, det_label) -> None:
    import cv2

    cv2.imwrite(str(tmp_path / "a.png"), np.zeros((10, 20, 3), np.uint8))
    items = [[*det_label([[3, 0, 0, 1, 1], [4, 0.5, 0.5, 1, 1]]).tolist(), "a.png"]]
    it = image.ImageDetIter(1, (3, 8, 8), imglist=items, path_root=str(tmp_path))
    assert it.label_shape == (2, 5)
    np.testing.assert_allclose(it.next().label[0].asnumpy()[0, :, 0], [3, 4])


def test_sync_label_shape_pads_the_smaller_iterator(write_det_rec, det_label, standard_det_rec) -> None:
    small = write_det_rec([det_label([[0, 0.1, 0.1, 0.5, 0.5]])], name="small")
    big = image.ImageDetIter(1, (3, 16, 16), path_imgrec=standard_det_rec)
    other = image.ImageDetIter(1, (3, 16, 16), path_imgrec=small)
    assert big.sync_label_shape(other) is other
    assert other.label_shape == (3, 5) and other.next().label[0].shape == (1, 3, 5)


def test_reshape_refuses_fewer_objects_or_another_width(standard_det_rec: str) -> None:
    it = image.ImageDetIter(1, (3, 16, 16), path_imgrec=standard_det_rec)
    it.reshape(label_shape=(6, 5))
    assert it.provide_label[0].shape == (1, 6, 5)
    with pytest.raises(mx.LazyNDError, match="fewer objects"):
        it.reshape(label_shape=(2, 5))
    with pytest.raises(mx.LazyNDError, match="object width must stay 5"):
        it.reshape(label_shape=(6, 6))


def test_header_object_width_that_does_not_divide_is_named(write_det_rec, det_label) -> None:
    rec = write_det_rec([det_label([[0, 0.1, 0.1, 0.5, 0.5]]), det_label([[0, 0.1, 0.1, 0.5, 0.5]], header=(2, 6))])
    with pytest.raises(mx.LazyNDError, match=r"record 1 of .*det\.rec.*objects are 6 values wide"):
        image.ImageDetIter(1, (3, 16, 16), path_imgrec=rec, path_imgidx=rec[:-4] + ".idx")


def test_records_with_different_object_widths_are_refused(write_det_rec, det_label) -> None:
    rec = write_det_rec([det_label([[0, 0.1, 0.1, 0.5, 0.5]]), det_label([[0, 0.1, 0.1, 0.5, 0.5, 7]], (2, 6))])
    with pytest.raises(mx.LazyNDError, match=r"record #1 of .* 6 values wide, but record #0 .* has 5"):
        image.ImageDetIter(1, (3, 16, 16), path_imgrec=rec)


def test_boxes_outside_the_unit_square_are_refused(write_det_rec, det_label) -> None:
    rec = write_det_rec([det_label([[0, 10, 10, 50, 50]])])
    with pytest.raises(mx.LazyNDError, match=r"record #0 of .*det\.rec has box .* outside \[0, 1\]"):
        image.ImageDetIter(1, (3, 16, 16), path_imgrec=rec)


def test_a_label_too_short_for_an_object_is_refused(write_det_rec) -> None:
    rec = write_det_rec([np.array([2.0, 5.0, 1.0], np.float32)])
    with pytest.raises(mx.LazyNDError, match=r"record #0 of .*det\.rec has a label of 3 values"):
        image.ImageDetIter(1, (3, 16, 16), path_imgrec=rec)


def test_an_empty_rec_file_is_refused(tmp_path) -> None:
    rec = tmp_path / "empty.rec"
    rec.write_bytes(b"")
    with pytest.raises(mx.LazyNDError, match=r"empty\.rec holds no records"):
        image.ImageDetIter(1, (3, 16, 16), path_imgrec=str(rec))


def test_padding_rows_of_minus_one_in_a_record_are_dropped(write_det_rec, det_label) -> None:
    rec = write_det_rec([det_label([[0, 0.1, 0.1, 0.5, 0.5], [-1, -1, -1, -1, -1]])])
    it = image.ImageDetIter(1, (3, 16, 16), path_imgrec=rec)
    assert it.label_shape == (1, 5)


@pytest.mark.parametrize("header", [[np.nan, 5.0], [2.0, np.inf], [-np.inf, 5.0]])
def test_a_label_header_that_is_not_finite_is_refused_naming_the_record(write_det_rec, header) -> None:
    # int() of it raised a bare ValueError / OverflowError that named neither the file nor the record
    rec = write_det_rec([np.array(header + [0, 0.1, 0.1, 0.5, 0.5], np.float32)])
    with pytest.raises(mx.LazyNDError, match=r"record #0 of .*det\.rec: label header gives header width"):
        image.ImageDetIter(1, (3, 16, 16), path_imgrec=rec)


def test_an_object_with_a_nan_class_is_refused_rather_than_batched(write_det_rec, det_label) -> None:
    # NaN fails every range check, so it reached the batch as a class id
    rec = write_det_rec([det_label([[np.nan, 0.1, 0.1, 0.5, 0.5]])])
    with pytest.raises(mx.LazyNDError, match=r"record #0 of .*det\.rec has object \[nan, .* not finite"):
        image.ImageDetIter(1, (3, 16, 16), path_imgrec=rec)


def test_an_empty_index_is_named_when_it_lists_no_records(write_det_rec, det_label, tmp_path) -> None:
    rec = write_det_rec([det_label([[0, 0.1, 0.1, 0.5, 0.5]])])
    (tmp_path / "empty.idx").write_bytes(b"")
    with pytest.raises(mx.LazyNDError, match=r"det\.rec \(as its index .*empty\.idx lists them\) holds no records"):
        image.ImageDetIter(1, (3, 16, 16), path_imgrec=rec, path_imgidx=str(tmp_path / "empty.idx"))
