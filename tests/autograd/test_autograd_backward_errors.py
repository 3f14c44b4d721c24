"""mx.autograd refuses a bad backward call (head gradients, heads, variables of another kind) with a clear error."""

from __future__ import annotations

import numpy as np
import pytest
from autograd_variables import variable

import lazynd as mx
from lazynd import LazyNDError, autograd


def test_a_head_gradient_of_another_shape_is_refused() -> None:
    x = variable([1.0, 2.0])
    with autograd.record():
        y = x * 2
    with pytest.raises(LazyNDError, match=r"head gradient 0 must be an NDArray of shape \(2,\), got shape \(3,\)"):
        y.backward(mx.nd.ones((3,)))


def test_a_head_gradient_of_another_dtype_is_refused_naming_backward() -> None:
    x = variable([1.0, 2.0])
    with autograd.record():
        y = x * 2
    with pytest.raises(LazyNDError, match="backward: head gradient 0 must have the head's dtype float32, got float64"):
        y.backward(mx.nd.ones((2,), dtype="float64"))
    with pytest.raises(LazyNDError, match="grad: head gradient 0 must have the head's dtype float32, got int32"):
        autograd.grad(y, [x], mx.nd.ones((2,), dtype="int32"))


def test_a_loss_operator_takes_no_head_gradient() -> None:
    x = variable([[1.0, 2.0, 3.0]])
    with autograd.record():
        y = mx.nd.SoftmaxOutput(x, mx.nd.array([1.0]))
    y.backward()
    p = np.exp([1.0, 2.0, 3.0]) / np.exp([1.0, 2.0, 3.0]).sum()
    np.testing.assert_allclose(x.grad.asnumpy(), [p - [0.0, 1.0, 0.0]], rtol=1e-5)


def test_backward_with_no_variable_taking_a_gradient_is_refused() -> None:
    x = variable([1.0, 2.0], grad_req="null")
    with autograd.record():
        y = x * 2
    with pytest.raises(LazyNDError, match="no variable in the recorded graph takes a gradient"):
        y.backward()


def test_backward_of_an_array_not_recorded_is_refused() -> None:
    x = mx.nd.array([1.0, 2.0])
    with pytest.raises(LazyNDError, match=r"head 0 \(shape \(2,\)\) is not in a recorded graph"):
        (x * 2).backward()


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda y, x: autograd.backward(3), "backward: heads must be an NDArray or a list of NDArrays, got int"),
        (lambda y, x: autograd.backward([]), "backward: no heads given"),
        (lambda y, x: autograd.backward(y, 1.0), "backward: head_grads must be an NDArray or a list .*, got float"),
        (lambda y, x: autograd.grad(y, 7), "grad: variables must be an NDArray or a list of NDArrays, got int"),
        (lambda y, x: autograd.grad([], [x]), "grad: no heads given"),
        (lambda y, x: autograd.mark_variables(7, 8), "mark_variables: variables must be an NDArray or a list"),
        (
            lambda y, x: autograd.mark_variables([x], x.grad),
            r"mark_variables: gradients must be a list of NDArrays, one per variable, as variables is a list; got NDArray",
        ),
    ],
    ids=["backward-int", "backward-none", "head-grads-float", "grad-int", "grad-no-heads",
         "mark-int", "mark-mixed"],
)  # fmt: skip
def test_heads_variables_and_gradients_of_another_kind_are_refused_and_the_next_pass_works(call, message) -> None:
    x = variable([1.0, 2.0])
    with autograd.record():
        y = x * x
    with pytest.raises(LazyNDError, match=message):
        call(y, x)
    y.backward()
    np.testing.assert_array_equal(x.grad.asnumpy(), [2.0, 4.0])
