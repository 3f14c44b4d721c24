"""NDArrayIter, MNISTIter, CSVIter, PrefetchingIter, ResizeIter and DataDesc."""

from __future__ import annotations

import pickle
import time
from collections import OrderedDict

import numpy as np
import pytest

import lazynd as mx
from lazynd.errors import DataError
from lazynd.io import CSVIter, DataBatch, DataDesc, DataIter, MNISTIter, NDArrayIter, PrefetchingIter, ResizeIter


def _epoch(it: DataIter) -> list[list[float]]:
    return [batch.data[0].asnumpy().tolist() for batch in it]


def test_datadesc_unpacks_as_name_shape_pair_and_keeps_layout() -> None:
    desc = DataDesc("data", [4, 3], layout="NC")
    name, shape = desc
    assert (name, shape, desc.layout, desc.dtype) == ("data", (4, 3), "NC", np.float32)


def test_datadesc_batch_axis_follows_layout() -> None:
    assert DataDesc.get_batch_axis("TNC") == 1
    assert DataDesc.get_batch_axis(None) == 0
    with pytest.raises(DataError, match="no batch axis"):
        DataDesc.get_batch_axis("CHW")


def test_datadesc_survives_pickle() -> None:
    desc = pickle.loads(pickle.dumps(DataDesc("x", (2, 2), np.int32, "NC")))
    assert (desc.name, desc.shape, desc.dtype, desc.layout) == ("x", (2, 2), np.int32, "NC")


def test_pad_fills_last_batch_from_the_start_and_reports_pad() -> None:
    it = NDArrayIter(np.arange(5), np.arange(5), batch_size=2)
    batches = list(it)
    assert [b.pad for b in batches] == [0, 0, 1]
    assert batches[-1].data[0].asnumpy().tolist() == [4.0, 0.0]
    assert batches[-1].label[0].asnumpy().tolist() == [4.0, 0.0]


def test_discard_drops_incomplete_last_batch() -> None:
    it = NDArrayIter(np.arange(5), batch_size=2, last_batch_handle="discard")
    assert _epoch(it) == [[0.0, 1.0], [2.0, 3.0]]


def test_roll_over_carries_leftovers_into_next_epoch() -> None:
    it = NDArrayIter(np.arange(5), batch_size=2, last_batch_handle="roll_over")
    assert _epoch(it) == [[0.0, 1.0], [2.0, 3.0]]
    it.reset()
    assert _epoch(it) == [[4.0, 0.0], [1.0, 2.0], [3.0, 4.0]]


def test_reset_starts_the_same_epoch_again() -> None:
    it = NDArrayIter(np.arange(6).reshape(3, 2), batch_size=2)
    first = _epoch(it)
    it.reset()
    assert _epoch(it) == first


def test_batches_of_an_epoch_share_their_descriptions() -> None:
    it = NDArrayIter(np.zeros((6, 2)), np.arange(6), batch_size=2, shuffle=True)
    batches = list(it)
    assert batches[0].provide_data == it.provide_data and batches[0].provide_label == it.provide_label
    # made once per epoch, not once per batch
    assert all(b.provide_data is batches[0].provide_data for b in batches)
    assert all(b.provide_label is batches[0].provide_label for b in batches)
    it.reset()
    assert next(it).provide_data == batches[0].provide_data


def test_shuffle_permutes_examples_consistently_with_labels() -> None:
    np.random.seed(3)
    data = np.arange(20, dtype=np.float32)
    it = NDArrayIter(data, data * 10, batch_size=5, shuffle=True)
    seen_data, seen_label = [], []
    for batch in it:
        seen_data += batch.data[0].asnumpy().tolist()
        seen_label += batch.label[0].asnumpy().tolist()
    assert sorted(seen_data) == data.tolist()
    assert seen_data != data.tolist()
    assert np.allclose(np.array(seen_label), np.array(seen_data) * 10)


def test_host_batches_are_gathered_once_not_copied_again(monkeypatch) -> None:
    # a CPU batch is the gather of its examples itself: no second copy through nd.array
    def no_copy(*args, **kwargs):
        raise AssertionError("NDArrayIter copied a host batch a second time")

    data = np.arange(12, dtype=np.float32).reshape(6, 2)
    it = NDArrayIter(data, np.arange(6), batch_size=4, ctx=mx.cpu())
    monkeypatch.setattr(mx.nd, "array", no_copy)
    batch = next(it)
    assert batch.data[0].context == mx.cpu() and batch.data[0].dtype == np.float32
    np.testing.assert_array_equal(batch.data[0].asnumpy(), data[:4])
    np.testing.assert_array_equal(batch.label[0].asnumpy(), np.arange(4, dtype=np.float32))
    data[:] = -1  # the batch holds its own values, not a view of the source
    assert batch.data[0].asnumpy().min() >= 0


def test_batches_for_another_host_context_land_there() -> None:
    it = NDArrayIter(np.ones((4, 2)), batch_size=2, ctx=mx.cpu(1))
    assert next(it).data[0].context == mx.cpu(1)


def test_dict_inputs_are_named_and_sorted() -> None:
    it = NDArrayIter({"b": np.zeros((4, 2)), "a": np.ones((4, 3))}, {"lab": np.zeros(4)}, batch_size=2)
    assert [d.name for d in it.provide_data] == ["a", "b"]
    assert [d.shape for d in it.provide_data] == [(2, 3), (2, 2)]
    assert it.provide_label[0].name == "lab"


def test_ordered_dict_keeps_its_order() -> None:
    it = NDArrayIter(OrderedDict([("b", np.zeros(4)), ("a", np.zeros(4))]), batch_size=2)
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
    assert _epoch(it) == [[0.0, 1.0], [2.0, 3.0]]


def test_layout_with_batch_axis_one_slices_along_it() -> None:
    data = np.arange(12).reshape(3, 4)  # T=3, N=4
    it = NDArrayIter(data, np.arange(4), batch_size=2, layout="TN")
    first = next(it)
    assert first.data[0].shape == (3, 2)
    assert first.data[0].asnumpy().tolist() == data[:, :2].tolist()
    assert it.provide_data[0].shape == (3, 2)


def test_mismatched_example_counts_raise() -> None:
    with pytest.raises(DataError, match="same number of examples"):
        NDArrayIter(np.zeros(4), np.zeros(5), batch_size=2)


def test_bad_last_batch_handle_raises() -> None:
    with pytest.raises(DataError, match="last_batch_handle"):
        NDArrayIter(np.zeros(4), batch_size=2, last_batch_handle="wrap")


def test_bad_batch_size_raises() -> None:
    with pytest.raises(DataError, match="batch_size"):
        NDArrayIter(np.zeros(4), batch_size=0)


def test_databatch_rejects_non_list_data() -> None:
    with pytest.raises(DataError, match="list"):
        DataBatch(mx.nd.zeros((2,)))


def test_resize_iter_gives_exactly_size_batches() -> None:
    it = ResizeIter(NDArrayIter(np.arange(4), batch_size=2), size=3)
    assert _epoch(it) == [[0.0, 1.0], [2.0, 3.0], [0.0, 1.0]]
    it.reset()
    assert len(_epoch(it)) == 3


def test_prefetching_iter_gives_the_same_batches_every_epoch() -> None:
    inner = NDArrayIter(np.arange(6), np.arange(6), batch_size=2)
    it = PrefetchingIter(inner)
    assert _epoch(it) == [[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]]
    it.reset()
    assert _epoch(it) == [[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]]
    assert it.provide_label[0].name == "softmax_label"


def test_prefetching_iter_joins_and_renames_several_iterators() -> None:
    it = PrefetchingIter(
        [NDArrayIter(np.zeros(4), batch_size=2), NDArrayIter(np.ones(4), batch_size=2)],
        rename_data=[{"data": "a"}, {"data": "b"}],
    )
    assert [d.name for d in it.provide_data] == ["a", "b"]
    batch = next(it)
    assert [d.asnumpy().tolist() for d in batch.data] == [[0.0, 0.0], [1.0, 1.0]]


class _SlowIter(DataIter):
    """Takes 50 ms per batch and records when each batch was made."""

    def __init__(self, count: int) -> None:
        super().__init__(1)
        self.count, self.made = count, []

    def next(self) -> DataBatch:
        if len(self.made) == self.count:
            raise StopIteration
        time.sleep(0.05)
        self.made.append(len(self.made))
        return DataBatch([mx.nd.zeros((1,))])


def test_prefetching_iter_loads_the_next_batch_in_the_background() -> None:
    inner = _SlowIter(3)
    it = PrefetchingIter(inner)
    next(it)
    time.sleep(0.2)  # while "training" on batch 0, batch 1 is made
    assert inner.made == [0, 1]


class _FailingIter(DataIter):
    def next(self) -> DataBatch:
        raise ValueError("disk on fire")


def test_prefetching_iter_reraises_errors_of_the_wrapped_iterator() -> None:
    it = PrefetchingIter(_FailingIter(1))
    with pytest.raises(DataError, match="disk on fire"):
        next(it)


def test_csv_iter_reads_data_and_labels(tmp_path) -> None:
    (tmp_path / "d.csv").write_text("1,2,3,4\n5,6,7,8\n9,10,11,12\n")
    (tmp_path / "l.csv").write_text("0\n1\n2\n")
    it = CSVIter(str(tmp_path / "d.csv"), (2, 2), str(tmp_path / "l.csv"), batch_size=2)
    batches = list(it)
    assert batches[0].data[0].shape == (2, 2, 2)
    assert batches[1].label[0].asnumpy().tolist() == [2.0, 0.0]
    assert batches[1].pad == 1


def test_csv_iter_wrong_column_count_raises(tmp_path) -> None:
    (tmp_path / "d.csv").write_text("1,2,3\n")
    with pytest.raises(DataError, match="3 columns"):
        CSVIter(str(tmp_path / "d.csv"), (2, 2), batch_size=1)


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


def test_mnist_iter_shuffles_once_so_passes_agree(data_dir) -> None:
    it = MNISTIter(batch_size=100, shuffle=True, flat=True, seed=3, data_dir=data_dir, train=False)
    first = [b.label[0].asnumpy() for b in it]
    it.reset()
    second = [b.label[0].asnumpy() for b in it]
    assert all(np.array_equal(a, b) for a, b in zip(first, second, strict=True))
    in_file_order = next(MNISTIter(batch_size=100, shuffle=False, flat=True, data_dir=data_dir, train=False))
    assert not np.array_equal(first[0], in_file_order.label[0].asnumpy())


def test_mnist_iter_getters_give_one_ndarray_as_in_mxnet(data_dir) -> None:
    import lazynd as mx

    it = MNISTIter(batch_size=10, shuffle=False, data_dir=data_dir, train=False)
    assert it.iter_next()
    assert isinstance(it.getlabel(), mx.nd.NDArray) and it.getlabel().shape == (10,)
    assert isinstance(it.getdata(), mx.nd.NDArray) and it.getdata().shape == (10, 1, 28, 28)


def test_mnist_iter_accepts_mxnet_arguments(data_dir) -> None:
    with pytest.warns(UserWarning, match="prefetch_buffer"):
        it = MNISTIter(
            batch_size=10, input_shape=(784,), silent=True, prefetch_buffer=4, data_dir=data_dir, train=False
        )
    assert it.provide_data[0].shape == (10, 784)
    it = MNISTIter(batch_size=10, data_shape=(1, 28, 28), flat=True, data_dir=data_dir, train=False)
    assert it.provide_data[0].shape == (10, 1, 28, 28)
    with pytest.raises(DataError, match=r"input_shape \(3, 3\) does not fit"):
        MNISTIter(batch_size=10, input_shape=(3, 3), data_dir=data_dir, train=False)
    with pytest.raises(DataError, match="unknown argument"):
        MNISTIter(batch_size=10, bogus=1, data_dir=data_dir, train=False)


def test_a_subclass_may_assign_provide_data_and_label() -> None:
    class Constant(DataIter):
        def __init__(self) -> None:
            super().__init__(batch_size=2)
            self.provide_data = [("data", (2, 3))]
            self.provide_label = [("label", (2,))]

    it = Constant()
    assert it.provide_data == [("data", (2, 3))] and it.provide_label == [("label", (2,))]
    with pytest.raises(NotImplementedError):
        DataIter().provide_data  # noqa: B018


@pytest.mark.parametrize(("name", "why"), [("LibSVMIter", "CSR sparse")])
def test_iterators_lazynd_lacks_are_named(name: str, why: str) -> None:
    with pytest.raises(mx.LazyNDError, match=rf"mx\.io\.{name}: not supported: .*{why}"):
        getattr(mx.io, name)


def test_hard_reset_drops_what_roll_over_carried() -> None:
    it = NDArrayIter(np.arange(5).reshape(5, 1).astype(np.float32), batch_size=2, last_batch_handle="roll_over")

    def epoch() -> list:
        return [b.data[0].asnumpy().ravel().tolist() for b in it]

    # MXNet 1.9.1: [[0, 1], [2, 3]], after reset [[4, 0], [1, 2], [3, 4]], after hard_reset [[0, 1], [2, 3]]
    assert epoch() == [[0.0, 1.0], [2.0, 3.0]]
    it.reset()
    assert epoch() == [[4.0, 0.0], [1.0, 2.0], [3.0, 4.0]]
    it.hard_reset()
    assert epoch() == [[0.0, 1.0], [2.0, 3.0]]


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


def test_mnist_iter_leaves_out_the_examples_that_do_not_fill_a_batch(tmp_path) -> None:
    files = _write_idx(tmp_path, np.zeros((10, 2, 2), np.uint8), np.arange(10))
    it = MNISTIter(*files, batch_size=4, shuffle=False)
    # MXNet 1.9.1's MNISTIter: two full batches, no padded third one
    assert [(b.label[0].asnumpy().tolist(), b.pad) for b in it] == [([0, 1, 2, 3], 0), ([4, 5, 6, 7], 0)]


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


def test_seeded_shuffle_gives_mxnet_epochs_after_the_first_too() -> None:
    np.random.seed(0)
    it = NDArrayIter(np.arange(6, dtype=np.float32), batch_size=3, shuffle=True)
    epochs = []
    for _ in range(3):
        epochs.append([batch.data[0].asnumpy().astype(int).tolist() for batch in it])
        it.reset()
    # what MXNet 1.9.1 gives after np.random.seed(0): each reset reshuffles the last epoch's order
    assert epochs == [[[5, 2, 1], [3, 0, 4]], [[1, 3, 5], [4, 2, 0]], [[0, 2, 4], [1, 3, 5]]]


@pytest.mark.parametrize("values", [np.array(["a", "b"]), np.array([object(), object()]), np.zeros(2, complex)])
def test_inputs_that_are_not_real_numbers_raise_a_data_error_naming_them(values) -> None:
    with pytest.raises(DataError, match="data 'data' holds .* values; expected numbers"):
        NDArrayIter(values, batch_size=1)


@pytest.mark.parametrize("shape", ["abc", (2, -1), (), (2.5,)])
def test_csv_iter_data_shape_that_is_not_positive_ints_raises(tmp_path, shape) -> None:
    (tmp_path / "d.csv").write_text("1,2\n")
    with pytest.raises(DataError, match="data_shape must be a tuple of positive ints"):
        CSVIter(str(tmp_path / "d.csv"), shape, batch_size=1)


def test_csv_iter_empty_file_raises_naming_it(tmp_path) -> None:
    (tmp_path / "d.csv").write_text("")
    with pytest.raises(DataError, match="d.csv' holds no rows"):
        CSVIter(str(tmp_path / "d.csv"), (2,), batch_size=1)


def test_csv_iter_integer_dtype_truncates_fractions_as_mxnet(tmp_path) -> None:
    (tmp_path / "d.csv").write_text("1,2\n3,4\n")
    (tmp_path / "l.csv").write_text("1.5\n-2.5\n")
    it = CSVIter(str(tmp_path / "d.csv"), (2,), str(tmp_path / "l.csv"), batch_size=2, dtype="int32")
    batch = next(it)
    assert batch.label[0].dtype == np.int32 and batch.label[0].asnumpy().tolist() == [1, -2]


def test_csv_iter_accepts_mxnet_prefetch_buffer_and_ctx(tmp_path) -> None:
    (tmp_path / "d.csv").write_text("1,2\n3,4\n")
    it = CSVIter(str(tmp_path / "d.csv"), (2,), batch_size=2, prefetch_buffer=2, ctx="cpu")
    assert next(it).data[0].asnumpy().tolist() == [[1.0, 2.0], [3.0, 4.0]]
