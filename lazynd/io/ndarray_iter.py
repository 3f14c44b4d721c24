"""``NDArrayIter``: batches over in-memory NumPy arrays or NDArrays."""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import ndarray as nd
from ..arguments import flag, is_choice
from ..context import as_context, current_context
from ..errors import DataError
from .base import DataBatch, DataDesc, DataIter
from .named_inputs import init_data, init_named_arrays, named_inputs

__all__ = ["NDArrayIter", "init_data"]

_LAST_BATCH_MODES = ("pad", "discard", "roll_over")


class NDArrayIter(DataIter):
    """Iterate over arrays in batches along the batch axis of ``layout``.

    Parameters
    ----------
    data, label : array, list of arrays, list of (name, array) pairs or dict name -> array
        NumPy arrays or NDArrays; all must have the same number of examples.  As in MXNet, a
        NumPy input is copied and an NDArray input (on the host) read in place unless ``shuffle``:
        a later in-place write into it changes the batches.
        ``label`` None or empty: no labels.
    batch_size : int
    shuffle : bool
        Reorder the examples at every reset, from NumPy's global generator, as MXNet
        does: after ``np.random.seed(s)`` the epochs are MXNet's.
    last_batch_handle : {'pad', 'discard', 'roll_over'}
        What to do with the examples that do not fill a batch: pad the last batch with examples from the start
        (``getpad`` counts them), drop them, or carry them into the first batch of the next epoch, whose ``pad``
        counts the carried ones, as MXNet's does (``predict`` then leaves that many of its rows out).
    data_name, label_name : str
        Names used when ``data``/``label`` are not dicts.
    layout : str
        Layout of the data; its ``'N'`` is the batch axis.
    dtype : optional
        Type of the batches.  Without it, as in MXNet, an NDArray input keeps its own
        dtype and any other input (NumPy, lists) gives float32 batches.  With it, every
        input gives batches of that type, but that float inputs keep theirs when it is
        an integer type.

    Examples
    --------
    >>> import numpy as np
    >>> it = NDArrayIter(np.arange(10).reshape(5, 2), np.arange(5), batch_size=2)
    >>> [batch.pad for batch in it]
    [0, 0, 1]
    >>> it.provide_data
    [DataDesc[data,(2, 2),<class 'numpy.float32'>,NCHW]]
    """

    def __init__(
        self,
        data: Any,
        label: Any = None,
        batch_size: int = 1,
        shuffle: bool = False,
        last_batch_handle: str = "pad",
        data_name: str = "data",
        label_name: str = "softmax_label",
        layout: str = "NCHW",
        dtype: Any = None,
        ctx: Any = None,
    ) -> None:
        super().__init__(batch_size)
        if not isinstance(batch_size, (int, np.integer)) or batch_size <= 0:
            raise DataError(f"{type(self).__name__}: batch_size must be a positive int, got {batch_size!r}")
        if not is_choice(last_batch_handle, _LAST_BATCH_MODES):
            raise DataError(
                f"{type(self).__name__}: last_batch_handle must be one of {_LAST_BATCH_MODES}, got {last_batch_handle!r}"
            )
        for what, name in (("data_name", data_name), ("label_name", label_name)):
            if name is not None and not isinstance(name, str):  # it names the inputs a module binds
                raise DataError(f"{type(self).__name__}: {what} must be a str, got {name!r}")
        self.layout = layout
        self.batch_axis = DataDesc.get_batch_axis(layout)
        if self.batch_axis < 0:
            raise DataError(f"{type(self).__name__}: layout {layout!r} has no batch axis 'N' to cut batches along")
        self._data = self._own_copies(init_named_arrays(data, data_name, "data"))
        self._label = self._own_copies(init_named_arrays(label, label_name, "label"))
        if not self._data:
            raise DataError(f"{type(self).__name__}: no data given")
        names = [name for name, _ in self._data + self._label]
        if len(set(names)) != len(names):
            raise DataError(f"{type(self).__name__}: input names must be unique, got {names}")
        counts = {name: self._count(name, arr) for name, arr in self._data + self._label}
        if len(set(counts.values())) != 1:
            raise DataError(f"{type(self).__name__}: all inputs must have the same number of examples, got {counts}")
        self.num_data = next(iter(counts.values()))
        if last_batch_handle == "discard" and self.num_data < batch_size:
            raise DataError(
                f"{type(self).__name__}: batch_size {batch_size} is larger than the {self.num_data} examples"
            )
        self.dtype = np.dtype(np.float32 if dtype is None else dtype)
        self._dtype_given = dtype
        # inputs whose batches keep the dtype they came with: MXNet's NDArray inputs
        given = named_inputs(data, data_name) + named_inputs(label, label_name)
        self._own_dtype = {str(name) for name, value in given if dtype is None and hasattr(value, "asnumpy")}
        flag(type(self).__name__, "shuffle", shuffle)  # kept as given, as MXNet's attribute is
        self.shuffle = shuffle
        self.last_batch_handle = last_batch_handle
        self.ctx = ctx
        self._carry = np.zeros(0, dtype=np.int64)
        self._order = np.arange(self.num_data)
        # MXNet's shuffle: a position array shuffled in place at every reset, and the examples,
        # already in the last epoch's order, reordered by it; kept so that a seeded run gives
        # MXNet's epochs, not only its first
        self._positions = np.arange(self.num_data)
        self._shuffled = np.arange(self.num_data)
        self._cursor = 0
        self._carried = 0  # examples ``roll_over`` carried into this epoch, at the start of ``_order``
        self._batch: tuple[np.ndarray, int] | None = None
        # the inputs as NDArrays (data, label, data_list), made on first use: one for each input's
        # array while it is one of the inputs (see data_list)
        self._shared: list[Any] = []
        if not shuffle:
            self._keep_ndarray_inputs(given)
        # set here and by every reset(): a subclass's reset() need not call ours (MXNet programs
        # override it to reorder ``data``/``label`` themselves and move ``cursor`` back)
        self._batch_descs = (self.provide_data, self.provide_label)
        self.reset()

    # copied as MXNet copies them into NDArrays, so a later change to the user's array leaves
    # the batches alone (but see _keep_ndarray_inputs); the C++ iterators' subclasses pass arrays
    # they made and skip the copy
    _COPIES_INPUTS = True

    def _keep_ndarray_inputs(self, given: list[tuple[Any, Any]]) -> None:
        """Read an NDArray input (on the host) from the user's own array, as MXNet keeps an NDArray
        input itself (only its shuffle copies one): an in-place write into it (``x[:] = ...``,
        ``x /= std``) changes the batches that follow, and ``data`` holds that very NDArray."""
        sources: dict[str, Any] = {str(name): value for name, value in given}
        for pairs in (self._data, self._label):
            for i, (name, _) in enumerate(pairs):
                value = sources[name]
                host = getattr(value, "data_array", None)
                if isinstance(host, np.ndarray) and value.context.device_type == "cpu":
                    pairs[i] = (name, host)
                    self._shared.append(value)  # _take waits for the writes pending on it

    def _own_copies(self, pairs: list[tuple[str, np.ndarray]]) -> list[tuple[str, np.ndarray]]:
        if self._COPIES_INPUTS:
            return [(name, np.array(arr, order="C")) for name, arr in pairs]
        return [(name, np.ascontiguousarray(arr)) for name, arr in pairs]

    def _count(self, name: str, arr: np.ndarray) -> int:
        axis = self.batch_axis if arr.ndim > self.batch_axis else 0
        if arr.ndim == 0:
            raise DataError(f"{type(self).__name__}: input {name!r} is a scalar; it needs a batch axis")
        return int(arr.shape[axis])

    def _axis(self, arr: np.ndarray) -> int:
        # labels are usually 1-D even when the data layout puts N elsewhere
        return self.batch_axis if arr.ndim > self.batch_axis else 0

    def _batch_dtype(self, name: str, arr: np.ndarray) -> np.dtype:
        """The dtype of input ``name``'s batches (see ``dtype`` in the class docstring)."""
        if name in self._own_dtype or (arr.dtype.kind == "f" and self.dtype.kind != "f"):
            return arr.dtype
        return self.dtype

    def _desc(self, pairs: list[tuple[str, np.ndarray]]) -> list[DataDesc]:
        descs = []
        for name, arr in pairs:
            shape = list(arr.shape)
            shape[self._axis(arr)] = self.batch_size
            descs.append(DataDesc(name, shape, self._batch_dtype(name, arr).type, self.layout))
        return descs

    @property
    def data(self) -> list[tuple[str, Any]]:
        """The data inputs as ``(name, NDArray)`` pairs, as MXNet's: those of :attr:`data_list` (an
        NDArray input itself, unless shuffled), so writing into one changes the batches that follow."""
        return [(name, self.data_list[i]) for i, (name, _) in enumerate(self._data)]

    @data.setter
    def data(self, source: Any) -> None:
        self._data = self._replaced_inputs(source, "data", "data")
        self._batch_descs = (self.provide_data, self.provide_label)

    @property
    def label(self) -> list[tuple[str, Any]]:
        """The label inputs as ``(name, NDArray)`` pairs, the iterator's own copies, as :attr:`data`.

        As in MXNet, a program may assign new ``(name, array)`` pairs (often from
        ``mx.io._init_data``) to rename the labels; the batches and ``provide_label``
        follow from the next batch on.
        """
        return [(name, self.data_list[len(self._data) + i]) for i, (name, _) in enumerate(self._label)]

    @label.setter
    def label(self, source: Any) -> None:
        self._label = self._replaced_inputs(source, "label", "softmax_label")
        self._batch_descs = (self.provide_data, self.provide_label)

    def _replaced_inputs(self, source: Any, what: str, default_name: str) -> list[tuple[str, np.ndarray]]:
        """The inputs assigned to ``data`` or ``label``, checked to hold as many examples as the others."""
        replaced = self._own_copies(init_named_arrays(source, default_name, what))
        for name, arr in replaced:
            if self._count(name, arr) != self.num_data:
                raise DataError(
                    f"{type(self).__name__}: {what} {name!r} holds {self._count(name, arr)} examples; "
                    f"expected {self.num_data}, as the other inputs"
                )
        if self._dtype_given is None:
            self._own_dtype |= {
                str(name) for name, value in named_inputs(source, default_name) if hasattr(value, "asnumpy")
            }
        return replaced

    @property
    def data_list(self) -> list[Any]:
        """MXNet's ``data_list``: every input, data then label, as an NDArray over the iterator's own
        copy; writing into one (``it.data_list[1][:] = p``) changes the batches that follow.

        An input keeps its NDArray while it is one of the inputs: assigning new labels leaves the
        data's NDArrays (which a program may hold) as they were, and the other way round, so the
        engine orders a write into any of them before the batches that read it.
        """
        arrays = [arr for _, arr in self._data + self._label]
        shared = self._shared
        if len(shared) != len(arrays) or any(s.data_array is not a for s, a in zip(shared, arrays, strict=True)):
            kept = {id(s.data_array): s for s in shared}  # (each holds its array: the ids are distinct)
            self._shared = [
                nd.from_numpy(arr, zero_copy=True) if id(arr) not in kept else kept[id(arr)] for arr in arrays
            ]
        return self._shared

    @property
    def idx(self) -> np.ndarray:
        """The permutation the last shuffle applied to the examples, as MXNet's ``NDArrayIter.idx``.

        With ``shuffle=True`` the examples of this epoch are those of the last epoch taken in
        this order (MXNet shuffles the same array in place at every reset); without shuffling
        it stays ``arange(num_data)``.
        """
        return self._positions

    @property
    def cursor(self) -> int:
        """MXNet's ``cursor``: where the current batch starts among this epoch's examples.

        ``-batch_size`` before the first batch of an epoch; negative inside the first batch
        when ``roll_over`` carried examples into it.  Programs that subclass ``NDArrayIter``
        set it back (``self.cursor = -self.batch_size``) in their own ``reset`` and then
        drive the iterator with ``iter_next``/``getdata``/``getlabel``/``getpad``.

        Examples
        --------
        >>> import numpy as np
        >>> it = NDArrayIter(np.arange(6), batch_size=4)
        >>> it.cursor, it.iter_next(), it.cursor, it.getpad()
        (-4, True, 0, 0)
        >>> it.iter_next(), it.cursor, it.getpad(), it.iter_next()
        (True, 4, 2, False)
        """
        return self._cursor - self.batch_size - self._carried

    @cursor.setter
    def cursor(self, value: int) -> None:
        self._cursor = int(value) + self.batch_size + self._carried
        self._batch = None  # the next iter_next() cuts the batch that starts after ``value``

    @property  # type: ignore[misc]  # read-only here; DataIter lets subclasses assign it
    def provide_data(self) -> list[DataDesc]:
        return self._desc(self._data)

    @property  # type: ignore[misc]  # read-only here; DataIter lets subclasses assign it
    def provide_label(self) -> list[DataDesc]:
        return self._desc(self._label)

    def reset(self) -> None:
        if self.shuffle:
            np.random.shuffle(self._positions)
            self._shuffled = self._shuffled[self._positions]
        order = self._shuffled
        if self.last_batch_handle == "roll_over":
            order = np.concatenate([self._carry, order])
        self._order = order
        self._cursor = 0
        self._carried, self._carry = len(self._carry), np.zeros(0, dtype=np.int64)
        self._batch = None
        # what every batch carries as its provide_data / provide_label: new lists each epoch
        self._batch_descs = (self.provide_data, self.provide_label)

    def hard_reset(self) -> None:
        """Start again from the beginning, dropping the examples ``roll_over`` carried from the last epoch."""
        self._carry = np.zeros(0, dtype=np.int64)
        self.reset()

    def iter_next(self) -> bool:
        start, total = self._cursor, len(self._order)
        if start >= total:
            self._cursor = start + self.batch_size  # ``cursor`` goes on past the end, as MXNet's
            self._batch = None
            return False
        stop = start + self.batch_size
        if stop <= total:
            self._batch = (self._order[start:stop], self._carried if start == 0 else 0)
        elif self.last_batch_handle == "pad":
            pad = stop - total
            fill = np.resize(self._order[: min(total, self.num_data)], pad)
            self._batch = (np.concatenate([self._order[start:], fill]), pad)
        else:
            if self.last_batch_handle == "roll_over":
                self._carry = self._order[start:]
            self._cursor = total
            self._batch = None
            return False
        self._cursor = stop
        return True

    def _take(self, pairs: list[tuple[str, np.ndarray]]) -> list[Any]:
        if self._batch is None:
            raise DataError(f"{type(self).__name__}: no current batch; call iter_next() or next() first")
        index = self._batch[0]
        for shared in self._shared:
            shared.wait_to_read()  # a write into data_list lands before the batch reads it
        ctx = current_context() if self.ctx is None else as_context(self.ctx)
        out = []
        for name, arr in pairs:
            part = arr.take(index, axis=self._axis(arr)).astype(self._batch_dtype(name, arr), copy=False)
            # ``part`` is a fresh gather that no one else holds: on the host the batch wraps it
            # rather than copying it a second time
            batch = nd.from_numpy(part, zero_copy=True)
            out.append(batch if batch.context == ctx else nd.array(part, ctx=ctx, dtype=part.dtype))
        return out

    def getdata(self) -> list[Any]:
        return self._take(self._data)

    def getlabel(self) -> list[Any]:
        return self._take(self._label)

    def getpad(self) -> int:
        return 0 if self._batch is None else self._batch[1]

    def getindex(self) -> np.ndarray | None:
        return None if self._batch is None else self._batch[0]

    def next(self) -> DataBatch:
        if not self.iter_next():
            raise StopIteration
        # through the getters, as MXNet's next(): a subclass that overrides them shapes the batches
        return self._batch_of(self.getdata(), self.getlabel())

    def _batch_of(self, data: list[Any], label: list[Any]) -> DataBatch:
        provide_data, provide_label = self._batch_descs
        return DataBatch(
            data=data,
            label=label,
            pad=self.getpad(),
            index=self.getindex(),
            provide_data=provide_data,
            provide_label=provide_label,
        )
