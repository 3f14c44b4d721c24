"""Data iterators (``mx.io``): batches of NDArrays for training and scoring.

``ImageRecordIter`` (with its ``UInt8`` / ``Int8`` / ``_v1`` variants) and ``ImageDetRecordIter`` live in
:mod:`lazynd.image` (which builds on this package) and are handed on here when first asked for.
"""

from __future__ import annotations

from typing import Any

from ..errors import UnsupportedError
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

# MXNet's iterators lazynd does not have, and why
_UNSUPPORTED = {
    "LibSVMIter": "it yields CSR sparse batches, and lazynd arrays are all dense; load the data with NumPy "
    "into an NDArrayIter",
    # the class of MXNet's C++ iterators (ImageRecordIter, MNISTIter, CSVIter... are made as one)
    "MXDataIter": "it is the class of MXNet's C++ iterators; lazynd's iterators are Python classes "
    "deriving from mx.io.DataIter (ImageRecordIter, MNISTIter and CSVIter included)",
}


def __getattr__(name: str) -> Any:
    if name in _FROM_IMAGE:
        from .. import image

        return getattr(image, name)
    if name in _UNSUPPORTED:
        raise UnsupportedError(f"mx.io.{name}: not supported: {_UNSUPPORTED[name]}")
    raise AttributeError(f"module 'lazynd.io' has no attribute {name!r}")
