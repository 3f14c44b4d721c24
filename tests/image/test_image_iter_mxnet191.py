"""ImageIter next to MXNet 1.9.1: padding from the epoch's start, hard_reset, the labels' dtype."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

import lazynd as mx
from lazynd import image, recordio


def _rec(tmp_path, count: int, indexed: bool = False) -> str:
    """Record file of 4x4 images; image i is all ``10 * (i + 1)`` with label i."""
    path = str(tmp_path / "flat.rec")
    writer = recordio.MXIndexedRecordIO(str(tmp_path / "flat.idx"), path, "w") if indexed else None
    plain = None if indexed else recordio.MXRecordIO(path, "w")
    for i in range(count):
        png = cv2.imencode(".png", np.full((4, 4, 3), 10 * (i + 1), np.uint8))[1].tobytes()
        record = recordio.pack(recordio.IRHeader(0, float(i), i, 0), png)
        if writer is not None:
            writer.write_idx(i, record)
        else:
            plain.write(record)
    (writer or plain).close()
    return path


def _batches(it):
    return [(b.data[0].asnumpy()[:, 0, 0, 0].tolist(), b.label[0].asnumpy().tolist(), b.pad) for b in it]


@pytest.mark.parametrize("indexed", [False, True])
def test_pad_fills_the_last_batch_with_the_epochs_first_images(tmp_path, indexed):
    it = image.ImageIter(3, (3, 4, 4), path_imgrec=_rec(tmp_path, 5, indexed), aug_list=[])
    # MXNet 1.9.1: the padded rows are images 0 and 1 (pixels and labels), then the epoch ends
    want = [([10.0, 20.0, 30.0], [0.0, 1.0, 2.0], 0), ([40.0, 50.0, 10.0], [3.0, 4.0, 0.0], 1)]
    assert _batches(it) == want
    it.reset()
    assert _batches(it) == want


def test_pad_wider_than_the_data_repeats_it_from_the_start(tmp_path):
    it = image.ImageIter(5, (3, 4, 4), path_imgrec=_rec(tmp_path, 2), aug_list=[])
    # MXNet 1.9.1 leaves the fifth row unset (zeros, an uninitialised label)
    assert _batches(it) == [([10.0, 20.0, 10.0, 20.0, 10.0], [0.0, 1.0, 0.0, 1.0, 0.0], 3)]


def test_hard_reset_forgets_rolled_over_images(tmp_path):
    it = image.ImageIter(2, (3, 4, 4), path_imgrec=_rec(tmp_path, 3), aug_list=[], last_batch_handle="roll_over")
    assert [b[1] for b in _batches(it)] == [[0.0, 1.0]]
    it.hard_reset()
    assert [b[1] for b in _batches(it)] == [[0.0, 1.0]]
    it.reset()  # a plain reset keeps image 2 for the next epoch's first batch
    assert [b[1] for b in _batches(it)] == [[2.0, 0.0], [1.0, 2.0]]


def test_dtype_reads_list_labels_as_that_type(tmp_path):
    cv2.imwrite(str(tmp_path / "a.png"), np.zeros((4, 4, 3), np.uint8))
    items = [[2.7, "a.png"], [-1.5, "a.png"]]
    labels = image.ImageIter(2, (3, 4, 4), imglist=items, path_root=str(tmp_path), aug_list=[], dtype="int32")
    assert next(labels).label[0].asnumpy().tolist() == [2.0, -1.0]
    floats = image.ImageIter(2, (3, 4, 4), imglist=items, path_root=str(tmp_path), aug_list=[], dtype="float64")
    assert next(floats).label[0].dtype == np.float32
    with pytest.raises(mx.OperatorError, match="ImageIter: dtype .* got 'float16'"):
        image.ImageIter(2, (3, 4, 4), imglist=items, path_root=str(tmp_path), aug_list=[], dtype="float16")


def test_a_list_next_to_an_indexed_record_file_gives_the_labels(tmp_path):
    path = _rec(tmp_path, 3, indexed=True)
    lst = tmp_path / "labels.lst"
    lst.write_text("".join(f"{i}\t{10 + i}\t{20 + i}\tunused.png\n" for i in range(3)))
    it = image.ImageIter(
        3, (3, 4, 4), label_width=2, path_imgrec=path, path_imgidx=str(tmp_path / "flat.idx"),
        path_imglist=str(lst), aug_list=[],
    )  # fmt: skip
    batch = next(it)
    # MXNet 1.9.1 reads the pixels from the records and the labels from the list, by key
    assert batch.label[0].asnumpy().tolist() == [[10.0, 20.0], [11.0, 21.0], [12.0, 22.0]]
    assert batch.data[0].asnumpy()[:, 0, 0, 0].tolist() == [10.0, 20.0, 30.0]


@pytest.mark.parametrize("batch_size", [0, -2, 1.5])
def test_a_batch_size_below_one_is_refused(tmp_path, batch_size):
    with pytest.raises(mx.OperatorError, match="ImageIter: batch_size must be a positive integer"):
        image.ImageIter(batch_size, (3, 4, 4), path_imgrec=_rec(tmp_path, 2), aug_list=[])


def test_a_missing_image_file_names_it(tmp_path):
    it = image.ImageIter(1, (3, 4, 4), imglist=[[0.0, "gone.png"]], path_root=str(tmp_path), aug_list=[])
    with pytest.raises(mx.MissingFileError, match="gone.png"):
        next(it)


def test_roll_over_pad_counts_the_examples_the_new_epoch_added(tmp_path):
    it = image.ImageIter(3, (3, 4, 4), path_imgrec=_rec(tmp_path, 7), aug_list=[], last_batch_handle="roll_over")
    epochs = []
    for _ in range(3):
        epochs.append([(b[1], b[2]) for b in _batches(it)])
        it.reset()
    # MXNet 1.9.1: one example carried -> pad 2, two carried -> pad 1
    assert epochs == [
        [([0.0, 1.0, 2.0], 0), ([3.0, 4.0, 5.0], 0)],
        [([6.0, 0.0, 1.0], 2), ([2.0, 3.0, 4.0], 0)],
        [([5.0, 6.0, 0.0], 1), ([1.0, 2.0, 3.0], 0), ([4.0, 5.0, 6.0], 0)],
    ]


class _GreyImageIter(image.ImageIter):
    """cnocr's GrayImageIter: it says its batches are one-channel, and greys the 3-channel ones in next()."""

    def __init__(self, batch_size, data_shape, **kwargs):
        super().__init__(batch_size, data_shape, label_name="label", **kwargs)
        self.provide_data = [("data", (batch_size, 1) + data_shape[1:])]

    def next(self):
        batch = super().next()
        grey = mx.nd.mean(batch.data[0], axis=1, keepdims=True)
        return mx.io.DataBatch([grey], batch.label, pad=batch.pad)


def test_a_subclass_may_assign_provide_data_and_still_gets_the_batches_of_data_shape(tmp_path):
    it = _GreyImageIter(2, (3, 4, 4), path_imgrec=_rec(tmp_path, 2), aug_list=[])
    assert it.provide_data == [("data", (2, 1, 4, 4))]
    assert it.provide_label[0].name == "label" and it.provide_label[0].shape == (2,)
    batch = it.next()
    assert batch.data[0].shape == (2, 1, 4, 4) and batch.data[0].asnumpy()[:, 0, 0, 0].tolist() == [10.0, 20.0]


def test_an_assigned_provide_label_wins_too(tmp_path):
    class Relabelled(image.ImageIter):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self.provide_label = [("softmax_label", (2, 1))]

    it = Relabelled(2, (3, 4, 4), path_imgrec=_rec(tmp_path, 2), aug_list=[])
    assert it.provide_label == [("softmax_label", (2, 1))]
    assert it.next().label[0].shape == (2,)  # the batches keep the iterator's own labels


def test_image_record_iter_describes_its_label_as_mxnets_c_iterators_do(tmp_path):
    # print(train.provide_label) in MXNet 1.9.1: every C++ iterator gives DataDesc's default layout,
    # "...,NCHW]" for the label too (lazynd printed "N"); the Python ImageIter keeps its own
    it = mx.io.ImageRecordIter(path_imgrec=_rec(tmp_path, 4), data_shape=(3, 4, 4), batch_size=2)
    assert repr(it.provide_label) == "[DataDesc[softmax_label,(2,),<class 'numpy.float32'>,NCHW]]"
    assert repr(next(iter(it)).provide_label) == repr(it.provide_label)
