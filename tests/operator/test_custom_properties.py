"""CustomOpProp's default answers next to MXNet 1.9.1's: storage types and partial shapes."""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx
from lazynd.errors import LazyNDError


class _TwoInTwoOut(mx.operator.CustomOpProp):
    def list_arguments(self):
        return ["a", "b"]

    def list_outputs(self):
        return ["x", "y"]

    def list_auxiliary_states(self):
        return ["state"]


def test_default_infer_storage_type_makes_every_array_dense():
    prop = _TwoInTwoOut()
    assert prop.infer_storage_type(["default", "default"]) == (["default"] * 2, ["default"] * 2, ["default"])


def test_default_infer_storage_type_backward_fills_undefined_gradients():
    prop = _TwoInTwoOut()
    result = prop.infer_storage_type_backward(
        ["default"] * 2, ["default"] * 2, ["default"] * 2, ["undefined", "default"], ["default"]
    )
    assert result == (["default"] * 2, ["default"] * 2, ["default"] * 2, ["default"] * 2, ["default"])


def test_a_subclass_may_pass_storage_types_on_to_the_default():
    class Passing(_TwoInTwoOut):
        def infer_storage_type(self, in_stype):
            return super().infer_storage_type(in_stype)

    assert Passing().infer_storage_type(["default", "default"])[1] == ["default", "default"]


@pytest.mark.parametrize("method", ["infer_storage_type", "infer_storage_type_backward"])
def test_a_sparse_storage_type_is_a_clear_error(method):
    prop = _TwoInTwoOut()
    with pytest.raises(LazyNDError, match=r"in_stype\[1\] is 'csr'|ograd_stype\[1\] is 'csr'"):
        if method == "infer_storage_type":
            prop.infer_storage_type(["default", "csr"])
        else:
            prop.infer_storage_type_backward(["default", "csr"], [], [], [], [])


class _Loss(mx.operator.CustomOp):
    def forward(self, is_train, req, in_data, out_data, aux):
        self.assign(out_data[0], req[0], in_data[0])

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        self.assign(in_grad[0], req[0], out_data[0])


@mx.operator.register("test_properties_loss")
class _LossProp(mx.operator.CustomOpProp):
    def __init__(self) -> None:
        super().__init__(need_top_grad=False)

    def list_arguments(self):
        return ["data", "label"]

    def infer_shape(self, in_shape):
        return [in_shape[0], [in_shape[0][0]]], [in_shape[0]], []

    def create_operator(self, ctx, shapes, dtypes):
        return _Loss()


def test_partly_known_shapes_from_infer_shape_are_kept():
    # MXNet 1.9.1: ([(0, 3), (0,)], [(0, 3)], []): an unknown batch stays 0, the rest is known
    data = mx.sym.Variable("data", shape=(0, 3))
    net = mx.sym.Custom(data=data, label=mx.sym.Variable("label"), op_type="test_properties_loss")
    args, outs, aux = net.infer_shape_partial()
    assert (args, outs, aux) == ([(0, 3), (0,)], [(0, 3)], [])
    args, outs, _ = net.infer_shape(data=(5, 3))
    assert (args, outs) == ([(5, 3), (5,)], [(5, 3)])


class _Identity(mx.operator.CustomOp):
    def forward(self, is_train, req, in_data, out_data, aux):
        self.assign(out_data[0], req[0], in_data[0])

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        self.assign(in_grad[0], req[0], out_grad[0])


@mx.operator.register("test_properties_no_super")
class _NoSuperProp(mx.operator.CustomOpProp):
    def __init__(self) -> None:  # forgets CustomOpProp.__init__, so has no need_top_grad_
        pass

    def create_operator(self, ctx, shapes, dtypes):
        return _Identity()


def test_properties_without_the_base_init_are_a_clear_error():
    # MXNet 1.9.1 fails too (in declare_backward_dependency); lazynd said AttributeError
    with pytest.raises(LazyNDError, match="test_properties_no_super.*super\\(\\).__init__"):
        mx.nd.Custom(mx.nd.array([1, 2]), op_type="test_properties_no_super").asnumpy()
    with pytest.raises(LazyNDError, match="test_properties_no_super"):
        mx.sym.Custom(data=mx.sym.Variable("x"), op_type="test_properties_no_super")


@mx.operator.register("test_properties_float_keyword")
class _FloatKeywordProp(mx.operator.CustomOpProp):
    def __init__(self, factor: str = "1") -> None:
        super().__init__()
        self.factor = float(factor)

    def create_operator(self, ctx, shapes, dtypes):
        return _Identity()


def test_a_keyword_the_properties_refuse_is_a_clear_error():
    # MXNet 1.9.1 aborts the process here; lazynd let the ValueError of float('abc') escape
    with pytest.raises(LazyNDError, match="test_properties_float_keyword.*'factor': 'abc'.*ValueError"):
        mx.nd.Custom(mx.nd.array([1, 2]), op_type="test_properties_float_keyword", factor="abc")
    with pytest.raises(LazyNDError, match="test_properties_float_keyword"):
        mx.sym.Custom(data=mx.sym.Variable("x"), op_type="test_properties_float_keyword", factor="abc")


def _raise(*args):
    raise RuntimeError("user mistake")


@pytest.mark.parametrize(
    "method", ["infer_type", "list_arguments", "list_outputs", "list_auxiliary_states", "declare_backward_dependency"]
)
def test_an_exception_in_a_property_method_is_an_operator_error_naming_it(method):
    # MXNet 1.9.1 raises MXNetError for each; lazynd let the user's RuntimeError escape
    op_type = f"test_properties_raising_{method}"
    mx.operator.register(op_type)(
        type(op_type, (_NoSuperProp,), {"__init__": mx.operator.CustomOpProp.__init__, method: _raise})
    )
    x = mx.nd.array([1.0, 2.0])
    x.attach_grad()
    with pytest.raises(LazyNDError, match=f"{op_type}.*{method} raised RuntimeError: user mistake"):
        with mx.autograd.record():
            y = mx.nd.Custom(x, op_type=op_type)
        y.backward()
        x.grad.asnumpy()


@mx.operator.register("test_properties_raising_create_operator")
class _RaisingCreateProp(mx.operator.CustomOpProp):
    def create_operator(self, ctx, shapes, dtypes):
        raise RuntimeError("no operator today")


def test_an_exception_in_create_operator_names_the_op_type_and_the_engine_goes_on():
    y = mx.nd.Custom(mx.nd.array([1.0, 2.0]), op_type="test_properties_raising_create_operator")
    with pytest.raises(LazyNDError, match="test_properties_raising_create_operator.*create_operator raised"):
        y.asnumpy()
    assert (mx.nd.ones((2,)) + 1).asnumpy().tolist() == [2.0, 2.0]


@mx.operator.register("test_properties_wants_float64")
class _WantsFloat64Prop(mx.operator.CustomOpProp):
    def infer_type(self, in_type):
        return ["float64"], ["float64"], []

    def create_operator(self, ctx, shapes, dtypes):
        return _Identity()


def test_an_input_type_infer_type_contradicts_is_a_clear_error():
    # MXNet 1.9.1 refuses it; lazynd ran the call on the float32 input as if nothing was said
    with pytest.raises(LazyNDError, match="test_properties_wants_float64.*input 0 is float64, but it is float32"):
        mx.nd.Custom(mx.nd.array([1.0, 2.0]), op_type="test_properties_wants_float64")
    with pytest.raises(LazyNDError, match="input 0 is float64, but it is float32"):
        mx.sym.Custom(data=mx.sym.Variable("x"), op_type="test_properties_wants_float64").infer_type(x="float32")
    out = mx.nd.Custom(mx.nd.array([1.0, 2.0], dtype="float64"), op_type="test_properties_wants_float64")
    assert out.dtype == np.float64


@mx.operator.register("test_properties_forgets_aux_shapes")
class _ForgetsAuxShapesProp(mx.operator.CustomOpProp):
    def list_auxiliary_states(self):
        return ["count"]

    def infer_shape(self, in_shape):
        return in_shape, [in_shape[0]]  # no shapes for the auxiliary state

    def create_operator(self, ctx, shapes, dtypes):
        return _Identity()


def test_infer_shape_without_the_auxiliary_shapes_is_a_clear_error():
    # MXNet 1.9.1 refuses it; lazynd's bind said "cannot infer the shapes of []"
    net = mx.sym.Custom(data=mx.sym.Variable("x"), op_type="test_properties_forgets_aux_shapes")
    with pytest.raises(LazyNDError, match="test_properties_forgets_aux_shapes.*no auxiliary state shapes, expected 1"):
        net.simple_bind(mx.cpu(), x=(2,))


@mx.operator.register("test_properties_label_passed_on")
class _LabelPassedOnProp(mx.operator.CustomOpProp):
    """A loss whose ``infer_shape`` hands its inputs back as given: an unknown label comes back ``[]``."""

    def __init__(self) -> None:
        super().__init__(need_top_grad=False)

    def list_arguments(self):
        return ["data", "label"]

    def infer_shape(self, in_shape):
        return in_shape, [in_shape[0]], []

    def create_operator(self, ctx, shapes, dtypes):
        return _Loss()


def _label_passed_on_net() -> mx.sym.Symbol:
    hidden = mx.sym.FullyConnected(mx.sym.Variable("data"), num_hidden=5, name="fc")
    return mx.sym.Custom(hidden, mx.sym.Variable("label"), op_type="test_properties_label_passed_on", name="loss")


def test_a_label_the_property_hands_back_empty_is_the_0d_shape_once_the_data_is_known(capsys):
    # MXNet 1.9.1 calls the graph complete: ([(4, 7), (5, 7), (5,), ()], [(4, 5)], []), and
    # print_summary and simple_bind work from the data shape alone
    net = _label_passed_on_net()
    assert net.infer_shape(data=(4, 7)) == ([(4, 7), (5, 7), (5,), ()], [(4, 5)], [])
    assert mx.viz.print_summary(net, shape={"data": (4, 7)}) == 40
    assert "loss(Custom)" in capsys.readouterr().out
    assert net.simple_bind(mx.cpu(), data=(4, 7)).arg_dict["label"].shape == ()
    assert net.infer_shape(data=(4, 7), label=(4,))[0][3] == (4,)


def test_the_data_the_property_hands_back_empty_stays_unknown():
    # MXNet 1.9.1: the full form gives nothing, the partial form (): the data is not made 0-d
    net = _label_passed_on_net()
    assert net.infer_shape(label=(4,)) == (None, None, None)
    assert net.infer_shape_partial(label=(4,)) == ([(), (), (), (4,)], [()], [])


class _Filled(mx.operator.CustomOp):
    def __init__(self, rows, cols):
        super().__init__()
        self.rows, self.cols = rows, cols

    def forward(self, is_train, req, in_data, out_data, aux):
        self.assign(out_data[0], req[0], mx.nd.arange(self.rows * self.cols).reshape((self.rows, self.cols)))

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        pass


@mx.operator.register("test_no_inputs")
class _NoInputsProp(mx.operator.CustomOpProp):
    """An operator that makes its output from its keywords alone (MXNet 1.9.1 runs it)."""

    def __init__(self, rows, cols):
        super().__init__()
        self.rows, self.cols = int(rows), int(cols)

    def list_arguments(self):
        return []

    def infer_shape(self, in_shape):
        return [], [(self.rows, self.cols)], []

    def infer_type(self, in_type):
        return [], [np.float32], []

    def create_operator(self, ctx, shapes, dtypes):
        return _Filled(self.rows, self.cols)


def test_an_operator_without_inputs_runs_imperatively():
    out = mx.nd.Custom(rows=2, cols=3, op_type="test_no_inputs")
    assert out.shape == (2, 3) and out.dtype == np.float32
    np.testing.assert_array_equal(out.asnumpy(), np.arange(6).reshape(2, 3))


def test_an_operator_without_inputs_runs_while_recording():
    with mx.autograd.record():
        out = mx.nd.Custom(rows=3, cols=1, op_type="test_no_inputs")
    np.testing.assert_array_equal(out.asnumpy(), np.arange(3).reshape(3, 1))


def test_an_operator_without_inputs_binds_with_no_arguments():
    sym = mx.sym.Custom(rows=1, cols=4, op_type="test_no_inputs", name="filled")
    assert sym.list_arguments() == []
    assert sym.infer_shape() == ([], [(1, 4)], [])
    exe = sym.bind(mx.cpu(), {})
    np.testing.assert_array_equal(exe.forward()[0].asnumpy(), np.arange(4).reshape(1, 4))
