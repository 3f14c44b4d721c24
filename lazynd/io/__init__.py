"""Data iterators (``mx.io``): batches of NDArrays for training and scoring.

``ImageRecordIter`` (with its ``UInt8`` / ``Int8`` / ``_v1`` variants) and ``ImageDetRecordIter`` live in
:mod:`lazynd.image` (which builds on this package) and are handed on here when first asked for.
"""

from __future__ import annotations

from typing import Any

from ..missing_faces import missing_name
from .base import DataBatch, DataDesc, DataIter
from .csv_iter import CSVIter
from .mnist_iter import MNISTIter
from .ndarray_iter import NDArrayIter, init_data
from .prefetch import PrefetchingIter, ResizeIter

# MXNet's private name, which user programs call to rename an iterator's inputs
_init_data = init_data

# handed on from lazynd.image when first asked for
_FROM_IMAGE = (
    "ImageRecordIter",
    "ImageRecordUInt8Iter",
    "ImageRecordInt8Iter",
    "ImageRecordIter_v1",
    "ImageRecordUInt8Iter_v1",
    "ImageDetRecordIter",
)
__all__ = [
    "DataDesc",
    "DataBatch",
    "DataIter",
    "NDArrayIter",
    "MNISTIter",
    "PrefetchingIter",
    "ResizeIter",
    "CSVIter",
    *_FROM_IMAGE,
]


def __getattr__(name: str) -> Any:
    if name in _FROM_IMAGE:
        from .. import image

        return getattr(image, name)
    raise missing_name("io", name, __name__)
