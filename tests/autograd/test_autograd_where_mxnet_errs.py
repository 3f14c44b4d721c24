"""Gradients MXNet 1.9.1 gets wrong and lazynd gets right (found by differential fuzzing against it).

Each test is the mathematically right answer where MXNet 1.9.1 (CPU) gives another: a head
given twice, ``grad_req='add'`` through ``clip``, ``Cast``, ``mean`` and ``autograd.Function``, a Function
with a constant input, and an in-place write that is refused.  They pin lazynd's answer so that a
change made to match MXNet's output does not bring its mistakes in.
"""

from __future__ import annotations

import numpy as np
import pytest
from autograd_variables import variable

import lazynd as mx
from lazynd import LazyNDError, autograd


class _Twice(mx.autograd.Function):
    def forward(self, x):
        return x * 2

    def backward(self, dy):
        return dy * 2


class _Product(mx.autograd.Function):
    def forward(self, x, y):
        self.save_for_backward(x, y)
        return x * y

    def backward(self, dz):
        x, y = self.saved_tensors
        return dz * y, dz * x


def test_a_head_given_twice_receives_both_head_gradients() -> None:
    # MXNet keeps one of the two head gradients ([1, 1] here, [0.5, 0.5] for the variable)
    x = variable([1.0, 2.0])
    with autograd.record():
        y = x * 2
    autograd.backward([y, y], head_grads=[mx.nd.ones((2,)), mx.nd.full((2,), 0.5)])
    np.testing.assert_array_equal(x.grad.asnumpy(), [3.0, 3.0])
    autograd.backward([x, x], head_grads=[mx.nd.ones((2,)), mx.nd.full((2,), 0.5)])
    np.testing.assert_array_equal(x.grad.asnumpy(), [1.5, 1.5])


@pytest.mark.parametrize(
    "f, slope",
    [
        pytest.param(lambda x: mx.nd.clip(x, 0.0, 10.0), 1.0, id="clip"),
        pytest.param(lambda x: x.astype("float64"), 1.0, id="astype"),
        pytest.param(lambda x: mx.nd.mean(x, axis=0), 0.5, id="mean"),
        pytest.param(lambda x: _Twice()(x), 2.0, id="Function"),
    ],
)
def test_grad_req_add_accumulates_through_every_kind_of_node(f, slope) -> None:
    # MXNet's clip and Cast backward write the gradient over the buffer, its mean(axis) gives the
    # average of the old and new gradients, its Function gives zeros
    x = variable([1.0, 2.0], grad_req="add")
    for _ in range(2):
        with autograd.record():
            y = f(x)
        y.backward()
    np.testing.assert_array_equal(x.grad.asnumpy(), [2 * slope, 2 * slope])


def test_a_function_with_a_constant_input_gives_its_variable_input_a_gradient() -> None:
    # MXNet gives the variable a gradient of zeros when another input of the Function is a constant
    x, c = variable([1.0, 2.0]), mx.nd.array([3.0, 4.0])
    with autograd.record():
        z = _Product()(c, x)
    z.backward()
    np.testing.assert_array_equal(x.grad.asnumpy(), [3.0, 4.0])


def test_a_refused_in_place_write_leaves_the_recorded_array_as_it_was() -> None:
    # MXNet raises too, but has written the array by then
    x = variable([1.0, 2.0])
    with autograd.record():
        y = mx.nd.sqrt(x)
        with pytest.raises(LazyNDError, match="writes into an array in a recorded graph"):
            y *= 2
    np.testing.assert_allclose(y.asnumpy(), np.sqrt([1.0, 2.0]), rtol=1e-6)
    y.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), 0.5 / np.sqrt([1.0, 2.0]), rtol=1e-6)
