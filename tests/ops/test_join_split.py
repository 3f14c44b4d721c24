"""Concat with zero-size inputs: an NDArray's 0 is a size, a symbol's partial 0 stays unknown."""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx
import lazynd_sym as sym


@pytest.mark.parametrize(
    "shapes, dim",
    [
        ([(0, 3), (2, 3)], 0),
        ([(2, 3), (0, 3), (1, 3)], 0),
        ([(8, 0, 5), (8, 7, 5)], 1),
        ([(0, 3, 10), (0, 4, 10), (0, 5, 10)], 1),
        ([(8, 0, 0), (8, 0, 0)], 2),
    ],
)
def test_concat_counts_zero_size_inputs(ctx, shapes, dim):
    arrays = [np.arange(int(np.prod(s)), dtype=np.float32).reshape(s) + 10 * i for i, s in enumerate(shapes)]
    out = mx.nd.concat(*[mx.nd.array(a, ctx=ctx) for a in arrays], dim=dim)
    expected = np.concatenate(arrays, axis=dim)
    assert out.shape == expected.shape
    np.testing.assert_array_equal(out.asnumpy(), expected)


def test_concat_gradient_skips_the_zero_size_input(ctx):
    empty, full = mx.nd.ones((0, 3), ctx=ctx), mx.nd.ones((2, 3), ctx=ctx)
    empty.attach_grad()
    full.attach_grad()
    with mx.autograd.record():
        out = mx.nd.concat(empty, full, dim=0)
    out.backward(mx.nd.full((2, 3), 5.0, ctx=ctx))
    assert empty.grad.shape == (0, 3)
    np.testing.assert_array_equal(full.grad.asnumpy(), np.full((2, 3), 5.0))


def test_symbolic_partial_zero_stays_unknown():
    joined = sym.concat(sym.Variable("a", shape=(0, 20)), sym.Variable("b", shape=(3, 20)), dim=0)
    _, out_shapes, _ = joined.infer_shape_partial()
    assert out_shapes == [(0, 20)]
