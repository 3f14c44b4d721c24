"""Symbol JSON is checked before a graph is built: every bad document is a FormatError naming file and node."""

from __future__ import annotations

import copy
import json
import os
import pickle

import pytest

import lazynd as mx
import lazynd_sym as sym
from lazynd.errors import FormatError, LazyNDError
from lazynd_sym.model import FeedForward


@pytest.fixture
def mxnet_08(data_dir):
    """MXNet's own 0.8 file as a document to edit."""
    with open(os.path.join(data_dir, "mxnet", "save_000800.json")) as f:
        return json.load(f)


def _write(tmp_path, document, name="net-symbol.json"):
    path = tmp_path / name
    path.write_text(json.dumps(document))
    return str(path)


def _chain(length):
    nodes = [{"op": "null", "name": "x", "inputs": []}]
    nodes += [{"op": "relu", "name": f"r{i}", "inputs": [[i, 0, 0]]} for i in range(length)]
    return {"nodes": nodes, "arg_nodes": [0], "heads": [[length, 0, 0]]}


def test_output_index_beyond_producer_outputs_names_file_and_node(tmp_path, mxnet_08):
    # relu1 reads output 1 of fc1, which has one output: before, this loaded and ran with a wrong shape
    mxnet_08["nodes"][4]["inputs"] = [[3, 1]]
    path = _write(tmp_path, mxnet_08)
    with pytest.raises(
        FormatError, match=r"net-symbol\.json.*node 4 \('relu1'\).*output 1 of node 3 \('fc1'\).*1 output"
    ):
        sym.load(path)


def test_head_output_index_out_of_range(mxnet_08):
    mxnet_08["heads"] = [[16, 1]]
    with pytest.raises(FormatError, match=r"symbol JSON string: head 0 .*output 1 of node 16"):
        sym.load_json(json.dumps(mxnet_08))


@pytest.mark.parametrize(
    "entry", [[-1, 0], [99, 0], [4, 0], [3, -1]], ids=["negative", "past-end", "forward", "neg-output"]
)
def test_input_node_index_must_be_an_earlier_node(mxnet_08, entry):
    mxnet_08["nodes"][4]["inputs"] = [entry]
    with pytest.raises(FormatError, match=r"node 4 \('relu1'\)"):
        sym.load_json(json.dumps(mxnet_08))


def test_a_variable_with_inputs_says_so_rather_than_an_empty_node_range():
    # before: the first node's input was range-checked first: "expected 0 to -1"
    document = {"nodes": [{"op": "null", "name": "x", "inputs": [[0, 0, 0]]}], "arg_nodes": [0], "heads": [[0, 0, 0]]}
    with pytest.raises(FormatError, match=r"node 0 \('x'\): is a variable \(op 'null'\) but has 1 input\(s\)"):
        sym.load_json(json.dumps(document))


def test_the_first_node_reading_an_input_says_there_is_no_earlier_node():
    document = {"nodes": [{"op": "relu", "name": "r", "inputs": [[0, 0, 0]]}], "arg_nodes": [], "heads": [[0, 0, 0]]}
    with pytest.raises(FormatError, match="the first node has no earlier node to read") as caught:
        sym.load_json(json.dumps(document))
    assert "-1" not in str(caught.value)


def test_cycle_is_refused():
    document = {
        "nodes": [
            {"op": "relu", "name": "a", "inputs": [[1, 0]]},
            {"op": "relu", "name": "b", "inputs": [[0, 0]]},
        ],
        "heads": [[1, 0]],
    }
    with pytest.raises(FormatError, match=r"node 0 \('a'\).*earlier nodes"):
        sym.load_json(json.dumps(document))


@pytest.mark.parametrize("entry", [["3", 0], [3.0, 0], [True, 0], [3], [3, 0, 0, 0], 3], ids=str)
def test_entries_must_be_integer_lists(mxnet_08, entry):
    mxnet_08["nodes"][4]["inputs"] = [entry]
    with pytest.raises(FormatError, match=r"node 4 \('relu1'\).*integers"):
        sym.load_json(json.dumps(mxnet_08))


@pytest.mark.parametrize("heads", [[], None, "x", [[0]]], ids=str)
def test_heads_must_be_a_non_empty_entry_list(mxnet_08, heads):
    mxnet_08["heads"] = heads
    with pytest.raises(FormatError, match="head"):
        sym.load_json(json.dumps(mxnet_08))


def test_duplicate_variable_names_load_as_mxnet_and_binding_refuses_them(mxnet_08):
    mxnet_08["nodes"][5]["name"] = "fc1_weight"  # MXNet 1.9.1 loads it, and lists the name twice
    net = sym.load_json(json.dumps(mxnet_08))
    assert net.list_arguments()[:4] == ["data", "fc1_weight", "fc1_bias", "fc1_weight"]
    with pytest.raises(LazyNDError, match=r"argument names \['fc1_weight'\] appear more than once"):
        net.simple_bind(mx.cpu(), data=(2, 5))


def test_arg_nodes_must_name_variables(mxnet_08):
    mxnet_08["arg_nodes"] = [0, 3]
    with pytest.raises(FormatError, match="arg_nodes.*3"):
        sym.load_json(json.dumps(mxnet_08))


@pytest.mark.parametrize(
    "edit",
    [
        lambda d: d["nodes"].__setitem__(4, ["not", "a", "node"]),
        lambda d: d["nodes"][4].__setitem__("name", 7),
        lambda d: d["nodes"][4].__setitem__("param", ["act_type", "relu"]),
        lambda d: d["nodes"][4].__setitem__("param", {"act_type": {"nested": 1}}),
        lambda d: d["nodes"][4].__setitem__("inputs", {"0": 3}),
        lambda d: d["nodes"][0].__setitem__("inputs", [[0, 0]]),
        lambda d: d["nodes"][0]["attr"].__setitem__("__shape__", "(2,a)"),
        lambda d: d["nodes"][0]["attr"].__setitem__("__dtype__", "complex256"),
        lambda d: d["nodes"][4]["param"].__setitem__("act_type", "(" * 5000),
    ],
    ids=[
        "node-list",
        "name-int",
        "param-list",
        "param-nested",
        "inputs-dict",
        "variable-inputs",
        "shape",
        "dtype",
        "deep-param",
    ],
)
def test_malformed_nodes_raise_format_error_naming_the_node(mxnet_08, edit):
    edit(mxnet_08)
    with pytest.raises(FormatError, match=r"symbol JSON string, node \d"):
        sym.load_json(json.dumps(mxnet_08))


def test_huge_argument_count_is_refused_without_allocating():
    document = {
        "nodes": [
            {"op": "null", "name": "a", "inputs": []},
            {"op": "Concat", "name": "c", "attrs": {"num_args": "1000000000"}, "inputs": [[0, 0]]},
        ],
        "heads": [[1, 0]],
    }
    with pytest.raises(FormatError, match=r"node 1 \('c'\).*num_args"):
        sym.load_json(json.dumps(document))


def test_huge_output_count_is_refused_without_allocating():
    document = {
        "nodes": [
            {"op": "null", "name": "a", "inputs": []},
            {"op": "SliceChannel", "name": "s", "attrs": {"num_outputs": "1000000000"}, "inputs": [[0, 0]]},
        ],
        "heads": [[1, 0]],
    }
    with pytest.raises(FormatError, match=r"node 1 \('s'\).*num_outputs"):
        sym.load_json(json.dumps(document))


def test_not_utf8_file_names_the_file(tmp_path):
    path = tmp_path / "bad-symbol.json"
    path.write_bytes(b'{"nodes": [], "heads": [[0, 0]], "x": "\xff\xfe"}')
    with pytest.raises(FormatError, match=r"bad-symbol\.json.*UTF-8"):
        sym.load(str(path))


def test_deeply_nested_json_is_a_format_error():
    with pytest.raises(FormatError, match="not valid JSON"):
        sym.load_json("[" * 100_000 + "]" * 100_000)


def test_deep_graph_loads_infers_and_runs():
    # deeper than Python's recursion limit: every walk over the graph must be iterative
    net = sym.load_json(json.dumps(_chain(3000)))
    assert net.infer_shape(x=(2,))[1] == [(2,)]
    executor = net.bind(mx.cpu(), {"x": mx.nd.array([-1.0, 2.0])})
    assert executor.forward()[0].asnumpy().tolist() == [0.0, 2.0]
    assert sym.load_json(net.tojson()).list_outputs() == ["r2999_output"]


def test_valid_file_still_loads_after_a_copy_round_trip(mxnet_08):
    net = sym.load_json(json.dumps(copy.deepcopy(mxnet_08)))
    assert net.list_outputs() == ["softmax_output"]


def test_checkpoint_and_feedforward_load_name_the_symbol_file(tmp_path, mxnet_08):
    net = sym.FullyConnected(sym.Variable("data"), num_hidden=2, name="fc")
    prefix = str(tmp_path / "model")
    mx.model.save_checkpoint(prefix, 1, net, {"fc_weight": mx.nd.ones((2, 3)), "fc_bias": mx.nd.zeros((2,))}, {})
    document = json.loads(open(f"{prefix}-symbol.json").read())
    document["heads"] = [[len(document["nodes"]), 0, 0]]
    _write(tmp_path, document, "model-symbol.json")
    for load in (lambda: mx.model.load_checkpoint(prefix, 1), lambda: FeedForward.load(prefix, 1)):
        with pytest.raises(FormatError, match=r"model-symbol\.json: head 0"):
            load()


def test_bind_refuses_duplicate_argument_names():
    net = sym.Variable("x") + sym.Variable("x")
    with pytest.raises(LazyNDError, match=r"simple_bind: argument names \['x'\]"):
        net.simple_bind(mx.cpu(), x=(2,))
    with pytest.raises(LazyNDError, match=r"bind: argument names \['x'\]"):
        net.bind(mx.cpu(), [mx.nd.ones((2,)), mx.nd.ones((2,))])


@pytest.mark.parametrize(
    ("load", "named"),
    [
        (lambda d: sym.load(str(d / "nope.json")), "nope.json"),
        (lambda d: mx.model.load_checkpoint(str(d / "n"), 1), "n-symbol.json"),
    ],
    ids=["sym.load", "load_checkpoint"],
)
def test_a_symbol_file_that_does_not_exist_is_a_missing_file_error(tmp_path, load, named):
    # a FileNotFoundError naming the file, as nd.load's; it was a FormatError, which says a file is damaged
    with pytest.raises(mx.MissingFileError, match=named):
        load(tmp_path)


def test_a_symbol_with_two_variables_of_one_name_reads_back_its_own_json():
    # two layers named alike share their variables' names; tojson wrote them and load_json,
    # pickle and checkpoints refused to read them back (MXNet 1.9.1 reads them)
    inner = sym.FullyConnected(sym.Variable("data"), num_hidden=2, name="fc")
    net = sym.FullyConnected(inner, num_hidden=3, name="fc")
    expected = ["data", "fc_weight", "fc_bias", "fc_weight", "fc_bias"]
    assert sym.load_json(net.tojson()).list_arguments() == expected
    assert sym.load_json(net.tojson()).tojson() == net.tojson()
    assert pickle.loads(pickle.dumps(net)).list_arguments() == expected
