"""Random access to a RecordIO file by key, through its index file: :class:`MXIndexedRecordIO`.

The index file (``.idx``) holds one ``key<TAB>offset`` line per record: the
byte offset in the ``.rec`` file where the record stored under ``key`` starts.
Both files are written atomically, like a :class:`~lazynd.recordio.MXRecordIO`
writer's, and both may be URLs when fsspec is installed.

Part of :mod:`lazynd.recordio`, which hands these names on.
"""

from __future__ import annotations

import io
import os
from collections.abc import Callable
from typing import Any

from ..errors import FormatError, MissingKeyError, OperatorError
from .fileio import AtomicWriter, open_atomic, open_for_read
from .fileio_urls import file_name_text
from .recordio_file import MXRecordIO

__all__ = ["MXIndexedRecordIO", "RecordIOIndexedByHeaders"]


def _size_of(file: Any) -> int:
    """Bytes in an open binary file, local or an fsspec file object."""
    try:
        return os.fstat(file.fileno()).st_size
    except (AttributeError, OSError, io.UnsupportedOperation):
        position = file.tell()
        size = file.seek(0, os.SEEK_END)
        file.seek(position)
        return int(size)


class MXIndexedRecordIO(MXRecordIO):
    """A RecordIO file with an index file for random access by key.

    Parameters
    ----------
    idx_path : str or os.PathLike
        Path or URL of the index file (``key<TAB>offset`` lines).
    uri : str or os.PathLike
        Path or URL of the ``.rec`` file.
    flag : {'r', 'w'}
        ``'r'`` to read, ``'w'`` to write (both files are written atomically).
    key_type : callable
        Turns the key text of the index file into a key (default ``int``).

    Examples
    --------
    >>> import os, tempfile
    >>> folder = tempfile.mkdtemp()
    >>> idx, rec = os.path.join(folder, "a.idx"), os.path.join(folder, "a.rec")
    >>> with MXIndexedRecordIO(idx, rec, "w") as writer:
    ...     for key in range(3):
    ...         writer.write_idx(key, b"record %d" % key)
    >>> with MXIndexedRecordIO(idx, rec, "r") as reader:
    ...     reader.keys, reader.read_idx(2)
    ([0, 1, 2], b'record 2')
    """

    def __init__(
        self,
        idx_path: str | os.PathLike[str],
        uri: str | os.PathLike[str],
        flag: str,
        key_type: Callable[[str], Any] = int,
    ) -> None:
        self.idx_path = file_name_text(idx_path)
        self.key_type = key_type
        self.idx: dict[Any, int] = {}
        self.keys: list[Any] = []
        self._idx_file: AtomicWriter | None = None
        super().__init__(uri, flag)

    def open(self) -> None:
        """Open both files; a reader loads the whole index."""
        super().open()
        self.idx = {}
        self.keys = []
        if self.writable:
            self._idx_file = open_atomic(self.idx_path)
        else:
            try:
                self._load_index()
            except BaseException:
                super().close()
                raise

    def _load_index(self) -> None:
        """Read every ``key<TAB>offset`` line, checking each offset against the ``.rec`` file's size."""
        assert self._file is not None
        rec_size = _size_of(self._file)
        lines = open_for_read(self.idx_path).split(b"\n")
        for number, raw in enumerate(lines, start=1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as error:
                raise FormatError(
                    f"{self.idx_path}: line {number} is not UTF-8 text ({error.reason} at byte "
                    f"{error.start}): {raw[:60]!r}"
                ) from None
            if not line.strip():
                continue
            fields = line.rstrip("\r").split("\t")
            try:
                if len(fields) != 2:
                    raise ValueError(f"{len(fields)} tab-separated fields")
                key, offset = self.key_type(fields[0]), int(fields[1])
            except ValueError as error:
                raise FormatError(
                    f"{self.idx_path}: line {number} is {line.rstrip()[:80]!r}; expected 'key<TAB>offset' ({error})"
                ) from None
            if not 0 <= offset <= rec_size:
                raise FormatError(
                    f"{self.idx_path}: line {number}: key {key!r} has offset {offset}, outside "
                    f"{self.uri} ({rec_size} bytes)"
                )
            self.idx[key] = offset
            self.keys.append(key)

    def close(self) -> None:
        """Close both files; a writer's files are then moved into place."""
        was_open = self.is_open
        super().close()
        if was_open and self._idx_file is not None:
            file, self._idx_file = self._idx_file, None
            file.commit()

    def _discard(self) -> None:
        super()._discard()
        if self._idx_file is not None:
            self._idx_file.discard()
            self._idx_file = None

    def __getstate__(self) -> dict[str, Any]:
        state = super().__getstate__()
        for name in ("_idx_file", "idx", "keys"):
            state.pop(name, None)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self._idx_file = None
        self.idx, self.keys = {}, []
        super().__setstate__(state)

    def seek(self, idx: Any) -> None:
        """Move the reader to the record stored under key ``idx``."""
        self._check(writing=False)
        try:
            position = self.idx[idx]
        except (KeyError, TypeError):  # TypeError: an unhashable key (a list), which no index holds
            raise MissingKeyError(f"key {idx!r} is not in index {self.idx_path} ({len(self.keys)} keys)") from None
        self._seek_to(position)

    def read_idx(self, idx: Any) -> bytes:
        """Read the record stored under key ``idx``."""
        self.seek(idx)
        try:
            record = self.read()
        except FormatError as error:
            raise FormatError(
                f"{self.idx_path}: key {idx!r} points at offset {self.idx[idx]} of {self.uri}, "
                f"where no whole record starts: {error}"
            ) from None
        if record is None:
            raise FormatError(
                f"{self.idx_path}: key {idx!r} points at offset {self.idx[idx]}, past the last record of {self.uri}"
            )
        return record

    def write_idx(self, idx: Any, buf: bytes | bytearray | memoryview) -> None:
        """Append a record holding ``buf`` and index it under key ``key_type(idx)``.

        The key goes through ``key_type`` first, as in MXNet, so that the index file
        reads back: ``write_idx(1.5, ...)`` indexes the record under ``1``.
        """
        try:
            key = self.key_type(idx)
        except (TypeError, ValueError, OverflowError) as error:  # OverflowError: int() of an infinity
            raise FormatError(
                f"{self.idx_path}: key {idx!r} cannot be indexed: key_type {getattr(self.key_type, '__name__', self.key_type)} "
                f"refuses it ({error})"
            ) from None
        key_text = str(key)
        if "\t" in key_text or "\n" in key_text or "\r" in key_text:
            raise OperatorError(f"{self.idx_path}: index keys may not hold tabs or line breaks; given {idx!r}")
        position = self.tell()
        self.write(buf)
        assert self._idx_file is not None
        self._idx_file.write(f"{key_text}\t{position}\n".encode())
        self.idx[key] = position
        self.keys.append(key)


class RecordIOIndexedByHeaders(MXIndexedRecordIO):
    """A reader of a ``.rec`` file without an index file, keyed ``0, 1, 2...`` in file order.

    The records are found by walking their headers once (the payloads are skipped),
    so the file can be read by key or shuffled as MXNet's ImageRecordIter does with
    files that have no ``.idx``.

    Examples
    --------
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "a.rec")
    >>> with MXIndexedRecordIO(path[:-4] + ".idx", path, "w") as writer:
    ...     for key in (7, 8, 9):
    ...         writer.write_idx(key, b"record %d" % key)
    >>> with RecordIOIndexedByHeaders(path) as reader:
    ...     reader.keys, reader.read_idx(2)
    ([0, 1, 2], b'record 9')
    """

    def __init__(self, uri: str | os.PathLike[str]) -> None:
        # idx_path only names the index in messages: there is no such file
        super().__init__(f"{file_name_text(uri)} (indexed by its record headers)", uri, "r")

    def _load_index(self) -> None:
        offsets = self.record_offsets()
        self.keys = list(range(len(offsets)))
        self.idx = dict(zip(self.keys, offsets, strict=True))
