"""mx.autograd.Function: Python functions with a hand-written backward, recorded as one node
(MXNet 1.9.1's semantics, results checked against it)."""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx
from lazynd import LazyNDError, autograd


class Sigmoid(autograd.Function):
    def forward(self, x):
        y = 1 / (1 + mx.nd.exp(-x))
        self.save_for_backward(y)
        return y

    def backward(self, dy):
        (y,) = self.saved_tensors
        return dy * y * (1 - y)


class ProductAndSum(autograd.Function):
    def forward(self, a, b):
        self.save_for_backward(a, b)
        return a * b, a + b

    def backward(self, d_product, d_sum):
        a, b = self.saved_tensors
        return d_product * b + d_sum, d_product * a + d_sum


def _variable(values, ctx=None, grad_req: str = "write") -> mx.NDArray:
    x = mx.nd.array(values, ctx=ctx)
    x.attach_grad(grad_req)
    return x


def test_a_function_is_differentiated_by_its_backward(ctx) -> None:
    x = _variable([0.0, 1.0, -2.0], ctx)
    with autograd.record():
        y = Sigmoid()(x)
        loss = (y * 3).sum()
    loss.backward()
    s = 1 / (1 + np.exp(-np.array([0.0, 1.0, -2.0])))
    np.testing.assert_allclose(y.asnumpy(), s, rtol=1e-6)
    np.testing.assert_allclose(x.grad.asnumpy(), 3 * s * (1 - s), rtol=1e-5)


def test_an_unused_output_of_a_function_gets_a_gradient_of_zeros() -> None:
    a, b = _variable([1.0, 2.0]), _variable([3.0, 4.0])
    with autograd.record():
        product, total = ProductAndSum()(a, b)
        loss = product * 5
    loss.backward()
    np.testing.assert_array_equal(a.grad.asnumpy(), [15.0, 20.0])
    np.testing.assert_array_equal(b.grad.asnumpy(), [5.0, 10.0])


def test_the_outputs_of_a_function_are_heads_with_their_own_gradients() -> None:
    a, b = _variable([1.0, 2.0]), _variable([3.0, 4.0])
    with autograd.record():
        outputs = ProductAndSum()(a, b)
    assert isinstance(outputs, tuple)
    autograd.backward(list(outputs), [mx.nd.ones((2,)), mx.nd.array([10.0, 10.0])])
    np.testing.assert_array_equal(a.grad.asnumpy(), [13.0, 14.0])
    np.testing.assert_array_equal(b.grad.asnumpy(), [11.0, 12.0])


def test_a_function_runs_unrecorded_and_its_backward_in_the_pass_mode() -> None:
    seen = {}

    class Flags(autograd.Function):
        def forward(self, x):
            seen["forward"] = (autograd.is_recording(), autograd.is_training())
            return x * 1

        def backward(self, dy):
            seen["backward"] = (autograd.is_recording(), autograd.is_training())
            return dy

    x = _variable([1.0, 2.0])
    with autograd.record():
        y = Flags()(x)
    y.backward()
    assert seen == {"forward": (False, True), "backward": (False, True)}


def test_grad_add_and_repeated_calls_follow_the_variables_grad_req() -> None:
    x, w = _variable([0.5, -1.0]), _variable([2.0, 3.0], grad_req="add")
    for _ in range(3):
        with autograd.record():
            y = Sigmoid()(x * w) * Sigmoid()(w)
        y.backward()
    sx, sw = 1 / (1 + np.exp(-np.array([1.0, -3.0]))), 1 / (1 + np.exp(-np.array([2.0, 3.0])))
    np.testing.assert_allclose(x.grad.asnumpy(), sx * (1 - sx) * [2.0, 3.0] * sw, rtol=1e-5)
    dw = sx * (1 - sx) * [0.5, -1.0] * sw + sx * sw * (1 - sw)
    np.testing.assert_allclose(w.grad.asnumpy(), 3 * dw, rtol=1e-5)


def test_grad_of_a_function_returns_its_backward_and_leaves_grad_alone() -> None:
    x = _variable([0.5, -1.0])
    with autograd.record():
        y = Sigmoid()(x)
    (dx,) = autograd.grad(y, [x])
    s = 1 / (1 + np.exp(-np.array([0.5, -1.0])))
    np.testing.assert_allclose(dx.asnumpy(), s * (1 - s), rtol=1e-5)
    np.testing.assert_array_equal(x.grad.asnumpy(), [0.0, 0.0])


def test_outside_record_a_function_is_its_forward() -> None:
    y = Sigmoid()(mx.nd.array([0.0]))
    assert y._ag is None
    np.testing.assert_allclose(y.asnumpy(), [0.5])


def test_an_input_handed_back_is_recorded_on_an_alias_not_the_variable() -> None:
    class Twice(autograd.Function):
        def forward(self, x):
            return x

        def backward(self, dy):
            return dy * 2

    x = _variable([1.0, 2.0])
    with autograd.record():
        y = Twice()(x) * 3
    y.backward()
    np.testing.assert_array_equal(x.grad.asnumpy(), [6.0, 6.0])


def test_a_constant_input_or_an_output_handed_back_twice_keeps_its_own_history() -> None:
    class PassOn(autograd.Function):
        def forward(self, x, c):
            y = x * 2
            return y, y, c

        def backward(self, dy0, dy1, dc):
            return (dy0 + dy1) * 2, dc

    x, c = _variable([1.0, 2.0]), mx.nd.array([5.0, 6.0])
    with autograd.record():
        first, second, constant = PassOn()(x, c)
        loss = first * 1 + second * 10 + constant
    loss.backward()
    assert c._ag is None  # the caller's constant is not made part of the graph
    np.testing.assert_array_equal(x.grad.asnumpy(), [22.0, 22.0])


def test_a_function_instance_is_called_once() -> None:
    f = Sigmoid()
    f(mx.nd.array([1.0]))
    with pytest.raises(LazyNDError, match="'Sigmoid': an instance is called once"):
        f(mx.nd.array([1.0]))


def test_a_backward_giving_the_wrong_number_of_gradients_is_refused() -> None:
    class Wrong(autograd.Function):
        def forward(self, a, b):
            return a * b

        def backward(self, dy):
            return dy

    a = _variable([1.0, 2.0])
    with autograd.record():
        y = Wrong()(a, mx.nd.array([3.0, 4.0]))
    with pytest.raises(
        LazyNDError, match=r"'Wrong': backward must return one NDArray per input of forward \(2\), got 1"
    ):
        y.backward()


def test_a_backward_gradient_of_another_shape_is_refused() -> None:
    class Wrong(autograd.Function):
        def forward(self, a):
            return a * 2

        def backward(self, dy):
            return dy.sum()

    a = _variable([1.0, 2.0])
    with autograd.record():
        y = Wrong()(a)
    with pytest.raises(
        LazyNDError, match=r"gradient 0 must be an NDArray of shape \(2,\) \(input 0's\), got shape \(1,\)"
    ):
        y.backward()


def test_a_forward_that_returns_no_ndarray_is_refused() -> None:
    class Wrong(autograd.Function):
        def forward(self, a):
            return a.asnumpy()

    with pytest.raises(LazyNDError, match="forward must return an NDArray or a tuple or list of NDArrays, got ndarray"):
        Wrong()(mx.nd.array([1.0]))


def test_an_input_that_is_no_ndarray_is_refused() -> None:
    with pytest.raises(LazyNDError, match="'Sigmoid': input 0 must be an NDArray, got list"):
        Sigmoid()([1.0])


def test_an_array_saved_for_backward_written_since_is_refused() -> None:
    class UsesSaved(autograd.Function):
        def forward(self, a):
            self.scale = mx.nd.array([2.0, 3.0])
            self.save_for_backward(self.scale)
            return a * self.scale

        def backward(self, dy):
            (scale,) = self.saved_tensors
            return dy * scale

    a = _variable([1.0, 2.0])
    f = UsesSaved()
    with autograd.record():
        y = f(a)
    f.scale += 1  # MXNet would give [3, 4] here: the gradient of a function it never computed
    with pytest.raises(LazyNDError, match="array 0 saved for backward of operator 'UsesSaved' was modified in place"):
        y.backward()


class DoublesInPlace(autograd.Function):
    def forward(self, x):
        return x * 2

    def backward(self, dy):
        dy *= 2  # writes into the gradient it was given
        return dy


def test_a_backward_writing_into_its_output_gradient_changes_no_other_gradient() -> None:
    x, v = _variable([1.0, 2.0]), _variable([1.0, 1.0])
    head_gradient = mx.nd.ones((2,))
    with autograd.record():
        y = DoublesInPlace()(x) + v  # '+' hands one gradient array to both of its inputs
    y.backward(head_gradient)
    np.testing.assert_array_equal(x.grad.asnumpy(), [2.0, 2.0])
    np.testing.assert_array_equal(v.grad.asnumpy(), [1.0, 1.0])
    np.testing.assert_array_equal(head_gradient.asnumpy(), [1.0, 1.0])


def test_a_backward_writing_into_a_default_head_gradient_leaves_later_passes_alone() -> None:
    x = _variable([1.0, 2.0])
    with autograd.record():
        y = DoublesInPlace()(x)
    y.backward()
    np.testing.assert_array_equal(x.grad.asnumpy(), [2.0, 2.0])
    z = _variable([1.0, 2.0])
    with autograd.record():
        w = z * 3  # its default head gradient: ones of the same shape and dtype
    w.backward()
    np.testing.assert_array_equal(z.grad.asnumpy(), [3.0, 3.0])
