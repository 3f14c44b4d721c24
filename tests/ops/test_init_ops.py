"""Creation operators as MXNet 1.x writes them into symbol JSON: _arange, _full, ones_like, zeros_like."""

from __future__ import annotations

import json

import numpy as np
import pytest

import lazynd as mx
import lazynd_sym as sym
from lazynd.errors import ShapeError
from lazynd.testing import assert_almost_equal

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


def test_infer_range_without_stop_takes_its_length_from_the_graph():
    # MXNet 1.x: the values run from start by step, as many as the output's inferred shape holds
    net = sym.elemwise_add(sym.arange(start=2, stop=None, step=3, infer_range=True), sym.zeros(shape=(4,)))
    np.testing.assert_array_equal(net.bind(mx.cpu(), {}).forward()[0].asnumpy(), [2, 5, 8, 11])


def test_infer_range_without_stop_or_a_graph_to_size_it_is_refused_by_name():
    with pytest.raises(ShapeError, match="_arange"):
        sym._arange(start=4, infer_range=True).bind(mx.cpu(), {})


@pytest.mark.parametrize(
    ("start", "stop", "step", "dtype", "expected"),
    [
        (1.3, 6.0, 1.3, "int32", [1, 2, 3, 4]),  # start and step truncated first, as MXNet and NumPy
        (-3.7, 5.0, 2.6, "int32", [-3, -1, 1, 3]),
        (10.0, 0.0, -2.5, "int32", [10, 8, 6, 4]),  # MXNet's, where NumPy gives 10, 7, 4, 1
        (254.0, 258.0, 1.0, "uint8", [254, 255, 0, 1]),  # wraps, as MXNet's cast
        (1.3, 4.0, 1.3, "float32", [1.3, 2.6, 3.9]),
    ],
)
def test_arange_of_an_integer_dtype_counts_in_that_dtype_as_mxnet(start, stop, step, dtype, expected):
    np.testing.assert_allclose(mx.nd.arange(start, stop, step, dtype=dtype).asnumpy(), expected, rtol=1e-6)
    graph = sym.arange(start, stop, step, dtype=dtype)
    np.testing.assert_allclose(graph.bind(mx.cpu(), {}).forward()[0].asnumpy(), expected, rtol=1e-6)


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


# -- eye and linspace: MXNet 1.9.1's values ---------------------------------------------------------
@pytest.mark.parametrize(
    ("args", "params", "expected"),
    [
        ((3,), {}, np.eye(3)),
        ((2, 4), {"k": 1}, [[0, 1, 0, 0], [0, 0, 1, 0]]),
        ((3, 0), {"k": -1}, [[0, 0, 0], [1, 0, 0], [0, 1, 0]]),
        ((3, 2), {"k": 5}, np.zeros((3, 2))),
    ],
)
def test_eye_gives_mxnets_matrices(args, params, expected, ctx):
    out = mx.nd.eye(*args, ctx=ctx, **params)
    assert out.dtype == np.float32 and out.context == ctx
    assert_almost_equal(out.asnumpy(), np.asarray(expected, dtype=np.float32))


def test_eye_takes_a_dtype_and_none_for_float32():
    assert mx.nd.eye(2, dtype="int32").asnumpy().tolist() == [[1, 0], [0, 1]]
    assert mx.nd.eye(2, dtype=None).dtype == np.float32


@pytest.mark.parametrize(
    ("args", "params", "expected"),
    [
        ((0, 1, 5), {}, [0, 0.25, 0.5, 0.75, 1]),
        ((0, 1, 5), {"endpoint": False}, [0, 0.2, 0.4, 0.6, 0.8]),
        ((2, 3, 1), {}, [2]),
        ((0, 1, 0), {}, []),
    ],
)
def test_linspace_gives_mxnets_values(args, params, expected, ctx):
    out = mx.nd.linspace(*args, ctx=ctx, **params)
    assert_almost_equal(out.asnumpy(), np.array(expected, dtype=np.float32))


def test_linspace_into_integers_truncates_as_mxnet():
    assert mx.nd.linspace(0, 10, 4, dtype="int32").asnumpy().tolist() == [0, 3, 6, 10]
    assert mx.nd.linspace(-1, -3.5, 4, dtype="int32").asnumpy().tolist() == [-1, -1, -2, -3]


def test_eye_and_linspace_load_from_mxnet_symbol_json():
    nodes = [
        {"op": "_eye", "name": "_eye0", "attrs": {"M": "0", "N": "3", "dtype": "float32", "k": "0"}, "inputs": []},
        {
            "op": "_linspace",
            "name": "_linspace0",
            "attrs": {"dtype": "float32", "endpoint": "True", "num": "5", "start": "0", "stop": "1"},
            "inputs": [],
        },
    ]
    for node in nodes:
        graph = {"nodes": [node], "arg_nodes": [], "node_row_ptr": [0, 1], "heads": [[0, 0, 0]]}
        net = sym.load_json(json.dumps(graph))
        out = net.bind(mx.cpu(), {}).forward()[0].asnumpy()
        want = np.eye(3) if node["op"] == "_eye" else np.linspace(0, 1, 5)
        assert_almost_equal(out, want.astype(np.float32))


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: mx.nd.eye(-1), "_eye: invalid value -1 for parameter 'N'"),
        (lambda: mx.nd.linspace(0, 1, -2), "_linspace: invalid value -2 for parameter 'num'"),
        (lambda: mx.nd.linspace(0, 1), "_linspace: required parameter 'num' is missing"),
    ],
)
def test_eye_and_linspace_refuse_bad_counts_at_the_call(call, message):
    with pytest.raises(mx.LazyNDError, match=message):
        call()


def test_eye_and_linspace_build_graph_nodes_by_keyword():
    assert sym.eye(N=2, M=3).infer_shape()[1] == [(2, 3)]
    assert sym.linspace(start=0, stop=1, num=4, endpoint=False).infer_shape()[1] == [(4,)]


@pytest.mark.parametrize(("lhs", "rhs"), [((2, 3), (-1, -1)), ((2, -1), (3, -1)), ((2, 0), (3, 0))])
def test_a_creation_shape_with_unknown_dims_is_filled_from_the_graph(lhs, rhs):
    # MXNet 1.9.1's tests (test_transpose_infer_shape_back/_mixed): -1 (or 0) in shape= is a dim to infer
    total = sym.ones(shape=lhs) + sym.transpose(sym.ones(shape=rhs))
    assert total.infer_shape() == ([], [(2, 3)], [])
    np.testing.assert_array_equal(total.bind(mx.cpu(), args={}).forward()[0].asnumpy(), np.full((2, 3), 2.0))


def test_a_creation_shape_left_unknown_is_a_clear_error():
    assert sym.zeros(shape=(-1, 4)).infer_shape_partial() == ([], [(0, 4)], [])
    with pytest.raises(ShapeError, match=r"_ones: cannot infer the output shape"):
        mx.nd._ones(shape=(-1, 2))
