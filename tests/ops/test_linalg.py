"""Matrix products (``dot``, ``batch_dot``) on shapes the operator sweep does not try."""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx


@pytest.mark.parametrize(
    "lhs, rhs, params",
    [
        ((5, 0), (0, 4), {}),  # an empty contraction: K = 0
        ((2, 3, 0), (0, 4), {}),  # K = 0 with an N-d lhs
        ((5, 0), (4, 0), {"transpose_b": True}),
        ((0, 5), (0, 4), {"transpose_a": True}),
    ],
)
def test_dot_of_an_empty_contraction_is_zeros_and_its_gradients_are_empty(lhs, rhs, params, ctx):
    a = mx.nd.ones(lhs, ctx=ctx)
    b = mx.nd.ones(rhs, ctx=ctx)
    a.attach_grad()
    b.attach_grad()
    with mx.autograd.record():
        y = mx.nd.dot(a, b, **params)
    y.backward()
    expected = np.dot(
        np.ones(lhs).T if params.get("transpose_a") else np.ones(lhs),
        np.ones(rhs).T if params.get("transpose_b") else np.ones(rhs),
    )
    np.testing.assert_array_equal(y.asnumpy(), expected)
    assert a.grad.shape == lhs and b.grad.shape == rhs
