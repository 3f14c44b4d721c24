"""Gradients of reductions: numerical checks, what _backward_reduce reads and its own gradient, second derivatives."""

from __future__ import annotations

import numpy as np
import pytest
from reduce_inputs import NUMPY, reduce_data

import lazynd as mx
from lazynd.ops import registry
from lazynd.testing import check_gradient


@pytest.mark.parametrize("params", [{}, {"axis": 1}, {"axis": (0, 2), "keepdims": True}, {"axis": 0, "exclude": True}])
@pytest.mark.parametrize("name", sorted(NUMPY))
def test_reduction_gradient_matches_numeric(name, params, ctx):
    check_gradient(name, [reduce_data(seed=2)], params, ctx=ctx)


@pytest.mark.parametrize("ord", [1, 2])
def test_norm_gradient_matches_numeric(ord, ctx):
    check_gradient("norm", [reduce_data(seed=3) - 1.0], {"ord": ord, "axis": 1}, ctx=ctx)


def test_norm_gradient_where_the_norm_is_zero_is_zero(ctx):
    # the subgradient (PyTorch's too); MXNet 1.9.1 divides by the norm and gives NaN (a README departure)
    x = mx.nd.array([[0.0, 0.0, 0.0], [3.0, 0.0, 4.0]], ctx=ctx)
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.norm(x, axis=1)
    y.backward()
    np.testing.assert_array_equal(x.grad.asnumpy(), np.float32([[0.0, 0.0, 0.0], [0.6, 0.0, 0.8]]))


def test_backward_reduce_reads_only_the_shapes_of_sum_and_mean_inputs():
    # an executor may overwrite a forward value read only for its shape and still run backward again
    op = registry.get("_backward_reduce")
    for reducer, value_inputs in (("sum", [0]), ("mean", [0]), ("nansum", [0, 1]), ("max", [0, 1, 2])):
        attrs = op.parse({"reducer": reducer})
        assert [k for k in range(3) if op.reads_value(attrs, k)] == value_inputs, reducer
    norm1, norm2 = op.parse({"reducer": "norm", "ord": 1}), op.parse({"reducer": "norm", "ord": 2})
    assert [op.reads_value(norm1, k) for k in range(3)] == [True, True, False]
    assert all(op.reads_value(norm2, k) for k in range(3))


@pytest.mark.parametrize("reducer", ["sum", "mean"])
@pytest.mark.parametrize(
    ("axis", "keepdims", "exclude"), [(None, False, False), (1, True, False), ((0, 2), False, True)]
)
def test_backward_reduce_of_sum_and_mean_is_differentiable_in_its_output_gradient(
    reducer, axis, keepdims, exclude, ctx
):
    # second-order gradients through a sum or a mean (a loss's .sum()) go through this rule
    x = reduce_data()
    params = {"reducer": reducer, "axis": axis, "keepdims": keepdims, "exclude": exclude}
    forward = getattr(mx.nd, reducer)(mx.nd.array(x, dtype="float64"), axis=axis, keepdims=keepdims, exclude=exclude)
    out_grad = np.random.default_rng(3).uniform(-1, 1, size=forward.shape)
    grads = check_gradient("_backward_reduce", [out_grad, x, forward.asnumpy()], params, ctx=ctx, wrt=[0])
    assert grads[1] is None and grads[2] is None


def test_second_derivative_through_a_sum_and_a_mean() -> None:
    values = np.array([1.0, 2.0, 3.0, 4.0])
    x = mx.nd.array(values)
    x.attach_grad()
    with mx.autograd.record():
        (first,) = mx.autograd.grad(mx.nd.sum(x**3) + mx.nd.mean(mx.nd.tanh(x)), [x], create_graph=True)
        penalty = mx.nd.sum(first * first)
    penalty.backward()
    t = np.tanh(values)
    d1 = 3 * values**2 + (1 - t**2) / 4
    d2 = 6 * values - 2 * t * (1 - t**2) / 4
    np.testing.assert_allclose(first.asnumpy(), d1, rtol=1e-5)
    np.testing.assert_allclose(x.grad.asnumpy(), 2 * d1 * d2, rtol=1e-5)


def test_second_derivative_through_a_max_is_refused_by_name() -> None:
    x = mx.nd.array([1.0, 3.0, 2.0])
    x.attach_grad()
    with mx.autograd.record():
        (first,) = mx.autograd.grad(mx.nd.max(x * x), [x], create_graph=True)
    with pytest.raises(mx.LazyNDError, match="_backward_reduce: the gradient of max's backward is not implemented"):
        first.backward()
