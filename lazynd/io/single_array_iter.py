"""``SingleArrayIter``: the :class:`NDArrayIter` under MXNet's C++ iterators (``CSVIter``, ``MNISTIter``)."""

from __future__ import annotations

from typing import Any

from .base import DataBatch
from .ndarray_iter import NDArrayIter


class SingleArrayIter(NDArrayIter):
    """An :class:`NDArrayIter` with the getters of the iterators MXNet implements in C++.

    MXNet's ``CSVIter``, ``MNISTIter`` and its other C++ iterators hold one data and one label
    array, and their ``getdata()`` and ``getlabel()`` give that NDArray itself, not a list of
    one; their batches still hold lists, as every ``DataBatch`` does.
    """

    _COPIES_INPUTS = False  # the subclasses pass arrays they made

    def getdata(self) -> Any:  # type: ignore[override]  # one NDArray, as MXNet's C++ iterators
        return self._take(self._data)[0]

    def getlabel(self) -> Any:  # type: ignore[override]
        labels = self._take(self._label)
        return labels[0] if labels else None

    def next(self) -> DataBatch:
        if not self.iter_next():
            raise StopIteration
        label = self.getlabel()
        return self._batch_of([self.getdata()], [] if label is None else [label])
