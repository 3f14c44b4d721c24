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


@pytest.mark.parametrize(
    "call",
    [
        lambda x: mx.nd.Concat(x, x, num_args=2**63),
        lambda x: mx.nd.ElementWiseSum(x, x, num_args=2**40),
        lambda x: mx.nd.add_n(x, x, num_args=-1),
        lambda x: mx.nd.amp_multicast(x, x, num_outputs=2**63),
        lambda x: sym.Concat(sym.Variable("a"), num_args=2**63),
    ],
    ids=["Concat", "ElementWiseSum", "add_n negative", "amp_multicast", "sym Concat"],
)
def test_a_count_of_inputs_past_mxnets_int_is_refused_by_name(call):
    # lazynd named 2**63 inputs before anything else: the call never ended
    with pytest.raises(
        mx.OperatorError, match=r"for parameter 'num_(args|outputs)': expected an integer in \[0, 2147483647\]"
    ):
        call(mx.nd.ones((2, 3)))


@pytest.mark.parametrize("op", ["Concat", "ElementWiseSum", "stack"])
def test_an_imperative_num_args_that_is_not_the_inputs_given_is_refused_by_name(op):
    x = mx.nd.ones((2, 3))
    with pytest.raises(mx.OperatorError, match="num_args=5, but 2 input"):
        getattr(mx.nd, op)(x, x, num_args=5)
