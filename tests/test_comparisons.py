"""Array comparisons: shapes that broadcast together compare as in MXNet's test_utils."""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx
from lazynd.comparisons import almost_equal, assert_almost_equal


def test_a_scalar_result_compares_with_a_one_element_array() -> None:
    # np.dot of two vectors is a 0-d scalar; lazynd's dot, as MXNet's, returns shape (1,)
    vector = np.arange(3.0)
    assert_almost_equal(np.dot(vector, vector), mx.nd.dot(mx.nd.array(vector), mx.nd.array(vector)))
    assert almost_equal(np.float64(5.0), np.array([5.0]))


def test_a_row_compares_with_every_row_of_a_matrix() -> None:
    assert almost_equal(np.ones((4, 3)), np.ones(3))
    with pytest.raises(AssertionError, match=r"differing indices: \[\(0, 1\), \(1, 2\)\]"):
        assert_almost_equal(np.eye(3)[1:], np.zeros(3))


def test_use_broadcast_false_needs_equal_shapes() -> None:
    assert not almost_equal(np.ones(()), np.ones(1), use_broadcast=False)
    with pytest.raises(AssertionError, match=r"shape of x is \(\), shape of y is \(1,\).*use_broadcast=False"):
        assert_almost_equal(np.ones(()), np.ones(1), names=("x", "y"), use_broadcast=False)


def test_shapes_that_do_not_broadcast_are_named() -> None:
    assert not almost_equal(np.ones(2), np.ones(3))
    with pytest.raises(AssertionError, match=r"shape of a is \(2,\), shape of b is \(3,\).*do not broadcast"):
        assert_almost_equal(np.ones(2), np.ones(3))
