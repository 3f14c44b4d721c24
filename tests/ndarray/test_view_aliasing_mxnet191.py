"""Which selections share the array's memory, as in MXNet 1.9.1: writes through a view reach the
array only when the selection is one contiguous block; a strided selection is a copy."""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx

# (key, elements of a (3, 4, 5) array that a write through ``x[key]`` changes), read from MXNet 1.9.1
_SHARED = [
    (1, 20),
    (slice(1, 3), 40),
    ((1, slice(0, 2)), 10),
    ((1, 2), 5),
    ((slice(1, 3), slice(None)), 40),
    ((slice(0, 1), 1), 5),
    ((None, 1), 20),
    ((1, Ellipsis), 20),
    ((1, 1, slice(1, 3)), 2),
    ((slice(1, 2), slice(1, 3)), 10),
]
_COPIED = [
    (slice(None), 1),
    (1, slice(None), 2),
    slice(None, None, 2),
    slice(None, None, -1),
    (Ellipsis, 1),
    (slice(None), slice(1, 3)),
]


@pytest.mark.parametrize(("key", "changed"), _SHARED, ids=[repr(k) for k, _ in _SHARED])
def test_a_contiguous_selection_is_a_view_sharing_memory(key, changed: int) -> None:
    x = mx.nd.array(np.arange(60).reshape(3, 4, 5))
    view = x[key]
    view[:] = -1
    assert int((x.asnumpy() == -1).sum()) == changed


@pytest.mark.parametrize("key", _COPIED, ids=[repr(k) for k in _COPIED])
def test_a_strided_selection_is_a_copy_writes_to_it_stay_there(key) -> None:
    x = mx.nd.array(np.arange(60).reshape(3, 4, 5))
    selection = x[key]
    expected = np.arange(60).reshape(3, 4, 5)[key]
    selection += 1000
    np.testing.assert_array_equal(x.asnumpy(), np.arange(60).reshape(3, 4, 5))
    np.testing.assert_array_equal(selection.asnumpy(), expected + 1000)


def test_a_strided_selection_is_read_after_pending_writes_and_not_changed_by_later_ones() -> None:
    x = mx.nd.zeros((4, 3))
    x += 1
    column = x[:, 1]
    x[:] = 7
    np.testing.assert_array_equal(column.asnumpy(), np.ones(4))


def test_the_gradient_flows_through_a_strided_selection() -> None:
    x = mx.nd.array(np.arange(6).reshape(2, 3))
    x.attach_grad()
    with mx.autograd.record():
        y = (x[:, ::2] * 3).sum()
    y.backward()
    np.testing.assert_array_equal(x.grad.asnumpy(), [[3, 0, 3], [3, 0, 3]])


@pytest.mark.parametrize("shape", [(), (4,)])
def test_the_transpose_of_an_array_of_under_two_axes_is_the_array_itself(shape: tuple) -> None:
    x = mx.nd.zeros(shape)
    assert x.T is x


def test_the_transpose_of_a_matrix_is_a_copy() -> None:
    x = mx.nd.zeros((2, 3))
    transposed = x.T
    transposed[:] = 1
    assert transposed.shape == (3, 2) and x.asnumpy().sum() == 0
