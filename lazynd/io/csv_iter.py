"""``CSVIter``: batches from comma-separated text files."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..errors import DataError
from .ndarray_iter import NDArrayIter


def _read_csv(path: str, shape: tuple[int, ...], what: str, dtype: Any) -> np.ndarray:
    if not os.path.exists(path):
        raise DataError(f"CSVIter: {what} file {path!r} does not exist")
    try:
        rows = np.loadtxt(path, delimiter=",", dtype=dtype, ndmin=2)
    except ValueError as exc:
        raise DataError(f"CSVIter: {what} file {path!r} is not numeric CSV: {exc}") from exc
    width = int(np.prod(shape))
    if rows.shape[1] != width:
        raise DataError(
            f"CSVIter: {what} file {path!r} has {rows.shape[1]} columns per row, expected {width} for shape {shape}"
        )
    return rows.reshape((len(rows),) + tuple(shape))


class CSVIter(NDArrayIter):
    """Iterate over a CSV file of examples (one row each) and an optional label file.

    Parameters
    ----------
    data_csv : str
    data_shape : tuple
        Shape of one example; a row holds ``prod(data_shape)`` values.
    label_csv : str, optional
        Without it every label is 0.
    label_shape : tuple
    batch_size : int
    round_batch : bool
        Pad the last batch from the start (True) or drop it (False).

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
    ) -> None:
        data = _read_csv(os.fspath(data_csv), tuple(data_shape), "data", dtype)
        if label_csv is None:
            label = np.zeros((len(data),) + tuple(label_shape), dtype=dtype)
        else:
            label = _read_csv(os.fspath(label_csv), tuple(label_shape), "label", dtype)
            if len(label) != len(data):
                raise DataError(f"CSVIter: {len(data)} data rows but {len(label)} label rows")
        if tuple(label_shape) == (1,):
            label = label.reshape(len(label))
        super().__init__(
            data,
            label,
            batch_size=batch_size,
            last_batch_handle="pad" if round_batch else "discard",
            data_name=data_name,
            label_name=label_name,
            dtype=dtype,
        )
