"""``mx.io.io``: the module MXNet 1.x defines its data iterators in.

Programs import it by that name (``from mxnet.io import io``, then ``io.DataBatch(...)``); it holds
the very classes :mod:`lazynd.io` holds, the image iterators included.
"""

from __future__ import annotations

import importlib
from typing import Any

from .base import DataBatch, DataDesc, DataIter
from .csv_iter import CSVIter
from .mnist_iter import MNISTIter
from .ndarray_iter import NDArrayIter
from .prefetch import PrefetchingIter, ResizeIter

__all__ = ["DataBatch", "DataDesc", "DataIter", "CSVIter", "MNISTIter", "NDArrayIter", "PrefetchingIter", "ResizeIter"]


def __getattr__(name: str) -> Any:
    # the image iterators, and the clear errors for the ones lazynd lacks, as lazynd.io answers them
    return getattr(importlib.import_module(__package__), name)
