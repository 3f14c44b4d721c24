"""Symbol JSON text as MXNet 1.9.1 writes it, so saved files diff cleanly against MXNet's."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

import lazynd_sym as sym
from lazynd.ops import registry

# What MXNet 1.9.1 writes for the network of _bn_fc_net().  Its writer ends every item of a
# multi-line object or list with ", " (the trailing space is restored by _mxnet_text).
BN_FC_JSON = """{
  "nodes": [
    {
      "op": "null",
      "name": "data",
      "inputs": []
    },
    {
      "op": "null",
      "name": "bn_gamma",
      "attrs": {"eps": "0.001"},
      "inputs": []
    },
    {
      "op": "null",
      "name": "bn_beta",
      "attrs": {"eps": "0.001"},
      "inputs": []
    },
    {
      "op": "null",
      "name": "bn_moving_mean",
      "attrs": {
        "__init__": "[\\"zero\\", {}]",
        "eps": "0.001"
      },
      "inputs": []
    },
    {
      "op": "null",
      "name": "bn_moving_var",
      "attrs": {
        "__init__": "[\\"one\\", {}]",
        "eps": "0.001"
      },
      "inputs": []
    },
    {
      "op": "BatchNorm",
      "name": "bn",
      "attrs": {"eps": "0.001"},
      "inputs": [[0, 0, 0], [1, 0, 0], [2, 0, 0], [3, 0, 1], [4, 0, 1]]
    },
    {
      "op": "null",
      "name": "fc_weight",
      "attrs": {"num_hidden": "2"},
      "inputs": []
    },
    {
      "op": "null",
      "name": "fc_bias",
      "attrs": {"num_hidden": "2"},
      "inputs": []
    },
    {
      "op": "FullyConnected",
      "name": "fc",
      "attrs": {"num_hidden": "2"},
      "inputs": [[5, 0, 0], [6, 0, 0], [7, 0, 0]]
    },
    {
      "op": "elemwise_add",
      "name": "_plus0",
      "inputs": [[8, 0, 0], [8, 0, 0]]
    },
    {
      "op": "null",
      "name": "out_label",
      "inputs": []
    },
    {
      "op": "SoftmaxOutput",
      "name": "out",
      "inputs": [[9, 0, 0], [10, 0, 0]]
    }
  ],
  "arg_nodes": [0, 1, 2, 3, 4, 6, 7, 10],
  "node_row_ptr": [
    0,
    1,
    2,
    3,
    4,
    5,
    8,
    9,
    10,
    11,
    12,
    13,
    14
  ],
  "heads": [[11, 0, 0]],
  "attrs": {"mxnet_version": ["int", 10901]}
}"""


def _mxnet_text(text: str) -> str:
    return "\n".join(line + " " if line.endswith(",") else line for line in text.splitlines())


def _bn_fc_net() -> sym.Symbol:
    with sym.NameManager():
        data = sym.Variable("data")
        fc = sym.FullyConnected(sym.BatchNorm(data, name="bn", eps=1e-3), num_hidden=2, name="fc")
        return sym.SoftmaxOutput(fc + fc, name="out")


def test_tojson_is_byte_equal_to_mxnet_191():
    assert _bn_fc_net().tojson() == _mxnet_text(BN_FC_JSON)


def test_variables_made_for_missing_inputs_carry_the_operator_parameters():
    net = sym.FullyConnected(sym.Variable("x"), num_hidden=3, name="f")
    attrs = net.attr_dict()
    assert attrs["f_weight"] == {"num_hidden": "3"} and attrs["f_bias"] == {"num_hidden": "3"}
    assert "x" not in attrs  # the user's own variable is left as it is


def test_batchnorm_moving_statistics_carry_their_initialisers():
    attrs = sym.BatchNorm(sym.Variable("x"), name="bn").attr_dict()
    assert attrs["bn_moving_mean"]["__init__"] == '["zero", {}]'
    assert attrs["bn_moving_var"]["__init__"] == '["one", {}]'


def test_an_auxiliary_state_entry_carries_its_write_version():
    doc = json.loads(sym.BatchNorm(sym.Variable("x"), name="bn").tojson())
    assert doc["nodes"][-1]["inputs"] == [[0, 0, 0], [1, 0, 0], [2, 0, 0], [3, 0, 1], [4, 0, 1]]


@pytest.mark.parametrize(
    "op, expected",
    [
        ("__add__", "elemwise_add"),
        ("__sub__", "elemwise_sub"),
        ("__mul__", "elemwise_mul"),
        ("__truediv__", "elemwise_div"),
    ],
)
def test_symbol_arithmetic_is_written_under_mxnets_operator_name(op, expected):
    x, y = sym.Variable("x"), sym.Variable("y")
    doc = json.loads(getattr(x, op)(y).tojson())
    assert doc["nodes"][-1]["op"] == expected


def test_every_mxnet_operator_name_reads_back_as_the_same_operator():
    from lazynd_sym.json_format import MXNET_OP_NAMES

    for ours, theirs in MXNET_OP_NAMES.items():
        assert registry.get(theirs) is registry.get(ours), (ours, theirs)


def test_long_lists_take_one_item_a_line_and_strings_are_escaped_as_mxnet():
    group = sym.Group([sym.Variable(f"v{i}", attr={"__note__": 'a\t"b"'}) for i in range(11)])
    text = group.tojson()
    assert '"heads": [\n    [0, 0, 0], \n    [1, 0, 0], ' in text
    assert '"attrs": {"__note__": "a\\t\\"b\\""}' in text
    assert sym.load_json(text).tojson() == text


def test_an_mxnet_written_file_round_trips_byte_equal():
    path = os.path.join(os.environ.get("LAZYND_DATA_DIR", "../shared/data"), "mxnet", "mnist_mlp-symbol.json")
    if not os.path.exists(path):
        pytest.skip("MXNet-written symbol file not found")
    with open(path, encoding="utf-8") as f:
        text = f.read()
    assert sym.load(path).tojson() == text


def test_prelu_slopes_carry_mxnets_initialiser_and_start_at_a_quarter():
    import lazynd as mx

    net = sym.LeakyReLU(sym.Variable("data"), act_type="prelu", name="p")
    assert net.attr_dict()["p_gamma"] == {"__init__": '["Constant", {"value": 0.25}]', "act_type": "prelu"}
    module = mx.mod.Module(net, label_names=None)
    module.bind([("data", (2, 3))])
    module.init_params(mx.init.Uniform())
    np.testing.assert_array_equal(module.get_params()[0]["p_gamma"].asnumpy(), np.full(3, 0.25, np.float32))
