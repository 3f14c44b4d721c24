"""Creation operators as MXNet 1.x writes them into symbol JSON: _arange, _full, ones_like, zeros_like."""

from __future__ import annotations

import json

import numpy as np
import pytest

import lazynd as mx
import lazynd_sym as sym
from lazynd.errors import OperatorError

# sym.arange(start=0, stop=4) + sym.Variable("x") as MXNet 1.9.1 writes it: every _arange node
# carries infer_range, which lazynd refused ("unknown parameter"), so the file did not load
MXNET_ARANGE_JSON = {
    "nodes": [
        {
            "op": "_arange",
            "name": "_arange0",
            "attrs": {
                "dtype": "float32",
                "infer_range": "False",
                "repeat": "1",
                "start": "0",
                "step": "1.0",
                "stop": "4",
            },
            "inputs": [],
        },
        {"op": "null", "name": "x", "inputs": []},
        {"op": "elemwise_add", "name": "_plus0", "inputs": [[0, 0, 0], [1, 0, 0]]},
    ],
    "arg_nodes": [1],
    "node_row_ptr": [0, 1, 2, 3],
    "heads": [[2, 0, 0]],
    "attrs": {"mxnet_version": ["int", 10901]},
}


def test_an_mxnet_1x_symbol_with_arange_loads_and_runs():
    net = sym.load_json(json.dumps(MXNET_ARANGE_JSON))
    ex = net.simple_bind(mx.cpu(), x=(4,))
    ex.arg_dict["x"][:] = mx.nd.array([10, 20, 30, 40])
    np.testing.assert_array_equal(ex.forward()[0].asnumpy(), [10, 21, 32, 43])


def test_infer_range_without_stop_is_refused_by_name():
    with pytest.raises(OperatorError, match="_arange: infer_range=True with stop=None"):
        sym._arange(start=4, infer_range=True).infer_shape()


def _mxnet_graph(nodes: list, heads: list) -> str:
    args = [i for i, node in enumerate(nodes) if node["op"] == "null"]
    return json.dumps(
        {
            "nodes": nodes,
            "arg_nodes": args,
            "node_row_ptr": list(range(len(nodes) + 1)),
            "heads": heads,
            "attrs": {"mxnet_version": ["int", 10901]},
        }
    )


def test_mxnet_1x_full_ones_like_and_zeros_like_nodes_load_and_run():
    # as MXNet 1.9.1 writes sym.full((2, 3), 7), sym.ones_like(x) and sym.zeros_like(x): the
    # operators were not registered, so such files did not load
    full = {"op": "_full", "name": "_full0", "attrs": {"dtype": "float32", "shape": "(2, 3)", "value": "7.0"}}
    x = {"op": "null", "name": "x", "inputs": []}
    net = sym.load_json(_mxnet_graph([{**full, "inputs": []}], [[0, 0, 0]]))
    np.testing.assert_array_equal(net.simple_bind(mx.cpu()).forward()[0].asnumpy(), np.full((2, 3), 7.0))
    for name, value in (("ones_like", 1), ("zeros_like", 0)):
        net = sym.load_json(_mxnet_graph([x, {"op": name, "name": f"{name}0", "inputs": [[0, 0, 0]]}], [[1, 0, 0]]))
        np.testing.assert_array_equal(
            net.simple_bind(mx.cpu(), x=(2, 3)).forward()[0].asnumpy(), np.full((2, 3), value)
        )


def test_ones_like_keeps_the_dtype_and_passes_no_gradient():
    x = mx.nd.array([[1.0, 2.0], [3.0, 4.0]])
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.ones_like(x) * x
    y.backward()
    np.testing.assert_array_equal(x.grad.asnumpy(), np.ones((2, 2)))
    assert mx.nd.zeros_like(mx.nd.array([1, 2], dtype="int32")).dtype == np.int32
