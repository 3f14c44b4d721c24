"""The inputs of the in-memory iterators: one array, a list, a dict or ``(name, array)`` pairs, named as MXNet names them."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import DataError


def _as_numpy(value: Any, what: str) -> np.ndarray:
    if hasattr(value, "asnumpy"):
        return value.asnumpy()
    if isinstance(value, (np.ndarray, list, tuple)) or np.isscalar(value):
        try:
            return np.asarray(value)
        except ValueError as error:  # ragged nested lists
            raise DataError(f"NDArrayIter: {what} is not a rectangular array: {error}") from error
    raise DataError(f"NDArrayIter: {what} must be a NumPy array or NDArray, got {type(value).__name__}")


def _is_named_pair(item: Any) -> bool:
    """Whether ``item`` is a ``(name, array)`` pair."""
    return isinstance(item, tuple) and len(item) == 2 and isinstance(item[0], str)


def init_named_arrays(source: Any, default_name: str, what: str) -> list[tuple[str, np.ndarray]]:
    """Normalise one array, a list of arrays or a dict into ``(name, NumPy array)`` pairs.

    The inputs are named as :func:`named_inputs` names them, and checked to hold real numbers.
    """
    pairs = [(str(name), _as_numpy(value, f"{what} {name!r}")) for name, value in named_inputs(source, default_name)]
    for name, arr in pairs:
        if arr.dtype.kind not in "biuf":
            raise DataError(f"NDArrayIter: {what} {name!r} holds {arr.dtype} values; expected numbers")
    return pairs


def named_inputs(source: Any, default_name: str) -> list[tuple[Any, Any]]:
    """One array, a list of arrays or a dict as ``(name, array)`` pairs, the arrays as given.

    A dict, an ``OrderedDict`` too, is taken in key order, as MXNet 1.x sorts it
    (``provide_data`` and a batch's arrays come in that order whatever order the
    dict was built in); a list of ``(name, array)`` pairs, which MXNet refuses,
    keeps its own order.  A list of several arrays is named
    ``_0_<default_name>``, ``_1_<default_name>``... as MXNet names them; a list
    of one takes ``default_name``.  ``None`` or an empty list or dict gives no
    arrays (MXNet's way to say "no labels").
    """
    if source is None or (isinstance(source, (list, tuple, dict)) and not source):
        return []
    if isinstance(source, (list, tuple)) and all(_is_named_pair(item) for item in source):
        items = [tuple(item) for item in source]
    elif isinstance(source, dict):
        items = sorted(source.items())
    elif (
        isinstance(source, (list, tuple))
        and source
        and not np.isscalar(source[0])
        and (hasattr(source[0], "asnumpy") or isinstance(source[0], np.ndarray))
    ):
        # MXNet's names: the default name for a list of one, ``_<i>_<name>`` for each of several
        if len(source) == 1:
            items = [(default_name, source[0])]
        else:
            items = [(f"_{i}_{default_name}", v) for i, v in enumerate(source)]
    else:
        items = [(default_name, source)]
    return items


def init_data(data: Any, allow_empty: bool, default_name: str) -> list[tuple[str, Any]]:
    """``data`` (one array, a list of arrays, a dict or ``(name, array)`` pairs) as ``(name, NDArray)`` pairs.

    This is MXNet's ``mx.io._init_data``, which user programs call to rename an iterator's inputs
    (``it.label = mx.io._init_data(y, allow_empty=True, default_name='svm_label')``); the inputs are
    named as :func:`named_inputs` names them.  ``None`` or nothing gives no pairs when
    ``allow_empty``, else a ``DataError``.

    Examples
    --------
    >>> import numpy as np
    >>> [(name, arr.shape) for name, arr in init_data(np.zeros(3), False, "svm_label")]
    [('svm_label', (3,))]
    """
    from .. import ndarray as nd

    pairs = named_inputs(data, default_name)
    if not pairs and not allow_empty:
        raise DataError(f"_init_data: no arrays given for {default_name!r} and allow_empty is False")
    return [
        (str(name), value if hasattr(value, "asnumpy") else nd.array(_as_numpy(value, repr(name))))
        for name, value in pairs
    ]
