"""Symbol JSON: writing and reading MXNet's 0.8, 0.9 and 1.x forms."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

import lazynd_sym as sym
from lazynd.errors import FormatError
from lazynd.ops import registry


def _needs(*ops):
    missing = [o for o in ops if not registry.exists(o)]
    if missing:
        pytest.skip(f"operators not registered yet: {missing}")


def test_round_trip_preserves_arguments_outputs_and_attrs(tmp_path):
    with sym.AttrScope(ctx_group="g"):
        y = sym.relu(sym.Variable("x", lr_mult=2) * 3, name="act")
    path = tmp_path / "net.json"
    y.save(str(path))
    back = sym.load(str(path))
    assert back.list_arguments() == ["x"] and back.list_outputs() == ["act_output"]
    assert back.attr_dict() == y.attr_dict()
    assert back.tojson() == y.tojson()


def test_a_dtype_given_as_a_type_is_written_by_name_and_loads_back():
    # Cast(dtype=np.float16) was written as "<class 'numpy.float16'>", which neither lazynd nor MXNet could load
    half = sym.Cast(sym.Variable("x"), dtype=np.float16, name="half")
    assert json.loads(half.tojson())["nodes"][-1]["attrs"]["dtype"] == "float16"
    assert sym.load_json(half.tojson()).infer_type(x="float32")[1] == [np.float16]
    assert sym.load_json(sym.zeros((2,), dtype=float).tojson()).infer_type()[1] == [np.float64]


def test_a_variable_dtype_is_stored_as_mxnets_type_flag():
    # MXNet 1.9.1: Variable('d', dtype='float64') stores __dtype__ '1' and cannot read a name there
    d = sym.Variable("d", shape=(2, 3), dtype="float64")
    assert d.attr("__dtype__") == "1"
    assert json.loads((d * 2).tojson())["nodes"][0]["attrs"]["__dtype__"] == "1"
    assert sym.load_json((d * 2).tojson()).infer_type()[1] == [np.float64]


def test_mxnet_json_with_a_typed_variable_loads():
    # written by MXNet 1.9.1: (Variable('d', shape=(2, 3), dtype='float16') * 2).tojson()
    text = json.dumps(
        {
            "nodes": [
                {"op": "null", "name": "d", "attrs": {"__dtype__": "2", "__shape__": "(2, 3)"}, "inputs": []},
                {"op": "_mul_scalar", "name": "_mulscalar0", "attrs": {"scalar": "2"}, "inputs": [[0, 0, 0]]},
            ],
            "arg_nodes": [0],
            "node_row_ptr": [0, 1, 2],
            "heads": [[1, 0, 0]],
            "attrs": {"mxnet_version": ["int", 10901]},
        }
    )
    assert sym.load_json(text).infer_type() == ([np.float16], [np.float16], [])


def test_a_dtype_flag_mxnet_does_not_know_is_a_format_error():
    text = sym.Variable("d", dtype="float16").tojson().replace('"__dtype__": "2"', '"__dtype__": "12"')
    with pytest.raises(FormatError, match=r"node 0 \('d'\).*dtype flag '12' is not supported"):
        sym.load_json(text)


def test_written_json_has_mxnet_keys():
    doc = json.loads((sym.Variable("a") + 1).tojson())
    assert set(doc) == {"nodes", "arg_nodes", "node_row_ptr", "heads", "attrs"}
    assert doc["nodes"][1]["attrs"] == {"scalar": "1"}


def test_legacy_09_attr_key_is_read():
    text = json.dumps(
        {
            "nodes": [
                {"op": "null", "name": "x", "inputs": []},
                {"op": "_plus_scalar", "name": "p", "attr": {"scalar": "2", "ctx_group": "a"}, "inputs": [[0, 0]]},
            ],
            "arg_nodes": [0],
            "heads": [[1, 0]],
        }
    )
    s = sym.load_json(text)
    assert s.attr("ctx_group") == "a" and s.list_outputs() == ["p_output"]


def test_bad_json_raises_format_error():
    with pytest.raises(FormatError):
        sym.load_json("{not json")
    with pytest.raises(FormatError, match="not registered"):
        sym.load_json(json.dumps({"nodes": [{"op": "NoSuchOp", "name": "n", "inputs": []}], "heads": [[0, 0]]}))


def test_load_mxnet_08_file_upgrades_batchnorm_and_attrs(data_dir):
    _needs("FullyConnected", "Activation", "BatchNorm", "SoftmaxOutput")
    s = sym.load(os.path.join(data_dir, "mxnet", "save_000800.json"))
    assert s.list_auxiliary_states() == ["batchnorm0_moving_mean", "batchnorm0_moving_var"]
    assert "fc1_weight" in s.list_arguments() and s.list_outputs() == ["softmax_output"]
    attrs = s.attr_dict()
    assert attrs["data"]["__ctx_group__"] == "stage1" and attrs["data"]["__lr_mult__"] == "0.2"
    assert attrs["fc1_weight"]["__lr_mult__"] == "1.2" and attrs["fc1_weight"]["__wd_mult__"] == "0.3"
    assert sym.load_json(s.tojson()).tojson() == s.tojson()


def test_load_mxnet_08_batchnorm_statistics_carry_their_initialisers(data_dir):
    # 0.8 BatchNorm nodes list no moving statistics; the variables added for them are marked
    # as a composed BatchNorm marks its own (MXNet 1.9.1 gives the same attributes)
    _needs("FullyConnected", "Activation", "BatchNorm", "SoftmaxOutput")
    attrs = sym.load(os.path.join(data_dir, "mxnet", "save_000800.json")).attr_dict()
    assert attrs["batchnorm0_moving_mean"]["__init__"] == '["zero", {}]'
    assert attrs["batchnorm0_moving_var"]["__init__"] == '["one", {}]'
    assert attrs["batchnorm0_moving_var"]["__ctx_group__"] == "stage2"
    composed = sym.BatchNorm(sym.Variable("x"), name="bn").attr_dict()
    assert composed["bn_moving_mean"]["__init__"] == attrs["batchnorm0_moving_mean"]["__init__"]


def test_load_mxnet_19_mlp_checkpoint_symbol(data_dir):
    _needs("FullyConnected", "Activation", "Flatten", "SoftmaxOutput")
    s = sym.load(os.path.join(data_dir, "mxnet", "mnist_mlp-symbol.json"))
    assert s.list_arguments() == [
        "data",
        "fc1_weight",
        "fc1_bias",
        "fc2_weight",
        "fc2_bias",
        "fc3_weight",
        "fc3_bias",
        "softmax_label",
    ]
    assert s.infer_shape(data=(5, 1, 28, 28))[1] == [(5, 10)]
    assert sym.load_json(s.tojson()).tojson() == s.tojson()


def test_load_json_takes_mxnets_parameter_name():
    assert sym.load_json(json_str=sym.Variable("x").tojson()).list_arguments() == ["x"]


def test_a_shape_given_as_a_list_is_written_as_mxnet_writes_it():
    x = sym.Variable("x", shape=[2, 3])
    assert x.attr("__shape__") == "[2, 3]"
    assert json.loads(x.tojson())["nodes"][0]["attrs"]["__shape__"] == "[2, 3]"
    assert (x * 2).infer_shape() == ([(2, 3)], [(2, 3)], [])
    assert sym.load_json(x.tojson()).infer_shape()[0] == [(2, 3)]


def test_a_parameter_given_as_a_list_is_written_as_mxnet_writes_it():
    net = sym.Reshape(sym.Variable("x"), shape=[2, -1], name="r")
    assert json.loads(net.tojson())["nodes"][-1]["attrs"] == {"shape": "[2, -1]"}
    assert net.list_attr() == {"shape": "[2, -1]"}
    assert sym.load_json(net.tojson()).infer_shape(x=(4, 3))[1] == [(2, 6)]
    conv = sym.Convolution(sym.Variable("x"), kernel=[3, 3], num_filter=2, no_bias=True, name="c")
    assert conv.attr("kernel") == "[3, 3]"
    assert conv.infer_shape(x=(1, 1, 4, 4))[1] == [(1, 2, 2, 2)]


def test_a_dense_storage_type_is_written_as_mxnet_writes_it():
    x = sym.Variable("x", stype="default")
    assert json.loads(x.tojson())["nodes"][0]["attrs"] == {"__storage_type__": "0"}
    assert (x * 2).infer_shape(x=(2,))[1] == [(2,)]
    assert "attrs" not in json.loads(sym.Variable("y").tojson())["nodes"][0]
