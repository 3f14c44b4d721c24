"""The CPU backend's tables of constants (Backend.constant), its range check (Backend.check_range) and its
scatter-add (as NumPy's ``add.at``)."""

from __future__ import annotations

import numpy as np
import pytest

from lazynd.backend.cpu import NumpyBackend


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


@pytest.mark.parametrize(
    "shape, index",
    [
        ((6, 4), np.array([5, 0, 5, -1, 2, 5, -6])),  # duplicates and negative rows
        ((6, 4), np.array([1, 1, 3], dtype=np.uint8)),
        ((2, 6, 3), (slice(None), np.array([4, 0, 4, 4, -2]), slice(None))),
        ((2, 6, 3, 2), (slice(None), np.array([3, 3, 0]), slice(None))),  # trailing axes taken whole
    ],
)
def test_scatter_add_of_whole_rows_sums_repeated_rows_as_add_at(shape, index):
    # rows along one axis take NumPy's one-dimensional add.at on flat positions
    rng = np.random.default_rng(0)
    target = rng.standard_normal(shape).astype(np.float32)
    picked = np.empty(shape)[index].shape
    values = rng.standard_normal(picked).astype(np.float32)
    want = target.copy()
    np.add.at(want, index, values)
    NumpyBackend().scatter_add(target, index, values)
    np.testing.assert_array_equal(target, want)


@pytest.mark.parametrize("row", [6, -7])
def test_scatter_add_of_a_row_out_of_range_raises_as_add_at(row):
    # a flat position past a row's end would land in the next row: the range is checked first
    target = np.zeros((1, 6, 4), np.float32)
    with pytest.raises(IndexError):
        NumpyBackend().scatter_add(target, (slice(None), np.array([0, row]), slice(None)), np.ones((1, 2, 4)))
    with pytest.raises(IndexError):
        NumpyBackend().scatter_add(target[0], np.array([0, row]), np.ones((2, 4), np.float32))
    assert not target.any()


def test_scatter_add_broadcasts_values_and_writes_strided_targets_as_add_at():
    base = np.zeros((6, 8), np.float32)
    want = base.copy()
    np.add.at(want[:, ::2], np.array([1, 1, 4]), np.float32(2.5))
    NumpyBackend().scatter_add(base[:, ::2], np.array([1, 1, 4]), np.float32(2.5))
    np.testing.assert_array_equal(base, want)
