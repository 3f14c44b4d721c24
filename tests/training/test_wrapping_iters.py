"""Iterators that wrap others: ResizeIter and PrefetchingIter (background loading, joining, errors)."""

from __future__ import annotations

import time

import numpy as np
import pytest
from iter_epochs import epoch_values

import lazynd as mx
from lazynd.errors import DataError
from lazynd.io import DataBatch, DataIter, NDArrayIter, PrefetchingIter, ResizeIter


def test_resize_iter_gives_exactly_size_batches() -> None:
    it = ResizeIter(NDArrayIter(np.arange(4), batch_size=2), size=3)
    assert epoch_values(it) == [[0.0, 1.0], [2.0, 3.0], [0.0, 1.0]]
    it.reset()
    assert len(epoch_values(it)) == 3


def test_prefetching_iter_gives_the_same_batches_every_epoch() -> None:
    inner = NDArrayIter(np.arange(6), np.arange(6), batch_size=2)
    it = PrefetchingIter(inner)
    assert epoch_values(it) == [[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]]
    it.reset()
    assert epoch_values(it) == [[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]]
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


class _ExitingIter(DataIter):
    def __init__(self, exit_with: type[BaseException]) -> None:
        super().__init__(1)
        self.exit_with = exit_with

    def next(self) -> DataBatch:
        raise self.exit_with()


@pytest.mark.parametrize("exit_with", [KeyboardInterrupt, SystemExit])
def test_prefetching_iter_hands_an_interrupt_or_exit_on_as_it_is(exit_with) -> None:
    """Not a data error: the program's own thread gets it as the wrapped iterator raised it."""
    it = PrefetchingIter(_ExitingIter(exit_with))
    with pytest.raises(exit_with):
        next(it)


@pytest.mark.parametrize(
    "make, owner",
    [
        (lambda: ResizeIter([1, 2, 3], 2), "ResizeIter"),
        (lambda: ResizeIter(None, 2), "ResizeIter"),
        (lambda: PrefetchingIter(5), "PrefetchingIter"),
        (lambda: PrefetchingIter([NDArrayIter(np.arange(4), batch_size=2), "data"]), "PrefetchingIter"),
    ],
)
def test_wrapping_something_that_is_not_an_iterator_is_refused_by_name(make, owner):
    with pytest.raises(DataError, match=f"{owner}: expected a data iterator"):
        make()


@pytest.mark.parametrize("renames", [{"data": "x"}, "x", [("data", "x")]])
def test_prefetching_iter_renames_must_be_a_list_of_dicts(renames):
    with pytest.raises(DataError, match="PrefetchingIter: rename_data must be a list of dicts"):
        PrefetchingIter(NDArrayIter(np.arange(4), batch_size=2), rename_data=renames)


def test_prefetching_iter_refuses_a_rename_of_an_input_the_iterator_lacks():
    # MXNet raises KeyError here; a rename that names nothing would silently do nothing
    with pytest.raises(DataError, match=r"rename_label\[1\] renames \['label'\], which iterator 1 does not provide"):
        PrefetchingIter(
            [NDArrayIter(np.arange(4), np.arange(4), batch_size=2) for _ in range(2)],
            rename_label=[{"softmax_label": "a"}, {"label": "b"}],
        )


def test_prefetching_iter_counts_its_iterators_as_mxnet_does():
    assert PrefetchingIter([NDArrayIter(np.arange(4), batch_size=2) for _ in range(3)]).n_iter == 3


def test_a_duck_typed_iterator_can_still_be_wrapped():
    class Counting:
        batch_size = 2
        provide_data = [mx.io.DataDesc("data", (2,))]
        provide_label: list = []

        def __init__(self):
            self.left = 2

        def reset(self):
            self.left = 2

        def next(self):
            if not self.left:
                raise StopIteration
            self.left -= 1
            return DataBatch([mx.nd.ones((2,))], [], pad=0)

    assert len(list(ResizeIter(Counting(), 3))) == 3
