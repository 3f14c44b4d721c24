"""NDArrayIter inputs: the forms data and labels may take, their names, and what is refused."""

from __future__ import annotations

import time
from collections import OrderedDict

import numpy as np
import pytest
from iter_epochs import epoch_values

import lazynd as mx
from lazynd.engine import get_engine
from lazynd.errors import DataError
from lazynd.io import NDArrayIter


def test_dict_inputs_are_named_and_sorted() -> None:
    it = NDArrayIter({"b": np.zeros((4, 2)), "a": np.ones((4, 3))}, {"lab": np.zeros(4)}, batch_size=2)
    assert [d.name for d in it.provide_data] == ["a", "b"]
    assert [d.shape for d in it.provide_data] == [(2, 3), (2, 2)]
    assert it.provide_label[0].name == "lab"


def test_an_ordered_dict_is_sorted_by_name_as_mxnet_1x_sorts_it() -> None:
    # MXNet 1.9.1's _init_data returns sorted(data.items()) for every dict: the batch's arrays
    # and provide_data come in name order, not in the order the OrderedDict was built
    data = OrderedDict([("b", np.zeros((4, 2))), ("a", np.ones((4, 3)))])
    labels = OrderedDict([("y", np.zeros(4)), ("x", np.ones(4))])
    it = NDArrayIter(data, labels, batch_size=2)
    assert [(d.name, d.shape) for d in it.provide_data] == [("a", (2, 3)), ("b", (2, 2))]
    assert [d.name for d in it.provide_label] == ["x", "y"]
    batch = it.next()
    assert [a.shape for a in batch.data] == [(2, 3), (2, 2)]
    np.testing.assert_array_equal(batch.label[0].asnumpy(), [1, 1])


def test_a_list_of_name_array_pairs_keeps_its_order() -> None:
    it = NDArrayIter([("b", np.zeros(4)), ("a", np.zeros(4))], batch_size=2)
    assert [d.name for d in it.provide_data] == ["b", "a"]


def test_lists_of_several_arrays_are_named_as_in_mxnet() -> None:
    # MXNet names a list of several inputs _0_data, _1_data...; a bound symbol's
    # variables must carry the same names
    x, y = np.zeros((4, 2)), np.zeros(4)
    it = NDArrayIter([x, x], [y, y], batch_size=2)
    assert [d.name for d in it.provide_data] == ["_0_data", "_1_data"]
    assert [d.name for d in it.provide_label] == ["_0_softmax_label", "_1_softmax_label"]
    single = NDArrayIter([x], [y], batch_size=2)
    assert [d.name for d in single.provide_data] == ["data"]
    assert [d.name for d in single.provide_label] == ["softmax_label"]


def test_ndarray_inputs_are_accepted() -> None:
    it = NDArrayIter(mx.nd.array(np.arange(4)), batch_size=2)
    assert epoch_values(it) == [[0.0, 1.0], [2.0, 3.0]]


def test_mismatched_example_counts_raise() -> None:
    with pytest.raises(DataError, match="same number of examples"):
        NDArrayIter(np.zeros(4), np.zeros(5), batch_size=2)


def test_bad_last_batch_handle_raises() -> None:
    with pytest.raises(DataError, match="last_batch_handle"):
        NDArrayIter(np.zeros(4), batch_size=2, last_batch_handle="wrap")


def test_bad_batch_size_raises() -> None:
    with pytest.raises(DataError, match="batch_size"):
        NDArrayIter(np.zeros(4), batch_size=0)


def test_an_empty_label_list_means_no_labels_as_in_mxnet() -> None:
    it = NDArrayIter(np.zeros((4, 2)), [], batch_size=2)
    assert it.provide_label == []
    assert next(it).label == []


def test_a_list_of_name_array_pairs_names_the_inputs_in_its_order() -> None:
    x = np.arange(8, dtype=np.float32).reshape(4, 2)
    it = NDArrayIter([("b", x), ("a", x + 10)], [("lab", np.arange(4))], batch_size=2)
    assert [d.name for d in it.provide_data] == ["b", "a"]
    assert [d.name for d in it.provide_label] == ["lab"]
    batch = next(it)
    assert batch.data[1].asnumpy().tolist() == [[10.0, 11.0], [12.0, 13.0]]


def test_repeated_input_names_raise() -> None:
    x = np.zeros((4, 2))
    with pytest.raises(DataError, match="unique"):
        NDArrayIter([("a", x), ("a", x)], batch_size=2)


def test_ragged_nested_lists_raise_a_data_error() -> None:
    with pytest.raises(DataError, match="not a rectangular array"):
        NDArrayIter([[1, 2], [3]], batch_size=1)


@pytest.mark.parametrize("values", [np.array(["a", "b"]), np.array([object(), object()]), np.zeros(2, complex)])
def test_inputs_that_are_not_real_numbers_raise_a_data_error_naming_them(values) -> None:
    with pytest.raises(DataError, match="data 'data' holds .* values; expected numbers"):
        NDArrayIter(values, batch_size=1)


def test_data_and_label_are_named_ndarrays_as_in_mxnet() -> None:
    # user programs read the whole set back as MXNet holds it: it.data[0][1].asnumpy()
    x, y = np.arange(12.0).reshape(6, 2), np.arange(6.0)
    it = NDArrayIter({"x": x}, {"y": y}, batch_size=4)
    (name, data), ((label_name, label),) = it.data[0], it.label
    assert (name, label_name) == ("x", "y")
    np.testing.assert_array_equal(data.asnumpy(), x)
    np.testing.assert_array_equal(label.asnumpy(), y)
    assert it.data[0][1].shape == (6, 2)


def test_changing_a_numpy_input_afterwards_leaves_the_batches_alone() -> None:
    # MXNet copies NumPy inputs into NDArrays when the iterator is made
    x = np.arange(6.0).reshape(6, 1)
    it = NDArrayIter(x, batch_size=3)
    x[:] = -1
    assert [b.data[0].asnumpy().ravel().tolist() for b in it] == [
        [0.0, 1.0, 2.0],
        [3.0, 4.0, 5.0],
    ]


def test_an_ndarray_input_is_read_in_place_as_mxnet_keeps_it() -> None:
    # MXNet 1.9.1 keeps an NDArray input itself: it.data[0][1] is x, and an in-place write
    # into x after the iterator is made (a pending one too) shows in the batches
    x, y = mx.nd.array(np.arange(6.0).reshape(6, 1)), mx.nd.arange(6)
    it = NDArrayIter(x, y, batch_size=3)
    assert it.data[0][1] is x and it.label[0][1] is y
    gate = mx.nd.zeros((6, 1))
    get_engine().push(time.sleep, (0.2,), [], [gate.var], name="slow_host_work")
    x[:] = gate + x / 2
    y += 100
    assert [(b.data[0].asnumpy().ravel().tolist(), b.label[0].asnumpy().tolist()) for b in it] == [
        ([0.0, 0.5, 1.0], [100.0, 101.0, 102.0]),
        ([1.5, 2.0, 2.5], [103.0, 104.0, 105.0]),
    ]


def test_a_shuffled_ndarray_input_is_copied_as_mxnet_shuffles_a_copy() -> None:
    x = mx.nd.array(np.arange(6.0).reshape(6, 1))
    it = NDArrayIter(x, batch_size=3, shuffle=True)
    x[:] = -1
    assert sorted(v for b in it for v in b.data[0].asnumpy().ravel().tolist()) == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]


def test_writing_into_it_data_changes_the_batches_that_follow() -> None:
    it = NDArrayIter(np.zeros((4, 1)), batch_size=2)
    it.data[0][1][:] = 7.0
    assert [b.data[0].asnumpy().ravel().tolist() for b in it] == [[7.0, 7.0], [7.0, 7.0]]


def test_data_held_across_a_new_label_stays_the_array_the_batches_wait_for() -> None:
    # MXNet programs rename the labels (it.label = mx.io._init_data(...)); the data arrays taken
    # before are still the iterator's own: a write into one, pending at the next batch, lands first
    it = NDArrayIter(np.zeros((4, 2)), np.zeros(4), batch_size=4)
    data = it.data[0][1]
    it.label = mx.io._init_data(np.ones(4), allow_empty=True, default_name="svm_label")
    assert it.data[0][1] is data
    gate = mx.nd.zeros((4, 2))
    get_engine().push(time.sleep, (0.2,), [], [gate.var], name="slow_host_work")
    data[:] = gate + 7.0
    np.testing.assert_array_equal(it.next().data[0].asnumpy(), np.full((4, 2), 7.0, np.float32))


def test_labels_held_across_new_data_stay_the_arrays_the_batches_wait_for() -> None:
    it = NDArrayIter(np.zeros((4, 2)), np.zeros(4), batch_size=4)
    label = it.label[0][1]
    it.data = [("pixels", np.ones((4, 2)))]
    assert it.label[0][1] is label
    gate = mx.nd.zeros((4,))
    get_engine().push(time.sleep, (0.2,), [], [gate.var], name="slow_host_work")
    label[:] = gate + 3.0
    np.testing.assert_array_equal(it.next().label[0].asnumpy(), np.full(4, 3.0, np.float32))


def test_the_iterator_of_a_feedforward_call_reads_its_arrays_without_copying_them():
    # a user's NDArrayIter copies NumPy inputs (above); FeedForward's own iterator over the X of one
    # fit/predict call reads them in place: a copy would double the dataset's memory at every call
    from lazynd_sym.model.inputs import init_iter

    x = np.ones((10, 3), np.float32)
    it = init_iter(x, np.zeros(10), 5, is_train=True)
    batch = it.next()
    assert np.shares_memory(it._data[0][1], x)
    assert batch.data[0].shape == (5, 3)


@pytest.mark.parametrize("name", [["x"], {"k": 1}, 1.5, np.ones(2)], ids=["list", "dict", "float", "array"])
@pytest.mark.parametrize("what", ["data_name", "label_name"])
def test_an_input_name_that_is_no_str_is_refused_by_name(what, name) -> None:
    # accepted before: the batches' descriptions carried the list as the input's name
    with pytest.raises(DataError, match=f"NDArrayIter: {what} must be a str, got "):
        NDArrayIter(np.ones((4, 2)), np.zeros(4), batch_size=2, **{what: name})
