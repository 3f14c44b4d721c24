"""``remove_amp_cast``: symbol JSON (and checkpoints) without the AMP casts that feed other nodes, as
MXNet 1.9.1 writes it. The expected graphs are MXNet 1.9.1's ``tojson`` of the same symbols."""

from __future__ import annotations

import json

import lazynd as mx


def _mixed_precision_group() -> mx.sym.Symbol:
    """data -> amp_cast -> amp_multicast(with e) -> FullyConnected + e, and a cast of e as a second head."""
    data, e = mx.sym.Variable("data"), mx.sym.Variable("e")
    cast = mx.sym.amp_cast(data, dtype="float16", name="ac")
    multi = mx.sym.amp_multicast(cast, e, num_outputs=2, name="mc")
    out = mx.sym.FullyConnected(multi[0], num_hidden=2, name="fc") + multi[1]
    return mx.sym.Group([out, mx.sym.amp_cast(e, dtype="float32", name="ac2")])


def _node(op: str, name: str, inputs: list[int], attrs: dict | None = None) -> dict:
    node: dict = {"op": op, "name": name}
    if attrs:
        node["attrs"] = attrs
    node["inputs"] = [[i, 0, 0] for i in inputs]
    return node


# MXNet 1.9.1: _mixed_precision_group().tojson() (remove_amp_cast=True is its default). The casts that
# feed fc and _plus0 are gone, their readers read data and e; the head cast ac2 stays.
MXNET_REMOVED = {
    "nodes": [
        _node("null", "data", []),
        _node("null", "fc_weight", [], {"num_hidden": "2"}),
        _node("null", "fc_bias", [], {"num_hidden": "2"}),
        _node("FullyConnected", "fc", [0, 1, 2], {"num_hidden": "2"}),
        _node("null", "e", []),
        _node("elemwise_add", "_plus0", [3, 4]),
        _node("amp_cast", "ac2", [4], {"dtype": "float32"}),
    ],
    "arg_nodes": [0, 1, 2, 4],
    "node_row_ptr": [0, 1, 2, 3, 4, 5, 6, 7],
    "heads": [[5, 0, 0], [6, 0, 0]],
    "attrs": {"mxnet_version": ["int", 10901]},
}


def test_tojson_leaves_out_casts_that_feed_other_nodes_by_default():
    with mx.name.NameManager():  # the sum is named _plus0, as in a fresh MXNet process
        group = _mixed_precision_group()
    assert json.loads(group.tojson()) == MXNET_REMOVED


def test_tojson_keeps_the_casts_when_asked():
    document = json.loads(_mixed_precision_group().tojson(remove_amp_cast=False))
    ops = [(node["op"], node["name"]) for node in document["nodes"]]
    assert ("amp_cast", "ac") in ops and ("amp_multicast", "mc") in ops
    assert document["node_row_ptr"] == [0, 1, 2, 3, 5, 6, 7, 8, 9, 10]  # mc has two outputs
    plus = next(node for node in document["nodes"] if node["op"] == "elemwise_add")
    assert plus["inputs"][1] == [3, 1, 0]  # the multicast's second output


def test_removing_casts_leaves_the_symbol_itself_unchanged():
    group = _mixed_precision_group()
    before = group.tojson(remove_amp_cast=False)
    group.tojson()
    assert group.tojson(remove_amp_cast=False) == before
    assert "ac_output" in group.get_internals().list_outputs()


def test_a_chain_of_casts_is_removed_whole():
    # MXNet 1.9.1: relu(amp_cast(amp_cast(data))).tojson() holds data and relu only
    data = mx.sym.Variable("data")
    chain = mx.sym.amp_cast(mx.sym.amp_cast(data, dtype="float16", name="c1"), dtype="float32", name="c2")
    document = json.loads(mx.sym.relu(chain, name="r").tojson())
    assert document["nodes"] == [_node("null", "data", []), _node("relu", "r", [0])]


def test_checkpoints_save_the_symbol_without_casts_unless_asked(tmp_path):
    with mx.name.NameManager():
        group = _mixed_precision_group()
    params = {"fc_weight": mx.nd.ones((2, 3)), "fc_bias": mx.nd.zeros((2,))}
    mx.model.save_checkpoint(str(tmp_path / "removed"), 1, group, params, {})
    mx.model.save_checkpoint(str(tmp_path / "kept"), 1, group, params, {}, remove_amp_cast=False)
    assert json.loads((tmp_path / "removed-symbol.json").read_text()) == MXNET_REMOVED
    assert "amp_multicast" in (tmp_path / "kept-symbol.json").read_text()
    assert mx.sym.load(str(tmp_path / "removed-symbol.json")).list_arguments() == ["data", "fc_weight", "fc_bias", "e"]


def test_module_save_checkpoint_passes_remove_amp_cast_on(tmp_path):
    data = mx.sym.amp_cast(mx.sym.Variable("data"), dtype="float32", name="cast")
    net = mx.sym.LinearRegressionOutput(mx.sym.FullyConnected(data, num_hidden=1, name="fc"), name="out")
    module = mx.mod.Module(net, label_names=["out_label"], context=mx.cpu())
    module.bind(data_shapes=[("data", (2, 3))], label_shapes=[("out_label", (2, 1))])
    module.init_params()
    module.save_checkpoint(str(tmp_path / "removed"), 1)
    module.save_checkpoint(str(tmp_path / "kept"), 1, remove_amp_cast=False)
    assert '"amp_cast"' not in (tmp_path / "removed-symbol.json").read_text()
    assert '"amp_cast"' in (tmp_path / "kept-symbol.json").read_text()
