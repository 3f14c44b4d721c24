"""Creation operators: MXNet 1.x's parameters of _arange."""

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
