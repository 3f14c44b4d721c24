"""MNISTIter: reading idx files, scaling, parts, shuffles and MXNet's arguments."""

from __future__ import annotations

import re

import numpy as np
import pytest

import lazynd as mx
from lazynd.errors import DataError
from lazynd.io import MNISTIter


def test_mnist_iter_reads_idx_files_scaled_to_unit_range(data_dir) -> None:
    folder = data_dir / "mnist"
    it = MNISTIter(
        str(folder / "t10k-images-idx3-ubyte.gz"),
        str(folder / "t10k-labels-idx1-ubyte.gz"),
        batch_size=100,
        shuffle=False,
    )
    batch = next(it)
    pixels = batch.data[0].asnumpy()
    assert pixels.shape == (100, 1, 28, 28)
    assert 0.0 <= pixels.min() and pixels.max() <= 1.0
    assert batch.label[0].asnumpy()[:5].tolist() == [7.0, 2.0, 1.0, 0.0, 4.0]
    assert sum(1 for _ in it) == 99


def test_mnist_iter_flat_and_seeded_shuffle_is_reproducible(data_dir) -> None:
    first = MNISTIter(batch_size=50, shuffle=True, flat=True, seed=7, data_dir=data_dir, train=False)
    second = MNISTIter(batch_size=50, shuffle=True, flat=True, seed=7, data_dir=data_dir, train=False)
    a, b = next(first), next(second)
    assert a.data[0].shape == (50, 784)
    assert np.array_equal(a.label[0].asnumpy(), b.label[0].asnumpy())
    in_file_order = next(MNISTIter(batch_size=50, shuffle=False, flat=True, data_dir=data_dir, train=False))
    assert not np.array_equal(a.label[0].asnumpy(), in_file_order.label[0].asnumpy())


def _write_idx(tmp_path, pixels: np.ndarray, labels: np.ndarray) -> tuple[str, str]:
    """IDX image and label files (uncompressed) holding ``pixels`` (N, rows, cols) and ``labels``."""
    images, names = tmp_path / "images-idx3-ubyte", tmp_path / "labels-idx1-ubyte"
    images.write_bytes(np.array([2051, *pixels.shape], ">u4").tobytes() + pixels.astype(np.uint8).tobytes())
    names.write_bytes(np.array([2049, len(labels)], ">u4").tobytes() + labels.astype(np.uint8).tobytes())
    return str(images), str(names)


def test_mnist_iter_scales_pixels_by_1_over_256_as_mxnet(tmp_path) -> None:
    pixels = np.array([0, 1, 128, 255], np.uint8).repeat(4).reshape(1, 4, 4)
    it = MNISTIter(*_write_idx(tmp_path, pixels, np.array([3])), batch_size=1, shuffle=False)
    # MXNet 1.9.1's MNISTIter gives 255/256 for a white pixel
    np.testing.assert_array_equal(next(it).data[0].asnumpy().ravel(), pixels.ravel() / np.float32(256))


def test_mnist_iter_parts_split_as_mxnet_and_keep_every_example(tmp_path) -> None:
    files = _write_idx(tmp_path, np.zeros((10, 2, 2), np.uint8), np.arange(10))
    parts = [
        [
            label
            for batch in MNISTIter(*files, batch_size=1, shuffle=False, num_parts=3, part_index=i)
            for label in batch.label[0].asnumpy().tolist()
        ]
        for i in range(3)
    ]
    # MXNet starts part i at int(10 / 3 * i): [0, 3), [3, 6), [6, 10)
    assert parts == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0], [6.0, 7.0, 8.0, 9.0]]


def test_mnist_iter_missing_file_names_the_path(tmp_path) -> None:
    with pytest.raises(DataError, match="no IDX file"):
        MNISTIter(str(tmp_path / "nope"), str(tmp_path / "nope2"))


def test_mnist_iter_a_folder_for_a_file_is_refused_by_name(tmp_path) -> None:
    # open()'s IsADirectoryError came from inside the IDX reader
    with pytest.raises(DataError, match=re.escape(f"MNISTIter: {str(tmp_path)!r} is a folder, not an IDX file")):
        MNISTIter(str(tmp_path), str(tmp_path))


@pytest.mark.parametrize("flat", [False, True])
def test_mnist_iter_of_files_without_images_is_refused_as_too_few_examples(tmp_path, flat) -> None:
    # as a file shorter than one batch is (MXNet 1.9.1 gives no batch); flat=True raised the load
    # line's IndexError (images[0] of none), then NumPy's reshape error
    files = _write_idx(tmp_path, np.zeros((0, 2, 2), np.uint8), np.arange(0))
    with pytest.raises(DataError, match="MNISTIter: batch_size 4 is larger than the 0 examples"):
        MNISTIter(*files, batch_size=4, flat=flat)


@pytest.mark.parametrize("path", [1.5, ["a"], 0], ids=repr)
def test_mnist_iter_paths_that_are_no_paths_are_refused_by_name(path) -> None:
    # os.fspath()'s TypeError before
    with pytest.raises(DataError, match=re.escape(f"MNISTIter: image and label must be file paths, got {path!r}")):
        MNISTIter(path, path)


def test_mnist_iter_shuffles_once_so_passes_agree(data_dir) -> None:
    it = MNISTIter(batch_size=100, shuffle=True, flat=True, seed=3, data_dir=data_dir, train=False)
    first = [b.label[0].asnumpy() for b in it]
    it.reset()
    second = [b.label[0].asnumpy() for b in it]
    assert all(np.array_equal(a, b) for a, b in zip(first, second, strict=True))
    in_file_order = next(MNISTIter(batch_size=100, shuffle=False, flat=True, data_dir=data_dir, train=False))
    assert not np.array_equal(first[0], in_file_order.label[0].asnumpy())


def test_mnist_iter_getters_give_one_ndarray_as_in_mxnet(data_dir) -> None:

    it = MNISTIter(batch_size=10, shuffle=False, data_dir=data_dir, train=False)
    assert it.iter_next()
    assert isinstance(it.getlabel(), mx.nd.NDArray) and it.getlabel().shape == (10,)
    assert isinstance(it.getdata(), mx.nd.NDArray) and it.getdata().shape == (10, 1, 28, 28)


def test_mnist_iter_accepts_mxnet_arguments(data_dir) -> None:
    with pytest.warns(UserWarning, match="prefetch_buffer"):
        it = MNISTIter(
            batch_size=10, input_shape=(784,), flat=True, silent=True, prefetch_buffer=4, data_dir=data_dir, train=False
        )
    assert it.provide_data[0].shape == (10, 784)
    with pytest.raises(DataError, match="unknown argument"):
        MNISTIter(batch_size=10, bogus=1, data_dir=data_dir, train=False)


def test_mnist_iter_leaves_out_the_examples_that_do_not_fill_a_batch(tmp_path) -> None:
    files = _write_idx(tmp_path, np.zeros((10, 2, 2), np.uint8), np.arange(10))
    it = MNISTIter(*files, batch_size=4, shuffle=False)
    # MXNet 1.9.1's MNISTIter: two full batches, no padded third one
    assert [(b.label[0].asnumpy().tolist(), b.pad) for b in it] == [([0, 1, 2, 3], 0), ([4, 5, 6, 7], 0)]


def test_mnist_iter_reads_its_arguments_from_text_as_mxnets_iterator_does(tmp_path) -> None:
    files = _write_idx(tmp_path, np.arange(6 * 4, dtype=np.uint8).reshape(6, 2, 2), np.arange(6))
    from_text = MNISTIter(*files, batch_size="2", shuffle="True", seed="3", flat="true", num_parts="2", part_index="1")
    given = MNISTIter(*files, batch_size=2, shuffle=True, seed=3, flat=True, num_parts=2, part_index=1)
    for text_batch, batch in zip(from_text, given, strict=True):
        np.testing.assert_array_equal(text_batch.data[0].asnumpy(), batch.data[0].asnumpy())
        np.testing.assert_array_equal(text_batch.label[0].asnumpy(), batch.label[0].asnumpy())


@pytest.mark.parametrize(
    "name, value",
    [("batch_size", "ten"), ("flat", "bogus"), ("shuffle", 2), ("seed", "x"), ("num_parts", 1.5), ("silent", "no")],
)
def test_mnist_iter_arguments_of_the_wrong_kind_are_refused_by_name(tmp_path, name, value) -> None:
    files = _write_idx(tmp_path, np.zeros((4, 2, 2), np.uint8), np.arange(4))
    with pytest.raises(mx.LazyNDError, match=f"MNISTIter: invalid value {value!r} for parameter '{name}'"):
        MNISTIter(*files, **{"batch_size": 2, name: value})


def test_mnist_iter_errors_name_mnist_iter_not_the_class_under_it(tmp_path) -> None:
    # MNISTIter is an NDArrayIter underneath; its errors must name what the user called
    images, labels = _write_idx(tmp_path, np.zeros((3, 4, 4)), np.arange(3))
    with pytest.raises(DataError, match=r"^MNISTIter: batch_size 4 is larger than the 3 examples"):
        MNISTIter(images, labels, batch_size=4, shuffle=False)


def test_mnist_iter_logs_mxnets_load_line_unless_silent(tmp_path, caplog) -> None:
    # MXNet 1.9.1 logs "MNISTIter: load N images, shuffle=S, shape=..." (flat: (B,784), else [B,1,28,28])
    files = _write_idx(tmp_path, np.zeros((3, 28, 28), np.uint8), np.array([1, 2, 3]))
    with caplog.at_level("INFO", logger="lazynd.io"):
        MNISTIter(*files, batch_size=2, flat=True)
        MNISTIter(*files, batch_size=2, shuffle=False)
        MNISTIter(*files, batch_size=2, silent=True)
    lines = [r.getMessage() for r in caplog.records if r.name == "lazynd.io"]
    assert lines == [
        "MNISTIter: load 3 images, shuffle=1, shape=(2,784)",
        "MNISTIter: load 3 images, shuffle=0, shape=[2,1,28,28]",
    ]


@pytest.mark.parametrize("flat", [False, True])
def test_mnist_iter_describes_its_data_as_nchw_flat_or_not_as_mxnet(tmp_path, flat) -> None:
    # MXNet 1.9.1 gives every MNISTIter input the default layout, flat=True included
    image, label = _write_idx(tmp_path, np.zeros((4, 2, 2), np.uint8), np.arange(4, dtype=np.uint8))
    it = MNISTIter(image=image, label=label, batch_size=2, flat=flat)
    assert [d.layout for d in it.provide_data + it.provide_label] == ["NCHW", "NCHW"]


@pytest.mark.parametrize(
    ("options", "shape"),
    [
        ({"data_shape": (784,)}, (2, 1, 2, 2)),
        ({"input_shape": (1, 28, 28), "flat": True}, (2, 4)),
        ({"data_shape": (3, 3), "flat": True}, (2, 4)),
    ],
)
def test_mnist_iter_shape_arguments_do_not_decide_the_layout_as_in_mxnet(tmp_path, options, shape) -> None:
    # MXNet 1.9.1's MNISTIter ignores input_shape/data_shape: flat alone decides; lazynd warns that they disagree
    image, label = _write_idx(tmp_path, np.zeros((4, 2, 2), np.uint8), np.arange(4, dtype=np.uint8))
    with pytest.warns(UserWarning, match="is ignored, as by MXNet: flat=.* decides the layout"):
        it = MNISTIter(image=image, label=label, batch_size=2, **options)
    assert it.provide_data[0].shape == shape
    assert next(it).data[0].shape == shape


def test_mnist_iter_shape_arguments_that_agree_with_flat_are_silent(tmp_path, recwarn) -> None:
    image, label = _write_idx(tmp_path, np.zeros((4, 2, 2), np.uint8), np.arange(4, dtype=np.uint8))
    MNISTIter(image=image, label=label, batch_size=2, flat=True, data_shape=(4,))
    MNISTIter(image=image, label=label, batch_size=2, input_shape=(1, 2, 2))
    assert not [w for w in recwarn if "MNISTIter" in str(w.message)]
