"""The data-iterator protocol: ``DataDesc``, ``DataBatch`` and ``DataIter``."""

from __future__ import annotations

import numbers
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import numpy as np

from ..errors import DataError, DataTypeError


def _shape_of(name: str, shape: Any) -> tuple[int, ...]:
    """``shape`` (a sequence of integers, NumPy's too) as a tuple of ints."""
    # the common shape, an array's (Module.forward describes each batch's inputs by theirs), is
    # answered by class checks: each isinstance against the ABCs below costs 0.3 us
    if shape.__class__ is tuple:
        for d in shape:
            if d.__class__ is not int:
                break
        else:
            return shape
    if isinstance(shape, (str, bytes)) or not isinstance(shape, (Sequence, np.ndarray)):
        raise DataTypeError(f"DataDesc {name!r}: shape must be a tuple of integers, got {shape!r}")
    if not all(_is_whole_number(d) for d in shape):
        raise DataTypeError(f"DataDesc {name!r}: shape must be a tuple of integers, got {shape!r}")
    return tuple(int(d) for d in shape)


def _is_whole_number(value: Any) -> bool:
    if value.__class__ is int:  # the common case, before the ABCs' checks (0.3 us each)
        return True
    if isinstance(value, (bool, np.bool_)):
        return False
    return isinstance(value, numbers.Integral) or (isinstance(value, numbers.Real) and float(value).is_integer())


class DataDesc(tuple):
    """Name and shape of one input, with its dtype and layout.

    A ``DataDesc`` is a ``(name, shape)`` tuple, so code that unpacks
    ``provide_data`` as pairs keeps working; ``dtype`` and ``layout`` ride
    along as attributes.  ``layout`` says which axis is the batch (``'N'``).

    Examples
    --------
    >>> desc = DataDesc("data", (32, 3, 28, 28))
    >>> name, shape = desc
    >>> name, shape, desc.layout, DataDesc.get_batch_axis("TNC")
    ('data', (32, 3, 28, 28), 'NCHW', 1)
    """

    dtype: Any
    layout: str

    def __new__(cls, name: str, shape: Sequence[int], dtype: Any = np.float32, layout: str = "NCHW") -> DataDesc:
        if not isinstance(name, str):
            raise DataTypeError(f"DataDesc: name must be a str, got {type(name).__name__}")
        desc = super().__new__(cls, (name, _shape_of(name, shape)))
        try:
            np.dtype(dtype)
        except (TypeError, ValueError, SyntaxError) as error:
            raise DataError(f"DataDesc {name!r}: dtype {dtype!r} is not a dtype ({error})") from None
        # kept as given, as MXNet keeps it: a user's ``desc.dtype == "float16"`` holds, and it prints as given
        desc.dtype = dtype
        desc.layout = layout
        return desc

    @property
    def name(self) -> str:
        return self[0]

    @property
    def shape(self) -> tuple[int, ...]:
        return self[1]

    def __repr__(self) -> str:
        # MXNet 1.9.1's text, dtype as it prints (the iterators' ``<class 'numpy.float32'>``, a
        # user's ``float16``): tutorials print provide_data, and users compare that output across libraries
        return f"DataDesc[{self.name},{self.shape},{self.dtype},{self.layout}]"

    def __getnewargs__(self) -> tuple:
        return (self.name, self.shape, self.dtype, self.layout)

    @staticmethod
    def get_batch_axis(layout: str | None) -> int:
        """The axis of ``'N'`` in ``layout``; 0 when the layout is unknown, -1 (as MXNet) when the
        layout has no ``'N'``: an input without a batch axis, which a Module copies whole to each
        device instead of splitting it.

        Examples
        --------
        >>> DataDesc.get_batch_axis("NTC"), DataDesc.get_batch_axis(None), DataDesc.get_batch_axis("CW")
        (0, 0, -1)
        """
        if layout is None:
            return 0
        if not isinstance(layout, str):
            raise DataTypeError(f"DataDesc.get_batch_axis: layout must be a str such as 'NCHW', got {layout!r}")
        return layout.find("N")

    @staticmethod
    def get_list(
        shapes: Sequence[tuple[str, Sequence[int]]], types: Sequence[tuple[str, Any]] | None = None
    ) -> list[DataDesc]:
        """``DataDesc`` list from ``(name, shape)`` pairs and optional ``(name, dtype)`` pairs."""
        shapes = _pairs("shapes", shapes)
        if types is None:
            return [DataDesc(name, shape) for name, shape in shapes]
        dtypes = dict(types) if isinstance(types, dict) else dict(_pairs("types", types))
        return [DataDesc(name, shape, dtypes.get(name, np.float32)) for name, shape in shapes]


def _pairs(what: str, given: Any) -> list[Any]:
    """``given`` (a list, a zip...) as a list of (name, value) pairs, or a DataTypeError naming ``what``."""
    pairs = list(given) if isinstance(given, Iterable) and not isinstance(given, (str, bytes, dict)) else None
    if pairs is None or not all(isinstance(p, (tuple, list)) and len(p) == 2 for p in pairs):
        raise DataTypeError(f"DataDesc.get_list: {what} must be a list of (name, value) pairs, got {given!r}")
    return pairs


class DataBatch:
    """One batch: lists of data and label NDArrays plus bookkeeping.

    ``pad`` counts the examples at the end of the batch that only fill it up
    (they repeat earlier ones and must not be scored).

    Examples
    --------
    >>> import lazynd as mx
    >>> batch = DataBatch([mx.nd.zeros((2, 3))], [mx.nd.zeros((2,))], pad=1)
    >>> batch.pad, batch.data[0].shape
    (1, (2, 3))
    """

    def __init__(
        self,
        data: list[Any],
        label: list[Any] | None = None,
        pad: int | None = None,
        index: Any = None,
        bucket_key: Any = None,
        provide_data: list[DataDesc] | None = None,
        provide_label: list[DataDesc] | None = None,
    ) -> None:
        if data is not None and not isinstance(data, (list, tuple)):
            raise DataTypeError(f"DataBatch: data must be a list of NDArrays, got {type(data).__name__}")
        if label is not None and not isinstance(label, (list, tuple)):
            raise DataTypeError(f"DataBatch: label must be a list of NDArrays, got {type(label).__name__}")
        self.data = data
        self.label = label
        self.pad = pad
        self.index = index
        self.bucket_key = bucket_key
        self.provide_data = provide_data
        self.provide_label = provide_label

    def __repr__(self) -> str:
        data_shapes = [d.shape for d in self.data]
        label_shapes = [d.shape for d in self.label] if self.label else None
        return f"DataBatch: data shapes: {data_shapes} label shapes: {label_shapes}"


class DataIter:
    """Base of all iterators: subclasses implement ``iter_next`` and the getters.

    Iterating gives ``DataBatch`` objects until the epoch ends; ``reset``
    starts the next epoch.
    """

    def __init__(self, batch_size: int = 0) -> None:
        self.batch_size = batch_size

    def __iter__(self) -> Iterator[DataBatch]:
        return self

    def reset(self) -> None:
        """Go back to the start of the data (the next epoch)."""

    def next(self) -> DataBatch:
        """The next batch; raises ``StopIteration`` at the end of the epoch."""
        if self.iter_next():
            return DataBatch(data=self.getdata(), label=self.getlabel(), pad=self.getpad(), index=self.getindex())
        raise StopIteration

    def __next__(self) -> DataBatch:
        return self.next()

    def iter_next(self) -> bool:
        """Move to the next batch; False at the end of the epoch."""
        raise NotImplementedError(f"{type(self).__name__} does not implement iter_next")

    def getdata(self) -> list[Any]:
        raise NotImplementedError(f"{type(self).__name__} does not implement getdata")

    def getlabel(self) -> list[Any] | None:
        return None

    def getindex(self) -> Any:
        return None

    def getpad(self) -> int:
        return 0

    # a subclass may assign ``self.provide_data = [...]`` in its constructor, as MXNet's do; an
    # iterator that knows its batches' shapes describes them in ``_describe_data``, and an assignment
    # (cnocr's ImageIter subclass, whose next() turns the batches grey) still wins, None included
    # (MXNet-SSD's DetRecordIter sets provide_label = None until its first batch tells the shape)
    @property
    def provide_data(self) -> list[DataDesc]:
        if "_provide_data" in self.__dict__:
            return self.__dict__["_provide_data"]
        return self._describe_data()

    @provide_data.setter
    def provide_data(self, value: list[DataDesc]) -> None:
        self.__dict__["_provide_data"] = value

    @property
    def provide_label(self) -> list[DataDesc]:
        if "_provide_label" in self.__dict__:
            return self.__dict__["_provide_label"]
        return self._describe_label()

    @provide_label.setter
    def provide_label(self, value: list[DataDesc]) -> None:
        self.__dict__["_provide_label"] = value

    def _describe_data(self) -> list[DataDesc]:
        """The data descriptions of the batches this iterator builds, unless a subclass assigned its own."""
        raise NotImplementedError(f"{type(self).__name__} does not implement provide_data")

    def _describe_label(self) -> list[DataDesc]:
        """The label descriptions of the batches this iterator builds, unless a subclass assigned its own."""
        return []


class BatchCursor(DataIter):
    """The step-by-step face of MXNet's C++ iterators for an iterator whose ``next()`` builds batches.

    ``iter_next()`` reads the next batch (False at the end of the epoch); ``getdata()`` and
    ``getlabel()`` give that batch's one data and one label NDArray (not lists, as MXNet's
    ``ImageRecordIter`` gives them), ``getpad()`` and ``getindex()`` its pad and index.
    A subclass lists it before the class that implements ``next()``.
    """

    _cursor_batch: DataBatch | None = None

    def iter_next(self) -> bool:
        try:
            self._cursor_batch = self.next()
        except StopIteration:
            self._cursor_batch = None
            return False
        return True

    def _current(self, getter: str) -> DataBatch:
        if self._cursor_batch is None:
            raise DataError(f"{type(self).__name__}.{getter}: no current batch; call iter_next() first")
        return self._cursor_batch

    def getdata(self) -> Any:  # type: ignore[override]  # one NDArray, as MXNet's C++ iterators
        return self._current("getdata()").data[0]

    def getlabel(self) -> Any:  # type: ignore[override]
        labels = self._current("getlabel()").label
        return labels[0] if labels else None

    def getpad(self) -> int:
        return self._current("getpad()").pad or 0

    def getindex(self) -> Any:
        return self._current("getindex()").index
