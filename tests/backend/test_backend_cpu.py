"""The CPU backend's tables of constants (Backend.constant)."""

from __future__ import annotations

import numpy as np
import pytest


def test_constants_are_made_once_per_key_and_dtype_and_read_only():
    from lazynd.backend import cpu_backend

    made = []

    def make():
        made.append(1)
        return np.arange(4.0)

    first = cpu_backend.constant(("test constant", 4), make, np.float32)
    assert cpu_backend.constant(("test constant", 4), make, np.float32) is first and len(made) == 1
    assert first.dtype == np.float32 and first.tolist() == [0, 1, 2, 3] and not first.flags.writeable
    wide = cpu_backend.constant(("test constant", 4), make, np.float64)
    assert wide.dtype == np.float64 and len(made) == 2  # another dtype, another table
    with pytest.raises(ValueError):
        first[0] = 9  # shared by every caller
