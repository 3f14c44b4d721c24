"""Custom operators (mx.operator.CustomOp / CustomOpProp / register) imperatively and in executors."""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx
import lazynd_sym as sym
from lazynd.errors import EngineError, LazyNDError, OperatorError
from lazynd.test_utils import check_numeric_gradient


class _Scale(mx.operator.CustomOp):
    def __init__(self, factor: float) -> None:
        self.factor = factor

    def forward(self, is_train, req, in_data, out_data, aux):
        self.assign(out_data[0], req[0], in_data[0] * self.factor)

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        self.assign(in_grad[0], req[0], out_grad[0] * self.factor)


@mx.operator.register("test_scale")
class _ScaleProp(mx.operator.CustomOpProp):
    def __init__(self, factor: str = "2") -> None:
        super().__init__(need_top_grad=True)
        assert isinstance(factor, str)  # keywords arrive as strings, as in MXNet
        self.factor = float(factor)

    def create_operator(self, ctx, shapes, dtypes):
        return _Scale(self.factor)


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


def test_unknown_op_type_is_a_clear_error():
    with pytest.raises(OperatorError, match="op_type 'no_such_op' is not registered"):
        mx.nd.Custom(mx.nd.ones((2,)), op_type="no_such_op")
    with pytest.raises(OperatorError, match="op_type 'no_such_op'"):
        sym.Custom(sym.Variable("x"), op_type="no_such_op")


def test_register_rejects_what_is_not_a_property_class():
    with pytest.raises(LazyNDError, match="CustomOpProp subclass"):
        mx.operator.register("test_bad")(object)


class _Failing(mx.operator.CustomOp):
    def forward(self, is_train, req, in_data, out_data, aux):
        raise ValueError("broken forward")


@mx.operator.register("test_failing")
class _FailingProp(mx.operator.CustomOpProp):
    def create_operator(self, ctx, shapes, dtypes):
        return _Failing()


def test_an_error_in_forward_is_raised_at_the_wait_naming_custom():
    y = mx.nd.Custom(mx.nd.ones((2,)), op_type="test_failing")
    with pytest.raises(EngineError, match="Custom.*broken forward"):
        y.asnumpy()
    # the engine keeps running
    np.testing.assert_allclose((mx.nd.ones((2,)) + 1).asnumpy(), [2, 2])


def test_an_error_in_forward_names_the_op_type():
    y = mx.nd.Custom(mx.nd.ones((2,)), op_type="test_failing")
    with pytest.raises(EngineError, match=r"Custom \(test_failing\): forward raised ValueError: broken forward"):
        y.asnumpy()


def _register_odd(op_type: str, **methods) -> None:
    """Register a property class whose ``methods`` return something odd, as ``op_type``."""
    methods.setdefault("create_operator", lambda self, ctx, shapes, dtypes: _Scale(2.0))
    mx.operator.register(op_type)(type(f"Odd_{op_type}", (mx.operator.CustomOpProp,), methods))


@pytest.mark.parametrize(
    ("op_type", "methods", "message"),
    [
        ("odd_args_str", {"list_arguments": lambda self: "data"}, r"list_arguments\(\) returned 'data'"),
        ("odd_outputs_none", {"list_outputs": lambda self: None}, r"list_outputs\(\) returned None"),
        ("odd_shape_none", {"infer_shape": lambda self, s: None}, "infer_shape returned None"),
        ("odd_shape_one", {"infer_shape": lambda self, s: (s,)}, "infer_shape returned"),
        ("odd_shape_flat", {"infer_shape": lambda self, s: (s, [3], [])}, "infer_shape returned the shape 3"),
        (
            "odd_shape_count",
            {"infer_shape": lambda self, s: (s, [], [])},
            r"infer_shape returned \[\] as the outputs, expected a list of 1",
        ),
        ("odd_type_one", {"infer_type": lambda self, t: (t,)}, "infer_type returned"),
        ("odd_type_name", {"infer_type": lambda self, t: (t, ["foo"], [])}, "infer_type returned 'foo'"),
    ],
)
def test_odd_property_results_are_clear_errors_naming_the_op_type(op_type, methods, message):
    _register_odd(op_type, **methods)
    with pytest.raises(OperatorError, match=rf"Custom \({op_type}\): {message}"):
        mx.nd.Custom(mx.nd.ones((2,)), op_type=op_type).asnumpy()


def test_odd_backward_dependency_is_a_clear_error():
    _register_odd("odd_dependency", declare_backward_dependency=lambda self, out_grad, in_data, out_data: None)
    x = mx.nd.ones((2,))
    x.attach_grad()
    with pytest.raises(OperatorError, match=r"Custom \(odd_dependency\): declare_backward_dependency returned None"):
        with mx.autograd.record():
            y = mx.nd.Custom(x, op_type="odd_dependency")
        y.backward()


def test_create_operator_returning_no_operator_is_a_clear_error():
    _register_odd("odd_create", create_operator=lambda self, ctx, shapes, dtypes: None)
    y = mx.nd.Custom(mx.nd.ones((2,)), op_type="odd_create")
    with pytest.raises(EngineError, match=r"Custom \(odd_create\): create_operator returned None"):
        y.asnumpy()
    np.testing.assert_allclose((mx.nd.ones((2,)) + 1).asnumpy(), [2, 2])


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
