"""Indexing edge cases, checked against MXNet 1.9.1's answers for the same calls."""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx
from lazynd.errors import ArgumentTypeError, IndexingError


def test_zero_step_slice_is_refused_by_name() -> None:
    x = mx.nd.array(np.arange(6).reshape(2, 3))
    for key in (slice(None, None, 0), (slice(None), slice(0, 2, 0)), (slice(None, None, 0), [0, 1])):
        with pytest.raises(mx.LazyNDError, match="step 0"):
            x[key]
    with pytest.raises(mx.LazyNDError, match="step 0"):
        x[::0] = 1


def test_whole_slice_of_a_0d_array_is_the_array() -> None:
    x = mx.nd.array(np.array(5.0))
    view = x[:]
    assert view.shape == ()
    view[()] = 3  # a view: writes go through, as MXNet returns the array itself
    assert x.asscalar() == 3.0


@pytest.mark.parametrize(
    "value",
    [7, np.float64(7), np.array(7.0), np.array([7.0]), [7], mx.nd.array(np.array(7.0)), mx.nd.array([7])],
    ids=["int", "numpy-scalar", "numpy-0d", "numpy-1", "list", "ndarray-0d", "ndarray-1"],
)
def test_whole_slice_assignment_of_a_0d_array_sets_its_element(value) -> None:
    # ``x[:]`` reads a 0-d array whole, so ``x[:] = v`` writes it whole (NumPy refuses the slice)
    x = mx.nd.array(np.array(5.0))
    x[:] = value
    assert x.shape == () and x.asscalar() == 7.0


def test_whole_slice_assignment_of_a_0d_array_checks_the_shape() -> None:
    x = mx.nd.array(np.array(5.0))
    with pytest.raises(mx.ShapeError, match=r"shape \(2,\) to a target of shape \(\)"):
        x[:] = [1, 2]


def test_empty_tuple_index_of_a_0d_array_is_a_view() -> None:
    x = mx.nd.array(np.array(5.0))
    x[()][()] = 4
    assert x.asscalar() == 4.0


@pytest.mark.parametrize(
    "key",
    [5, -3, (0, 7), (0, 0, 0)],
    ids=["past-the-rows", "negative-past-the-rows", "past-the-columns", "more-indices-than-axes"],
)
def test_an_index_past_the_end_is_an_index_error_as_in_mxnet(key) -> None:
    # MXNet 1.9.1 raises IndexError for each (user code catches it by that name); the error
    # stays an OperatorError (a ValueError) too
    x = mx.nd.zeros((2, 3))
    with pytest.raises(IndexError, match="out of bounds"):
        x[key]
    with pytest.raises(mx.OperatorError):
        x[key]


def test_assigning_past_the_end_is_an_index_error_as_in_mxnet() -> None:
    x = mx.nd.zeros((2, 3))
    with pytest.raises(IndexError, match="does not fit shape"):
        x[4] = 1


@pytest.mark.parametrize("key", [2**63, (2**63, 0), (Ellipsis, -(2**70)), ([0, 1], 2**63)], ids=repr)
def test_an_index_past_int64_is_an_index_error_as_in_mxnet(key) -> None:
    # NumPy's OverflowError 'Python int too large to convert to C long' before; MXNet 1.9.1 says IndexError
    x = mx.nd.zeros((2, 3))
    with pytest.raises(IndexingError, match="does not fit shape|out of bounds"):
        x[key]
    with pytest.raises(IndexingError, match="does not fit shape"):
        x[key] = 1


@pytest.mark.parametrize(
    "key",
    [slice("a", 2), slice(1.5, 2), (0, slice(None, 2.5)), ([0, 1], slice(None, None, 1.5))],
    ids=["string-bound", "float-bound", "float-bound-in-tuple", "float-step-with-index-array"],
)
def test_a_slice_with_a_bound_that_is_not_an_integer_is_an_argument_type_error(key) -> None:
    x = mx.nd.zeros((3, 4))
    with pytest.raises(ArgumentTypeError, match="slice bounds and steps must be integers"):
        x[key]
    with pytest.raises(ArgumentTypeError, match=r"__setitem__: index .* for shape \(3, 4\)"):
        x[key] = 1


@pytest.mark.parametrize("value", [1 + 2j, np.complex64(3 - 1j)], ids=["python-complex", "numpy-complex"])
@pytest.mark.parametrize("key", [slice(None), 1, (slice(None), 1), [0, 2]], ids=["all", "row", "column", "rows"])
def test_assigning_a_complex_number_is_refused_not_cut_to_its_real_part(key, value) -> None:
    x = mx.nd.zeros((3, 4))
    with pytest.raises(ArgumentTypeError, match=r"complex number .* dtype float32"):
        x[key] = value
    assert x.asnumpy().sum() == 0
