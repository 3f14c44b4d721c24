"""``CSVIter``: batches from comma-separated text files."""

from __future__ import annotations

import os
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..errors import ArgumentTypeError, DataError
from ..ops.params import Param, parse_bool, parse_dtype, parse_int, parse_shape
from .single_array_iter import SingleArrayIter


def _load_rows(source: Any, dtype: Any) -> np.ndarray:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # "input contained no data": reported by the caller
        try:
            return np.loadtxt(source, delimiter=",", dtype=dtype, ndmin=2)
        except ValueError:
            if np.dtype(dtype).kind not in "iu":
                raise
            # "1.5" for an integer dtype: MXNet's parser truncates it toward zero
            values = np.loadtxt(source, delimiter=",", dtype=np.float64, ndmin=2)
            limits = np.iinfo(dtype)
            # NaN, inf or a value past the dtype's range would be cast to garbage (MXNet wraps it too)
            outside = ~np.isfinite(values) | (values < limits.min) | (values >= float(limits.max) + 1)
            if outside.any():
                row, column = (int(i) for i in np.argwhere(outside)[0])
                raise ValueError(
                    f"value {values[row, column]} at row {row}, column {column} does not fit {np.dtype(dtype).name}"
                ) from None
            return values.astype(dtype)


def _short_or_long_row(lines: list[str], width: int) -> str | None:
    """Where the first row with other than ``width`` values is, or None when every row has ``width``."""
    for number, line in enumerate(lines, 1):
        if line.strip() and (count := len(line.split(","))) != width:
            return f"row {number} has {count} values"
    return None


def _read_csv(path: str, shape: tuple[int, ...], what: str, dtype: Any) -> np.ndarray:
    if not os.path.exists(path):
        raise DataError(f"CSVIter: {what} file {path!r} does not exist")
    width = int(np.prod(shape))
    try:
        rows = _load_rows(path, dtype)
    except ValueError as exc:
        # MXNet's parser ends a row at its last value, so "1,2,3," is three values: read the
        # rows again without their trailing commas (only then, to keep the fast path)
        with open(path, encoding="utf-8", errors="replace") as text:
            lines = [line.rstrip("\r\n").rstrip(",") for line in text]
        try:
            rows = _load_rows(lines, dtype)
        except ValueError:
            # rows of different lengths: name the row, not NumPy's advice on its own arguments
            if (where := _short_or_long_row(lines, width)) is not None:
                raise DataError(f"CSVIter: {what} file {path!r}: {where}, expected {width} for shape {shape}") from None
            raise DataError(f"CSVIter: {what} file {path!r} is not numeric CSV: {exc}") from exc
    if rows.size == 0:
        raise DataError(f"CSVIter: {what} file {path!r} holds no rows")
    if rows.shape[1] != width:
        raise DataError(
            f"CSVIter: {what} file {path!r} has {rows.shape[1]} columns per row, expected {width} for shape {shape}"
        )
    return rows.reshape((len(rows),) + tuple(shape))


def _example_shape(shape: Any, what: str) -> tuple[int, ...]:
    """``shape`` (a tuple, an int, or MXNet's text ``"(3, 28, 28)"``) as a tuple of positive ints;
    a DataError naming ``what`` otherwise."""
    try:
        dims = parse_shape(shape)
    except (TypeError, ValueError):
        dims = ()
    if not dims or isinstance(shape, bool) or min(dims) < 1:
        raise DataError(f"CSVIter: {what} must be a tuple of positive ints, got {shape!r}")
    return dims


def _path(value: Any, what: str) -> str:
    """``value`` as a file path, or a DataError naming ``what``."""
    if not isinstance(value, (str, os.PathLike)):
        raise DataError(f"CSVIter: {what} must be a file path, got {type(value).__name__}")
    return os.fspath(value)


class CSVIter(SingleArrayIter):
    """Iterate over a CSV file of examples (one row each) and an optional label file.

    Parameters
    ----------
    data_csv : str
    data_shape : tuple
        Shape of one example; a row holds ``prod(data_shape)`` values.
    label_csv : str, optional
        Without it every label is one 0, as in MXNet: the batches' labels are
        ``(batch_size,)`` zeros whatever ``label_shape`` says.
    label_shape : tuple
    batch_size : int
    round_batch : bool
        As MXNet's ``round_batch``: the last batch of an epoch is always given, with
        ``pad`` counting the examples that only fill it.  With True they are the first
        examples of the file, and the next epoch starts after them (so over two epochs
        every example is read equally often); with False the next epoch starts at the
        first example again.
    dtype :
        Type of the batches; with an integer type, values written with a fraction are
        truncated toward zero, as MXNet reads them.
    prefetch_buffer, ctx :
        MXNet's arguments that tune its reading threads; accepted, with no effect.

    As MXNet's ``CSVIter``, ``getdata()`` and ``getlabel()`` give one NDArray each
    (batches still hold lists).

    Examples
    --------
    >>> import os, tempfile
    >>> folder = tempfile.mkdtemp()
    >>> path = os.path.join(folder, "d.csv")
    >>> _ = open(path, "w").write("1,2\\n3,4\\n5,6\\n")
    >>> it = CSVIter(path, data_shape=(2,), batch_size=2)
    >>> [b.data[0].asnumpy().tolist() for b in it]
    [[[1.0, 2.0], [3.0, 4.0]], [[5.0, 6.0], [1.0, 2.0]]]
    """

    def __init__(
        self,
        data_csv: str,
        data_shape: Sequence[int],
        label_csv: str | None = None,
        label_shape: Sequence[int] = (1,),
        batch_size: int = 1,
        round_batch: bool = True,
        dtype: Any = np.float32,
        data_name: str = "data",
        label_name: str = "softmax_label",
        prefetch_buffer: int = 4,
        ctx: Any = None,
        **unknown: Any,
    ) -> None:
        if unknown:  # MXNet's C++ iterator refuses them by name; a misspelt one must not pass silently
            raise ArgumentTypeError(
                f"CSVIter: unknown argument(s) {sorted(unknown)}; its arguments are data_csv, data_shape, "
                "label_csv, label_shape, batch_size, round_batch, dtype, data_name, label_name, prefetch_buffer, ctx"
            )
        # MXNet's C++ iterator reads its arguments as text too: batch_size="32", round_batch="False"
        data_shape = _example_shape(data_shape, "data_shape")
        label_shape = _example_shape(label_shape, "label_shape")
        batch_size = Param(parse_int).parse("CSVIter", "batch_size", batch_size)
        round_batch = Param(parse_bool).parse("CSVIter", "round_batch", round_batch)
        dtype = Param(parse_dtype).parse("CSVIter", "dtype", dtype)
        data = _read_csv(_path(data_csv, "data_csv"), data_shape, "data", dtype)
        if label_csv is None:
            # as MXNet: without a label file, label_shape is not used and each label is one 0
            label = np.zeros(len(data), dtype=dtype)
        else:
            label = _read_csv(_path(label_csv, "label_csv"), tuple(label_shape), "label", dtype)
            if len(label) != len(data):
                # one of the two files is damaged or cut short: the reader must know which files to look at
                raise DataError(
                    f"CSVIter: data file {data_csv!r} has {len(data)} rows but label file {label_csv!r} has "
                    f"{len(label)}; each data row needs one label row"
                )
        if tuple(label_shape) == (1,):
            label = label.reshape(len(label))
        self.round_batch = round_batch
        self._skip = 0  # examples the last batch of the previous epoch already read (round_batch)
        super().__init__(
            data,
            label,
            batch_size=batch_size,
            last_batch_handle="pad",
            data_name=data_name,
            label_name=label_name,
            dtype=dtype,
        )

    def reset(self) -> None:
        skip, self._skip = self._skip, 0
        super().reset()
        self._cursor = skip

    def hard_reset(self) -> None:
        """Start again at the first example, even after a batch completed from the start."""
        self._skip = 0
        super().hard_reset()

    def iter_next(self) -> bool:
        more = super().iter_next()
        if more and self.round_batch:
            self._skip = self.getpad() % self.num_data
        return more
