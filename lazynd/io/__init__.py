"""Data iterators (``mx.io``): batches of NDArrays for training and scoring."""

from __future__ import annotations

from .base import DataBatch, DataDesc, DataIter
from .csv_iter import CSVIter
from .mnist_iter import MNISTIter
from .ndarray_iter import NDArrayIter
from .prefetch import PrefetchingIter, ResizeIter

__all__ = [
    "DataDesc",
    "DataBatch",
    "DataIter",
    "NDArrayIter",
    "MNISTIter",
    "PrefetchingIter",
    "ResizeIter",
    "CSVIter",
]
