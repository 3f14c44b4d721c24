"""``lazynd.fileio``, the name earlier releases documented: hands on :mod:`lazynd.formats.fileio`.

The reader and the atomic writer live in :mod:`lazynd.formats.fileio`; this module only
hands their public names on so that code importing ``lazynd.fileio`` keeps working.
"""

from __future__ import annotations

from .formats.fileio import (
    TEMPORARY_PREFIX,
    AtomicWriter,
    BytesLike,
    is_url,
    open_atomic,
    open_for_read,
    open_for_stream,
    write_atomic,
)

__all__ = [
    "TEMPORARY_PREFIX",
    "AtomicWriter",
    "BytesLike",
    "is_url",
    "open_atomic",
    "open_for_read",
    "open_for_stream",
    "write_atomic",
]
