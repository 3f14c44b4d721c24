"""Matrix products (``dot``, ``batch_dot``): MXNet 1.x's parameters, and shapes the operator sweep
does not try."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import lazynd as mx
from lazynd.errors import OperatorError, ShapeError
from lazynd.testing import check_forward, check_gradient


@pytest.mark.parametrize("name,shapes", [("dot", [(2, 3), (3, 4)]), ("batch_dot", [(2, 2, 3), (2, 3, 4)])])
def test_products_take_the_default_forward_stype_with_their_gradient(name, shapes):
    a, b = (mx.nd.array(np.arange(np.prod(s), dtype=np.float32).reshape(s)) for s in shapes)
    a.attach_grad()
    # MXNet 1.x writes forward_stype (None or 'default' on dense arrays); it was an 'unknown parameter'
    with mx.autograd.record():
        y = getattr(mx.nd, name)(a, b, forward_stype="default")
    y.backward()
    np.testing.assert_array_equal(y.asnumpy(), getattr(mx.nd, name)(a, b).asnumpy())
    assert a.grad.shape == a.shape


def test_a_sparse_forward_stype_is_refused_by_name():
    with pytest.raises(OperatorError, match="dot: invalid value 'csr' for parameter 'forward_stype'"):
        mx.nd.dot(mx.nd.ones((2, 3)), mx.nd.ones((3, 4)), forward_stype="csr")


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


@pytest.mark.parametrize(
    ("ta", "tb", "lhs", "rhs", "axes"),
    [
        (True, False, (4, 3, 2), (4, 5, 6), ([0], [0])),
        (False, True, (2, 3, 4), (6, 5, 4), ([-1], [-1])),
        (True, True, (4, 3, 2), (6, 5, 4), ([0], [-1])),
    ],
)
def test_dot_of_transposed_nd_operands_contracts_lhs_first_and_rhs_last_axis(ta, tb, lhs, rhs, axes, ctx):
    # MXNet 1.x: a transposed N-D lhs is the transpose of its (shape[0], rest) matrix view, a
    # transposed N-D rhs that of its (rest, shape[-1]) view; no reversal of every axis
    rng = np.random.default_rng(3)
    a, b = rng.uniform(-1, 1, lhs), rng.uniform(-1, 1, rhs)
    params = {"transpose_a": ta, "transpose_b": tb}
    want = np.tensordot(a, b, axes=axes)
    assert mx.nd.dot(mx.nd.array(a, ctx=ctx), mx.nd.array(b, ctx=ctx), **params).shape == want.shape
    check_forward("dot", [a, b], params, lambda x, y: want, ctx=ctx, rtol=1e-5, atol=1e-6)
    check_gradient("dot", [a, b], params)


_GRADIENT_CASES = [
    (ta, tb, lhs, rhs)
    for ta in (False, True)
    for tb in (False, True)
    for lhs, rhs in [((3, 4), (4, 5)), ((4,), (4, 5)), ((3, 4), (4,)), ((2, 3, 4), (4, 5))]
    if not (ta and len(lhs) > 2)  # a transposed N-D lhs: the case above
]


@pytest.mark.parametrize(("ta", "tb", "lhs", "rhs"), _GRADIENT_CASES)
def test_dots_gradients_are_the_products_transposed_in_each_operands_layout(ta, tb, lhs, rhs, ctx):
    # _backward_dot writes each operand's gradient straight into its layout; checked against NumPy
    rng = np.random.default_rng(5)
    a = rng.uniform(-1, 1, lhs[::-1] if ta and len(lhs) == 2 else lhs).astype(np.float32)
    b = rng.uniform(-1, 1, rhs[::-1] if tb and len(rhs) == 2 else rhs).astype(np.float32)
    am = a.T if ta and a.ndim == 2 else a.reshape(-1, a.shape[-1]) if a.ndim > 1 else a.reshape(1, -1)
    bm = b.T if tb and b.ndim == 2 else b.reshape(-1, 1) if b.ndim == 1 else b
    og = rng.uniform(-1, 1, (am.shape[0], bm.shape[1])).astype(np.float32)
    da, db = og @ bm.T, am.T @ og
    x, y = mx.nd.array(a, ctx=ctx), mx.nd.array(b, ctx=ctx)
    x.attach_grad()
    y.attach_grad()
    with mx.autograd.record():
        out = mx.nd.dot(x, y, transpose_a=ta, transpose_b=tb)
    out.backward(mx.nd.array(og.reshape(out.shape), ctx=ctx))
    np.testing.assert_allclose(x.grad.asnumpy(), (da.T if ta and a.ndim == 2 else da).reshape(a.shape), rtol=1e-5)
    np.testing.assert_allclose(y.grad.asnumpy(), (db.T if tb and b.ndim == 2 else db).reshape(b.shape), rtol=1e-5)


@pytest.mark.parametrize(("name", "lhs", "rhs"), [("dot", (4, 3), (3, 2)), ("batch_dot", (2, 4, 3), (2, 3, 2))])
def test_a_products_gradient_leaves_out_an_operand_that_takes_none(name, lhs, rhs):
    # a data batch takes no gradient: its product (as large as the layer's own) is not computed, and
    # the weight's is written into its gradient buffer
    from lazynd.runtime.capture import PushCapture

    x, w = mx.nd.ones(lhs), mx.nd.ones(rhs)
    w.attach_grad()
    with mx.autograd.record():
        y = getattr(mx.nd, name)(x, w)
    with PushCapture() as seen:
        y.backward()
    (outs,) = [args[3] for _, _, args, _, _, op in seen.pushes if op == f"_backward_{name}"]
    assert outs[0] is None and outs[1] is w.grad.data_array
    np.testing.assert_array_equal(w.grad.asnumpy(), np.full(rhs, 4.0))


@pytest.mark.parametrize(("ta", "tb"), [(False, False), (True, False), (False, True), (True, True)])
def test_batch_dot_of_4d_arrays_multiplies_the_last_two_axes(ta, tb, ctx):
    # MXNet 1.x's N-D batch_dot (refused past 3-D before, as MXNet 0.9 did)
    rng = np.random.default_rng(0)
    a, b = rng.uniform(-1, 1, (2, 3, 4, 5)), rng.uniform(-1, 1, (2, 3, 5, 6))
    lhs = a.swapaxes(-1, -2) if ta else a
    rhs = b.swapaxes(-1, -2) if tb else b
    params = {"transpose_a": ta, "transpose_b": tb}
    check_forward("batch_dot", [lhs, rhs], params, lambda x, y: a @ b, ctx=ctx, rtol=1e-5, atol=1e-6)
    check_gradient("batch_dot", [lhs, rhs], params)


def test_batch_dot_refuses_different_batch_axes():
    with pytest.raises(ShapeError, match=r"batch_dot: incompatible shapes \(2, 2, 3, 4\) and \(2, 3, 4, 5\)"):
        mx.nd.batch_dot(mx.nd.ones((2, 2, 3, 4)), mx.nd.ones((2, 3, 4, 5)))
    with pytest.raises(ShapeError, match="one number of dims, at least 3"):
        mx.nd.batch_dot(mx.nd.ones((2, 2, 3, 4)), mx.nd.ones((2, 4, 5)))


@pytest.mark.parametrize(
    "lhs, rhs, params",
    [
        ((2,), (2, 3), {"transpose_a": True}),
        ((3, 2), (2,), {"transpose_b": True}),
        ((2,), (3, 2), {"transpose_b": True}),
    ],
)
def test_a_transposed_vector_beside_a_matrix_is_the_vector(lhs, rhs, params, ctx):
    # MXNet 1.9.1 reads a transposed 1-D operand as itself; the shape rule did, the kernel failed inside
    # (an EngineError around NumPy's "cannot reshape array of size 2 into shape (2,2)")
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal(lhs), rng.standard_normal(rhs)

    def reference(x, y):
        x = x.T if params.get("transpose_a") else x  # a 1-D array's .T is itself, as in MXNet
        return np.dot(x, y.T if params.get("transpose_b") else y)

    check_forward("dot", [a, b], params, reference, ctx=ctx)
    check_gradient("dot", [a, b], params, ctx=ctx)


@pytest.mark.parametrize("params", [{"transpose_a": True}, {"transpose_b": True}])
def test_dot_of_two_transposed_vectors_is_refused_at_the_call(params):
    with pytest.raises(ShapeError, match=r"dot: cannot transpose vectors: lhs \(2,\) and rhs \(2,\)"):
        mx.nd.dot(mx.nd.ones((2,)), mx.nd.ones((2,)), **params)


@pytest.mark.parametrize("dtype", ["float16", "float32"])
def test_a_product_past_the_range_is_inf_without_a_warning(dtype):
    # the host's NumPy matmul warned of the overflow (a RuntimeWarning the user saw; MXNet is silent, and
    # cuBLAS cannot warn: the CPU alone, as the CUDA emulator's NumPy-made CuPy would warn where CuPy does not)
    big = 60000.0 if dtype == "float16" else 1e30
    a = mx.nd.full((1, 2), big, dtype=dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        products = [
            mx.nd.dot(a, a, transpose_b=True),
            mx.nd.batch_dot(a.reshape((1, 1, 2)), a.reshape((1, 2, 1))),
            mx.nd.FullyConnected(a, a, num_hidden=1, no_bias=True),
        ]
        values = [p.asnumpy() for p in products]
    assert all(np.isinf(v).all() and v.dtype == np.dtype(dtype) for v in values)
