"""Custom operators imperatively and in executors: forward, backward, losses, auxiliary states, JSON."""

from __future__ import annotations

import numpy as np
from custom_scale_op import ScaleProp  # noqa: F401 - registers op_type "test_scale"

import lazynd as mx
import lazynd_sym as sym
from lazynd.test_utils import check_numeric_gradient


class _Softmax(mx.operator.CustomOp):
    def forward(self, is_train, req, in_data, out_data, aux):
        x = in_data[0]
        e = mx.nd.exp(x - mx.nd.max(x, axis=1, keepdims=True))
        self.assign(out_data[0], req[0], e / mx.nd.sum(e, axis=1, keepdims=True))

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        assert out_grad[0] is None  # need_top_grad=False: no output gradient
        label = in_data[1].asnumpy().astype(int)
        grad = out_data[0].asnumpy().copy()
        grad[np.arange(label.shape[0]), label] -= 1.0
        self.assign(in_grad[0], req[0], mx.nd.array(grad, ctx=in_grad[0].context))
        self.assign(in_grad[1], req[1], 0)


@mx.operator.register("test_softmax")
class _SoftmaxProp(mx.operator.CustomOpProp):
    def __init__(self) -> None:
        super().__init__(need_top_grad=False)

    def list_arguments(self):
        return ["data", "label"]

    def infer_shape(self, in_shape):
        return [in_shape[0], [in_shape[0][0]]], [in_shape[0]], []

    def create_operator(self, ctx, shapes, dtypes):
        return _Softmax()


def test_nd_custom_runs_forward_with_string_keywords(ctx):
    x = mx.nd.array([[1, -2], [3, 4]], ctx=ctx)
    y = mx.nd.Custom(x, op_type="test_scale", factor=3)
    assert y.context == ctx
    np.testing.assert_allclose(y.asnumpy(), [[3, -6], [9, 12]])


def test_sym_custom_forward_and_backward_in_an_executor(ctx):
    data = sym.Variable("data")
    net = sym.Custom(data, op_type="test_scale", factor="0.5", name="half")
    assert net.list_arguments() == ["data"]
    assert net.list_outputs() == ["half_output"]
    exe = net.simple_bind(ctx, data=(2, 3))
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    out = exe.forward(is_train=True, data=mx.nd.array(x, ctx=ctx))[0]
    np.testing.assert_allclose(out.asnumpy(), x * 0.5)
    exe.backward(mx.nd.ones((2, 3), ctx=ctx))
    np.testing.assert_allclose(exe.grad_dict["data"].asnumpy(), np.full((2, 3), 0.5))


def test_numeric_gradient_of_a_custom_operator_inside_a_graph():
    data = sym.Variable("data")
    net = sym.tanh(sym.Custom(data, op_type="test_scale", factor="1.5"))
    check_numeric_gradient(net, [np.random.uniform(-1, 1, (3, 4))])


def test_loss_custom_operator_needs_no_out_grads(ctx):
    data, label = sym.Variable("data"), sym.Variable("label")
    net = sym.Custom(data=data, label=label, op_type="test_softmax", name="softmax")
    assert net.list_arguments() == ["data", "label"]
    exe = net.simple_bind(ctx, data=(3, 4), label=(3,))
    x = np.random.uniform(-1, 1, (3, 4)).astype(np.float32)
    y = np.array([0, 3, 1], dtype=np.float32)
    prob = exe.forward(is_train=True, data=mx.nd.array(x, ctx=ctx), label=mx.nd.array(y, ctx=ctx))[0].asnumpy()
    expected = np.exp(x) / np.exp(x).sum(axis=1, keepdims=True)
    np.testing.assert_allclose(prob, expected, rtol=1e-5)
    exe.backward()  # a loss: no out_grads
    grad = expected.copy()
    grad[np.arange(3), y.astype(int)] -= 1
    np.testing.assert_allclose(exe.grad_dict["data"].asnumpy(), grad, rtol=1e-5, atol=1e-6)
    # the same as the built-in SoftmaxOutput
    ref = sym.SoftmaxOutput(data=data, label=label).simple_bind(ctx, data=(3, 4), label=(3,))
    ref.forward(is_train=True, data=mx.nd.array(x, ctx=ctx), label=mx.nd.array(y, ctx=ctx))
    ref.backward()
    np.testing.assert_allclose(exe.grad_dict["data"].asnumpy(), ref.grad_dict["data"].asnumpy(), rtol=1e-5, atol=1e-6)


def test_large_nd_work_inside_forward_does_not_deadlock(engine_name):
    # arrays well above the inline size: the user's calls are queued, and the operation waits for them
    x = mx.nd.ones((300, 400))
    y = x
    for _ in range(5):
        y = mx.nd.Custom(y, op_type="test_scale", factor="2")
    np.testing.assert_allclose(y.asnumpy(), np.full((300, 400), 32.0))
    data = sym.Variable("data")
    exe = sym.Custom(data, op_type="test_scale", factor="3").simple_bind(mx.cpu(), data=(300, 400))
    out = exe.forward(is_train=True, data=x)[0]
    exe.backward(out)
    np.testing.assert_allclose(exe.grad_dict["data"].asnumpy(), np.full((300, 400), 9.0))


def test_symbol_json_round_trip_keeps_the_custom_node():
    data = sym.Variable("data")
    net = sym.Custom(data=data, op_type="test_softmax", name="sm")
    loaded = sym.load_json(net.tojson())
    assert loaded.list_arguments() == ["data", "sm_label"]
    exe = loaded.simple_bind(mx.cpu(), data=(2, 3), sm_label=(2,))
    exe.forward(is_train=True, data=mx.nd.zeros((2, 3)), sm_label=mx.nd.zeros((2,)))
    exe.backward()  # still a loss after loading
    np.testing.assert_allclose(exe.outputs[0].asnumpy(), np.full((2, 3), 1 / 3), rtol=1e-6)


class _Counter(mx.operator.CustomOp):
    def forward(self, is_train, req, in_data, out_data, aux):
        aux[0][:] = aux[0] + 1
        self.assign(out_data[0], req[0], in_data[0] + aux[0])

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        self.assign(in_grad[0], req[0], out_grad[0])


@mx.operator.register("test_counter")
class _CounterProp(mx.operator.CustomOpProp):
    def list_auxiliary_states(self):
        return ["count"]

    def infer_shape(self, in_shape):
        return in_shape, [in_shape[0]], [[1]]

    def create_operator(self, ctx, shapes, dtypes):
        return _Counter()


def test_auxiliary_states_are_updated_in_executors_and_imperatively():
    net = sym.Custom(sym.Variable("data"), op_type="test_counter", name="c")
    assert net.list_auxiliary_states() == ["c_count"]
    assert net.list_arguments() == ["data"]
    exe = net.simple_bind(mx.cpu(), data=(2,))
    exe.aux_dict["c_count"][:] = 0
    exe.forward(is_train=True, data=mx.nd.array([1, 2]))
    out = exe.forward(is_train=True, data=mx.nd.array([1, 2]))[0]
    np.testing.assert_allclose(out.asnumpy(), [3, 4])
    np.testing.assert_allclose(exe.aux_dict["c_count"].asnumpy(), [2])
    count = mx.nd.zeros((1,))
    y = mx.nd.Custom(mx.nd.array([5, 5]), count, op_type="test_counter")
    np.testing.assert_allclose(y.asnumpy(), [6, 6])
    np.testing.assert_allclose(count.asnumpy(), [1])


_SEEN: list = []


@mx.operator.register("test_counter_seen")
class _CounterSeenProp(_CounterProp):
    def create_operator(self, ctx, shapes, dtypes):
        _SEEN.append((shapes, dtypes))
        return _Counter()


def test_create_operator_sees_the_auxiliary_states_after_the_inputs():
    # MXNet 1.9.1 hands create_operator the shapes and dtype codes of the inputs followed by
    # those of the auxiliary states: [[2], [1]] and [0, 0] here
    _SEEN.clear()
    exe = sym.Custom(sym.Variable("data"), op_type="test_counter_seen", name="c").simple_bind(mx.cpu(), data=(2,))
    exe.forward(is_train=True, data=mx.nd.array([1, 2]))
    exe.backward(mx.nd.ones((2,)))
    assert _SEEN == [([[2], [1]], [0, 0])]  # one CustomOp object for the forward and backward
    _SEEN.clear()
    mx.nd.Custom(mx.nd.ones((3,), dtype="float64"), mx.nd.zeros((1,), dtype="float64"), op_type="test_counter_seen")
    mx.nd.waitall()
    assert _SEEN == [([[3], [1]], [1, 1])]


def test_autograd_through_a_custom_operator_with_auxiliary_states():
    # as in MXNet 1.9.1: the operator's own update of its state is no in-place write of a
    # recorded input, and the state gets no gradient
    x = mx.nd.array([5, 5])
    x.attach_grad()
    count = mx.nd.zeros((1,))
    with mx.autograd.record():
        y = mx.nd.Custom(x, count, op_type="test_counter") + mx.nd.Custom(x, count, op_type="test_counter")
    y.backward()
    np.testing.assert_allclose(y.asnumpy(), [13, 13])
    np.testing.assert_allclose(count.asnumpy(), [2])
    np.testing.assert_allclose(x.grad.asnumpy(), [2, 2])
