"""ImageIter / ImageRecordIter over RecordIO files, .lst files and lists."""

from __future__ import annotations

import os

import cv2
import numpy as np
import pytest

import lazynd as mx
from lazynd import image, recordio


def test_mnist50_record_iter_yields_all_images_and_labels(data_dir):
    rec = os.path.join(data_dir, "mxnet", "mnist50.rec")
    it = image.ImageIter(8, (1, 28, 28), path_imgrec=rec, aug_list=[])
    labels, count = [], 0
    for batch in it:
        n = 8 - batch.pad
        assert batch.data[0].shape == (8, 1, 28, 28)
        labels.extend(batch.label[0].asnumpy()[:n].tolist())
        count += n
    assert count == 50
    assert labels == [float(i % 10) for i in range(50)]


def test_mnist50_indexed_shuffle_covers_every_record(data_dir):
    base = os.path.join(data_dir, "mxnet", "mnist50")
    it = image.ImageIter(
        10, (1, 28, 28), path_imgrec=base + ".rec", path_imgidx=base + ".idx", shuffle=True, aug_list=[]
    )
    reader = recordio.MXIndexedRecordIO(base + ".idx", base + ".rec", "r")
    batch = next(iter(it))
    keys = it.seq[:10]
    for i, key in enumerate(keys):
        header, payload = recordio.unpack(reader.read_idx(key))
        pixels = cv2.imdecode(np.frombuffer(payload, np.uint8), cv2.IMREAD_GRAYSCALE)
        np.testing.assert_array_equal(batch.data[0].asnumpy()[i, 0], pixels)
        assert batch.label[0].asnumpy()[i] == header.label


def test_mnist50_partitions_split_the_keys(data_dir):
    base = os.path.join(data_dir, "mxnet", "mnist50")
    parts = [
        image.ImageIter(5, (1, 28, 28), path_imgrec=base + ".rec", part_index=i, num_parts=2, aug_list=[]).seq
        for i in range(2)
    ]
    assert len(parts[0]) == 25 and not set(parts[0]) & set(parts[1])


@pytest.fixture
def jpeg_folder(tmp_path):
    rng = np.random.default_rng(1)
    lines = []
    for i in range(6):
        pixels = rng.integers(0, 255, (20 + i, 30, 3), dtype=np.uint8)
        cv2.imwrite(str(tmp_path / f"img{i}.jpg"), pixels)
        lines.append(f"{i}\t{i % 3}\timg{i}.jpg\n")
    (tmp_path / "list.lst").write_text("".join(lines))
    return tmp_path


def test_imglist_iter_with_augmenters(jpeg_folder):
    augs = image.CreateAugmenter((3, 16, 16), resize=18, rand_mirror=True, mean=True, std=True)
    it = image.ImageIter(
        4, (3, 16, 16), path_imglist=str(jpeg_folder / "list.lst"), path_root=str(jpeg_folder), aug_list=augs
    )
    batches = list(it)
    assert [b.pad for b in batches] == [0, 2]
    assert batches[0].data[0].shape == (4, 3, 16, 16)
    assert batches[0].label[0].asnumpy().tolist() == [0, 1, 2, 0]
    assert np.isfinite(batches[0].data[0].asnumpy()).all()


def test_nhwc_layout_from_python_list(jpeg_folder):
    items = [[float(i), f"img{i}.jpg"] for i in range(4)]
    it = image.ImageIter(
        2,
        (3, 16, 16),
        imglist=items,
        path_root=str(jpeg_folder),
        layout="NHWC",
        aug_list=[image.CenterCropAug((16, 16))],
    )
    assert next(it).data[0].shape == (2, 16, 16, 3)


def _bad_rec(tmp_path):
    path = str(tmp_path / "bad.rec")
    good = cv2.imencode(".png", np.full((8, 8, 3), 7, np.uint8))[1].tobytes()
    with recordio.MXRecordIO(path, "w") as writer:
        writer.write(recordio.pack(recordio.IRHeader(0, 1.0, 0, 0), good))
        writer.write(recordio.pack(recordio.IRHeader(0, 2.0, 1, 0), b"this is not an image"))
        writer.write(recordio.pack(recordio.IRHeader(0, 3.0, 2, 0), good))
    return path


def test_bad_record_raises_naming_it(tmp_path):
    it = image.ImageIter(3, (3, 8, 8), path_imgrec=_bad_rec(tmp_path), aug_list=[])
    with pytest.raises(mx.FormatError, match=r"record #1 of .*bad\.rec"):
        next(it)


def test_bad_record_skipped_with_warning(tmp_path):
    it = image.ImageIter(2, (3, 8, 8), path_imgrec=_bad_rec(tmp_path), aug_list=[], skip_bad=True)
    with pytest.warns(UserWarning, match="record #1"):
        batch = next(it)
    assert batch.label[0].asnumpy().tolist() == [1.0, 3.0]


def test_wrong_shape_after_augmentation_is_explained(jpeg_folder):
    it = image.ImageIter(
        2, (3, 16, 16), path_imglist=str(jpeg_folder / "list.lst"), path_root=str(jpeg_folder), aug_list=[]
    )
    with pytest.raises(mx.ShapeError, match="add a resize or crop augmenter"):
        next(it)


def _labelled_rec(tmp_path, labels):
    """A record file of 8x8 images, one per label (a number or a list of numbers)."""
    path = str(tmp_path / "labelled.rec")
    good = cv2.imencode(".png", np.full((8, 8, 3), 7, np.uint8))[1].tobytes()
    with recordio.MXRecordIO(path, "w") as writer:
        for i, label in enumerate(labels):
            writer.write(recordio.pack(recordio.IRHeader(0, label, i, 0), good))
    return path


@pytest.mark.parametrize("label_width", [1, 2, 4])
def test_labels_of_another_width_than_label_width_raise_naming_the_record(tmp_path, label_width):
    # records with 3 labels: MXNet refuses a label_width other than 3; no silent truncation
    path = _labelled_rec(tmp_path, [[0, 10, 20], [1, 11, 21]])
    it = image.ImageIter(2, (3, 8, 8), label_width=label_width, path_imgrec=path, aug_list=[])
    with pytest.raises(mx.FormatError, match=r"record #0 of .*labelled\.rec has 3 label values, label_width is"):
        next(it)


def test_a_single_label_fills_a_wider_label_row(tmp_path):
    path = _labelled_rec(tmp_path, [5.0, 6.0])
    it = image.ImageIter(2, (3, 8, 8), label_width=2, path_imgrec=path, aug_list=[])
    assert next(it).label[0].asnumpy().tolist() == [[5.0, 5.0], [6.0, 6.0]]


def test_next_sample_gives_a_records_header_label_as_mxnet(tmp_path):
    # MXNet 1.9.1 hands on header.label: a float for one label (``float(label)`` works), else an array
    single = image.ImageIter(1, (3, 8, 8), path_imgrec=_labelled_rec(tmp_path, [5.0]), aug_list=[])
    label, encoded = single.next_sample()
    assert isinstance(label, float) and label == 5.0 and encoded[:4] == b"\x89PNG"
    several = image.ImageIter(1, (3, 8, 8), label_width=2, path_imgrec=_labelled_rec(tmp_path, [[1, 2]]), aug_list=[])
    assert several.next_sample()[0].tolist() == [1.0, 2.0]


def _epochs(it, count=3):
    epochs = []
    for _ in range(count):
        epochs.append([(batch.label[0].asnumpy().tolist(), batch.pad) for batch in it])
        it.reset()
    return epochs


def test_last_batch_discard_drops_the_incomplete_batch(tmp_path):
    it = image.ImageIter(
        2, (3, 8, 8), path_imgrec=_labelled_rec(tmp_path, range(5)), aug_list=[], last_batch_handle="discard"
    )
    assert _epochs(it, 2) == [[([0.0, 1.0], 0), ([2.0, 3.0], 0)]] * 2


def test_last_batch_roll_over_carries_leftovers_into_the_next_epoch(tmp_path):
    it = image.ImageIter(
        2, (3, 8, 8), path_imgrec=_labelled_rec(tmp_path, range(5)), aug_list=[], last_batch_handle="roll_over"
    )
    # MXNet 1.9.1 gives the same batches, and the same pads: the rolled-over batch's pad
    # counts the examples the new epoch added to it
    assert _epochs(it) == [
        [([0.0, 1.0], 0), ([2.0, 3.0], 0)],
        [([4.0, 0.0], 1), ([1.0, 2.0], 0), ([3.0, 4.0], 0)],
        [([0.0, 1.0], 0), ([2.0, 3.0], 0)],
    ]


def test_unknown_last_batch_handle_raises():
    with pytest.raises(mx.OperatorError, match="last_batch_handle"):
        image.ImageIter(2, (3, 8, 8), imglist=[[0.0, "a.jpg"]], aug_list=[], last_batch_handle="wrap")


def test_image_record_iter_normalizes(data_dir):
    rec = os.path.join(data_dir, "mxnet", "mnist50.rec")
    it = image.ImageRecordIter(rec, (1, 28, 28), 10, mean_r=128.0, std_r=2.0, scale=0.5)
    batch = next(it)
    raw = next(image.ImageIter(10, (1, 28, 28), path_imgrec=rec, aug_list=[])).data[0].asnumpy()
    np.testing.assert_allclose(batch.data[0].asnumpy(), (raw - 128.0) / 4.0, rtol=1e-6)


def test_lst_file_blank_lines_are_skipped(jpeg_folder):
    lst = jpeg_folder / "gaps.lst"
    lst.write_text("\n0\t4\timg0.jpg\n\n1\t5\timg1.jpg\n\n")
    it = image.ImageIter(2, (3, 16, 16), path_imglist=str(lst), path_root=str(jpeg_folder), aug_list=None)
    assert next(it).label[0].asnumpy().tolist() == [4.0, 5.0]


def test_lst_file_with_an_index_used_twice_is_refused(jpeg_folder):
    # two files concatenated: the second line of index 0 replaced the first, and img0 was never read
    lst = jpeg_folder / "twice.lst"
    lst.write_text("0\t4\timg0.jpg\n1\t5\timg1.jpg\n0\t6\timg2.jpg\n")
    with pytest.raises(mx.FormatError, match=r"twice\.lst:3: index 0 is already used on line 1"):
        image.ImageIter(2, (3, 16, 16), path_imglist=str(lst), path_root=str(jpeg_folder), aug_list=[])


def test_lst_line_naming_a_missing_image_names_the_image_the_list_and_the_line(jpeg_folder):
    # the error named the image only: which of a list's lines was stale or damaged went unsaid
    lst = jpeg_folder / "stale.lst"
    lst.write_text("0\t4\timg0.jpg\n\n1\t5\tgone.jpg\n")
    it = image.ImageIter(2, (3, 16, 16), path_imglist=str(lst), path_root=str(jpeg_folder), aug_list=None)
    with pytest.raises(FileNotFoundError) as caught:  # a MissingFileError, so MXNet-style excepts catch it
        next(it)
    assert isinstance(caught.value, mx.MissingFileError)
    assert caught.value.filename == str(jpeg_folder / "gone.jpg")
    assert f"ImageIter: line 3 of {str(lst)!r} names an image that does not exist" in str(caught.value)


def test_imglist_item_naming_a_missing_image_names_the_item(tmp_path):
    it = image.ImageIter(1, (3, 8, 8), imglist=[[0.0, "gone.png"]], path_root=str(tmp_path), aug_list=[])
    with pytest.raises(mx.MissingFileError, match="ImageIter: imglist item 0 names an image .*gone.png"):
        next(it)


@pytest.mark.parametrize(
    ("line", "message"),
    [("x\t1\timg0.jpg\n", "integer index"), ("0\tcat\timg0.jpg\n", "numeric labels")],
)
def test_lst_file_with_a_bad_index_or_label_raises_format_error_naming_the_line(tmp_path, line, message):
    lst = tmp_path / "bad.lst"
    lst.write_text("0\t1\timg0.jpg\n" + line)
    with pytest.raises(mx.FormatError, match=f"bad.lst:2: .*{message}"):
        image.ImageIter(2, (3, 8, 8), path_imglist=str(lst), aug_list=[])


def test_lst_file_that_is_not_text_or_missing_raises_lazynd_errors(tmp_path):
    (tmp_path / "bin.lst").write_bytes(b"\xff\xfe\x00garbage\n")
    with pytest.raises(mx.FormatError, match="bin.lst: not UTF-8 text"):
        image.ImageIter(2, (3, 8, 8), path_imglist=str(tmp_path / "bin.lst"), aug_list=[])
    with pytest.raises(mx.MissingFileError, match="none.lst"):
        image.ImageIter(2, (3, 8, 8), path_imglist=str(tmp_path / "none.lst"), aug_list=[])


def test_imglist_item_with_a_label_that_is_not_a_number_raises_naming_it():
    with pytest.raises(mx.OperatorError, match="imglist item 1 is \\['cat', 'b.jpg'\\]"):
        image.ImageIter(2, (3, 8, 8), imglist=[[0.0, "a.jpg"], ["cat", "b.jpg"]], aug_list=[])


@pytest.mark.parametrize("data_shape", [None, 5, 1.5], ids=repr)
def test_a_data_shape_that_is_no_sequence_is_refused_by_name(data_shape):
    # len()'s TypeError before
    with pytest.raises(mx.OperatorError, match=r"ImageIter: data_shape must be \(channels, height, width\)"):
        image.ImageIter(2, data_shape, imglist=[[0, "a.jpg"]])


@pytest.mark.parametrize("imglist", [1.5, True, "a.jpg"], ids=repr)
def test_an_imglist_that_is_no_list_is_refused_by_name(imglist):
    # "'float' object is not iterable" before (a string was read as its letters)
    with pytest.raises(mx.OperatorError, match=r"ImageIter: imglist must be a list of \[label\(s\)..., path\] items"):
        image.ImageIter(2, (3, 8, 8), imglist=imglist)
