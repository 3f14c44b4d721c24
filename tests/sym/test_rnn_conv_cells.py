"""mx.rnn's convolutional cells: names, state shapes and unrolled values as MXNet 1.9.1 gives them.

The expected numbers were computed with MXNet 1.9.1 (``mx.rnn.Conv*Cell(...).unroll``, bound on the CPU)
from the same weights: each argument, in MXNet's ``list_arguments`` order, drawn from
``np.random.RandomState(0).uniform(-0.5, 0.5, shape)``; they are pasted here.
"""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx
from lazynd.errors import LazyNDError


def _unroll_and_run(cell, length, data_shape, layout="NTC", ctx=None):
    outputs, states = cell.unroll(length, mx.sym.var("data"), layout=layout, merge_outputs=True)
    net = mx.sym.Group([outputs, *states])
    arg_shapes, out_shapes, _ = net.infer_shape(data=data_shape)
    rng = np.random.RandomState(0)
    args = {
        name: mx.nd.array(rng.uniform(-0.5, 0.5, shape), ctx=ctx)
        for name, shape in zip(net.list_arguments(), arg_shapes, strict=True)
    }
    values = [o.asnumpy() for o in net.bind(ctx or mx.cpu(), args).forward()]
    return net, out_shapes, values


def _params(prefix):
    return [f"{prefix}{group}_{kind}" for group in ("i2h", "h2h") for kind in ("weight", "bias")]


def test_conv_rnn_cell_matches_mxnet(ctx):
    cell = mx.rnn.ConvRNNCell((1, 2, 5, 5), 3, prefix="crnn_")
    assert cell.state_info == [{"shape": (0, 3, 5, 5), "__layout__": "NCHW"}]
    net, shapes, (out, h) = _unroll_and_run(cell, 2, (1, 2, 2, 5, 5), ctx=ctx)
    assert net.list_arguments() == ["data", "crnn_i2h_weight", "crnn_i2h_bias", "crnn_h2h_weight", "crnn_h2h_bias"]
    assert net.list_outputs()[1:] == ["crnn_t1_out_output"]
    assert shapes == [(1, 2, 3, 5, 5), (1, 3, 5, 5)]
    expected = [[[-2.64591, 12.84477, 19.09873], [-9.65254, 4.48747, 5.59923]]]
    np.testing.assert_allclose(out.sum(axis=(-1, -2)), expected, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(h, out[:, -1])
    np.testing.assert_allclose(out.ravel()[[0, 7, -1]], [-0.15486030, -0.15978777, 0.83384299], rtol=1e-5)


def test_conv_lstm_cell_matches_mxnet(ctx):
    cell = mx.rnn.ConvLSTMCell((1, 2, 5, 5), 2)
    net, shapes, (out, h, c) = _unroll_and_run(cell, 2, (1, 2, 2, 5, 5), ctx=ctx)
    assert net.list_arguments() == ["data", *_params("ConvLSTM_")[:2], *_params("ConvLSTM_")[2:]]
    assert net.list_outputs()[1:] == ["ConvLSTM_t1_out_output", "ConvLSTM_t1_state_output"]
    assert shapes == [(1, 2, 2, 5, 5), (1, 2, 5, 5), (1, 2, 5, 5)]
    np.testing.assert_allclose(out.sum(axis=(-1, -2)), [[[-0.10751, 3.48442], [-0.11249, 5.79040]]], atol=1e-4)
    np.testing.assert_allclose(c.sum(axis=(-1, -2)), [[-1.75687, 8.21041]], atol=1e-4)
    np.testing.assert_allclose(out.ravel()[[0, 7, -1]], [-0.0044140732, -0.0041191191, 0.23623557], rtol=1e-4)


def test_conv_gru_cell_with_stride_and_dilation_in_time_major_layout_matches_mxnet(ctx):
    cell = mx.rnn.ConvGRUCell((1, 2, 5, 5), 2, i2h_stride=(2, 2), h2h_dilate=(2, 2))
    assert cell.state_info == [{"shape": (0, 2, 3, 3), "__layout__": "NCHW"}]
    net, shapes, (out, h) = _unroll_and_run(cell, 2, (2, 1, 2, 5, 5), layout="TNC", ctx=ctx)
    assert net.list_outputs()[1:] == ["ConvGRU_t1_out_output"]
    assert shapes == [(2, 1, 2, 3, 3), (1, 2, 3, 3)]
    np.testing.assert_allclose(out.sum(axis=(-1, -2)), [[[0.76582, 0.20840]], [[1.67089, 0.20986]]], atol=1e-4)
    np.testing.assert_allclose(out.ravel()[[0, 7, -1]], [0.058367711, 0.15912348, 0.085939370], rtol=1e-4)


def test_conv_rnn_cell_with_a_named_activation_and_dilated_unpadded_input_matches_mxnet():
    cell = mx.rnn.ConvRNNCell((1, 2, 5, 5), 2, activation="tanh", i2h_pad=(0, 0), i2h_dilate=(2, 2))
    assert cell.state_shape == [(0, 2, 1, 1)]
    _, shapes, (out, _) = _unroll_and_run(cell, 3, (2, 3, 2, 5, 5))
    assert shapes == [(2, 3, 2, 1, 1), (2, 2, 1, 1)]
    expected = [
        [[-0.60699, -0.71265], [0.55666, -0.61096], [-0.56860, -0.35368]],
        [[-0.37473, -0.71247], [-0.50928, -0.61770], [-0.31340, -0.18803]],
    ]
    np.testing.assert_allclose(out[..., 0, 0], expected, atol=1e-4)


def test_biases_start_at_zero_and_weights_follow_the_global_initializer():
    cell = mx.rnn.ConvGRUCell((1, 2, 4, 4), 2, prefix="g_")
    outputs, _ = cell.unroll(2, mx.sym.var("data"), merge_outputs=True)
    assert outputs.attr_dict()["g_i2h_bias"] == {"__init__": "zeros"}  # as MXNet 1.9.1
    assert "g_i2h_weight" not in outputs.attr_dict()
    mod = mx.mod.Module(outputs, data_names=["data"], label_names=None)
    mod.bind(data_shapes=[("data", (1, 2, 2, 4, 4))])
    mod.init_params(mx.init.Constant(0.5))
    args, _ = mod.get_params()
    assert np.all(args["g_h2h_bias"].asnumpy() == 0) and np.all(args["g_h2h_weight"].asnumpy() == 0.5)


def test_begin_state_names_count_on_and_unpack_weights_splits_per_gate():
    cell = mx.rnn.ConvLSTMCell((1, 2, 5, 5), 2)
    assert [s.name for s in cell.begin_state()] == ["ConvLSTM_begin_state_0", "ConvLSTM_begin_state_1"]
    assert [s.name for s in cell.begin_state()] == ["ConvLSTM_begin_state_2", "ConvLSTM_begin_state_3"]
    args = {name: mx.nd.ones((8, 2, 3, 3) if name.endswith("weight") else (8,)) for name in _params("ConvLSTM_")}
    unpacked = cell.unpack_weights(args)
    # MXNet 1.9.1's names, as its checkpoints store them
    assert sorted(unpacked) == sorted(
        f"ConvLSTM_{group}{gate}_{kind}"
        for group in ("i2h", "h2h")
        for gate in ("_i", "_f", "_c", "_o")
        for kind in ("weight", "bias")
    )
    assert unpacked["ConvLSTM_i2h_f_weight"].shape == (2, 2, 3, 3)
    packed = cell.pack_weights(unpacked)
    assert packed["ConvLSTM_h2h_weight"].shape == (8, 2, 3, 3)


def test_unroll_of_a_list_of_steps_and_shared_params():
    first = mx.rnn.ConvGRUCell((1, 2, 5, 5), 2)
    second = mx.rnn.ConvGRUCell((1, 2, 5, 5), 2, prefix="other_", params=first.params)
    outputs, states = second.unroll(2, [mx.sym.var("a"), mx.sym.var("b")])
    assert [o.name for o in outputs] == ["other_t0_out", "other_t1_out"] and states[0].name == "other_t1_out"
    assert "ConvGRU_h2h_weight" in mx.sym.Group(outputs).list_arguments()


def test_nhwc_layout_slices_gates_on_the_channel_axis():
    cell = mx.rnn.ConvLSTMCell((1, 5, 5, 2), 3, conv_layout="NHWC")
    assert cell.state_info[0] == {"shape": (0, 5, 5, 3), "__layout__": "NHWC"}
    outputs, states = cell.unroll(2, mx.sym.var("data"), merge_outputs=True)
    assert outputs.infer_shape(data=(1, 2, 5, 5, 2))[1] == [(1, 2, 5, 5, 3)]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"h2h_kernel": (2, 3)}, r"h2h_kernel must be odd.*\(2, 3\)"),
        ({"i2h_stride": 2}, r"i2h_stride must be a pair of ints.*2"),
        ({"conv_layout": "NCW"}, r"conv_layout must be one of"),
        ({"num_hidden": 0}, r"num_hidden must be a positive int, got 0"),
        ({"input_shape": (2, 5, 5)}, r"input_shape must be one step's 4-D shape"),
    ],
)
def test_bad_settings_are_named(kwargs, message):
    settings = {"input_shape": (1, 2, 5, 5), "num_hidden": 2, **kwargs}
    with pytest.raises(LazyNDError, match="ConvRNNCell: " + message):
        mx.rnn.ConvRNNCell(**settings)
