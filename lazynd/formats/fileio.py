"""Reading and atomically writing whole files, on local disks and remote stores.

Every file lazynd writes goes through :func:`write_atomic`, so a crash or an
exception in the middle of a save never leaves a half-written file behind:
readers see either the old file or the new one.

Local paths (and ``file://`` URLs) are written to a temporary file in the same
directory, flushed to disk with ``fsync`` and moved over the target with
``os.replace``, which is atomic on POSIX and Windows.  A new file gets the
permissions a plain ``open`` would give it (``0o666`` less the umask: ``0o644``
under the usual umask ``022``); a file that is replaced keeps its permission
bits.  Temporaries are named ``.lazynd-tmp-<pid>-<machine>-<random>-<name>``;
a process killed in the middle of a save (``SIGKILL``, power loss) leaves one
behind, and the next save to that directory removes those whose process is
gone.

Other URLs (``s3://bucket/key``, ``memory://x``, ``hdfs://...``) go through
`fsspec <https://filesystem-spec.readthedocs.io>`_, an optional dependency
(``pip install fsspec``, plus the store's backend, e.g. ``s3fs`` for S3).  The
whole payload is assembled in memory before the store is contacted.  Object
stores replace an object in one request, which is atomic; on other filesystems
the payload goes to a temporary name that is then renamed over the target.

Options for the remote filesystem (credentials, endpoint) are passed as
``storage_options``, the keyword arguments of the fsspec filesystem.  When they
are not given, fsspec's own configuration applies: ``FSSPEC_<PROTOCOL>_<KWARG>``
environment variables (``FSSPEC_S3_ENDPOINT_URL=http://127.0.0.1:9000``) or
``~/.config/fsspec/*.json``, and for S3 also botocore's ``AWS_ENDPOINT_URL``,
``AWS_ACCESS_KEY_ID`` and ``AWS_SECRET_ACCESS_KEY``.  That is how code that
cannot pass options (``nd.save(fname, data)``) reaches a non-default store.
Which names are URLs and how each one's filesystem is reached: :mod:`lazynd.formats.fileio_urls`.
"""

from __future__ import annotations

import contextlib
import errno
import io
import os
from collections.abc import Iterable, Mapping
from typing import IO, Any

from ..errors import ArgumentTypeError, ArgumentValueError, LazyNDError, MissingFileError
from .fileio_temporary import TEMPORARY_PREFIX as TEMPORARY_PREFIX
from .fileio_temporary import (
    create_temporary,
    fsync_directory,
    keep_permissions,
    remove_stale_temporaries,
    unlink_quietly,
)
from .fileio_urls import file_name_text, local_path, remote_filesystem, store_remote
from .fileio_urls import is_url as is_url

BytesLike = bytes | bytearray | memoryview
"""Anything with the buffer protocol that a binary file's ``write`` accepts."""


def open_for_read(uri: str | os.PathLike[str], storage_options: Mapping[str, Any] | None = None) -> bytes:
    """Read a whole local file or remote object into memory.

    Parameters
    ----------
    uri : str or os.PathLike
        Local path, ``file://`` URL, or any URL fsspec understands.
    storage_options : mapping, optional
        Keyword arguments for the fsspec filesystem of a remote URL, e.g.
        ``{"client_kwargs": {"endpoint_url": "http://127.0.0.1:9000"}}``.

    Returns
    -------
    bytes
        The file's contents.

    Raises
    ------
    MissingFileError
        When the file or object does not exist (a :class:`LazyNDError` and a ``FileNotFoundError``).
    LazyNDError
        When the URL needs fsspec or a backend that is not installed, or when
        ``storage_options`` is given for a local path.

    Examples
    --------
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "x.bin")
    >>> write_atomic(path, b"abc")
    >>> open_for_read(path)
    b'abc'
    """
    with _naming_a_missing_file(uri):
        local = local_path(uri, storage_options)
        if local is not None:
            with open(local, "rb") as handle:
                return handle.read()
        filesystem, path = remote_filesystem(str(uri), storage_options)
        return bytes(filesystem.cat_file(path))


@contextlib.contextmanager
def _naming_a_missing_file(uri: Any) -> Any:
    """Turn a ``FileNotFoundError`` from opening ``uri`` into a :class:`MissingFileError` naming it.

    A folder where a file is expected becomes a :class:`LazyNDError` naming it.
    """
    try:
        yield
    except LazyNDError:
        raise
    except FileNotFoundError as error:
        raise MissingFileError(error.errno, "no such file or object", os.fspath(uri)) from error
    except IsADirectoryError as error:
        raise LazyNDError(f"cannot read {os.fspath(uri)!r}: it is a folder, not a file") from error
    except ValueError as error:
        # open() refuses a name holding a NUL byte with a bare ValueError; such names come from
        # damaged image lists and indexes, so the message must show the whole name
        if "\0" not in os.fspath(uri):
            raise
        raise ArgumentValueError(f"cannot read {os.fspath(uri)!r}: a file name cannot hold a NUL byte") from error


def write_atomic(
    uri: str | os.PathLike[str],
    data: BytesLike | Iterable[BytesLike],
    storage_options: Mapping[str, Any] | None = None,
) -> None:
    """Write ``data`` to ``uri`` so that readers never see a partial file.

    Parameters
    ----------
    uri : str or os.PathLike
        Local path, ``file://`` URL, or any URL fsspec understands.
    data : bytes-like or iterable of bytes-like
        The contents, whole or as chunks written one after the other (chunks
        let a caller write large arrays without joining them first).  If the
        iterable raises, the target is left untouched.
    storage_options : mapping, optional
        Keyword arguments for the fsspec filesystem of a remote URL.

    Raises
    ------
    TypeError
        When ``data`` is a ``str`` or not bytes-like.
    LazyNDError
        When the URL needs fsspec or a backend that is not installed, or when
        ``storage_options`` is given for a local path.

    Examples
    --------
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "x.bin")
    >>> write_atomic(path, [b"ab", memoryview(b"cd")])
    >>> open_for_read(path)
    b'abcd'
    """
    chunks = _as_chunks(data)
    with open_atomic(uri, storage_options) as handle:
        for chunk in chunks:
            handle.write(chunk)


def open_atomic(uri: str | os.PathLike[str], storage_options: Mapping[str, Any] | None = None) -> AtomicWriter:
    """Open ``uri`` for writing bit by bit; the target is replaced only at commit.

    Use it as a context manager (commit on a normal exit, discard on an
    exception) or call :meth:`AtomicWriter.commit` / :meth:`AtomicWriter.discard`.

    Parameters
    ----------
    uri : str or os.PathLike
        Local path, ``file://`` URL, or any URL fsspec understands.  Remote
        contents are kept in memory until the commit.
    storage_options : mapping, optional
        Keyword arguments for the fsspec filesystem of a remote URL.

    Returns
    -------
    AtomicWriter
        A binary file-like object with ``write``, ``commit`` and ``discard``.

    Examples
    --------
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "x.bin")
    >>> with open_atomic(path) as handle:
    ...     _ = handle.write(b"ab")
    ...     _ = handle.write(b"cd")
    >>> open_for_read(path)
    b'abcd'
    """
    return AtomicWriter(uri, storage_options)


def open_for_stream(uri: str | os.PathLike[str], storage_options: Mapping[str, Any] | None = None) -> IO[bytes]:
    """Open a local file or remote object for reading, seekable, without loading it whole.

    Parameters
    ----------
    uri : str or os.PathLike
        Local path, ``file://`` URL, or any URL fsspec understands.
    storage_options : mapping, optional
        Keyword arguments for the fsspec filesystem of a remote URL.

    Returns
    -------
    binary file object
        The caller closes it.

    Raises
    ------
    MissingFileError
        When the file or object does not exist (a :class:`LazyNDError` and a ``FileNotFoundError``).

    Examples
    --------
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "x.bin")
    >>> write_atomic(path, b"abc")
    >>> with open_for_stream(path) as handle:
    ...     _ = handle.seek(1)
    ...     handle.read()
    b'bc'
    """
    with _naming_a_missing_file(uri):
        local = local_path(uri, storage_options)
        if local is not None:
            return open(local, "rb")  # noqa: SIM115 - the caller owns it
        filesystem, path = remote_filesystem(str(uri), storage_options)
        return filesystem.open(path, "rb")


class AtomicWriter:
    """A binary file being written that replaces its target only at :meth:`commit`.

    Made by :func:`open_atomic`.  A local target is written to a temporary
    file beside it (see the module docstring for its name and permissions);
    a remote target is assembled in memory and stored at the commit.

    Attributes
    ----------
    uri : str
        The target.
    """

    def __init__(self, uri: str | os.PathLike[str], storage_options: Mapping[str, Any] | None = None) -> None:
        self.uri = file_name_text(uri)
        self._local = local_path(uri, storage_options)
        self._temporary: str | None = None
        self._handle: IO[bytes]
        if self._local is None:
            # Resolve the store now, so a missing backend fails before any work is done.
            self._remote = remote_filesystem(self.uri, storage_options)
            self._buffer = self._handle = io.BytesIO()
        else:
            if "\0" in self._local:  # open() would refuse it with a bare ValueError, naming nothing
                raise ArgumentValueError(f"cannot save to {self.uri!r}: a file name cannot hold a NUL byte")
            directory = os.path.dirname(os.path.abspath(self._local))
            # checked here: the temporary's OSError would name the temporary, not the target
            if not os.path.isdir(directory):
                raise MissingFileError(errno.ENOENT, f"no such folder to save {self.uri!r} in", directory)
            if os.path.isdir(self._local):
                raise LazyNDError(f"cannot save to {self.uri!r}: it is a folder, not a file")
            remove_stale_temporaries(directory)
            self._temporary, self._handle = create_temporary(directory, os.path.basename(self._local))
        self.closed = False

    def write(self, data: BytesLike) -> int:
        """Append ``data``; returns the number of bytes written."""
        if self.closed:
            raise ValueError(f"{self.uri}: write to an atomic file that was already committed or discarded")
        return self._handle.write(data)

    def commit(self) -> None:
        """Move the written contents over the target; on failure the target is untouched."""
        if self.closed:
            raise ValueError(f"{self.uri}: atomic file already committed or discarded")
        self.closed = True
        if self._local is None:
            filesystem, path = self._remote
            store_remote(filesystem, path, self.uri, self._buffer.getvalue())
            return
        temporary = self._temporary
        assert temporary is not None
        try:
            with self._handle as handle:
                handle.flush()
                os.fsync(handle.fileno())
            keep_permissions(self._local, temporary)
            os.replace(temporary, self._local)
        except BaseException:
            unlink_quietly(temporary)
            raise
        fsync_directory(os.path.dirname(os.path.abspath(self._local)))

    def discard(self) -> None:
        """Throw the written contents away and leave the target as it was."""
        if self.closed:
            return
        self.closed = True
        self._handle.close()
        if self._temporary is not None:
            unlink_quietly(self._temporary)

    def __del__(self) -> None:
        # A writer dropped without a commit never completed: its temporary goes.
        if not getattr(self, "closed", True):
            with contextlib.suppress(Exception):
                self.discard()

    def __enter__(self) -> AtomicWriter:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, *_: object) -> None:
        if exc_type is None:
            self.commit()
        else:
            self.discard()


def _as_chunks(data: BytesLike | Iterable[BytesLike]) -> Iterable[BytesLike]:
    expected = "write_atomic: data must be bytes-like or an iterable of bytes-like"
    if isinstance(data, str):
        raise ArgumentTypeError(f"{expected}, got str")
    if isinstance(data, (bytes, bytearray, memoryview)):
        return [data]
    try:  # other objects with the buffer protocol: numpy arrays, array.array
        return [memoryview(data)]  # type: ignore[arg-type]
    except TypeError:
        pass
    if isinstance(data, Iterable):
        return data
    raise ArgumentTypeError(f"{expected}, got {type(data).__name__}")
