"""Read and write MXNet's RecordIO files (``.rec`` with an optional ``.idx``).

A ``.rec`` file is a sequence of framed records (:mod:`lazynd.formats.recordio_file`,
:class:`MXRecordIO`); an index file holds one ``key<TAB>offset`` line per
record for random access by key (:mod:`lazynd.formats.recordio_indexed`,
:class:`MXIndexedRecordIO`).

Image records start with the header ``struct '<IfQQ'`` (flag, label, id,
id2); when the label is an array, ``flag`` is its length and the float32
labels follow the header (:mod:`lazynd.formats.recordio_pack`: :func:`pack`,
:func:`unpack`, :func:`pack_img`, :func:`unpack_img`).

This module only hands those names on, under MXNet's ``mx.recordio`` names.
"""

from __future__ import annotations

from .formats.recordio_file import MXRecordIO
from .formats.recordio_indexed import MXIndexedRecordIO
from .formats.recordio_pack import IRHeader, pack, pack_img, unpack, unpack_img

__all__ = [
    "IRHeader",
    "MXIndexedRecordIO",
    "MXRecordIO",
    "pack",
    "pack_img",
    "unpack",
    "unpack_img",
]
