"""Shape and type inference over symbols."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import lazynd as mx
import lazynd_sym as sym
from lazynd.errors import LazyNDError, OperatorError, ShapeError


def test_seed_example_infers_shapes():
    a, b = sym.Variable("A"), sym.Variable("B")
    d = (a + b) / 10 + 1
    assert d.infer_shape(A=(10,)) == ([(10,), (10,)], [(10,)], [])


def test_backward_inference_fills_inputs_from_outputs_peers():
    a, b = sym.Variable("A"), sym.Variable("B")
    assert (a * b).infer_shape(B=(2, 3))[0] == [(2, 3), (2, 3)]


def test_incomplete_inference_returns_nones_and_partial_keeps_known():
    a, b = sym.Variable("A"), sym.Variable("B")
    net = sym.dot(a, b)
    assert net.infer_shape(A=(2, 3)) == (None, None, None)
    args, outs, _ = net.infer_shape_partial(A=(2, 3))
    assert args[0] == (2, 3) and args[1] == ()  # MXNet writes an unknown shape as ()


def test_incomplete_inference_warns_naming_the_unknown_arguments_as_mxnet():
    # MXNet 1.9.1's infer_shape and infer_type warn (UserWarning) listing what stays unknown
    net = sym.FullyConnected(sym.Variable("x"), num_hidden=3, name="fc")
    with pytest.warns(UserWarning, match=r"infer_shape: .*\n\tx: \(2, 0\)\n\tfc_weight: \(3, 0\)$"):
        assert net.infer_shape(x=(2, 0)) == (None, None, None)
    loss = sym.SoftmaxOutput(sym.Variable("data"), sym.Variable("label"), name="out")
    with pytest.warns(UserWarning, match=r"infer_type: .*\n\tdata: None\n\tlabel: None$"):
        assert loss.infer_type() == (None, None, None)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        net.infer_shape_partial(x=(2, 0))  # the partial forms, and binding, say nothing
        loss.infer_type_partial()
        net.simple_bind(mx.cpu(), x=(2, 5))


def test_inconsistent_shape_error_names_node_and_shapes():
    a, b = sym.Variable("A"), sym.Variable("B")
    with pytest.raises(ShapeError, match=r"\(2, 3\)"):
        sym.relu(a + b, name="act").infer_shape(A=(2, 3), B=(3, 2))


def test_a_bad_operator_parameter_is_an_error_while_the_weights_are_still_unknown():
    # a 1-entry stride for a 2-D kernel (an AlexNet written with ``stride=4``): MXNet refuses it at
    # inference; it must not come back as (None, None, None), "not enough known"
    net = sym.Convolution(sym.Variable("data"), kernel=(11, 11), stride=4, num_filter=8, name="conv1")
    with pytest.raises(OperatorError, match=r"node 'conv1' \(Convolution\).*stride \(4,\) must have 2 entries"):
        net.infer_shape(data=(2, 3, 227, 227))
    with pytest.raises(OperatorError, match="stride"):
        net.infer_shape_partial(data=(2, 3, 227, 227))


def test_shape_attribute_of_variable_is_used():
    y = sym.Variable("x", shape=(4, 5)) * 2
    assert y.infer_shape()[1] == [(4, 5)]


def test_infer_type_propagates_dtype():
    y = sym.Variable("x") + 1
    assert y.infer_type(x=np.float64) == ([np.float64], [np.float64], [])
    assert y.infer_type() == (None, None, None)


def test_given_shape_overrides_the_variable_shape_hint():
    y = sym.Variable("a", shape=(2, 3)) * 2
    assert y.infer_shape(a=(4, 5)) == ([(4, 5)], [(4, 5)], [])


def test_partial_inference_leaves_shapes_of_unknown_inputs_as_empty_tuples():
    fc = sym.FullyConnected(sym.Variable("x"), num_hidden=128, name="fc")
    assert fc.infer_shape_partial() == ([(), (), ()], [()], [])
    # unknown dimensions of a known rank stay 0, as in MXNet 1.9.1
    assert fc.infer_shape_partial(x=(0, 10)) == ([(0, 10), (128, 10), (128,)], [(0, 128)], [])


@pytest.mark.parametrize("bad", [(-2, 3), (2.5, 3), "2,3", 3])
def test_a_given_shape_that_is_not_a_tuple_of_dimensions_is_refused_by_name(bad):
    # a negative dimension was taken as unknown; a string or an int failed inside the pass
    net = sym.Variable("x") * 2
    with pytest.raises(ShapeError, match=r"infer_shape: the shape of 'x' must be a tuple of dimensions"):
        net.infer_shape(x=bad)
    with pytest.raises(ShapeError, match=r"the shape of 'x'"):
        net.simple_bind(mx.cpu(), x=bad)
    assert net.infer_shape(x=[2, np.int64(3)]) == ([(2, 3)], [(2, 3)], [])


def test_an_unknown_dtype_is_refused_by_name():
    net = sym.Variable("x") * 2
    with pytest.raises(LazyNDError, match=r"infer_type: 'x': dtype 'float33' is not supported"):
        net.infer_type(x="float33")
    with pytest.raises(LazyNDError, match=r"'x': dtype 'float33'"):
        net.simple_bind(mx.cpu(), x=(2,), type_dict={"x": "float33"})
    assert net.infer_type(x=np.float16)[1] == [np.float16]


def test_infer_type_runs_backwards_through_operators_whose_output_follows_their_inputs():
    # MXNet 1.9.1: y's float64 reaches x and the weights through _plus and FullyConnected
    x, y = sym.Variable("x"), sym.Variable("y")
    net = sym.FullyConnected(x, num_hidden=3, name="fc") + y
    assert net.infer_type(y="float64") == ([np.float64] * 4, [np.float64], [])
    assert net.infer_type_partial(y="float64") == ([np.float64] * 4, [np.float64], [])
    a, b = sym.Variable("a"), sym.Variable("b")
    assert (sym.exp(a) * b).infer_type(b="float16") == ([np.float16] * 2, [np.float16], [])
    # a Cast's output dtype says nothing of its input's (MXNet: None too)
    assert sym.Cast(a, dtype="float16").infer_type_partial() == ([None], [np.float16], [])
    assert (sym.Cast(a, dtype="float16") + b).infer_type(b="float16") == (None, None, None)


def test_simple_bind_keeps_a_type_dict_that_reaches_other_arguments_backwards():
    # it bound every argument as float32 before (the inference was incomplete), y included
    x, y = sym.Variable("x"), sym.Variable("y")
    net = sym.FullyConnected(x, num_hidden=3, name="fc") + y
    exe = net.simple_bind(mx.cpu(), x=(2, 4), type_dict={"y": "float64"})
    assert [a.dtype for a in exe.arg_arrays] == [np.float64] * 4
    assert exe.forward()[0].dtype == np.float64


def test_known_output_shapes_reach_the_rules_that_infer_backwards():
    # an RNN cell's begin state, zeros of shape (0, H): the batch comes back from the graph, as in MXNet
    x = sym.Variable("x")
    state = sym.zeros(shape=(0, 4), name="begin_state_0", __layout__="NC")
    net = sym.FullyConnected(x, num_hidden=8, name="i2h") + sym.FullyConnected(state, num_hidden=8, name="h2h")
    assert net.infer_shape(x=(2, 3)) == ([(2, 3), (8, 3), (8,), (8, 4), (8,)], [(2, 8)], [])
    exe = net.simple_bind(mx.cpu(), x=(2, 3))
    assert exe.forward()[0].shape == (2, 8)
    # Concat's unknown piece from its output and the other pieces
    a, b = sym.Variable("a"), sym.Variable("b")
    assert (sym.Concat(a, b, dim=1) + sym.Variable("c")).infer_shape(a=(2, 3), c=(2, 5))[0][1] == (2, 2)


def test_infer_type_of_a_loss_head_with_nothing_known_is_unknown_as_mxnets():
    net = sym.SoftmaxOutput(sym.FullyConnected(sym.Variable("x"), num_hidden=3, name="fc"), name="out")
    assert net.infer_type() == (None, None, None)
    assert net.infer_type_partial() == ([None] * 4, [None], [])
    assert net.infer_type(x="float64")[1] == [np.float64]
    executor = net.simple_bind(mx.cpu(), x=(2, 4))  # binding still takes float32 by default
    assert executor.arg_dict["out_label"].dtype == np.float32


def test_a_same_shape_operator_takes_its_inputs_shapes_from_its_output_alone():
    a, b, c = sym.Variable("a"), sym.Variable("b"), sym.Variable("c")
    net = mx.sym.relu(a * c) + b
    assert net.infer_shape(b=(2, 3)) == ([(2, 3)] * 3, [(2, 3)], [])


def test_a_known_output_alone_still_makes_no_half_known_weight():
    net = sym.FullyConnected(sym.Variable("x"), num_hidden=4, name="fc") + sym.Variable("y")
    args, _, _ = net.infer_shape_partial(y=(2, 4))
    assert dict(zip(net.list_arguments(), args, strict=True))["fc_weight"] == ()


def test_a_given_type_overrides_the_variable_dtype_hint_as_mxnet():
    x = sym.Variable("x", dtype="float64")
    net = x + sym.Variable("z")
    assert net.infer_type(x="float16") == ([np.float16, np.float16], [np.float16], [])
    # a type given to another input still conflicts with the hint
    with pytest.raises(LazyNDError, match="float16"):
        net.infer_type(z="float16")
    executor = sym.FullyConnected(x, num_hidden=2, name="f").simple_bind(mx.cpu(), type_dict={"x": "float16"}, x=(2, 3))
    assert executor.arg_dict["x"].dtype == np.float16


def test_minus_one_is_an_unknown_dimension_of_a_given_shape_as_mxnet():
    fc = sym.FullyConnected(sym.Variable("x"), num_hidden=4, name="fc")
    assert fc.infer_shape_partial(x=(-1, 10)) == ([(0, 10), (4, 10), (4,)], [(0, 4)], [])
    assert fc.infer_shape(x=(2, -1)) == (None, None, None)


def test_an_operators_type_error_names_the_node_of_the_graph():
    # an unrolled LSTM given float64 data meets its float32 zero states in one '_plus' per step;
    # MXNet 1.9.1 names the node ('_plus0') too
    outputs, _ = mx.rnn.LSTMCell(3, prefix="l_").unroll(2, mx.sym.var("data"), merge_outputs=True)
    with pytest.raises(OperatorError, match=r"infer_type: node '_plus\d+' \(_plus\): .*'rhs' has dtype float32"):
        outputs.infer_type(data="float64")
