"""The faces of MXNet 1.x's data iterators that programs read: ``NDArrayIter.idx`` and its
batches' dtypes, the one-NDArray getters of the iterators MXNet implements in C++ (``CSVIter``)."""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx
from lazynd.io import CSVIter, NDArrayIter


def test_ndarray_iter_idx_is_the_order_the_first_epoch_reads_the_examples_in() -> None:
    data = np.arange(12, dtype=np.float32).reshape(6, 2)
    np.random.seed(3)
    it = NDArrayIter(data, np.arange(6), batch_size=1, shuffle=True)
    order = list(it.idx)
    assert sorted(order) == list(range(6)) and order != list(range(6))
    assert [batch.data[0].asnumpy()[0, 0] / 2 for batch in it] == order


def test_provide_data_prints_as_mxnet_191_prints_it() -> None:
    # print(train_iter.provide_data) is in most MXNet tutorials; its text is MXNet's, dtype and all
    it = NDArrayIter(np.zeros((4, 3), np.float32), np.zeros(4), batch_size=2)
    assert repr(it.provide_data) == "[DataDesc[data,(2, 3),<class 'numpy.float32'>,NCHW]]"
    it = NDArrayIter(mx.nd.zeros((4, 3), dtype="int32"), batch_size=2)
    assert repr(it.provide_data) == "[DataDesc[data,(2, 3),<class 'numpy.int32'>,NCHW]]"
    # a dtype given by the user prints as given (MXNet 1.9.1 keeps it)
    assert str(mx.io.DataDesc("x", (1,), "int32", "NC")) == "DataDesc[x,(1,),int32,NC]"


def test_a_data_desc_keeps_its_dtype_as_given() -> None:
    # MXNet 1.9.1 stores DataDesc's dtype untouched: code comparing it with what it gave holds
    assert mx.io.DataDesc("x", (1,), "float16").dtype == "float16"
    assert mx.io.DataDesc("x", (1,), np.dtype("int32")).dtype == np.dtype("int32")
    assert mx.io.DataDesc("x", (1,)).dtype is np.float32
    with pytest.raises(mx.LazyNDError, match="is not a dtype"):
        mx.io.DataDesc("x", (1,), "float17")


def test_roll_over_gives_the_first_batch_of_the_next_epoch_a_pad_of_the_carried_examples() -> None:
    # MXNet 1.9.1: 10 examples in batches of 4 carry [8, 9] over; that batch's pad is 2, so predict
    # gives 10 rows in that epoch (12 without the pad)
    it = NDArrayIter(np.arange(10, dtype=np.float32).reshape(10, 1), batch_size=4, last_batch_handle="roll_over")
    assert [batch.pad for batch in it] == [0, 0]
    it.reset()
    batches = list(it)
    assert batches[0].data[0].asnumpy().ravel().tolist() == [8, 9, 0, 1]
    assert [batch.pad for batch in batches] == [2, 0, 0]
    it.reset()
    assert [batch.pad for batch in it] == [0, 0]  # nothing was carried into this epoch
    it.hard_reset()
    assert next(iter(it)).pad == 0


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


@pytest.mark.parametrize("dtype", ["float64", "float16", "int32", "uint8"])
def test_ndarray_inputs_keep_their_dtype_as_mxnet(dtype) -> None:
    # MXNet 1.9.1: an NDArray input's batches and descriptions keep its dtype
    values = mx.nd.array([[1, 2], [3, 4], [5, 6]], dtype=dtype)
    it = NDArrayIter(values, values, batch_size=2)
    batch = it.next()
    assert batch.data[0].dtype == batch.label[0].dtype == np.dtype(dtype)
    assert it.provide_data[0].dtype == it.provide_label[0].dtype == np.dtype(dtype)
    assert batch.data[0].asnumpy().tolist() == [[1, 2], [3, 4]]


def test_numpy_inputs_give_float32_and_an_explicit_dtype_wins() -> None:
    # MXNet 1.9.1 reads NumPy inputs with mx.nd.array, so float32; lazynd's dtype= is for every input
    it = NDArrayIter({"a": np.arange(4, dtype=np.int64), "b": mx.nd.arange(4, dtype="float64")}, batch_size=2)
    assert [array.dtype for array in it.next().data] == [np.float32, np.float64]
    it = NDArrayIter(mx.nd.arange(4, dtype="int32"), batch_size=2, dtype="float16")
    assert it.next().data[0].dtype == np.float16 and it.provide_data[0].dtype == np.float16


def test_a_subclass_that_overrides_getdata_shapes_the_batches_as_in_mxnet() -> None:
    class Doubled(NDArrayIter):
        def getdata(self):
            return [array * 2 for array in super().getdata()]

    batch = Doubled(np.arange(4, dtype=np.float32), batch_size=2).next()
    assert batch.data[0].asnumpy().tolist() == [0.0, 2.0]


def test_init_data_names_arrays_as_mxnet_and_gives_ndarrays() -> None:
    pairs = mx.io._init_data(np.arange(3), allow_empty=False, default_name="svm_label")
    assert [name for name, _ in pairs] == ["svm_label"]
    assert isinstance(pairs[0][1], mx.nd.NDArray) and pairs[0][1].dtype == np.float32
    several = mx.io._init_data([np.zeros(2), np.ones(2)], allow_empty=False, default_name="x")
    assert [name for name, _ in several] == ["_0_x", "_1_x"]
    assert mx.io._init_data(None, allow_empty=True, default_name="x") == []


def test_init_data_without_arrays_and_not_allow_empty_names_the_input() -> None:
    with pytest.raises(mx.LazyNDError, match="svm_label"):
        mx.io._init_data(None, allow_empty=False, default_name="svm_label")


def test_assigning_label_pairs_renames_the_labels_of_the_batches() -> None:
    # MXNet's svm_mnist example renames softmax_label so that SVMOutput's svm_label is fed
    labels = np.array([0.0, 1.0, 2.0, 3.0])
    it = NDArrayIter(np.zeros((4, 2)), labels, batch_size=2)
    it.label = mx.io._init_data(labels, allow_empty=True, default_name="svm_label")
    assert [desc.name for desc in it.provide_label] == ["svm_label"]
    batches = list(it)
    assert [desc.name for desc in batches[0].provide_label] == ["svm_label"]
    assert batches[1].label[0].asnumpy().tolist() == [2.0, 3.0]


def test_assigning_labels_of_another_length_is_refused() -> None:
    it = NDArrayIter(np.zeros((4, 2)), np.zeros(4), batch_size=2)
    with pytest.raises(mx.LazyNDError, match=r"label 'svm_label' holds 3 examples; expected 4"):
        it.label = mx.io._init_data(np.zeros(3), allow_empty=True, default_name="svm_label")


def test_ndarray_iter_data_list_writes_reach_the_next_batches_and_spare_the_given_arrays() -> None:
    # deep embedded clustering refreshes its soft targets this way between batches
    data = np.arange(8, dtype=np.float32).reshape(4, 2)
    targets = np.zeros((4, 3))
    it = NDArrayIter({"data": data}, {"label": targets}, batch_size=2, last_batch_handle="roll_over")
    assert [arr.shape for arr in it.data_list] == [(4, 2), (4, 3)]
    it.data_list[1][:] = mx.nd.ones((4, 3)) * 5
    first = next(it)
    assert first.label[0].asnumpy().tolist() == [[5.0] * 3] * 2
    it.data_list[1][:] = np.full((4, 3), 7.0)
    assert next(it).label[0].asnumpy().tolist() == [[7.0] * 3] * 2
    assert not targets.any()  # the program's own array is not the iterator's storage


def test_the_io_module_of_mxnet_1x_hands_on_the_iterator_classes() -> None:
    # cnocr's GrayImageIter: `from mxnet.io import io`, then `io.DataBatch(new_data, label, pad=pad)`
    from lazynd.io import io

    assert io.DataBatch is mx.io.DataBatch and io.NDArrayIter is NDArrayIter and io.DataIter is mx.io.DataIter
    assert io.ImageRecordIter is mx.io.ImageRecordIter
    with pytest.raises(mx.LazyNDError, match="LibSVMIter"):
        io.LibSVMIter  # noqa: B018


class _ReorderingIter(NDArrayIter):
    """An MXNet-style subclass (the CapsNet example's): its reset reorders ``data``/``label`` itself,
    moves ``cursor`` back without calling NDArrayIter.reset, and next() drives the getters."""

    def __init__(self, data, label, batch_size) -> None:
        super().__init__(data, label, batch_size)
        self.reverse = False

    def reset(self) -> None:
        if getattr(self, "reverse", False):
            self.data = [(k, mx.nd.array(v.asnumpy()[::-1])) for k, v in self.data]
            self.label = [(k, mx.nd.array(v.asnumpy()[::-1])) for k, v in self.label]
        self.cursor = -self.batch_size

    def next(self) -> mx.io.DataBatch:
        if self.iter_next():
            return mx.io.DataBatch(data=self.getdata(), label=self.getlabel(), pad=self.getpad(), index=None)
        raise StopIteration


def test_a_subclass_that_resets_through_cursor_iterates_every_epoch() -> None:
    # lazynd had no ``cursor``, and a subclass reset that skipped NDArrayIter.reset left
    # iter_next without its state (AttributeError '_carried')
    it = _ReorderingIter(np.arange(5, dtype=np.float32).reshape(5, 1), np.arange(5), batch_size=2)
    first = [(b.data[0].asnumpy().ravel().tolist(), b.pad) for b in it]
    assert first == [([0, 1], 0), ([2, 3], 0), ([4, 0], 1)]
    it.reverse = True
    it.reset()
    second = [(b.data[0].asnumpy().ravel().tolist(), b.label[0].asnumpy().tolist()) for b in it]
    assert second == [([4, 3], [4, 3]), ([2, 1], [2, 1]), ([0, 4], [0, 4])]


def test_cursor_moves_as_mxnets_does() -> None:
    # MXNet 1.9.1: -batch_size before the first batch, the batch's start while in it, and on
    # by batch_size at every iter_next, also past the end
    it = NDArrayIter(np.arange(6), batch_size=4)
    seen = [it.cursor]
    while it.iter_next():
        seen.append((it.cursor, it.getpad()))
    assert seen + [it.cursor] == [-4, (0, 0), (4, 2), 8]
    it.reset()
    assert it.cursor == -4
    it = NDArrayIter(np.arange(10), batch_size=4, last_batch_handle="roll_over")
    list(it)
    it.reset()  # [8, 9] carried into the first batch: MXNet's cursor is then -2
    assert it.iter_next() and (it.cursor, it.getpad()) == (-2, 2)
