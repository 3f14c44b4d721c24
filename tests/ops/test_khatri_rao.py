"""khatri_rao against MXNet 1.9.1 (it was not registered: mx.nd.khatri_rao missing)."""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx
import lazynd_sym as sym
from lazynd.errors import LazyNDError
from lazynd.testing import check_gradient

RNG = np.random.default_rng(0)
A, B, C = RNG.random((2, 3)), RNG.random((4, 3)), RNG.random((3, 3))


def test_khatri_rao_matches_mxnets_values():
    # MXNet 1.9.1: khatri_rao(arange(6).reshape(2, 3), arange(12).reshape(4, 3)), rows 0, 4 and 7
    y = mx.nd.khatri_rao(mx.nd.array(np.arange(6).reshape(2, 3)), mx.nd.array(np.arange(12).reshape(4, 3)))
    assert y.shape == (8, 3)
    np.testing.assert_array_equal(y.asnumpy()[[0, 4, 7]], [[0, 1, 4], [0, 4, 10], [27, 40, 55]])


@pytest.mark.parametrize(
    "matrices,subscripts",
    [((A,), "ik->ik"), ((A, B), "ik,jk->ijk"), ((A, B, C), "ik,jk,lk->ijlk"), ((C, A[:, :3]), "ik,jk->ijk")],
)
def test_khatri_rao_forward_matches_mxnet_and_gradient_its_einsum(matrices, subscripts, ctx):
    # MXNet 1.9.1's rows: the last matrix's index fastest (checked on these shapes); MXNet has no
    # gradient for it, ours is that of the einsum
    arrays = [mx.nd.array(m, ctx=ctx, dtype="float64") for m in matrices]
    for a in arrays:
        a.attach_grad()
    with mx.autograd.record():
        y = mx.nd.khatri_rao(*arrays)
    head = RNG.random(y.shape)
    y.backward(mx.nd.array(head, ctx=ctx, dtype="float64"))
    grid_shape = tuple(m.shape[0] for m in matrices) + (3,)
    np.testing.assert_allclose(y.asnumpy(), np.einsum(subscripts, *matrices).reshape(-1, 3), 1e-12)
    grid = head.reshape(grid_shape)
    inputs, output = subscripts.split("->")
    terms = inputs.split(",")
    for i, (a, term) in enumerate(zip(arrays, terms, strict=True)):
        others = [m for j, m in enumerate(matrices) if j != i]
        spec = ",".join([output] + [t for j, t in enumerate(terms) if j != i]) + "->" + term
        np.testing.assert_allclose(a.grad.asnumpy(), np.einsum(spec, grid, *others), 1e-12)


def test_khatri_rao_numerical_gradient():
    check_gradient("khatri_rao", [A, B, C], {"num_args": 3}, rtol=1e-4, atol=1e-6)


def test_khatri_rao_symbol_infers_the_product_of_rows():
    net = sym.khatri_rao(sym.Variable("a"), sym.Variable("b"), sym.Variable("c"))
    assert net.infer_shape(a=(2, 5), b=(3, 5), c=(4, 5))[1] == [(24, 5)]


@pytest.mark.parametrize(
    "shapes,match",
    [([(2, 3), (2, 2)], "input 1 has 2 columns, expected 3"), ([(2, 2, 2)], "expected a matrix"), ([], "no input")],
)
def test_khatri_rao_bad_input_is_a_clear_error(shapes, match):
    with pytest.raises(LazyNDError, match=match):
        mx.nd.khatri_rao(*[mx.nd.ones(s) for s in shapes])
