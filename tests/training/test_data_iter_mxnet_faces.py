"""The faces of MXNet 1.x's data iterators that programs read: ``NDArrayIter.idx``, the
one-NDArray getters of the iterators MXNet implements in C++ (``CSVIter``, ``MNISTIter``)."""

from __future__ import annotations

import numpy as np

from lazynd.io import NDArrayIter


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
