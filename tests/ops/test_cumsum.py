"""cumsum, as MXNet 1.9.1's mx.nd.cumsum: values, dtypes, gradients, errors, and _np_cumsum in symbol JSON."""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx
from lazynd.testing import assert_almost_equal, check_gradient


def test_cumsum_without_axis_sums_the_flattened_array(ctx):
    out = mx.nd.cumsum(mx.nd.array([[1, 2], [3, 4]], ctx=ctx))
    assert_almost_equal(out.asnumpy(), np.array([1, 3, 6, 10], dtype=np.float32))


@pytest.mark.parametrize("dtype", ["int32", "int8", "uint8", "float16", "int64"])
def test_cumsum_keeps_the_input_dtype_as_mxnet(dtype):
    out = mx.nd.cumsum(mx.nd.array([1, 2, 3], dtype=dtype))
    assert out.dtype == np.dtype(dtype)
    assert out.asnumpy().tolist() == [1, 3, 6]


def test_cumsum_into_a_dtype_converts_the_input_first():
    assert mx.nd.cumsum(mx.nd.array([1.5, 2, 3]), dtype="int32").asnumpy().tolist() == [1, 3, 6]
    assert mx.nd.cumsum(mx.nd.array([1, 2]), dtype="float64").dtype == np.float64


@pytest.mark.parametrize(
    ("axis", "head", "expected"),
    [
        (1, [[1, 2, 3], [1, 1, 1]], [[6, 5, 3], [3, 2, 1]]),
        (None, [0, 1, 2, 3, 4, 5], [[15, 15, 14], [12, 9, 5]]),
    ],
)
def test_cumsum_gradients_are_mxnets(axis, head, expected):
    x = mx.nd.array([[1, 2, 3], [4, 5, 6]])
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.cumsum(x, axis=axis)
    y.backward(mx.nd.array(head))
    assert_almost_equal(x.grad.asnumpy(), np.array(expected, dtype=np.float32))


def test_cumsum_gradient_with_a_dtype_has_the_input_dtype():
    check_gradient("cumsum", [np.random.default_rng(0).uniform(size=(2, 3))], {"axis": 0, "dtype": "float64"})


def test_cumsum_refuses_an_axis_out_of_range_at_the_call():
    from lazynd.errors import ShapeError

    with pytest.raises(ShapeError, match=r"cumsum: axis=2 is out of range for a 2-D input"):
        mx.nd.cumsum(mx.nd.zeros((2, 3)), axis=2)


def test_cumsum_loads_from_mxnet_symbol_json_as_np_cumsum():
    import json

    import lazynd_sym as sym

    graph = {
        "nodes": [
            {"op": "null", "name": "x", "inputs": []},
            {"op": "_np_cumsum", "name": "cumsum0", "attrs": {"axis": "1"}, "inputs": [[0, 0, 0]]},
        ],
        "arg_nodes": [0],
        "node_row_ptr": [0, 1, 2],
        "heads": [[1, 0, 0]],
    }
    net = sym.load_json(json.dumps(graph))
    out = net.bind(mx.cpu(), {"x": mx.nd.array([[1, 2], [3, 4]])}).forward()[0]
    assert_almost_equal(out.asnumpy(), np.array([[1, 3], [3, 7]], dtype=np.float32))
