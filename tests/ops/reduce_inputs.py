"""The reduction tests' inputs: the NumPy function behind each reduction, and positive test data."""

from __future__ import annotations

import numpy as np

NUMPY = {
    "sum": np.sum,
    "mean": np.mean,
    "prod": np.prod,
    "max": np.max,
    "min": np.min,
    "nansum": np.nansum,
    "nanprod": np.nanprod,
}


def reduce_data(dtype="float64", shape=(2, 3, 4), seed=0):
    """Uniform values in [0.5, 1.5) of ``shape`` and ``dtype``, from ``seed``: positive and near 1, so products stay moderate."""
    return np.random.default_rng(seed).uniform(0.5, 1.5, size=shape).astype(dtype)
