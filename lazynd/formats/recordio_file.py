"""One RecordIO file (``.rec``) read or written record by record: :class:`MXRecordIO`.

A record is stored as ``uint32 0xced7230a``, ``uint32 (cflag << 29 | length)``,
the data and zero padding to a multiple of 4 bytes, all little-endian.  A
payload that holds the magic word at a 4-byte aligned offset is split there,
as MXNet's writer does, so that a reader scanning for the magic word can never
mistake data for a record boundary: the parts carry ``cflag`` 1 (first), 2
(middle) and 3 (last), a whole record carries 0, and the magic word is put
back between the parts on reading.

Part of :mod:`lazynd.recordio`, which hands these names on.
"""

from __future__ import annotations

import contextlib
import os
import struct
from collections.abc import Iterator
from typing import IO, Any, Self

import numpy as np

from ..arguments import is_choice
from ..errors import ArgumentTypeError, FormatError, OperatorError
from .fileio import AtomicWriter, open_atomic, open_for_stream
from .fileio_urls import file_name_text

__all__ = ["MXRecordIO"]


def bytes_like(what: str, data: Any) -> bytes:
    """``data`` as bytes when it is bytes-like (bytes, bytearray, memoryview); refused by type otherwise."""
    if isinstance(data, bytes):
        return data
    if isinstance(data, (bytearray, memoryview)):
        return bytes(data)
    raise ArgumentTypeError(f"{what}: record data must be bytes-like; given {type(data).__name__}")


_MAGIC = 0xCED7230A
_MAGIC_BYTES = struct.pack("<I", _MAGIC)
_RECORD_HEADER = struct.Struct("<II")
_LENGTH_BITS = 29
_LENGTH_MASK = (1 << _LENGTH_BITS) - 1
_PADDING = (b"", b"\0\0\0", b"\0\0", b"\0")  # indexed by length % 4
_WHOLE, _FIRST, _MIDDLE, _LAST = 0, 1, 2, 3


def _encode_record(data: bytes) -> bytes:
    """Frame one payload as the bytes MXNet's writer would put in the file."""
    size = len(data)
    if size > _LENGTH_MASK:
        raise OperatorError(
            f"MXRecordIO.write: a RecordIO record holds at most {_LENGTH_MASK} bytes (2**29 - 1); given {size}"
        )
    pad = _PADDING[size & 3]
    # bytes.find runs in C; the aligned scan below is only needed when it hits.
    if _MAGIC_BYTES not in data:
        return b"".join((_RECORD_HEADER.pack(_MAGIC, size), data, pad))
    words = np.frombuffer(data, dtype="<u4", count=size // 4)
    splits = (np.flatnonzero(words == _MAGIC) * 4).tolist()
    if not splits:
        return b"".join((_RECORD_HEADER.pack(_MAGIC, size), data, pad))
    chunks = []
    start = 0
    for split in splits:
        cflag = _FIRST if start == 0 else _MIDDLE
        chunks.append(_RECORD_HEADER.pack(_MAGIC, cflag << _LENGTH_BITS | (split - start)))
        chunks.append(data[start:split])  # parts before a magic word are 4-aligned
        start = split + 4
    chunks.append(_RECORD_HEADER.pack(_MAGIC, _LAST << _LENGTH_BITS | (size - start)))
    chunks.append(data[start:])
    chunks.append(pad)
    return b"".join(chunks)


class MXRecordIO:
    """A RecordIO file read or written one record at a time.

    Parameters
    ----------
    uri : str or os.PathLike
        Path of the ``.rec`` file, or a URL (``s3://``, ``memory://``...) when
        fsspec is installed.
    flag : {'r', 'w'}
        ``'r'`` to read, ``'w'`` to write.  A file being written goes through
        :func:`lazynd.formats.fileio.open_atomic` (a temporary file in the same
        directory; a URL's contents are held in memory) and replaces ``uri``
        at :meth:`close`, so readers never see a half-written file; leaving a
        ``with`` block on an exception discards it.

    Examples
    --------
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "a.rec")
    >>> with MXRecordIO(path, "w") as writer:
    ...     writer.write(b"hello")
    >>> with MXRecordIO(path, "r") as reader:
    ...     reader.read(), reader.read()
    (b'hello', None)
    """

    def __init__(self, uri: str | os.PathLike[str], flag: str) -> None:
        self.uri = file_name_text(uri)
        if not is_choice(flag, ("r", "w")):
            raise OperatorError(f"MXRecordIO({self.uri!r}): flag must be 'r' or 'w'; given {flag!r}")
        self.flag = flag
        self.is_open = False
        self._file: IO[bytes] | AtomicWriter | None = None
        self._pos = 0
        self.open()

    @property
    def writable(self) -> bool:
        """Whether the file was opened for writing."""
        return self.flag == "w"

    def open(self) -> None:
        """Open the file; a writer starts a new, empty file."""
        if self.is_open:
            self.close()
        if self.writable:
            self._file = open_atomic(self.uri)
        else:
            self._file = open_for_stream(self.uri)
        self._pos = 0
        self.is_open = True

    def close(self) -> None:
        """Close the file; a writer's file is then moved into place."""
        if not self.is_open or self._file is None:
            return
        self.is_open = False
        file, self._file = self._file, None
        if isinstance(file, AtomicWriter):
            file.commit()
        else:
            file.close()

    def _discard(self) -> None:
        """Close a writer without replacing ``uri``."""
        if self.is_open and isinstance(self._file, AtomicWriter):
            self._file.discard()
            self._file = None
            self.is_open = False

    def reset(self) -> None:
        """Rewind a reader to the first record; a writer starts the file over."""
        if self.is_open and not self.writable:
            self._seek_to(0)
        else:
            self.close()
            self.open()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, *_: object) -> None:
        if exc_type is not None and self.writable:
            self._discard()
        else:
            self.close()

    def __del__(self) -> None:
        if getattr(self, "is_open", False):
            # Nothing may escape from a finaliser (it may run at interpreter exit).
            with contextlib.suppress(Exception):
                self.close()

    def __getstate__(self) -> dict[str, Any]:
        if self.is_open and self.writable:
            raise TypeError(
                f"cannot pickle {type(self).__name__}({self.uri!r}) while it is open for writing; close it first"
            )
        state = {k: v for k, v in self.__dict__.items() if k != "_file"}
        state["_resume"] = (self.is_open, self._pos)
        state["is_open"] = False
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        was_open, position = state.pop("_resume")
        self.__dict__.update(state)
        self._file = None
        if was_open:
            self.open()
            self._seek_to(position)

    def _check(self, writing: bool) -> Any:
        """The open file (an :class:`AtomicWriter` when writing), after checking the mode."""
        if not self.is_open or self._file is None:
            raise OperatorError(f"{self.uri}: I/O operation on a closed record file")
        if writing != self.writable:
            action = "write to" if writing else "read from"
            raise OperatorError(f"{self.uri}: cannot {action} a record file opened with flag {self.flag!r}")
        return self._file

    def _seek_to(self, position: int) -> None:
        self._check(writing=False).seek(position)
        self._pos = position

    def tell(self) -> int:
        """Byte offset of the next record to be read or written."""
        self._check(writing=self.writable)
        return self._pos

    def write(self, buf: bytes | bytearray | memoryview) -> None:
        """Append one record holding the bytes ``buf``."""
        file = self._check(writing=True)
        record = _encode_record(bytes_like(f"{self.uri}: write", buf))
        file.write(record)
        self._pos += len(record)

    def read(self) -> bytes | None:
        """Read the next record; ``None`` at the end of the file."""
        file = self._check(writing=False)
        parts: list[bytes] = []
        while True:
            offset = self._pos
            head = file.read(8)
            if len(head) < 8:
                if not head and not parts:
                    return None
                what = "a multi-part record" if parts else "a record header"
                raise FormatError(
                    f"{self.uri}: file ends inside {what} at offset {offset} "
                    f"({len(head)} of 8 header bytes present); the file is truncated"
                )
            cflag, length = self._parse_header(head, offset)
            padded = length + (-length & 3)
            body = file.read(padded)
            self._pos = offset + 8 + len(body)
            if len(body) < padded:
                raise FormatError(
                    f"{self.uri}: record at offset {offset} declares {length} bytes "
                    f"(padded {padded}) but only {len(body)} remain; the file is truncated"
                )
            expected = (_WHOLE, _FIRST) if not parts else (_MIDDLE, _LAST)
            if cflag not in expected:
                raise FormatError(
                    f"{self.uri}: record part at offset {offset} has continuation flag "
                    f"{cflag}; expected one of {expected}"
                )
            data = body if padded == length else body[:length]
            if cflag == _WHOLE:
                return data
            parts.append(data)
            if cflag == _LAST:
                return _MAGIC_BYTES.join(parts)

    def _parse_header(self, head: bytes, offset: int) -> tuple[int, int]:
        """(continuation flag, payload length) of the 8 header bytes ``head`` read at byte ``offset``."""
        magic, word = _RECORD_HEADER.unpack(head)
        if magic != _MAGIC:
            raise FormatError(
                f"{self.uri}: bad magic word 0x{magic:08x} at offset {offset} "
                f"(expected 0x{_MAGIC:08x}); the file is corrupt or not RecordIO"
            )
        return word >> _LENGTH_BITS, word & _LENGTH_MASK

    def record_offsets(self) -> list[int]:
        """Byte offset of every record in the file, as an index file lists them; the reader is left rewound.

        Only the record headers are read: each payload is skipped with a seek.
        """
        file = self._check(writing=False)
        self._seek_to(0)
        offsets: list[int] = []
        offset = 0
        while head := file.read(8):
            if len(head) < 8:
                raise FormatError(
                    f"{self.uri}: file ends inside a record header at offset {offset} "
                    f"({len(head)} of 8 header bytes present); the file is truncated"
                )
            cflag, length = self._parse_header(head, offset)
            if cflag in (_WHOLE, _FIRST):
                offsets.append(offset)
            offset += 8 + length + (-length & 3)
            file.seek(offset)
        self._seek_to(0)
        return offsets

    def __iter__(self) -> Iterator[bytes]:
        """Yield the remaining records in file order."""
        while (record := self.read()) is not None:
            yield record
