"""CSVIter: reading data and labels, round_batch, shapes, dtypes and the files it refuses."""

from __future__ import annotations

import re

import numpy as np
import pytest

from lazynd import errors as mx_errors
from lazynd.errors import DataError
from lazynd.io import CSVIter, DataIter


def test_csv_iter_reads_data_and_labels(tmp_path) -> None:
    (tmp_path / "d.csv").write_text("1,2,3,4\n5,6,7,8\n9,10,11,12\n")
    (tmp_path / "l.csv").write_text("0\n1\n2\n")
    it = CSVIter(str(tmp_path / "d.csv"), (2, 2), str(tmp_path / "l.csv"), batch_size=2)
    batches = list(it)
    assert batches[0].data[0].shape == (2, 2, 2)
    assert batches[1].label[0].asnumpy().tolist() == [2.0, 0.0]
    assert batches[1].pad == 1


@pytest.mark.parametrize("label_shape", [(1,), (3,), (2, 2)])
def test_csv_iter_without_label_file_gives_one_zero_per_example_whatever_label_shape(tmp_path, label_shape) -> None:
    # MXNet 1.9.1 leaves label_shape unused without label_csv: provide_label and the labels are (batch_size,)
    (tmp_path / "d.csv").write_text("1,2\n3,4\n5,6\n")
    it = CSVIter(str(tmp_path / "d.csv"), (2,), label_shape=label_shape, batch_size=2)
    assert it.provide_label[0].shape == (2,)
    assert [b.label[0].asnumpy().tolist() for b in it] == [[0.0, 0.0], [0.0, 0.0]]


def test_csv_iter_reads_rows_ending_in_a_comma_as_mxnet(tmp_path) -> None:
    # MXNet 1.9.1's parser ends a row at its last value: "1,2,3," is three values
    (tmp_path / "d.csv").write_text("1,2,3,\r\n4,5,6,\n")
    (tmp_path / "l.csv").write_text("7,\n8,\n")
    it = CSVIter(str(tmp_path / "d.csv"), (3,), str(tmp_path / "l.csv"), batch_size=2, dtype="int32")
    batch = next(iter(it))
    assert batch.data[0].asnumpy().tolist() == [[1, 2, 3], [4, 5, 6]]
    assert batch.label[0].asnumpy().tolist() == [7, 8]


def test_csv_iter_an_empty_value_inside_a_row_is_still_refused(tmp_path) -> None:
    (tmp_path / "d.csv").write_text("1,,3\n4,5,6\n")
    with pytest.raises(DataError, match=r"d\.csv' is not numeric CSV"):
        CSVIter(str(tmp_path / "d.csv"), (3,), batch_size=1)


def test_csv_iter_wrong_column_count_raises(tmp_path) -> None:
    (tmp_path / "d.csv").write_text("1,2,3\n")
    with pytest.raises(DataError, match="3 columns"):
        CSVIter(str(tmp_path / "d.csv"), (2, 2), batch_size=1)


def test_csv_iter_a_row_of_another_length_is_named(tmp_path) -> None:
    # not NumPy's message (its advice names its own `usecols` argument)
    (tmp_path / "d.csv").write_text("1,2,3\n4,5,6\n7,8\n")
    with pytest.raises(DataError, match=r"d\.csv': row 3 has 2 values, expected 3 for shape \(3,\)$"):
        CSVIter(str(tmp_path / "d.csv"), (3,), batch_size=1)


def _csv_rows(it: DataIter, epochs: int) -> list[tuple[list[float], int]]:
    rows = []
    for _ in range(epochs):
        rows += [(batch.data[0].asnumpy()[:, 0].tolist(), batch.pad) for batch in it]
        it.reset()
    return rows


def test_csv_iter_round_batch_goes_on_after_the_examples_that_completed_the_last_batch(tmp_path) -> None:
    (tmp_path / "d.csv").write_text("".join(f"{i}\n" for i in range(5)))
    it = CSVIter(str(tmp_path / "d.csv"), (1,), batch_size=2, round_batch=True)
    # MXNet 1.9.1: example 0 completed the last batch, so the second epoch starts at 1
    assert _csv_rows(it, 2) == [([0, 1], 0), ([2, 3], 0), ([4, 0], 1), ([1, 2], 0), ([3, 4], 0)]


def test_csv_iter_without_round_batch_still_gives_the_last_batch_with_its_pad(tmp_path) -> None:
    (tmp_path / "d.csv").write_text("".join(f"{i}\n" for i in range(5)))
    it = CSVIter(str(tmp_path / "d.csv"), (1,), batch_size=2, round_batch=False)
    # MXNet 1.9.1 keeps the last example (pad 1) and starts every epoch at the first
    rows = _csv_rows(it, 2)
    assert [pad for _, pad in rows] == [0, 0, 1] * 2
    assert [values[: 2 - pad] for values, pad in rows] == [[0, 1], [2, 3], [4]] * 2


@pytest.mark.parametrize("shape", ["abc", (2, -1), (), (2.5,)])
def test_csv_iter_data_shape_that_is_not_positive_ints_raises(tmp_path, shape) -> None:
    (tmp_path / "d.csv").write_text("1,2\n")
    with pytest.raises(DataError, match="data_shape must be a tuple of positive ints"):
        CSVIter(str(tmp_path / "d.csv"), shape, batch_size=1)


def test_csv_iter_empty_file_raises_naming_it(tmp_path) -> None:
    (tmp_path / "d.csv").write_text("")
    with pytest.raises(DataError, match="d.csv' holds no rows"):
        CSVIter(str(tmp_path / "d.csv"), (2,), batch_size=1)


def test_csv_iter_a_label_file_cut_short_is_refused_naming_both_files(tmp_path) -> None:
    # MXNet refuses it too ("Data CSV's row is smaller than the number of rows in label_csv"); which
    # of the two files lost rows is for the reader to find, so the message names both
    (tmp_path / "d.csv").write_text("1,2,3\n4,5,6\n7,8,9\n")
    (tmp_path / "l.csv").write_text("0\n1\n")
    with pytest.raises(DataError, match=r"'[^']*d\.csv' has 3 rows but label file '[^']*l\.csv' has 2"):
        CSVIter(str(tmp_path / "d.csv"), (3,), str(tmp_path / "l.csv"), batch_size=2)


def test_csv_iter_integer_dtype_truncates_fractions_as_mxnet(tmp_path) -> None:
    (tmp_path / "d.csv").write_text("1,2\n3,4\n")
    (tmp_path / "l.csv").write_text("1.5\n-2.5\n")
    it = CSVIter(str(tmp_path / "d.csv"), (2,), str(tmp_path / "l.csv"), batch_size=2, dtype="int32")
    batch = next(it)
    assert batch.label[0].dtype == np.int32 and batch.label[0].asnumpy().tolist() == [1, -2]


@pytest.mark.parametrize("value", ["nan", "inf", "1e999", "99999999999", "-2147483649"])
def test_csv_iter_integer_dtype_refuses_a_value_it_cannot_hold(tmp_path, value) -> None:
    # cast to int32 it became -2147483648 with only NumPy's RuntimeWarning (MXNet wraps 99999999999
    # to 1215752191): a damaged number must not become a silent one
    (tmp_path / "d.csv").write_text(f"1,2,3\n4,{value},6\n")
    with pytest.raises(DataError, match=r"d\.csv' is not numeric CSV: value .* at row 1, column 1 does not fit int32"):
        CSVIter(str(tmp_path / "d.csv"), (3,), batch_size=1, dtype="int32")


def test_csv_iter_accepts_mxnet_prefetch_buffer_and_ctx(tmp_path) -> None:
    (tmp_path / "d.csv").write_text("1,2\n3,4\n")
    it = CSVIter(str(tmp_path / "d.csv"), (2,), batch_size=2, prefetch_buffer=2, ctx="cpu")
    assert next(it).data[0].asnumpy().tolist() == [[1.0, 2.0], [3.0, 4.0]]


def _write_rows(tmp_path) -> str:
    path = tmp_path / "d.csv"
    path.write_text("1,2,3\n4,5,6\n7,8,9\n")
    return str(path)


def test_csv_iter_reads_its_arguments_from_text_as_mxnets_iterator_does(tmp_path) -> None:
    path = _write_rows(tmp_path)
    from_text = CSVIter(path, data_shape="(3,)", batch_size="2", round_batch="False", dtype="int32")
    given = CSVIter(path, data_shape=(3,), batch_size=2, round_batch=False, dtype=np.int32)
    for text_batch, batch in zip(from_text, given, strict=True):
        np.testing.assert_array_equal(text_batch.data[0].asnumpy(), batch.data[0].asnumpy())
        assert text_batch.data[0].dtype == np.int32 and text_batch.pad == batch.pad


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"batch_size": "two"}, "CSVIter: invalid value 'two' for parameter 'batch_size'"),
        ({"round_batch": "x"}, "CSVIter: invalid value 'x' for parameter 'round_batch'"),
        ({"dtype": "bogus"}, "CSVIter: invalid value 'bogus' for parameter 'dtype'"),
        ({"data_csv": 5}, "CSVIter: data_csv must be a file path, got int"),
        ({"label_csv": ["a.csv"]}, "CSVIter: label_csv must be a file path, got list"),
        ({"data_shape": "(3, x)"}, "CSVIter: data_shape must be a tuple of positive ints"),
    ],
)
def test_csv_iter_arguments_of_the_wrong_kind_are_refused_by_name(tmp_path, kwargs, message) -> None:
    arguments = {"data_csv": _write_rows(tmp_path), "data_shape": (3,), "batch_size": 2, **kwargs}
    with pytest.raises(mx_errors.LazyNDError, match=re.escape(message)):
        CSVIter(**arguments)


def test_csv_iter_a_misspelt_argument_is_refused_by_name(tmp_path) -> None:
    # MXNet's C++ iterator refuses an unknown argument; silently ignoring ``batchsize=32`` would
    # train on batches of one
    (tmp_path / "d.csv").write_text("1,2\n3,4\n")
    with pytest.raises(mx_errors.ArgumentTypeError, match=r"CSVIter: unknown argument\(s\) \['batchsize'\]"):
        CSVIter(data_csv=str(tmp_path / "d.csv"), data_shape=(2,), batchsize=32)
