"""Optimizer states as MXNet 1.x pickles them: written so that MXNet's ``Updater.set_states`` reads them,
and read back (MXNet's or ours) without MXNet installed.

MXNet's ``Updater.get_states`` pickles its dict of states, each NDArray as
``mxnet.ndarray.ndarray.NDArray(None)`` whose pickled state is ``{'handle': bytearray(record)}``, the
record one array of MXNet's NDArray file format: V2, or V3 under ``mx.np_shape`` (MXNet 1.9.1 loads each
only in the mode that wrote it).  :func:`dumps_states` writes that layout opcode by
opcode (pickling a stand-in class under MXNet's name would need MXNet importable), so the bytes load in
MXNet 1.9.1 unchanged; :func:`loads_states` reads them, each such NDArray becoming a NumPy array.
"""

from __future__ import annotations

import io
import pickle
from typing import Any

import numpy as np

from ..errors import FormatError
from ..formats.ndarray_record import ArrayRecord, ByteReader, encode_record, read_record
from ..util import is_np_shape

__all__ = ["dumps_states", "loads_states"]

_PROTOCOL = 3  # the first protocol with BINBYTES; MXNet 1.9.1 (Python 3) reads it
_MXNET_NDARRAY = b"c" + b"mxnet.ndarray.ndarray\nNDArray\n"  # GLOBAL
_BYTEARRAY = b"c" + b"builtins\nbytearray\n"


def dumps_states(states: dict[Any, Any]) -> bytes | None:
    """``states`` (key -> None, a NumPy array, or a tuple or list of them) pickled as MXNet pickles its
    updater's states, or None when a key or state does not fit that layout (the caller pickles it as is).

    Under ``mx.np_shape`` the arrays are V3 records, as MXNet 1.9.1 writes them there (and a 0-d state
    fits); elsewhere V2 records.

    Examples
    --------
    >>> import numpy as np
    >>> data = dumps_states({0: np.ones(2, dtype='float32'), 'w': (np.zeros(1), None)})
    >>> loaded = loads_states(data)
    >>> loaded[0].tolist(), loaded['w'][0].tolist(), loaded['w'][1]
    ([1.0, 1.0], [0.0], None)
    """
    np_shape = is_np_shape()
    out = io.BytesIO()
    out.write(pickle.PROTO + bytes([_PROTOCOL]) + pickle.EMPTY_DICT)
    for key, state in states.items():
        fits = _write_state(out, state, np_shape, check=True)
        if not isinstance(key, (int, str)) or isinstance(key, bool) or not fits:
            return None
        out.write(_plain(key))
        _write_state(out, state, np_shape, check=False)
        out.write(pickle.SETITEM)
    out.write(pickle.STOP)
    return out.getvalue()


def _write_state(out: io.BytesIO, state: Any, np_shape: bool, check: bool) -> bool:
    """Write ``state`` (or, with ``check``, only say whether it can be written), its arrays as V3
    records with ``np_shape``."""
    if state is None:
        if not check:
            out.write(pickle.NONE)
        return True
    if isinstance(state, np.ndarray):
        try:
            record = b"".join(bytes(chunk) for chunk in encode_record("state", ArrayRecord(state), np_shape))
        except FormatError:
            return False  # a 0-d array outside np_shape, or a dtype MXNet cannot hold
        if not check:
            # NDArray(None), then its state {'handle': bytearray(record)} (BUILD calls __setstate__)
            out.write(_MXNET_NDARRAY + pickle.NONE + pickle.TUPLE1 + pickle.REDUCE)
            out.write(pickle.EMPTY_DICT + _plain("handle"))
            out.write(_BYTEARRAY + _plain(record) + pickle.TUPLE1 + pickle.REDUCE)
            out.write(pickle.SETITEM + pickle.BUILD)
        return True
    if isinstance(state, (tuple, list)) and type(state) in (tuple, list):
        if check:
            return all(_write_state(out, part, np_shape, check=True) for part in state)
        out.write(pickle.MARK)
        for part in state:
            _write_state(out, part, np_shape, check=False)
        out.write(pickle.TUPLE if isinstance(state, tuple) else pickle.LIST)
        return True
    return False


def _plain(value: int | str | bytes) -> bytes:
    """The opcodes of a plain value, as the standard pickler writes them (without header and STOP)."""
    data = pickle.dumps(value, protocol=_PROTOCOL)
    return data[2:-1]


def loads_states(data: bytes) -> Any:
    """Unpickle states written by :func:`dumps_states`, by MXNet's ``get_states`` or by lazynd's
    earlier ``get_states``; each MXNet NDArray becomes a NumPy array (None for MXNet's empty array).

    Bytes in MXNet's layout (what :func:`dumps_states` and MXNet write for states of arrays) are read
    by an unpickler that knows only MXNet's NDArray and ``bytearray``, so they run no code.  Any other
    pickle (states that are not arrays, an optimizer pickled with them, lazynd's earlier files) is
    unpickled in full, and unpickling runs whatever code the bytes name: give it only bytes from a
    trusted source.
    """
    try:
        return _unwrap(_MXNetLayoutUnpickler(io.BytesIO(data)).load())
    except _NotMXNetLayout:
        return _unwrap(_StatesUnpickler(io.BytesIO(data)).load())


def _unwrap(value: Any) -> Any:
    if isinstance(value, _PickledMXNetArray):
        return value.array
    if type(value) in (tuple, list):
        return type(value)(_unwrap(v) for v in value)
    if type(value) is dict:
        return {k: _unwrap(v) for k, v in value.items()}
    return value


class _PickledMXNetArray:
    """Stands in for MXNet's NDArray while unpickling: its state is ``{'handle': one array record}``."""

    def __init__(self, *_args: Any) -> None:
        self.array: np.ndarray | None = None

    def __setstate__(self, state: Any) -> None:
        handle = state.get("handle") if isinstance(state, dict) else None
        if not isinstance(handle, (bytes, bytearray)):
            raise FormatError("Updater.set_states: a pickled MXNet NDArray without its 'handle' bytes")
        reader = ByteReader(memoryview(bytes(handle)).cast("B"), "Updater.set_states: pickled MXNet NDArray")
        self.array = read_record(reader, 0).array


class _StatesUnpickler(pickle.Unpickler):
    """Unpickles states, reading MXNet's pickled NDArrays; other MXNet objects are refused by name."""

    def find_class(self, module: str, name: str) -> Any:
        if module == "mxnet.ndarray.ndarray" and name == "NDArray":
            return _PickledMXNetArray
        if module == "mxnet" or module.startswith("mxnet."):
            raise FormatError(
                f"Updater.set_states: the states hold an MXNet object {module}.{name}, which lazynd cannot "
                "read (MXNet pickles its optimizer with the states under get_states(dump_optimizer=True): "
                "save them without it)"
            )
        return super().find_class(module, name)


class _NotMXNetLayout(Exception):
    """The pickle names something other than MXNet's NDArray and bytearray."""


class _MXNetLayoutUnpickler(_StatesUnpickler):
    """Reads MXNet's layout of states only: names no other class or function, so runs no code."""

    def find_class(self, module: str, name: str) -> Any:
        if (module, name) == ("builtins", "bytearray"):
            return bytearray
        if (module, name) == ("mxnet.ndarray.ndarray", "NDArray"):
            return _PickledMXNetArray
        raise _NotMXNetLayout
