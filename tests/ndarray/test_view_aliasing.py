"""Which selections share the array's memory: every basic selection is a view (writes through it
reach the array), the contiguous ones as in MXNet 1.9.1 and the strided ones as in NumPy (MXNet
copies those: a documented departure, see the README)."""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx

# (key, elements of a (3, 4, 5) array that a write through ``x[key]`` changes), as MXNet 1.9.1 gives
_CONTIGUOUS = [
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
# (key, elements changed), as NumPy gives (MXNet 1.9.1 copies these selections and changes none)
_STRIDED = [
    ((slice(None), 1), 15),
    ((1, slice(None), 2), 4),
    (slice(None, None, 2), 40),
    (slice(None, None, -1), 60),
    ((Ellipsis, 1), 12),
]


@pytest.mark.parametrize(("key", "changed"), _CONTIGUOUS + _STRIDED, ids=[repr(k) for k, _ in _CONTIGUOUS + _STRIDED])
def test_a_basic_selection_is_a_view_sharing_memory(key, changed: int) -> None:
    x = mx.nd.array(np.arange(60).reshape(3, 4, 5))
    view = x[key]
    view[:] = -1
    assert int((x.asnumpy() == -1).sum()) == changed


@pytest.mark.parametrize("shape", [(), (4,)])
def test_the_transpose_of_an_array_of_under_two_axes_is_the_array_itself(shape: tuple) -> None:
    x = mx.nd.zeros(shape)
    assert x.T is x


def test_the_transpose_of_a_matrix_is_a_copy() -> None:
    x = mx.nd.zeros((2, 3))
    transposed = x.T
    transposed[:] = 1
    assert transposed.shape == (3, 2) and x.asnumpy().sum() == 0
