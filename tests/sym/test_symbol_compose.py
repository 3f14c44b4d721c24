"""Symbol composition, naming, attributes, arithmetic and copies."""

from __future__ import annotations

import copy
import pickle

import pytest

import lazynd as mx
import lazynd_sym as sym
from lazynd.errors import ArgumentTypeError, LazyNDError, OperatorError


def test_seed_example_lists_arguments_and_outputs():
    with sym.NameManager():
        a, b = sym.Variable("A"), sym.Variable("B")
        d = (a + b) / 10 + 1
    assert d.list_arguments() == ["A", "B"]
    assert d.list_outputs() == ["_plusscalar0_output"]


def test_mx_sym_is_lazynd_sym():
    assert mx.sym.Variable("data").list_arguments() == ["data"]


def test_missing_inputs_become_named_variables():
    out = sym.SoftmaxOutput(sym.Variable("data"), name="softmax")
    assert out.list_arguments() == ["data", "softmax_label"]
    assert out.list_outputs() == ["softmax_output"]


def test_automatic_names_count_per_operator():
    with sym.NameManager():
        x = sym.Variable("x")
        y = sym.relu(sym.relu(x))
    assert [n for n in y.get_internals().list_outputs()] == ["x", "relu0_output", "relu1_output"]


def test_internals_leave_out_hidden_outputs_as_mxnet():
    x = sym.Variable("x")
    hidden = sym.FullyConnected(sym.BatchNorm(x, name="bn"), num_hidden=2, name="fc")
    assert hidden.get_internals().list_outputs() == [
        "x", "bn_gamma", "bn_beta", "bn_moving_mean", "bn_moving_var", "bn_output",
        "fc_weight", "fc_bias", "fc_output",
    ]  # fmt: skip
    shown = sym.BatchNorm(x, name="bn", output_mean_var=True).get_internals().list_outputs()
    assert shown[-3:] == ["bn_output", "bn_mean", "bn_var"]
    internals = hidden.get_internals()
    assert internals.infer_shape(x=(4, 3))[1][internals.list_outputs().index("fc_output")] == (4, 2)


def test_automatic_names_of_scalar_operators_follow_mxnet():
    with sym.NameManager():
        a = sym.Variable("a")
        names = [(a + 1).name, (a * 2).name, (a > 1).name, (a <= 1).name, (a == 1).name, (a != 1).name]
    assert names == ["_plusscalar0", "_mulscalar0", "_greater_scalar0", "_lesser_equal_scalar0", "_equal_scalar0",
                     "_not_equal_scalar0"]  # fmt: skip


def test_prefix_scope_prepends_names():
    with sym.Prefix("mlp_"):
        y = sym.relu(sym.Variable("x"), name="act")
    assert y.name == "mlp_act"


def test_getitem_by_index_and_output_name():
    g = sym.Group([sym.Variable("a"), sym.Variable("b") * 2])
    name = g.list_outputs()[1]
    assert g[1].list_outputs() == g[name].list_outputs() == [name]
    with pytest.raises(LazyNDError, match="no output named"):
        g["nope"]


def test_compose_by_call_replaces_free_variable():
    net1 = sym.relu(sym.Variable("data"), name="r1")
    net2 = sym.exp(sym.Variable("data2"), name="e1")
    composed = net2(data2=net1)
    assert composed.list_arguments() == ["data"]
    assert net2.list_arguments() == ["data2"]


def test_compose_unknown_name_raises():
    with pytest.raises(LazyNDError, match="not an input of the symbol"):
        sym.relu(sym.Variable("x"))(y=sym.Variable("z"))


def test_attributes_allowed_keys_are_stored_with_underscores():
    with sym.AttrScope(ctx_group="stage1"):
        v = sym.Variable("w", lr_mult=0.5)
    assert v.attr("ctx_group") == "stage1"
    # MXNet 1.9.1 lists the plain keys too
    assert v.list_attr() == {"__ctx_group__": "stage1", "__lr_mult__": "0.5", "ctx_group": "stage1", "lr_mult": "0.5"}


def test_memonger_mirror_stage_attribute_is_kept_as_a_hint():
    # ResNet symbols written for MXNet's memonger mark shortcuts with _set_attr(mirror_stage='True')
    shortcut = sym.BatchNorm(sym.Variable("data"), name="sc")
    shortcut._set_attr(mirror_stage="True")
    assert shortcut.attr("mirror_stage") == "True"
    assert shortcut.list_attr() == {"__mirror_stage__": "True", "mirror_stage": "True"}
    assert sym.load_json(shortcut.tojson()).attr("mirror_stage") == "True"


def test_unknown_attribute_raises():
    with pytest.raises(LazyNDError, match="not allowed"):
        sym.Variable("w", attr={"mood": "angry"})


def test_an_unknown_variable_keyword_is_a_value_error_as_mxnet():
    # MXNet 1.9.1: Variable("w", foo="bar") raises ValueError
    with pytest.raises(ValueError, match="'foo' is not allowed"):
        sym.Variable("w", foo="bar")


def test_operator_attribute_kwargs_and_unknown_params():
    y = sym.relu(sym.Variable("x"), name="r", ctx_group="dev2", __layout__="NC")
    assert y.attr_dict()["r"] == {"__ctx_group__": "dev2", "__layout__": "NC", "ctx_group": "dev2"}
    with pytest.raises(OperatorError):
        sym.relu(sym.Variable("x"), bogus=3)


def test_operators_registered_later_resolve_dynamically():
    from lazynd.ops import registry
    from lazynd.ops.registry import OpDef

    if not registry.exists("_sym_test_late_op"):
        registry.register(OpDef("_sym_test_late_op", lambda k, a, i, o, x: None))
    assert sym._sym_test_late_op(sym.Variable("x")).list_arguments() == ["x"]


def test_pickle_copy_deepcopy_keep_the_graph():
    y = sym.relu(sym.Variable("x") * 3, name="act")
    for clone in (pickle.loads(pickle.dumps(y)), copy.copy(y), copy.deepcopy(y)):
        assert clone.tojson() == y.tojson()


def test_get_children_and_debug_str():
    y = sym.relu(sym.Variable("x"), name="act")
    assert y.get_children().list_outputs() == ["x"]
    text = y.debug_str()
    assert "Op:relu, Name=act" in text and "Variable:x" in text


def test_compose_with_name_renames_the_head_operator_only_as_mxnet_does():
    net = sym.FullyConnected(sym.Variable("data"), name="fc1", num_hidden=128)
    net2 = sym.FullyConnected(sym.Variable("data2"), name="net2", num_hidden=128)
    composed = net(data=net2, name="compose")
    assert composed.list_arguments() == ["data2", "net2_weight", "net2_bias", "fc1_weight", "fc1_bias"]
    assert composed.list_outputs() == ["compose_output"]
    assert composed.name == "compose"
    # the called symbol itself is unchanged
    assert net.list_arguments() == ["data", "fc1_weight", "fc1_bias"]
    assert net.list_outputs() == ["fc1_output"]


def test_compose_of_a_two_layer_tutorial_net_keeps_its_parameter_names():
    # dmlc/mxnet-notebooks' symbol tutorial prints these lists; MXNet 1.9.1 gives them so
    net1 = sym.FullyConnected(data=sym.Variable("data"), name="fc1", num_hidden=10)
    net2 = sym.FullyConnected(data=sym.Variable("data2"), name="fc2", num_hidden=10)
    composed = net2(data2=net1, name="composed")
    assert composed.list_arguments() == ["data", "fc1_weight", "fc1_bias", "fc2_weight", "fc2_bias"]
    assert composed.get_internals().list_outputs() == [
        "data", "fc1_weight", "fc1_bias", "fc1_output", "fc2_weight", "fc2_bias", "composed_output",
    ]  # fmt: skip


def test_compose_mxnet_test_symbol_compose_replaces_created_variable():
    data = sym.Variable("data")
    net1 = sym.FullyConnected(data=data, name="fc1", num_hidden=10)
    net1 = sym.FullyConnected(data=net1, name="fc2", num_hidden=100)
    net2 = sym.FullyConnected(name="fc3", num_hidden=10)
    net2 = sym.Activation(data=net2, act_type="relu", name="act")
    net2 = sym.FullyConnected(data=net2, name="fc4", num_hidden=20)
    composed = net2(fc3_data=net1, name="composed")
    assert composed.list_arguments() == [
        "data", "fc1_weight", "fc1_bias", "fc2_weight", "fc2_bias", "fc3_weight", "fc3_bias", "fc4_weight", "fc4_bias",
    ]  # fmt: skip
    assert composed.list_outputs() == ["composed_output"]
    assert len(sym.Group([composed, net1]).list_outputs()) == 2
    arg_shapes, out_shapes, _ = composed.infer_shape(data=(5, 7))
    assert out_shapes == [(5, 20)] and arg_shapes[5] == (10, 100)


def test_compose_twice_with_names_repeats_the_parameter_names_and_bind_refuses_them():
    block = sym.FullyConnected(sym.Variable("x"), name="fc", num_hidden=3)
    first = block(x=sym.Variable("data"), name="a")
    second = block(x=first, name="b")
    assert second.list_arguments() == ["data", "fc_weight", "fc_bias", "fc_weight", "fc_bias"]
    assert second.get_internals().list_outputs()[-1] == "b_output"
    with pytest.raises(LazyNDError, match="argument names \\['fc_bias', 'fc_weight'\\] appear more than once"):
        second.simple_bind(mx.cpu(), data=(2, 3))


def test_compose_keeps_user_named_variables_and_positional_args():
    w = sym.Variable("myweight")
    net = sym.FullyConnected(sym.Variable("data"), weight=w, name="fc1", num_hidden=4)
    composed = net(sym.Variable("input"), name="c")
    assert composed.list_arguments() == ["input", "myweight", "fc1_bias"]
    assert composed.list_outputs() == ["c_output"]


def test_compose_rejects_a_bad_name():
    with pytest.raises(LazyNDError, match="name must be a non-empty string"):
        sym.relu(sym.Variable("x"))(x=sym.Variable("y"), name="")


def test_graph_node_opdef_names_the_operator_and_rejects_a_variable():
    out = sym.FullyConnected(sym.Variable("data"), num_hidden=3, name="fc")
    node = out._outputs[0][0]
    assert node.opdef.name == "FullyConnected"
    data = node.inputs[0][0]
    assert data.is_variable
    with pytest.raises(TypeError, match="'data' is a variable"):
        _ = data.opdef


@pytest.mark.parametrize("shape", ["(2,a)", (2, -1), "x"], ids=str)
def test_variable_shape_that_is_not_a_shape_is_a_shape_error(shape):
    with pytest.raises(LazyNDError, match=r"Variable 'x': shape .* is not a shape"):
        sym.Variable("x", shape=shape)


def test_variable_shape_text_is_accepted():
    assert sym.Variable("x", shape="(2, 3)").attr("__shape__") == "(2, 3)"


def test_operator_shape_parameter_that_is_not_a_shape_names_the_parameter():
    with pytest.raises(OperatorError, match=r"Pooling: invalid value '\(3,x\)' for parameter 'kernel'"):
        sym.Pooling(sym.Variable("x"), kernel="(3,x)", pool_type="max")


def test_list_attr_and_attr_dict_list_the_plain_keys_as_mxnet():
    # MXNet 1.9.1: Variable('w', lr_mult=2.0, wd_mult=0.0, shape=(2, 3)).list_attr()
    w = sym.Variable("w", lr_mult=2.0, wd_mult=0.0, shape=(2, 3))
    assert w.list_attr() == {
        "__wd_mult__": "0.0",
        "wd_mult": "0.0",
        "__lr_mult__": "2.0",
        "lr_mult": "2.0",
        "__shape__": "(2, 3)",
    }
    with sym.AttrScope(ctx_group="dev1"):
        v = sym.Variable("v") * 2
    assert v.attr_dict()["v"] == {"__ctx_group__": "dev1", "ctx_group": "dev1"}
    assert v.attr_dict()[v.name] == {"scalar": "2", "__ctx_group__": "dev1", "ctx_group": "dev1"}
    assert '"ctx_group"' not in v.tojson()  # stored once, as __ctx_group__


def test_attr_and_list_attr_show_the_operators_parameters_as_mxnet():
    # MXNet 1.9.1: FullyConnected(x, num_hidden=4, name='fc').attr('num_hidden') == '4'
    fc = sym.FullyConnected(sym.Variable("x"), num_hidden=4, name="fc", attr={"lr_mult": "3"})
    assert fc.attr("num_hidden") == "4"
    assert fc.attr("no_such_key") is None
    assert fc.list_attr() == {"num_hidden": "4", "__lr_mult__": "3", "lr_mult": "3"}


def test_a_slice_of_a_symbol_is_the_group_of_the_outputs_it_selects():
    # MXNet 1.9.1: net.get_internals()[2:4] is Group([internals[2], internals[3]])
    internals = sym.FullyConnected(sym.Variable("data"), num_hidden=3, name="fc").get_internals()
    assert internals[1:3].list_outputs() == ["fc_weight", "fc_bias"]
    assert internals[::2].list_outputs() == ["data", "fc_bias"]
    with pytest.raises(LazyNDError, match=r"output slice slice\(5, 9, None\) selects none"):
        internals[5:9]


@pytest.mark.parametrize("symbols", [[], (), sym.Variable("x")], ids=["empty-list", "empty-tuple", "a-symbol"])
def test_group_of_nothing_or_of_a_bare_symbol_is_refused(symbols):
    # MXNet 1.9.1: TypeError 'Expected a list of symbols as input'; an empty group bound to nothing
    with pytest.raises(TypeError, match="Group: expected a"):
        sym.Group(symbols)
    with pytest.raises(TypeError, match="Group: expected symbols, got int"):
        sym.Group([sym.Variable("a"), 3])
    assert sym.Group(iter([sym.Variable("a"), sym.Variable("b")])).list_outputs() == ["a", "b"]


def test_variable_takes_mxnet_1x_stype_dense_only():
    assert sym.Variable("x", stype="default").list_arguments() == ["x"]
    with pytest.raises(LazyNDError, match="Variable 'x': storage type 'csr' is not supported"):
        sym.Variable("x", stype="csr")


def test_get_children_of_a_group_lists_each_nodes_inputs_as_mxnet():
    x = sym.Variable("x")
    group = sym.Group([sym.relu(x, name="a"), sym.sigmoid(x, name="b")])
    assert group.get_children().list_outputs() == ["x", "x"]
    # a multi-output node counts once
    assert sym.SliceChannel(x, num_outputs=2, name="s").get_children().list_outputs() == ["x"]
    fc = sym.FullyConnected(sym.relu(sym.Variable("d"), name="r"), num_hidden=2, name="fc")
    assert fc.get_children().get_children().list_outputs() == ["d"]  # variables have none
    assert x.get_children() is None


def test_an_input_given_as_none_is_made_a_variable_as_mxnet():
    x = sym.Variable("x")
    fc = sym.FullyConnected(data=x, weight=None, bias=None, num_hidden=2, name="fc")
    assert fc.list_arguments() == ["x", "fc_weight", "fc_bias"]
    assert sym.FullyConnected(x, bias=None, no_bias=True, num_hidden=2, name="f").list_arguments() == ["x", "f_weight"]
    assert sym.relu(data=None, name="r").list_arguments() == ["r_data"]


def test_attr_name_and_op_name_as_mxnet():
    x = sym.Variable("x")
    y = sym.relu(x, name="q")
    assert (y.attr("name"), y.attr("op_name")) == ("q", "relu")
    assert (x.attr("name"), x.attr("op_name")) == ("x", "null")
    assert sym.Group([x, y]).attr("name") is None
    assert "name" not in y.list_attr()


def test_python2_division_names_as_mxnet():
    x = sym.Variable("x")
    values = mx.nd.array([1.0, 4.0])
    assert x.__div__(2).eval(x=values)[0].asnumpy().tolist() == [0.5, 2.0]
    assert x.__rdiv__(2).eval(x=values)[0].asnumpy().tolist() == [2.0, 0.5]


def test_an_empty_name_is_automatic_and_a_non_string_name_is_refused():
    x = sym.Variable("x")
    with sym.NameManager():
        assert sym.relu(x, name="").name == "relu0"  # as MXNet's NameManager
        with mx.name.Prefix("p_"):
            assert sym.relu(x, name="").name == "p_relu0"
    with pytest.raises(LazyNDError, match=r"relu: name must be a string, got 3"):
        sym.relu(x, name=3)


def test_compose_in_place_as_mxnets_private_compose():
    net = sym.relu(sym.Variable("data"), name="r")
    assert net._compose(data=sym.Variable("z")) is None
    assert net.list_arguments() == ["z"]
    assert net.list_outputs() == ["r_output"]


def test_an_output_name_that_appears_twice_is_refused_as_mxnet():
    x = sym.Variable("x")
    first = sym.relu(x, name="same")
    internals = sym.relu(first, name="same").get_internals()
    with pytest.raises(LazyNDError, match=r"2 outputs named 'same_output'; pick one by position"):
        internals["same_output"]
    assert internals[1].get_children().list_outputs() == ["x"]


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"init": 1.5}, "init must be an Initializer or its name/JSON"),
        ({"init": [1]}, "init must be an Initializer or its name/JSON"),
        ({"lr_mult": "abc"}, "lr_mult must be a finite number, got 'abc'"),
        ({"lr_mult": [1]}, r"lr_mult must be a finite number, got \[1\]"),
        ({"wd_mult": float("nan")}, "wd_mult must be a finite number, got nan"),
        ({"wd_mult": None.__class__}, "wd_mult must be a finite number"),
    ],
    ids=["init float", "init list", "lr_mult str", "lr_mult list", "wd_mult nan", "wd_mult class"],
)
def test_a_variable_refuses_an_init_or_multiplier_of_the_wrong_kind_by_name(kwargs, message):
    # stored as str(value) before: an init that create() cannot read, a multiplier the optimizer cannot
    with pytest.raises(ArgumentTypeError, match=f"Variable 'w': {message}"):
        sym.Variable("w", **kwargs)


def test_a_variable_keeps_multipliers_given_as_numbers_or_their_text():
    w = sym.Variable("w", lr_mult="0.5", wd_mult=2, init="zeros")
    assert (w.attr("__lr_mult__"), w.attr("__wd_mult__"), w.attr("__init__")) == ("0.5", "2", "zeros")


@pytest.mark.parametrize(
    ("call", "error"),
    [
        (lambda: sym.Variable(3), TypeError),
        (lambda: sym.Variable(None), TypeError),
        (lambda: sym.Variable(""), ValueError),
        (lambda: (sym.Variable("x") + 1)(x=3), TypeError),
        (lambda: (sym.Variable("x") + 1)(x=sym.Variable("y"), name=3), TypeError),
        (lambda: (sym.Variable("x") + sym.Variable("y")).infer_shape((2,), y=(2,)), ValueError),
        (lambda: (sym.Variable("x") + 1).infer_shape((2,), (3,)), ValueError),
    ],
    ids=["name-int", "name-none", "name-empty", "compose-int", "compose-name-int", "infer-both", "infer-too-many"],
)
def test_arguments_of_the_wrong_type_or_value_raise_mxnets_python_error(call, error):
    # MXNet 1.9.1 raises TypeError (a name or input that is no string or symbol) or ValueError
    # (infer_shape given positional and keyword shapes); lazynd's were RuntimeErrors only
    with pytest.raises(error):
        call()
