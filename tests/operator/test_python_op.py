"""MXNet 0.9's NumpyOp and NDArrayOp: Python operators called on symbols."""

from __future__ import annotations

import numpy as np

import lazynd as mx
import lazynd_sym as sym


class NumpySoftmax(mx.operator.NumpyOp):
    """The softmax loss of MXNet 0.9's NumpyOp example, written here from its description."""

    def __init__(self) -> None:
        super().__init__(False)

    def list_arguments(self):
        return ["data", "label"]

    def list_outputs(self):
        return ["output"]

    def infer_shape(self, in_shape):
        return [in_shape[0], (in_shape[0][0],)], [in_shape[0]]

    def forward(self, in_data, out_data):
        x, y = in_data[0], out_data[0]
        y[:] = np.exp(x - x.max(axis=1, keepdims=True))
        y /= y.sum(axis=1, keepdims=True)

    def backward(self, out_grad, in_data, out_data, in_grad):
        label = in_data[1].astype(int)
        dx = in_grad[0]
        dx[:] = out_data[0]
        dx[np.arange(label.shape[0]), label] -= 1.0


class NDArrayDouble(mx.operator.NDArrayOp):
    def declare_backward_dependency(self, out_grad, in_data, out_data):
        return out_grad

    def forward(self, in_data, out_data):
        out_data[0][:] = in_data[0] * 2

    def backward(self, out_grad, in_data, out_data, in_grad):
        assert out_data[0] is None  # not declared
        in_grad[0][:] = out_grad[0] * 2


def _softmax_grad(x: np.ndarray, label: np.ndarray) -> np.ndarray:
    p = np.exp(x) / np.exp(x).sum(axis=1, keepdims=True)
    p[np.arange(len(label)), label.astype(int)] -= 1
    return p


def test_numpy_op_is_a_loss_layer_on_symbols(ctx):
    net = NumpySoftmax()(data=sym.Variable("data"), name="softmax")
    assert net.list_arguments() == ["data", "softmax_label"]
    exe = net.simple_bind(ctx, data=(4, 3))
    x = np.random.uniform(-1, 1, (4, 3)).astype(np.float32)
    label = np.array([0, 2, 1, 1], dtype=np.float32)
    exe.forward(is_train=True, data=mx.nd.array(x, ctx=ctx), softmax_label=mx.nd.array(label, ctx=ctx))
    exe.backward()
    np.testing.assert_allclose(exe.grad_dict["data"].asnumpy(), _softmax_grad(x, label), rtol=1e-5, atol=1e-6)


def test_ndarray_op_forward_and_backward(ctx):
    op = NDArrayDouble()
    net = op(sym.Variable("x"), name="double")
    exe = net.simple_bind(ctx, x=(3,))
    out = exe.forward(is_train=True, x=mx.nd.array([1, 2, 3], ctx=ctx))[0]
    np.testing.assert_allclose(out.asnumpy(), [2, 4, 6])
    exe.backward(mx.nd.array([1, 1, 2], ctx=ctx))
    np.testing.assert_allclose(exe.grad_dict["x"].asnumpy(), [2, 2, 4])
    # the same instance used twice makes two nodes of one operator
    twice = op(op(sym.Variable("x")))
    out = twice.simple_bind(ctx, x=(1,)).forward(x=mx.nd.array([3], ctx=ctx))[0]
    np.testing.assert_allclose(out.asnumpy(), [12])


def test_numpy_op_trains_a_small_model_with_feedforward():
    rng = np.random.RandomState(0)
    x = rng.normal(size=(200, 2)).astype(np.float32)
    y = (x[:, 0] + x[:, 1] > 0).astype(np.float32)
    fc = sym.FullyConnected(sym.Variable("data"), num_hidden=2, name="fc")
    net = NumpySoftmax()(data=fc, name="softmax")
    model = mx.model.FeedForward(net, num_epoch=10, learning_rate=0.1, numpy_batch_size=20)
    model.fit(X=x, y=y)
    accuracy = (model.predict(x).argmax(axis=1) == y).mean()
    assert accuracy > 0.9


def test_numpy_op_without_overrides_copies_forward_and_writes_ones_backward(ctx):
    # MXNet's base PythonOp: forward copies the first input, backward writes ones into the first gradient
    net = mx.operator.NumpyOp().get_symbol(sym.Variable("x"), name="plain")
    x = mx.nd.array([3.0, -1.0, 2.0], ctx=ctx)
    dx = mx.nd.zeros((3,), ctx=ctx)
    exe = net.bind(ctx, args=[x], args_grad={"x": dx})
    np.testing.assert_array_equal(exe.forward(is_train=True)[0].asnumpy(), [3.0, -1.0, 2.0])
    exe.backward(mx.nd.array([5.0, 5.0, 5.0], ctx=ctx))
    np.testing.assert_array_equal(dx.asnumpy(), [1.0, 1.0, 1.0])
