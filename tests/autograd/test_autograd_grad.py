"""mx.autograd.grad: new gradient arrays, intermediate results, create_graph and second derivatives."""

from __future__ import annotations

import numpy as np
import pytest
from autograd_variables import variable

import lazynd as mx
from lazynd import LazyNDError, autograd


def test_grad_returns_new_arrays_and_leaves_grad_alone() -> None:
    x = variable([1.0, 2.0])
    with autograd.record():
        y = x * x
    (dx,) = autograd.grad(y, [x])
    np.testing.assert_array_equal(dx.asnumpy(), [2.0, 4.0])
    np.testing.assert_array_equal(x.grad.asnumpy(), [0.0, 0.0])
    assert dx is not x.grad


def test_grad_with_respect_to_an_intermediate_result() -> None:
    x = variable([1.0, 2.0])
    with autograd.record():
        h = x * 3
        y = h * h
    dh, dx = autograd.grad(y, [h, x])
    np.testing.assert_allclose(dh.asnumpy(), 2 * np.array([3.0, 6.0]))
    np.testing.assert_allclose(dx.asnumpy(), 18 * np.array([1.0, 2.0]))


def test_grad_of_a_variable_the_heads_do_not_reach_is_refused() -> None:
    x, w = variable([1.0, 2.0]), variable([1.0, 2.0])
    with autograd.record():
        y = x * 2
    with pytest.raises(LazyNDError, match="variable 1 is not reached from the heads"):
        autograd.grad(y, [x, w])


def test_grad_with_create_graph_gives_a_differentiable_gradient(ctx) -> None:
    x = variable([1.0, 2.0, 3.0], ctx)
    with autograd.record():
        y = x**3
        (dx,) = autograd.grad(y, [x], create_graph=True)
        z = (dx * dx).sum()
    z.backward()
    values = np.array([1.0, 2.0, 3.0])
    np.testing.assert_allclose(dx.asnumpy(), 3 * values**2)
    np.testing.assert_allclose(x.grad.asnumpy(), 2 * 3 * values**2 * 6 * values)  # d/dx (3x^2)^2


def test_second_derivative_through_an_operator_whose_gradient_has_no_rule_is_refused() -> None:
    x = variable([0.5, 1.0])
    with autograd.record():
        (dx,) = autograd.grad(mx.nd.softmax(x), [x], create_graph=True)
    with pytest.raises(LazyNDError, match="operator '_backward_softmax' has no gradient rule"):
        dx.backward()


@pytest.mark.parametrize("act_type", ["relu", "sigmoid", "tanh", "softrelu", "softsign"])
def test_second_derivative_through_activation_is_that_of_its_elementwise_operator(act_type) -> None:
    def second(f):
        x = mx.nd.array([-1.5, -0.3, 0.4, 2.0], dtype="float64")
        x.attach_grad()
        with autograd.record():
            (dx,) = autograd.grad(f(x), [x], create_graph=True)
            z = (dx * dx).sum()
        z.backward()
        return x.grad.asnumpy()

    np.testing.assert_allclose(
        second(lambda x: mx.nd.Activation(x, act_type=act_type)), second(getattr(mx.nd, act_type)), rtol=1e-12
    )


def test_grad_returns_arrays_that_share_memory_with_no_head_gradient_and_no_other_result() -> None:
    x, w = variable([1.0, 2.0]), variable([3.0, 4.0])
    head_gradient = mx.nd.ones((2,))
    with autograd.record():
        y = x + w  # its rule hands the head gradient on, unchanged, to both inputs
        z = x.reshape((2,))  # its rule hands on a view of it
    dx, dw = autograd.grad(y, [x, w], head_gradient)
    (dz,) = autograd.grad(z, [x], head_gradient)
    dx += 10  # e.g. clipping or scaling a gradient in place
    dz += 100
    np.testing.assert_array_equal(dw.asnumpy(), [1.0, 1.0])
    np.testing.assert_array_equal(head_gradient.asnumpy(), [1.0, 1.0])
    np.testing.assert_array_equal(dx.asnumpy(), [11.0, 11.0])
    np.testing.assert_array_equal(dz.asnumpy(), [101.0, 101.0])
    with autograd.record():
        y = x + w
    dx, dw = autograd.grad(y, [x, w])  # the default head gradient
    dx += 10
    np.testing.assert_array_equal(dw.asnumpy(), [1.0, 1.0])


@pytest.mark.parametrize("name", ["floor", "ceil", "round", "rint", "fix", "trunc"])
def test_a_gradient_nothing_reaches_can_be_differentiated_again_to_zeros(name) -> None:
    # MXNet 1.9.1: grad(create_graph=True) of a rounding gives recorded zeros; a backward through them gives zeros
    x = variable([0.3, 1.7, -2.2])
    with autograd.record():
        (dx,) = autograd.grad(getattr(mx.nd, name)(x), [x], create_graph=True)
        z = (dx * dx).sum()
    z.backward()
    np.testing.assert_array_equal(dx.asnumpy(), [0.0, 0.0, 0.0])
    np.testing.assert_array_equal(x.grad.asnumpy(), [0.0, 0.0, 0.0])
