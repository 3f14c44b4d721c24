"""Indexing a recorded array by index arrays (``x[idx]``, ``x[idx, :]``, ``x[[0, 2]]``, masks) is
differentiable: recorded as ``take`` of flat positions, so the gradient is scattered back and
summed where a position is selected more than once, as in MXNet 1.9.1."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import lazynd as mx
from lazynd import LazyNDError, autograd

nd = mx.nd


def _indexed_with_gradient(ctx: mx.Context, shape: tuple[int, ...], key: Any) -> tuple[np.ndarray, np.ndarray]:
    """``x[key]`` of ``x = arange`` and the gradient of ``sum(x[key] * (1, 2, 3, ...))`` at ``x``."""
    x = nd.array(np.arange(np.prod(shape), dtype=np.float32).reshape(shape), ctx=ctx)
    x.attach_grad()
    with autograd.record():
        y = x[key]
        weights = nd.array(np.arange(1, y.size + 1, dtype=np.float32).reshape(y.shape), ctx=ctx)
        loss = (y * weights).sum()
    loss.backward()
    return y.asnumpy(), x.grad.asnumpy()


def _numpy_reference(shape: tuple[int, ...], key: Any) -> tuple[np.ndarray, np.ndarray]:
    x = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    y = x[key]
    grad = np.zeros_like(x)
    np.add.at(grad, key, np.arange(1, y.size + 1, dtype=np.float32).reshape(y.shape))
    return y, grad


def _host(key: Any) -> Any:
    """The key with its NDArrays as NumPy integer arrays (masks stay boolean)."""
    if isinstance(key, tuple):
        return tuple(_host(k) for k in key)
    if isinstance(key, mx.NDArray):
        values = key.asnumpy()
        return values if values.dtype == np.bool_ else values.astype(np.int64)
    return key


# (shape, a function making the key on a context): forms MXNet users write
KEYS: dict[str, tuple[tuple[int, ...], Callable[[mx.Context], Any]]] = {
    "repeated_positions": ((4,), lambda ctx: nd.array([0, 0, 2], ctx=ctx)),
    "list": ((4,), lambda ctx: [0, 0, 2]),
    "negative_positions": ((4,), lambda ctx: nd.array([-1, 0, -1], ctx=ctx)),
    "rows": ((3, 4), lambda ctx: nd.array([0, 2, 0], ctx=ctx)),
    "rows_then_slice": ((3, 4), lambda ctx: (nd.array([0, 2, 0], ctx=ctx), slice(None))),
    "row_list": ((3, 4), lambda ctx: [0, 2]),
    "columns": ((3, 4), lambda ctx: (slice(None), [1, 3, 1])),
    "element_pairs": ((3, 4), lambda ctx: ([0, 2, 0], [1, 3, 1])),
    "negative_pairs": ((3, 4), lambda ctx: (nd.array([0, -1], ctx=ctx), nd.array([-1, 0], ctx=ctx))),
    "two_dimensional_positions": ((3, 4), lambda ctx: nd.array([[0, 1], [2, 0]], ctx=ctx)),
    "integer_and_list": ((3, 4), lambda ctx: (1, [0, 3, 3])),
    "between_slices": ((2, 3, 4), lambda ctx: (slice(None), [0, 2], slice(1, 3))),
    "around_a_slice": ((2, 3, 4), lambda ctx: ([1, 0], slice(None), [3, 0])),
    "row_mask": ((3, 4), lambda ctx: nd.array([1, 0, 1], ctx=ctx).astype("bool")),
    "element_mask": ((2, 3), lambda ctx: np.array([[True, False, True], [False, False, True]])),
}


@pytest.mark.parametrize("name", list(KEYS))
def test_indexing_a_recorded_array_by_index_arrays_gives_numpys_values_and_summed_gradients(ctx, name) -> None:
    shape, make_key = KEYS[name]
    key = make_key(ctx)
    values, grad = _indexed_with_gradient(ctx, shape, key)
    expected_values, expected_grad = _numpy_reference(shape, _host(key))
    np.testing.assert_array_equal(values, expected_values)
    np.testing.assert_array_equal(grad, expected_grad)


def test_repeated_positions_sum_their_gradients_as_in_mxnet() -> None:
    # MXNet 1.9.1: x = nd.zeros(4), x[nd.array([0, 0, 2])].backward() -> x.grad [2, 0, 1, 0]
    x = nd.zeros((4,))
    x.attach_grad()
    with autograd.record():
        y = x[nd.array([0, 0, 2])]
    y.backward()
    np.testing.assert_array_equal(x.grad.asnumpy(), [2.0, 0.0, 1.0, 0.0])


def test_rows_of_a_matrix_match_mxnet() -> None:
    # numbers from MXNet 1.9.1 for x = arange(12).reshape(3, 4), y = x[nd.array([0, 2, 0])],
    # loss = sum(y * arange(1, 13).reshape(3, 4))
    values, grad = _indexed_with_gradient(mx.cpu(), (3, 4), nd.array([0, 2, 0]))
    np.testing.assert_array_equal(values.ravel(), [0, 1, 2, 3, 8, 9, 10, 11, 0, 1, 2, 3])
    np.testing.assert_array_equal(grad.ravel(), [10, 12, 14, 16, 0, 0, 0, 0, 5, 6, 7, 8])


def test_indexing_a_strided_view_is_differentiable() -> None:
    x = nd.array(np.arange(12.0).reshape(3, 4))
    x.attach_grad()
    with autograd.record():
        y = x[:, ::2][[2, 0]]
    y.backward()
    expected = np.zeros((3, 4))
    expected[[2, 0], ::2] = 1.0
    np.testing.assert_array_equal(y.asnumpy(), [[8.0, 10.0], [0.0, 2.0]])
    np.testing.assert_array_equal(x.grad.asnumpy(), expected)


def test_second_indexing_of_an_indexed_array_chains_the_gradients() -> None:
    x = nd.array([1.0, 2.0, 3.0])
    x.attach_grad()
    with autograd.record():
        y = x[[2, 2, 0]][[0, 1, 1]] * 2
    y.backward()
    np.testing.assert_array_equal(x.grad.asnumpy(), [0.0, 0.0, 6.0])


def test_indexing_by_index_arrays_has_a_second_derivative(ctx) -> None:
    # d/dx of x[idx]^3 is 3 x^2 summed at repeated positions; its derivative 6 x, summed again
    x = nd.array([1.0, 2.0, 3.0, 4.0], ctx=ctx)
    x.attach_grad()
    with autograd.record():
        (first,) = autograd.grad(x[nd.array([0, 0, 2], ctx=ctx)] ** 3, [x], create_graph=True)
    first.backward()
    np.testing.assert_array_equal(first.asnumpy(), [6.0, 0.0, 27.0, 0.0])
    np.testing.assert_array_equal(x.grad.asnumpy(), [12.0, 0.0, 18.0, 0.0])


def test_an_index_out_of_range_of_a_recorded_array_is_refused_by_name() -> None:
    x = nd.array([1.0, 2.0])
    x.attach_grad()
    with autograd.record(), pytest.raises(LazyNDError, match=r"index does not fit shape \(2,\)"):
        x[[0, 5]]


def test_indexing_outside_record_is_not_recorded() -> None:
    x = nd.array([1.0, 2.0])
    x.attach_grad()
    y = x[[1, 1]]
    np.testing.assert_array_equal(y.asnumpy(), [2.0, 2.0])
    with pytest.raises(LazyNDError):
        y.backward()


def test_assigning_a_recorded_array_by_index_arrays_is_still_refused() -> None:
    x = nd.array([1.0, 2.0])
    x.attach_grad()
    with autograd.record(), pytest.raises(LazyNDError, match="by index arrays is not differentiable here"):
        buffer = nd.zeros((4,))
        buffer[[0, 2]] = x * 2
