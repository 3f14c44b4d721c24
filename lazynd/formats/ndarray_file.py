"""MXNet's binary NDArray-list format (``nd.save`` / ``nd.load``), on NumPy arrays.

Layout, all little-endian::

    uint64 0x112            list magic
    uint64 0                reserved
    uint64 count            then `count` array records
    uint64 num_names        0 (a list) or `count` (a dict), then per name:
                            uint64 length, UTF-8 bytes

Array records come in four versions (legacy, V1, V2, V3): we write V2, or V3 when
asked for MXNet's NumPy-shape layout (``np_shape``, as MXNet writes under ``np_shape(True)``),
and read them all; their layout is in :mod:`lazynd.formats.ndarray_record`.

Readers check every count and size against the bytes that remain before they
allocate anything, so a corrupted or hostile file raises
:class:`~lazynd.errors.FormatError` quickly and cheaply.
"""

from __future__ import annotations

import os
import struct
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..errors import ArgumentTypeError
from .fileio import BytesLike, open_for_read, write_atomic
from .ndarray_record import DENSE_STORAGE as DENSE_STORAGE
from .ndarray_record import DTYPE_TO_FLAG as DTYPE_TO_FLAG
from .ndarray_record import FLAG_TO_DTYPE as FLAG_TO_DTYPE
from .ndarray_record import KNOWN_DEV_TYPES as KNOWN_DEV_TYPES
from .ndarray_record import MAX_NDIM as MAX_NDIM
from .ndarray_record import UNDEFINED_STORAGE as UNDEFINED_STORAGE
from .ndarray_record import V1_MAGIC as V1_MAGIC
from .ndarray_record import V2_MAGIC as V2_MAGIC
from .ndarray_record import V3_MAGIC as V3_MAGIC
from .ndarray_record import ArrayRecord, ByteReader, encode_record, read_record

LIST_MAGIC = 0x112

_U64 = struct.Struct("<Q")
_LIST_HEADER = struct.Struct("<QQQ")


ArrayData = Sequence[ArrayRecord | np.ndarray] | Mapping[str, ArrayRecord | np.ndarray]
Decoded = list[ArrayRecord] | dict[str, ArrayRecord]


def encode(data: ArrayData, np_shape: bool = False) -> bytes:
    """Serialise arrays to the bytes of an MXNet NDArray file.

    Parameters
    ----------
    data : list or dict of ArrayRecord or numpy.ndarray
        A list is saved without names, a dict with its keys as names, in its
        iteration order.  Bare NumPy arrays are saved as on cpu(0).
    np_shape : bool
        Write V3 records, MXNet's NumPy-shape layout, which MXNet 1.9.1 loads
        only under ``np_shape(True)`` (and V2 files only outside it).

    Returns
    -------
    bytes
        The file contents (V2 records, or V3 with ``np_shape``).

    Raises
    ------
    FormatError
        When an array cannot be stored: a dtype MXNet lacks, or a 0-d array
        without ``np_shape`` (MXNet reads a V2 empty shape as an empty array and
        drops its data).
    TypeError
        When ``data`` or one of its items has the wrong type.

    Examples
    --------
    >>> import numpy as np
    >>> buf = encode({"w": ArrayRecord(np.ones(2, np.float32))})
    >>> decode(buf)["w"].array
    array([1., 1.], dtype=float32)
    """
    return b"".join(_encode_chunks(data, np_shape))


def save_arrays(
    uri: str | os.PathLike[str],
    data: ArrayData,
    storage_options: Mapping[str, Any] | None = None,
    np_shape: bool = False,
) -> None:
    """Write arrays atomically as an MXNet NDArray file (see :func:`encode`).

    Parameters
    ----------
    uri : str or os.PathLike
        Local path or URL (see :mod:`lazynd.formats.fileio`).
    data : list or dict of ArrayRecord or numpy.ndarray
        What to save.
    storage_options : mapping, optional
        fsspec filesystem options for a remote URL.
    np_shape : bool
        Write MXNet's NumPy-shape layout (see :func:`encode`).

    Examples
    --------
    >>> import numpy as np, os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "x.params")
    >>> save_arrays(path, [np.arange(3, dtype=np.int32)])
    >>> load_arrays(path)[0].array
    array([0, 1, 2], dtype=int32)
    """
    write_atomic(uri, _encode_chunks(data, np_shape), storage_options)


def load_arrays(uri: str | os.PathLike[str], storage_options: Mapping[str, Any] | None = None) -> Decoded:
    """Read an MXNet NDArray file (see :func:`decode`).

    Parameters
    ----------
    uri : str or os.PathLike
        Local path or URL (see :mod:`lazynd.formats.fileio`).
    storage_options : mapping, optional
        fsspec filesystem options for a remote URL.

    Returns
    -------
    list of ArrayRecord or dict of str to ArrayRecord
        A dict when the file stores names, a list otherwise.

    Examples
    --------
    >>> import numpy as np, os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "x.params")
    >>> save_arrays(path, {"a": np.zeros((1, 2), np.float16)})
    >>> load_arrays(path)["a"].array.shape
    (1, 2)
    """
    return decode(open_for_read(uri, storage_options), source=os.fspath(uri))


def decode(buf: BytesLike, source: str = "<bytes>") -> Decoded:
    """Parse the bytes of an MXNet NDArray file.

    Parameters
    ----------
    buf : bytes-like
        The whole file.
    source : str
        Name used in error messages (the file name).

    Returns
    -------
    list of ArrayRecord or dict of str to ArrayRecord
        A dict when the file stores names, a list otherwise (also for an empty
        file, as MXNet does).  Arrays own their memory, in native byte order.

    Raises
    ------
    FormatError
        When the bytes are truncated, corrupted, or use a feature this reader
        does not support (sparse storage, bfloat16); the message names
        ``source``, the byte offset and what was found.

    Examples
    --------
    >>> import numpy as np
    >>> decode(encode([np.float64([1.5])]))[0].array
    array([1.5])
    """
    reader = ByteReader(memoryview(buf).cast("B"), source)
    magic, _reserved, count = reader.unpack(_LIST_HEADER, "file header")
    if magic != LIST_MAGIC:
        raise reader.error(
            f"not an MXNet NDArray file: magic is {magic:#x}, expected {LIST_MAGIC:#x}",
            0,
        )
    # Every record takes at least 4 bytes: reject absurd counts before looping.
    if count > reader.remaining // 4:
        raise reader.error(f"header claims {count} arrays but only {reader.remaining} bytes follow", 16)
    records = [read_record(reader, index) for index in range(count)]
    (num_names,) = reader.unpack(_U64, "number of names")
    if num_names not in (0, count):
        raise reader.error(f"file has {count} arrays but {num_names} names; expected 0 or {count}")
    names = [_read_name(reader, index) for index in range(num_names)]
    if reader.remaining:
        raise reader.error(f"{reader.remaining} bytes of unexpected trailing data after the names")
    if not names:
        return records
    result = dict(zip(names, records, strict=True))
    if len(result) != len(names):
        duplicated = sorted({name for name in names if names.count(name) > 1})
        raise reader.error(f"duplicate array names {duplicated}")
    return result


def _read_name(reader: ByteReader, index: int) -> str:
    (length,) = reader.unpack(_U64, f"length of name {index}")
    raw = reader.take(length, f"name {index}")
    try:
        return str(raw, "utf-8")
    except UnicodeDecodeError as error:
        raise reader.error(f"name {index} is not valid UTF-8: {bytes(raw[:40])!r}") from error


def _encode_chunks(data: ArrayData, np_shape: bool = False) -> list[BytesLike]:
    """The file as a list of chunks; array data are views, not copies."""
    names: list[str] = []
    if isinstance(data, Mapping):
        items = []
        for name, item in data.items():
            if not isinstance(name, str):
                raise ArgumentTypeError(f"array names must be str, got {type(name).__name__} {name!r}")
            names.append(name)
            items.append((repr(name), item))
    elif isinstance(data, Sequence) and not isinstance(data, (str, bytes)):
        items = [(f"index {index}", item) for index, item in enumerate(data)]
    else:
        raise ArgumentTypeError(f"expected a list or dict of arrays, got {type(data).__name__}")

    chunks: list[BytesLike] = [_LIST_HEADER.pack(LIST_MAGIC, 0, len(items))]
    for label, item in items:
        chunks.extend(encode_record(label, item, np_shape))
    chunks.append(_U64.pack(len(names)))
    for name in names:
        encoded = name.encode("utf-8")
        chunks.append(_U64.pack(len(encoded)) + encoded)
    return chunks
