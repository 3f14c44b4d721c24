"""A symbol JSON exported by Gluon's ``rnn.LSTM`` (MXNet 1.9.1 ``HybridBlock.export``) loads and
computes MXNet's values.

Gluon flattens each weight (``Reshape`` to -1) and joins them with ``_rnn_param_concat``, a
``Concat`` whose shape rule shares the size the fused parameter leaves over equally among the
inputs of unknown size: with the input size deferred, both directions' ``i2h_weight`` are
``(8, 0)`` until the data's shape is known.  lazynd had no ``_rnn_param_concat`` and refused
the file.  The literals come from MXNet 1.9.1.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

import lazynd as mx
import lazynd_sym as sym

WEIGHTS = ["l0_i2h_weight", "l0_h2h_weight", "r0_i2h_weight", "r0_h2h_weight"]
BIASES = ["l0_i2h_bias", "l0_h2h_bias", "r0_i2h_bias", "r0_h2h_bias"]
SHAPES = {"i2h_weight": "(8, 0)", "h2h_weight": "(8, 2)", "i2h_bias": "(8,)", "h2h_bias": "(8,)"}

# rnn.LSTM(2, bidirectional=True, layout='TNC', prefix='lstm_') run on arange(6).reshape(2, 1, 3) / 6,
# parameter number i (in sorted name order) set to cos(arange(size) + i) / 2
MXNET_OUTPUT = [
    [[0.008794029243290424, 0.13675595819950104, -0.16356876492500305, -0.21341705322265625]],
    [[-0.0974360927939415, 0.3427296280860901, -0.09027983248233795, -0.19305147230625153]],
]


def _gluon_lstm_json(rnn_param_concat: str = "_rnn_param_concat") -> str:
    nodes: list[dict] = [{"op": "null", "name": "data0", "inputs": []}]
    flattened = []
    for k, param in enumerate(WEIGHTS + BIASES):
        shape = SHAPES[param.split("_", 1)[1]]
        nodes.append({"op": "null", "name": f"lstm_{param}", "attrs": {"__shape__": shape}, "inputs": []})
        nodes.append(
            {"op": "Reshape", "name": f"lstm_reshape{k}", "attrs": {"shape": "-1"}, "inputs": [[len(nodes) - 1, 0, 0]]}
        )
        flattened.append([len(nodes) - 1, 0, 0])
    nodes.append(
        {
            "op": rnn_param_concat,
            "name": "lstm__rnn_param_concat0",
            "attrs": {"dim": "0", "num_args": "8"},
            "inputs": flattened,
        }
    )
    nodes += [{"op": "null", "name": "data1", "inputs": []}, {"op": "null", "name": "data2", "inputs": []}]
    rnn_attrs = {
        "bidirectional": "True",
        "mode": "lstm",
        "num_layers": "1",
        "p": "0",
        "state_outputs": "True",
        "state_size": "2",
    }
    nodes.append(
        {
            "op": "RNN",
            "name": "lstm_rnn0",
            "attrs": rnn_attrs,
            "inputs": [[0, 0, 0], [17, 0, 0], [18, 0, 0], [19, 0, 0]],
        }
    )
    arg_nodes = [i for i, n in enumerate(nodes) if n["op"] == "null"]
    return json.dumps(
        {"nodes": nodes, "arg_nodes": arg_nodes, "heads": [[20, 0, 0]], "attrs": {"mxnet_version": ["int", 10901]}}
    )


def test_the_deferred_input_size_is_inferred_through_rnn_param_concat() -> None:
    net = sym.load_json(_gluon_lstm_json())
    shapes, outputs, _ = net.infer_shape(data0=(2, 1, 3))
    found = dict(zip(net.list_arguments(), shapes, strict=True))
    assert found["lstm_l0_i2h_weight"] == found["lstm_r0_i2h_weight"] == (8, 3)
    assert found["data1"] == found["data2"] == (2, 1, 2)
    assert outputs == [(2, 1, 4)]


def test_a_gluon_lstm_export_computes_mxnets_values() -> None:
    net = sym.load_json(_gluon_lstm_json())
    ex = net.simple_bind(mx.cpu(), grad_req="null", data0=(2, 1, 3))
    for i, param in enumerate(sorted(WEIGHTS + BIASES)):
        target = ex.arg_dict[f"lstm_{param}"]
        target[:] = (np.cos(np.arange(target.size) + i) / 2).reshape(target.shape)
    ex.arg_dict["data0"][:] = np.arange(6).reshape(2, 1, 3) / 6
    ex.arg_dict["data1"][:] = 0
    ex.arg_dict["data2"][:] = 0
    np.testing.assert_allclose(ex.forward()[0].asnumpy(), MXNET_OUTPUT, rtol=1e-5, atol=1e-6)


def test_rnn_param_concat_refuses_a_remainder_that_does_not_share_out() -> None:
    a, b, c = sym.Variable("a", shape=(0,)), sym.Variable("b", shape=(0,)), sym.Variable("c", shape=(3,))
    net = sym.RNN(
        sym.Variable("x"),
        sym._rnn_param_concat(a, b, c, dim=0, num_args=3),
        sym.Variable("s"),
        state_size=2,
        mode="rnn_tanh",
        num_layers=1,
    )
    # an rnn_tanh layer of 2 units over 3 inputs has 6 + 4 + 2 + 2 = 14 parameters: 11 left for a and b
    with pytest.raises(mx.LazyNDError, match="_rnn_param_concat: output size 14 along dim 0 leaves 11 for 2 inputs"):
        net.infer_shape(x=(2, 1, 3))
