"""What a custom operator's backward sees and writes: its own state from forward, unwritten and given gradients."""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx
import lazynd_sym as sym
from lazynd.errors import LazyNDError


class _Remember(mx.operator.CustomOp):
    """Keeps a mask from forward for backward (one object per configuration and device)."""

    def forward(self, is_train, req, in_data, out_data, aux):
        self.mask = in_data[0] > 0
        self.assign(out_data[0], req[0], in_data[0] * self.mask)

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        assert in_data[0] is not None and out_data[0] is None  # only what was declared (inputs always come)
        self.assign(in_grad[0], req[0], out_grad[0] * self.mask)


@mx.operator.register("test_remember")
class _RememberProp(mx.operator.CustomOpProp):
    def declare_backward_dependency(self, out_grad, in_data, out_data):
        return out_grad

    def create_operator(self, ctx, shapes, dtypes):
        return _Remember()


def test_state_from_forward_reaches_backward_and_undeclared_arrays_are_none():
    data = sym.Variable("data")
    exe = sym.Custom(data, op_type="test_remember").simple_bind(mx.cpu(), data=(4,))
    exe.forward(is_train=True, data=mx.nd.array([1, -1, 2, -2]))
    exe.backward(mx.nd.array([10, 20, 30, 40]))
    np.testing.assert_allclose(exe.grad_dict["data"].asnumpy(), [10, 0, 30, 0])


def test_two_uses_of_one_operator_keep_their_own_state_from_forward_to_backward(ctx):
    # MXNet makes one CustomOp per executor node and per imperative call: each use's backward finds
    # the mask its own forward kept (one object per configuration gave both uses the last mask)
    a, b = mx.nd.array([1, -1, 1], ctx=ctx), mx.nd.array([-1, 1, -1], ctx=ctx)
    a.attach_grad()
    b.attach_grad()
    with mx.autograd.record():
        y = mx.nd.Custom(a, op_type="test_remember") + mx.nd.Custom(b, op_type="test_remember")
    y.backward(mx.nd.ones((3,), ctx=ctx))
    np.testing.assert_array_equal(a.grad.asnumpy(), [1, 0, 1])
    np.testing.assert_array_equal(b.grad.asnumpy(), [0, 1, 0])
    net = sym.Custom(sym.Variable("a"), op_type="test_remember") + sym.Custom(
        sym.Variable("b"), op_type="test_remember"
    )
    exe = net.simple_bind(ctx, a=(3,), b=(3,))
    exe.forward(is_train=True, a=mx.nd.array([1, -1, 1], ctx=ctx), b=mx.nd.array([-1, 1, -1], ctx=ctx))
    exe.backward(mx.nd.ones((3,), ctx=ctx))
    np.testing.assert_array_equal(exe.grad_dict["a"].asnumpy(), [1, 0, 1])
    np.testing.assert_array_equal(exe.grad_dict["b"].asnumpy(), [0, 1, 0])


class _RandomDrop(mx.operator.CustomOp):
    """Keeps a random mask from forward for backward: two calls on one input keep different masks."""

    def forward(self, is_train, req, in_data, out_data, aux):
        self.mask = mx.nd.array(np.random.rand(*in_data[0].shape) > 0.5, ctx=in_data[0].context)
        self.assign(out_data[0], req[0], in_data[0] * self.mask)

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        assert out_data[0] is None  # only what was declared
        self.assign(in_grad[0], req[0], out_grad[0] * self.mask)


@mx.operator.register("test_random_drop")
class _RandomDropProp(mx.operator.CustomOpProp):
    def declare_backward_dependency(self, out_grad, in_data, out_data):
        return out_grad

    def create_operator(self, ctx, shapes, dtypes):
        return _RandomDrop()


def test_two_calls_on_one_input_keep_their_own_state_from_forward_to_backward(ctx):
    # both calls read the same buffer: each backward must still find its own forward's mask (keyed by
    # the input buffers alone, both found the object of the second call, and its mask)
    np.random.seed(3)
    x = mx.nd.ones((4, 6), ctx=ctx)
    x.attach_grad()
    with mx.autograd.record():
        y1 = mx.nd.Custom(x, op_type="test_random_drop")
        y2 = mx.nd.Custom(x, op_type="test_random_drop")
        z = y1.sum() + 2 * y2.sum()
    z.backward()
    m1, m2 = y1.asnumpy(), y2.asnumpy()
    assert not np.array_equal(m1, m2)
    np.testing.assert_array_equal(x.grad.asnumpy(), m1 + 2 * m2)


def test_many_recorded_calls_each_keep_their_operator_until_backward():
    # more calls recorded before one backward than a bounded cache held (256): the first calls'
    # objects were dropped, and their backward found a fresh one without the mask from forward
    x = mx.nd.array([1, -1, 2])
    x.attach_grad()
    with mx.autograd.record():
        z = mx.nd.add_n(*[mx.nd.Custom(x, op_type="test_remember") for _ in range(300)])
    z.backward(mx.nd.ones((3,)))
    np.testing.assert_array_equal(x.grad.asnumpy(), [300, 0, 300])


class _NoGradient(mx.operator.CustomOp):
    def forward(self, is_train, req, in_data, out_data, aux):
        self.assign(out_data[0], req[0], in_data[0] + 1)

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        self.assign(in_grad[0], "null", out_grad[0])  # writes nothing


@mx.operator.register("test_no_gradient")
class _NoGradientProp(mx.operator.CustomOpProp):
    def create_operator(self, ctx, shapes, dtypes):
        return _NoGradient()


def test_a_gradient_backward_leaves_unwritten_is_zero():
    # large enough that a fresh buffer holds leftovers of earlier arrays, not zeros
    mx.nd.full((4096,), 5.0).wait_to_read()
    x = mx.nd.ones((4096,))
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.Custom(x, op_type="test_no_gradient")
    y.backward()
    np.testing.assert_array_equal(x.grad.asnumpy(), np.zeros(4096, np.float32))


class _DoublesItsOutGrad(mx.operator.CustomOp):
    def forward(self, is_train, req, in_data, out_data, aux):
        self.assign(out_data[0], req[0], in_data[0] * 2)

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        og = out_grad[0]
        og *= 2  # out_grad is read-only in MXNet: here it is another term's gradient too
        self.assign(in_grad[0], req[0], og * 2)


@mx.operator.register("test_doubles_out_grad")
class _DoublesItsOutGradProp(mx.operator.CustomOpProp):
    def __init__(self) -> None:
        super().__init__(need_top_grad=True)

    def create_operator(self, ctx, shapes, dtypes):
        return _DoublesItsOutGrad()


def test_a_backward_writing_into_out_grad_is_refused_instead_of_changing_other_gradients() -> None:
    x = mx.nd.array([1.0, 2.0])
    v = mx.nd.array([1.0, 1.0])
    x.attach_grad()
    v.attach_grad()
    with mx.autograd.record():
        t = mx.nd.Custom(x, op_type="test_doubles_out_grad") + v
    # the head gradient reaches the custom operator and v as one array: the write would have
    # made v's gradient 2 (a silent wrong answer); MXNet refuses, its out_grad being read-only
    with pytest.raises(LazyNDError, match=r"test_doubles_out_grad.*out_grad\[0\].*read-only"):
        t.backward(mx.nd.ones((2,)))
        mx.nd.waitall()
