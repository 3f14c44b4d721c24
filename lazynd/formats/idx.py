"""The IDX file format (MNIST's): reading one file, gzip-compressed or not.

An IDX file is a 4-byte magic number ``0x0000TTDD`` (``TT`` the element type,
``DD`` the number of dimensions), ``DD`` big-endian uint32 sizes, then the
elements, big-endian, in C order.  :func:`read_idx` checks every part of that
against the file before it allocates, so a corrupt header cannot ask for
terabytes.
"""

from __future__ import annotations

import gzip
import io
import math
import os
import struct
import zlib
from pathlib import Path

import numpy as np

from ..errors import FormatError

__all__ = ["read_idx"]

_GZIP_MAGIC = b"\x1f\x8b"
# Deflate cannot expand data by more than about 1032:1; a header declaring more
# than that is corrupt, and we must not allocate what it asks for.
_MAX_DEFLATE_RATIO = 1032

# IDX type codes (third byte of the magic number); the data are big-endian.
_IDX_DTYPES = {0x08: "u1", 0x09: "i1", 0x0B: ">i2", 0x0C: ">i4", 0x0D: ">f4", 0x0E: ">f8"}  # fmt: skip


def _fail(path: Path, problem: str) -> FormatError:
    return FormatError(f"{path}: {problem}")


def _read_exact(stream: io.BufferedIOBase, size: int, path: Path, what: str) -> bytes:
    data = stream.read(size)
    if len(data) != size:
        raise _fail(path, f"truncated in {what}: {len(data)} of {size} bytes")
    return data


def _read_idx_stream(stream: io.BufferedIOBase, path: Path, file_size: int, compressed: bool) -> np.ndarray:
    magic = _read_exact(stream, 4, path, "the magic number")
    if magic[:2] != b"\0\0" or magic[2] not in _IDX_DTYPES or magic[3] == 0:
        raise _fail(
            path,
            f"not an IDX file: magic number {int.from_bytes(magic, 'big')} "
            f"(0x{magic.hex()}), expected 0x0000TTDD with type TT in 08 09 0b 0c "
            "0d 0e and DD >= 1 dimensions (2051 for images, 2049 for labels)",
        )
    ndim, dtype = magic[3], np.dtype(_IDX_DTYPES[magic[2]])
    dims = struct.unpack(f">{ndim}I", _read_exact(stream, 4 * ndim, path, "dims"))
    payload = math.prod(dims) * dtype.itemsize
    # Check the size before allocating: a corrupt header may ask for terabytes.
    limit = file_size * _MAX_DEFLATE_RATIO if compressed else file_size - 4 - 4 * ndim
    if payload > limit:
        problem = (
            f"more than a {file_size}-byte gzip file can hold" if compressed else f"truncated: the file has {limit}"
        )
        raise _fail(path, f"header declares shape {dims} ({payload} bytes), {problem}")
    try:
        array = np.empty(dims, dtype=dtype)
    except ValueError as error:  # a zero dim beside dims whose product NumPy cannot index
        raise _fail(path, f"header declares shape {dims}, which NumPy cannot represent ({error})") from None
    received = stream.readinto(array.reshape(-1).view(np.uint8).data)
    if received != payload:
        raise _fail(path, f"truncated: shape {dims} needs {payload} bytes, got {received}")
    # For gzip, reading past the data also reaches the end and checks the CRC.
    if stream.read(1):
        raise _fail(path, f"trailing bytes after the {payload} bytes of shape {dims}")
    return array if dtype.itemsize == 1 else array.astype(dtype.newbyteorder("="))


def read_idx(path: str | os.PathLike[str]) -> np.ndarray:
    """Read an IDX file (the format of MNIST), gzip-compressed or not.

    Compression is told from the content, not the name.  The result is
    writable, in native byte order, with the header's shape and dtype.

    Raises
    ------
    FormatError
        If the file is not IDX, is truncated, has trailing bytes or a corrupt
        gzip stream; the message names the file and the problem.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     path = pathlib.Path(folder) / "labels-idx1-ubyte"
    ...     _ = path.write_bytes(bytes([0, 0, 0x08, 1, 0, 0, 0, 3, 7, 2, 1]))
    ...     read_idx(path)
    array([7, 2, 1], dtype=uint8)
    """
    path = Path(path)
    with open(path, "rb") as raw:
        file_size = os.fstat(raw.fileno()).st_size
        compressed = raw.read(2) == _GZIP_MAGIC
        raw.seek(0)
        if not compressed:
            return _read_idx_stream(raw, path, file_size, compressed=False)
        try:
            with gzip.GzipFile(fileobj=raw, mode="rb") as stream:
                return _read_idx_stream(stream, path, file_size, compressed=True)
        except (EOFError, zlib.error, gzip.BadGzipFile) as exc:
            raise _fail(path, f"corrupt or truncated gzip data ({exc})") from exc
