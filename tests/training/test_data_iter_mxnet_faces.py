"""The faces of MXNet 1.x's data iterators that programs read: ``NDArrayIter.idx``, the
one-NDArray getters of the iterators MXNet implements in C++ (``CSVIter``, ``MNISTIter``)."""

from __future__ import annotations

import numpy as np

import lazynd as mx
from lazynd.io import CSVIter, NDArrayIter


def test_ndarray_iter_idx_is_the_order_the_first_epoch_reads_the_examples_in() -> None:
    data = np.arange(12, dtype=np.float32).reshape(6, 2)
    np.random.seed(3)
    it = NDArrayIter(data, np.arange(6), batch_size=1, shuffle=True)
    order = list(it.idx)
    assert sorted(order) == list(range(6)) and order != list(range(6))
    assert [batch.data[0].asnumpy()[0, 0] / 2 for batch in it] == order


def test_ndarray_iter_idx_without_shuffle_is_the_identity() -> None:
    it = NDArrayIter(np.zeros((4, 3)), batch_size=2)
    assert it.idx.tolist() == [0, 1, 2, 3]


def test_csv_iter_getters_give_one_ndarray_and_batches_hold_lists(tmp_path) -> None:
    data_path, label_path = tmp_path / "data.csv", tmp_path / "label.csv"
    data_path.write_text("1,2\n3,4\n5,6\n")
    label_path.write_text("7\n8\n9\n")
    it = CSVIter(str(data_path), data_shape=(2,), label_csv=str(label_path), batch_size=2)
    assert it.iter_next()
    assert isinstance(it.getdata(), mx.nd.NDArray) and it.getdata().asnumpy().tolist() == [[1, 2], [3, 4]]
    assert isinstance(it.getlabel(), mx.nd.NDArray) and it.getlabel().asnumpy().tolist() == [7, 8]
    batch = it.next()
    assert [array.asnumpy().tolist() for array in batch.data] == [[[5, 6], [1, 2]]]
    assert [array.asnumpy().tolist() for array in batch.label] == [[9, 7]]
