"""Paths and URLs for :mod:`lazynd.formats.fileio`: which is which, and where each one leads.

A plain path or a ``file://`` URL is a local file (:func:`local_path`); any other URL
(``s3://bucket/key``, ``memory://x``, an fsspec chain such as ``simplecache::s3://b/k``) is
opened through `fsspec <https://filesystem-spec.readthedocs.io>`_ (:func:`remote_filesystem`),
whose error for a missing backend names the package to install.  :func:`store_remote` stores a
whole payload on such a filesystem: in one upload on object stores, else under a temporary name
renamed over the target.
"""

from __future__ import annotations

import contextlib
import os
import re
import urllib.parse
import urllib.request
from collections.abc import Mapping
from typing import Any

from ..errors import ArgumentTypeError, LazyNDError
from .fileio_temporary import temporary_basename

# A scheme has at least two characters so that a Windows drive ("C://x") is a path.
_URL_PATTERN = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]+(://|::)")

# Stores where one upload replaces the object whole: no temporary name needed.
_OBJECT_STORE_PROTOCOLS = frozenset({"s3", "s3a", "gs", "gcs", "az", "abfs", "abfss", "adl", "oss", "memory"})

# Which package to install for a protocol when fsspec cannot load its backend.
_BACKEND_PACKAGES = {
    "s3": "s3fs",
    "s3a": "s3fs",
    "gs": "gcsfs",
    "gcs": "gcsfs",
    "az": "adlfs",
    "abfs": "adlfs",
    "abfss": "adlfs",
    "hdfs": "pyarrow",
    "http": "aiohttp",
    "https": "aiohttp",
    "sftp": "paramiko",
}


def is_url(uri: str | os.PathLike[str]) -> bool:
    """Tell whether ``uri`` names a URL (``scheme://...``) rather than a local path.

    Parameters
    ----------
    uri : str or os.PathLike
        A path or URL.

    Returns
    -------
    bool
        True for ``s3://b/k``, ``file:///tmp/x``, fsspec chains such as
        ``simplecache::s3://b/k``; False for plain and Windows paths.

    Examples
    --------
    >>> is_url("s3://bucket/model.params"), is_url("/tmp/model.params")
    (True, False)
    """
    return isinstance(uri, str) and _URL_PATTERN.match(uri) is not None


def store_remote(filesystem: Any, path: str, uri: str, payload: bytes) -> None:
    """Store ``payload`` at ``path``: in one upload on object stores, else by temporary name and rename."""
    protocol = uri.split(":", 1)[0].lower()
    if protocol in _OBJECT_STORE_PROTOCOLS:
        filesystem.pipe_file(path, payload)
        return
    head, _, tail = path.rpartition("/")
    temporary = f"{head}/{temporary_basename(tail)}" if head else temporary_basename(tail)
    try:
        filesystem.pipe_file(temporary, payload)
        filesystem.mv(temporary, path)
    except BaseException:
        # Cleaning up is best effort: the error that got us here matters more.
        with contextlib.suppress(Exception):
            if filesystem.exists(temporary):
                filesystem.rm(temporary)
        raise


def file_name_text(uri: Any) -> str:
    """``uri`` (a str or an ``os.PathLike`` of one) as a str; anything else is refused by type."""
    if isinstance(uri, (str, os.PathLike)):
        path = os.fspath(uri)
        if isinstance(path, str):
            return path
    raise ArgumentTypeError(f"a file name must be a str path or URL, got {type(uri).__name__} {uri!r:.80}")


def local_path(uri: str | os.PathLike[str], storage_options: Mapping[str, Any] | None) -> str | None:
    """Return the local filesystem path of ``uri``, or None for a remote URL."""
    if isinstance(uri, str) and is_url(uri):
        parsed = urllib.parse.urlparse(uri)
        if parsed.scheme.lower() != "file" or "::" in uri:
            return None
        if parsed.netloc not in ("", "localhost"):
            raise LazyNDError(f"file URL {uri!r} names host {parsed.netloc!r}; expected a local file URL")
        path = urllib.request.url2pathname(parsed.path)
    else:
        path = file_name_text(uri)
    if storage_options:
        raise LazyNDError(f"storage_options apply to remote URLs only; {uri!r} is a local path")
    return path


def remote_filesystem(uri: str, storage_options: Mapping[str, Any] | None) -> tuple[Any, str]:
    protocol = uri.split(":", 1)[0].lower()
    package = _BACKEND_PACKAGES.get(protocol)
    try:
        import fsspec  # type: ignore[import-untyped]
    except ImportError as error:
        raise LazyNDError(
            f"{uri!r} is a URL; reading or writing URLs needs fsspec: "
            f"pip install fsspec{' ' + package if package else ''}"
        ) from error
    try:
        filesystem, path = fsspec.core.url_to_fs(uri, **dict(storage_options or {}))
    except ImportError as error:
        raise LazyNDError(
            f"cannot open {uri!r}: the fsspec backend for {protocol}:// is not installed "
            f"({error}); pip install {package or 'the backend package fsspec names'}"
        ) from error
    except ValueError as error:
        if "protocol" in str(error).lower():
            raise LazyNDError(f"cannot open {uri!r}: {error}") from error
        raise
    return filesystem, path
