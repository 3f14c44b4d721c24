"""Symbol JSON written by MXNet 0.8 names its arithmetic operators ``_Plus``, ``_MulScalar``, ...

The ResNets of MXNet's model zoo were saved that way (their residual sums are ``_Plus`` nodes named
``_plus0``, ``_plus1``, ..., the names SSD configurations pick layers by), and MXNet 1.9.1 still loads
them through these aliases.  lazynd refused them ("operator '_Plus' is not registered").
"""

from __future__ import annotations

import json

import numpy as np
import pytest

import lazynd as mx
from lazynd.ops.elemwise_binary import legacy_name


def _node(op: str, name: str, inputs: list[int], **param: str) -> dict:
    return {"op": op, "param": param, "name": name, "inputs": [[i, 0] for i in inputs], "backward_source_id": -1}


def _residual_08() -> str:
    """relu(x + 2 * fc(x)) - 1, then max(., 0.5) and 3 - ., as MXNet 0.8 wrote such a graph."""
    nodes = [
        _node("null", "data", []),
        _node("null", "fc_weight", []),
        _node("null", "fc_bias", []),
        _node("FullyConnected", "fc", [0, 1, 2], num_hidden="3", no_bias="False"),
        _node("_MulScalar", "_mulscalar0", [3], scalar="2"),
        _node("_Plus", "_plus0", [0, 4]),
        _node("Activation", "relu0", [5], act_type="relu"),
        _node("_MinusScalar", "_minusscalar0", [6], scalar="1"),
        _node("_MaximumScalar", "_maximumscalar0", [7], scalar="0.5"),
        _node("_RMinusScalar", "_rminusscalar0", [8], scalar="3"),
    ]
    return json.dumps({"nodes": nodes, "arg_nodes": [0, 1, 2], "heads": [[9, 0]]})


def test_an_mxnet_08_graph_with_camel_case_operator_names_loads_and_runs() -> None:
    net = mx.sym.load_json(_residual_08())
    assert "_plus0_output" in net.get_internals().list_outputs()
    x = np.array([[1.0, -2.0, 0.5]], np.float32)
    weight, bias = np.eye(3, dtype=np.float32), np.zeros(3, np.float32)
    ex = net.bind(mx.cpu(), {"data": mx.nd.array(x), "fc_weight": mx.nd.array(weight), "fc_bias": mx.nd.array(bias)})
    expected = 3 - np.maximum(np.maximum(x + 2 * x, 0) - 1, 0.5)
    np.testing.assert_allclose(ex.forward()[0].asnumpy(), expected)
    # and back through lazynd's own JSON
    assert mx.sym.load_json(net.tojson()).infer_shape(data=(1, 3))[1] == [(1, 3)]


@pytest.mark.parametrize(
    ("name", "scalar", "reflected", "legacy"),
    [
        ("plus", False, False, "_Plus"),
        ("not_equal", False, False, "_Not_Equal"),
        ("logical_xor", False, False, "_Logical_Xor"),
        ("mul", True, False, "_MulScalar"),
        ("greater_equal", True, False, "_GreaterEqualScalar"),
        ("power", True, True, "_RPowerScalar"),
    ],
)
def test_the_legacy_names_are_mxnets(name: str, scalar: bool, reflected: bool, legacy: str) -> None:
    assert legacy_name(name, scalar, reflected) == legacy
    assert hasattr(mx.sym._internal, legacy) and hasattr(mx.nd._internal, legacy)
