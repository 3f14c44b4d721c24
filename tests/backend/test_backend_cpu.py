"""The CPU backend's tables of constants (Backend.constant) and its range check (Backend.check_range)."""

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


def test_check_range_on_the_host_raises_at_once_naming_the_first_value():
    # the Backend's range check (on a GPU the same check runs on the device: lazynd/backend/cuda/checks.py)
    from lazynd.backend import cpu_backend as backend
    from lazynd.errors import OperatorError

    backend.check_range("op", "label", np.array([0, 2, 1]), 0, 3)
    backend.check_range("op", "index", np.array([-3.0, 2.0]), -3, 2, inclusive=True)
    with pytest.raises(OperatorError, match=r"^op: label out of range: 3 at position 1 \(and 1 other value\(s\)\), "):
        backend.check_range("op", "label", np.array([0, 3, -1]), 0, 3)
    with pytest.raises(OperatorError, match=r"expected a value in \[-3, 2\]$"):
        backend.check_range("op", "index", np.array([2.5]), -3, 2, inclusive=True)
    with pytest.raises(OperatorError, match="nan at position 0"):
        backend.check_range("op", "label", np.array([np.nan]), 0, 3)
