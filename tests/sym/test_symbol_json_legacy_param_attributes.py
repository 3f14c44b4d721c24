"""Legacy symbol JSON whose nodes keep attributes (``ctx_group``, ``__lr_mult__``) in ``param``.

MXNet 1.9.1 reads ``param``, ``attr`` and ``attrs`` into one dictionary (a later one wins a
clash) and only then tells attributes from operator parameters, so an attribute stored in
``param`` is an attribute: such files load there with the attributes below.  lazynd kept
them as parameters: a variable's ``lr_mult`` was lost and an operator refused ``ctx_group``.
"""

from __future__ import annotations

import json

import lazynd as mx


def _variable(param: dict) -> dict:
    return {"nodes": [{"op": "null", "name": "x", "param": param, "inputs": []}], "arg_nodes": [0], "heads": [[0, 0]]}


def _relu(**keys: dict) -> dict:
    return {
        "nodes": [
            {"op": "null", "name": "x", "inputs": []},
            {"op": "LeakyReLU", "name": "r", **keys, "inputs": [[0, 0]]},
        ],
        "arg_nodes": [0],
        "heads": [[1, 0]],
    }


def test_hidden_attributes_in_a_variables_param_are_attributes() -> None:
    symbol = mx.sym.load_json(json.dumps(_variable({"__ctx_group__": "g", "__lr_mult__": "0.5"})))
    assert symbol.attr_dict()["x"] == {"__ctx_group__": "g", "ctx_group": "g", "__lr_mult__": "0.5", "lr_mult": "0.5"}
    assert symbol.attr("lr_mult") == "0.5"


def test_plain_attribute_keys_in_a_variables_param_are_stored_as_hidden_keys() -> None:
    symbol = mx.sym.load_json(json.dumps(_variable({"ctx_group": "g", "wd_mult": "0"})))
    assert symbol.attr_dict()["x"] == {"__ctx_group__": "g", "ctx_group": "g", "__wd_mult__": "0", "wd_mult": "0"}


def test_an_attribute_in_an_operators_param_is_not_taken_for_a_parameter() -> None:
    symbol = mx.sym.load_json(json.dumps(_relu(param={"slope": "0.1", "ctx_group": "stage1"})))
    assert symbol.attr_dict()["r"] == {"slope": "0.1", "__ctx_group__": "stage1", "ctx_group": "stage1"}
    assert symbol.eval(x=mx.nd.array([-1.0]))[0].asnumpy().tolist() == [-0.10000000149011612]


def test_attr_and_attrs_override_param_as_in_mxnet() -> None:
    for later in ("attr", "attrs"):
        symbol = mx.sym.load_json(json.dumps(_relu(param={"slope": "0.1"}, **{later: {"slope": "0.2"}})))
        assert symbol.attr_dict()["r"] == {"slope": "0.2"}
        assert symbol.eval(x=mx.nd.array([-1.0]))[0].asnumpy().tolist() == [-0.20000000298023224]
