"""A symbol JSON written by MXNet 1.9.1 with the 1.x operators (``_linalg_*``, ``gather_nd``,
``amp_cast``) loads, binds and computes MXNet's values (literals from MXNet 1.9.1)."""

from __future__ import annotations

import json

import numpy as np

import lazynd as mx
import lazynd_sym as sym


def _node(op: str, name: str, inputs: list, **attrs: str) -> dict:
    node = {"op": op, "name": name, "inputs": [[i, 0, 0] for i in inputs]}
    if attrs:
        node["attrs"] = attrs
    return node


# mx.sym.amp_cast(mx.sym.gather_nd(mx.sym.linalg.gemm2(a, b, transpose_b=True, alpha=2.0), i), dtype='float16')
# and mx.sym.linalg.sumlogdiag(potrf(syrk(a) + makediag(ones(3)))), as MXNet 1.9.1's tojson() writes them
MXNET_JSON = {
    "nodes": [
        _node("null", "a", []),
        _node("null", "b", []),
        _node("_linalg_gemm2", "gemm20", [0, 1], alpha="2.0", transpose_b="True"),
        _node("null", "i", []),
        _node("gather_nd", "gather_nd0", [2, 3]),
        _node("amp_cast", "amp_cast0", [4], dtype="float16"),
        _node("_linalg_syrk", "syrk0", [0]),
        _node("_ones", "_ones0", [], dtype="float32", shape="(3,)"),
        _node("_linalg_makediag", "makediag0", [7]),
        _node("elemwise_add", "_plus0", [6, 8]),
        _node("_linalg_potrf", "potrf0", [9]),
        _node("_linalg_sumlogdiag", "sumlogdiag0", [10]),
    ],
    "arg_nodes": [0, 1, 3],
    "node_row_ptr": list(range(13)),
    "heads": [[5, 0, 0], [11, 0, 0]],
    "attrs": {"mxnet_version": ["int", 10901]},
}


def test_an_mxnet_1x_graph_of_the_new_operators_computes_mxnets_values():
    net = sym.load_json(json.dumps(MXNET_JSON))
    args = {
        "a": mx.nd.array(np.arange(12).reshape(3, 4) / 10),
        "b": mx.nd.array(np.arange(12).reshape(3, 4) / 7),
        "i": mx.nd.array([[0, 2], [1, 0]]),
    }
    gathered, logdet = net.bind(mx.cpu(), args).forward()
    assert gathered.dtype == np.float16
    np.testing.assert_array_equal(gathered.asnumpy(), np.array([1.0859375, 1.771484375], np.float16))
    np.testing.assert_allclose(logdet.asnumpy(), [0.9164506196975708], rtol=1e-6)


def test_a_batchnorm_with_mxnets_calibration_ranges_loads_and_ignores_them():
    # MXNet 1.9.1's BatchNorm takes min_calib_range / max_calib_range (quantisation calibration
    # writes them into the saved symbol); lazynd refused the node as having unknown parameters
    document = {
        "nodes": [
            _node("null", "x", []),
            _node("null", "bn_gamma", []),
            _node("null", "bn_beta", []),
            _node("null", "bn_moving_mean", []),
            _node("null", "bn_moving_var", []),
            _node("BatchNorm", "bn", [0, 1, 2, 3, 4], max_calib_range="1.0", min_calib_range="-1.0"),
        ],
        "arg_nodes": [0, 1, 2, 3, 4],
        "heads": [[5, 0, 0]],
        "attrs": {"mxnet_version": ["int", 10901]},
    }
    net = sym.load_json(json.dumps(document))
    assert net.attr_dict()["bn"] == {"max_calib_range": "1.0", "min_calib_range": "-1.0"}
    args = {"x": mx.nd.array(np.arange(6).reshape(2, 3)), "bn_gamma": mx.nd.ones(3), "bn_beta": mx.nd.zeros(3)}
    aux = {"bn_moving_mean": mx.nd.zeros(3), "bn_moving_var": mx.nd.ones(3)}
    (out,) = net.bind(mx.cpu(), args, aux_states=aux).forward()
    # MXNet 1.9.1: x / sqrt(1 + 1e-3)
    np.testing.assert_allclose(out.asnumpy()[1], [2.9985013, 3.9980016, 4.997502], rtol=1e-6)
