"""Legacy symbol JSON whose nodes keep parameters and attributes together in one ``attr`` object.

MXNet reads a node without ``attrs`` as the legacy form, where a key ending in a hidden key
(``weight_lr_mult``, ``bias_wd_mult``) is an attribute, never an operator parameter: such a file
loads in MXNet 1.9.1 and gives the shapes below.  lazynd refused it ("unknown parameter").
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import lazynd as mx


def _legacy_layer() -> dict:
    return {
        "nodes": [
            {"op": "null", "name": "data", "inputs": []},
            {"op": "null", "name": "fc1_weight", "attr": {"weight_lr_mult": "1.2"}, "inputs": []},
            {"op": "null", "name": "fc1_bias", "attr": {"weight_lr_mult": "1.2"}, "inputs": []},
            {
                "op": "FullyConnected",
                "name": "fc1",
                "attr": {"num_hidden": "8", "weight_lr_mult": "1.2", "ctx_group": "stage1"},
                "inputs": [[0, 0], [1, 0], [2, 0]],
            },
        ],
        "arg_nodes": [0, 1, 2],
        "heads": [[3, 0]],
    }


def test_a_merged_legacy_attr_keeps_the_parameters_and_moves_the_hidden_keys_to_attributes() -> None:
    symbol = mx.sym.load_json(json.dumps(_legacy_layer()))
    assert symbol.infer_shape(data=(2, 5)) == ([(2, 5), (8, 5), (8,)], [(2, 8)], [])
    attrs = symbol.attr_dict()
    assert attrs["fc1_weight"]["__lr_mult__"] == "1.2"
    assert attrs["fc1"]["__ctx_group__"] == "stage1" and attrs["fc1"]["num_hidden"] == "8"


def test_the_hidden_key_stays_an_unknown_parameter_in_a_one_x_node() -> None:
    document = _legacy_layer()
    document["nodes"][3]["attrs"] = document["nodes"][3].pop("attr")
    try:
        mx.sym.load_json(json.dumps(document))
    except mx.LazyNDError as error:
        assert "weight_lr_mult" in str(error)
    else:  # MXNet 1.9.1 loads it and fails at infer_shape: refusing at load names the key sooner
        raise AssertionError("a 1.x node's unknown parameter was accepted")


def test_the_real_0_8_file_with_param_and_attr_merged_loads_as_mxnet_loads_it(data_dir: Path) -> None:
    with open(os.path.join(data_dir, "mxnet", "save_000800.json")) as handle:
        document = json.load(handle)
    for node in document["nodes"]:
        node["attr"] = {**node.pop("param", {}), **node.pop("attr", {})}
    symbol = mx.sym.load_json(json.dumps(document))
    assert symbol.list_auxiliary_states() == ["batchnorm0_moving_mean", "batchnorm0_moving_var"]
    # MXNet 1.9.1 on the same document
    assert symbol.infer_shape(data=(7, 100)) == (
        [(7, 100), (128, 100), (128,), (64, 128), (64,), (10, 64), (10,), (10,), (10,), (7,)],
        [(7, 10)],
        [(10,), (10,)],
    )
