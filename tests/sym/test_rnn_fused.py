"""mx.rnn.FusedRNNCell and mx.init.FusedRNN: one RNN operator for a stack of layers, its packed
weights per gate, its unfused twin, and the initializer of its packed vector (names and layout are
MXNet 1.9.1's)."""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx
from lazynd.errors import LazyNDError

MODES = ["lstm", "gru", "rnn_tanh", "rnn_relu"]


def _forward(net, values: dict[str, np.ndarray], rng: np.random.Generator, **shapes) -> tuple[dict, list[np.ndarray]]:
    """Bind ``net`` with ``values`` and random arrays for the other arguments; the arguments and outputs."""
    arg_shapes, _, _ = net.infer_shape(**shapes)
    args = {
        name: values[name] if name in values else rng.uniform(-0.5, 0.5, shape).astype(np.float32)
        for name, shape in zip(net.list_arguments(), arg_shapes, strict=True)
    }
    exe = net.bind(mx.cpu(), {k: mx.nd.array(v) for k, v in args.items()})
    return args, [o.asnumpy() for o in exe.forward()]


def test_fused_cell_unrolls_into_one_rnn_operator_with_mxnets_names():
    cell = mx.rnn.FusedRNNCell(4, num_layers=2, get_next_state=True)
    outputs, states = cell.unroll(3, mx.sym.var("data"), layout="TNC", merge_outputs=True)
    assert outputs.list_arguments() == ["data", "lstm_parameters"]  # the begin states are zeros
    assert [s.list_outputs() for s in states] == [["lstm_rnn_state_output"], ["lstm_rnn_statecell_output"]]
    assert cell.state_info == [{"shape": (2, 0, 4), "__layout__": "LNC"}] * 2
    _, out_shapes, _ = mx.sym.Group([outputs, *states]).infer_shape(data=(3, 5, 7))
    assert out_shapes == [(3, 5, 4), (2, 5, 4), (2, 5, 4)]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("bidirectional", [False, True])
@pytest.mark.parametrize("layout", ["NTC", "TNC"])
def test_fused_cell_computes_what_its_unfused_cells_compute_with_the_unpacked_weights(mode, bidirectional, layout):
    rng = np.random.default_rng(0)
    shape = (2, 3, 5) if layout == "NTC" else (3, 2, 5)
    cell = mx.rnn.FusedRNNCell(4, num_layers=2, mode=mode, bidirectional=bidirectional, prefix="f_")
    fused, _ = cell.unroll(3, mx.sym.var("data"), layout=layout, merge_outputs=True)
    args, (expected,) = _forward(fused, {}, rng, data=shape)
    pieces = cell.unpack_weights({"f_parameters": mx.nd.array(args["f_parameters"])})
    stack = cell.unfuse()
    unfused, _ = stack.unroll(3, mx.sym.var("data"), layout=layout, merge_outputs=True)
    values = {name: value.asnumpy() for name, value in stack.pack_weights(pieces).items()}
    assert sorted(unfused.list_arguments()) == sorted(["data", *values])
    _, (got,) = _forward(unfused, {**values, "data": args["data"]}, rng, data=shape)
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)


def test_unpack_follows_mxnets_packed_layout_and_pack_inverts_it():
    # one tanh layer, input 2, hidden 1: i2h weight (1, 2), h2h weight (1, 1), then i2h and h2h biases
    cell = mx.rnn.FusedRNNCell(1, mode="rnn_tanh", prefix="r_")
    pieces = cell.unpack_weights({"r_parameters": mx.nd.arange(5), "other": mx.nd.ones((1,))})
    assert {k: v.asnumpy().tolist() for k, v in pieces.items()} == {
        "other": [1.0],
        "r_l0_i2h_weight": [[0.0, 1.0]],
        "r_l0_h2h_weight": [[2.0]],
        "r_l0_i2h_bias": [3.0],
        "r_l0_h2h_bias": [4.0],
    }
    packed = cell.pack_weights(pieces)
    assert sorted(packed) == ["other", "r_parameters"]
    assert packed["r_parameters"].asnumpy().tolist() == [0.0, 1.0, 2.0, 3.0, 4.0]


def test_unpack_names_each_lstm_gate_of_each_layer_and_direction():
    cell = mx.rnn.FusedRNNCell(3, num_layers=2, bidirectional=True, prefix="f_")
    size = 2 * 4 * 3 * (5 + 3 + 2) + 2 * 4 * 3 * (2 * 3 + 3 + 2)  # input 5
    pieces = cell.unpack_weights({"f_parameters": mx.nd.zeros((size,))})
    assert len(pieces) == 2 * 2 * 2 * 4 * 2  # layers, directions, i2h/h2h, gates, weight/bias
    assert pieces["f_r1_i2h_f_weight"].shape == (3, 6) and pieces["f_l0_h2h_o_bias"].shape == (3,)


def test_unpack_names_a_packed_vector_of_a_size_no_input_gives():
    cell = mx.rnn.FusedRNNCell(4, prefix="f_")
    with pytest.raises(LazyNDError, match="f_parameters has 17 numbers, which no input size gives"):
        cell.unpack_weights({"f_parameters": mx.nd.zeros((17,))})


def test_fused_cell_returns_no_states_without_get_next_state_and_steps_as_a_list():
    cell = mx.rnn.FusedRNNCell(3, mode="gru", prefix="g_")
    outputs, states = cell.unroll(3, [mx.sym.var(f"d{i}") for i in range(3)], merge_outputs=False)
    assert states == [] and len(outputs) == 3
    assert outputs[0].infer_shape(d0=(2, 5), d1=(2, 5), d2=(2, 5))[1] == [(2, 3)]


def test_unfuse_puts_dropout_cells_between_layers():
    stack = mx.rnn.FusedRNNCell(3, num_layers=3, dropout=0.5, prefix="f_").unfuse()
    outputs, _ = stack.unroll(2, mx.sym.var("data"), merge_outputs=True)
    internals = outputs.get_internals().list_outputs()
    assert sum(name.startswith("dropout") or "Dropout" in name for name in internals) == 2 * 2  # 2 per layer gap


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"mode": "lstmx"}, "mode must be one of"),
        ({"num_layers": 0}, "num_layers must be a positive int, got 0"),
        ({"dropout": 1.5}, "dropout must be a probability"),
    ],
)
def test_fused_cell_refuses_bad_settings_by_name(kwargs, message):
    with pytest.raises(LazyNDError, match=f"FusedRNNCell: {message}"):
        mx.rnn.FusedRNNCell(4, **kwargs)


def test_fused_cell_cannot_be_stepped_or_take_another_layout():
    cell = mx.rnn.FusedRNNCell(4)
    with pytest.raises(LazyNDError, match="FusedRNNCell cannot be stepped"):
        cell(mx.sym.var("x"), cell.begin_state())
    with pytest.raises(LazyNDError, match="layout must be 'NTC' or 'TNC', got 'NCT'"):
        cell.unroll(2, mx.sym.var("data"), layout="NCT")


def test_module_initialises_the_packed_vector_gate_by_gate():
    cell = mx.rnn.FusedRNNCell(4, num_layers=2, bidirectional=True, forget_bias=2.0, prefix="f_")
    outputs, _ = cell.unroll(3, mx.sym.var("data"), layout="TNC", merge_outputs=True)
    mod = mx.mod.Module(mx.sym.MakeLoss(mx.sym.sum(outputs)), data_names=["data"], label_names=None)
    mod.bind(data_shapes=[("data", (3, 2, 5))])
    mod.init_params(initializer=mx.init.Xavier())
    pieces = cell.unpack_weights({"f_parameters": mod.get_params()[0]["f_parameters"]})
    for name, piece in pieces.items():
        values = piece.asnumpy()
        if name.endswith("_f_bias"):
            np.testing.assert_array_equal(values, np.full((4,), 2.0, np.float32))
        elif name.endswith("_bias"):
            np.testing.assert_array_equal(values, np.zeros((4,), np.float32))
        else:  # Xavier's uniform bound for the piece's own shape
            bound = np.sqrt(3 / ((values.shape[0] + values.shape[1]) / 2))
            assert values.std() > 0 and np.abs(values).max() <= bound


def test_fused_rnn_initializer_fills_pieces_with_its_own_init():
    fill = mx.init.FusedRNN(mx.init.Constant(0.5), 2, 1, "lstm", forget_bias=3.0)
    packed = mx.nd.zeros((2 * 4 * (3 + 2 + 2),))  # input 3
    fill._init_weight(mx.init.InitDesc("x_parameters"), packed)
    pieces = mx.rnn.FusedRNNCell(2, prefix="").unpack_weights({"parameters": packed})
    assert pieces["l0_i2h_f_bias"].asnumpy().tolist() == [3.0, 3.0]
    assert pieces["l0_h2h_c_weight"].asnumpy().tolist() == [[0.5, 0.5], [0.5, 0.5]]
    assert mx.init.create(fill.dumps()) == fill


def test_fused_rnn_initializer_without_an_init_to_fall_back_on_is_refused():
    fill = mx.init.FusedRNN(None, 2, 1, "gru")
    with pytest.raises(LazyNDError, match="mx.init.FusedRNN: 'x_parameters' needs an initializer for its pieces"):
        fill._init_weight("x_parameters", mx.nd.zeros((2 * 3 * (3 + 2 + 2),)))


def test_zoneout_refuses_a_fused_cell_it_cannot_step():
    with pytest.raises(LazyNDError, match="ZoneoutCell: a FusedRNNCell cannot be zoned out"):
        mx.rnn.ZoneoutCell(mx.rnn.FusedRNNCell(4), zoneout_outputs=0.5)


def test_fused_cell_marks_its_next_states_layer_major_as_mxnet_does():
    # MXNet sets __layout__='LNC' on the states: a module then knows their batch axis is 1
    cell = mx.rnn.FusedRNNCell(3, mode="lstm", prefix="f_", get_next_state=True)
    outputs, states = cell.unroll(4, mx.sym.var("data"), layout="TNC", merge_outputs=True)
    assert [s.attr("__layout__") for s in states] == ["LNC", "LNC"]
    assert outputs.attr("__layout__") == "LNC"  # the same node: the TNC sequence has its batch on axis 1 too
    without, _ = mx.rnn.FusedRNNCell(3, prefix="g_").unroll(4, mx.sym.var("data"), layout="TNC", merge_outputs=True)
    assert without.attr("__layout__") is None


def test_module_on_two_devices_joins_fused_next_states_along_their_batch_axis():
    cell = mx.rnn.FusedRNNCell(3, mode="lstm", prefix="f_", get_next_state=True)
    outputs, states = cell.unroll(4, mx.sym.var("data"), layout="TNC", merge_outputs=True)
    net = mx.sym.Group([mx.sym.make_loss(mx.sym.sum(outputs)), *states])
    mod = mx.mod.Module(net, data_names=["data"], label_names=None, context=[mx.cpu(0), mx.cpu(1)])
    mod.bind(data_shapes=[mx.io.DataDesc("data", (4, 6, 2), layout="TNC")], for_training=False)
    mod.init_params(mx.init.Constant(0.1))
    data = np.arange(48, dtype=np.float32).reshape(4, 6, 2) / 48
    mod.forward(mx.io.DataBatch([mx.nd.array(data)]), is_train=False)
    single = mx.mod.Module(net, data_names=["data"], label_names=None, context=mx.cpu(0))
    single.bind(data_shapes=[mx.io.DataDesc("data", (4, 6, 2), layout="TNC")], for_training=False)
    single.init_params(mx.init.Constant(0.1))
    single.forward(mx.io.DataBatch([mx.nd.array(data)]), is_train=False)
    for merged, whole in zip(mod.get_outputs()[1:], single.get_outputs()[1:], strict=True):
        assert merged.shape == (1, 6, 3)
        np.testing.assert_allclose(merged.asnumpy(), whole.asnumpy(), rtol=1e-5)


def test_a_fused_rnn_global_initializer_is_refused_naming_the_cells_own_initializer():
    # the packed vector's own FusedRNN (the cell's, init None) hands its pieces to the global initializer
    cell = mx.rnn.FusedRNNCell(3, mode="gru", prefix="g_")
    outputs, _ = cell.unroll(2, mx.sym.var("data"), merge_outputs=True)
    mod = mx.mod.Module(mx.sym.MakeLoss(mx.sym.sum(outputs)), data_names=["data"], label_names=None)
    mod.bind(data_shapes=[("data", (2, 2, 5))])
    with pytest.raises(LazyNDError, match="'g_parameters' carries its cell's FusedRNN initializer.*a FusedRNN too"):
        mod.init_params(initializer=mx.init.FusedRNN(mx.init.One(), 3, 1, "gru"))
