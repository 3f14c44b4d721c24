"""MXNet 0.9's Convolution_v1 and Pooling_v1 in mx.nd and mx.sym: MXNet 1.9.1's parameter sets,
Convolution's and Pooling's computation, and symbol JSON under the legacy names (values and JSON
computed with MXNet 1.9.1 and pasted in)."""

from __future__ import annotations

import json

import numpy as np
import pytest

import lazynd as mx
import lazynd_sym as sym
from lazynd.errors import LazyNDError
from lazynd.testing import check_gradient

DATA = np.sin(np.arange(2 * 2 * 6 * 7) * 0.3).reshape(2, 2, 6, 7).astype("float32")
WEIGHT = np.cos(np.arange(4 * 2 * 3 * 3) * 0.2).reshape(4, 2, 3, 3).astype("float32")
BIAS = np.float32([0.1, 0.2, 0.3, 0.4])


@pytest.mark.parametrize(
    "params",
    [
        {"kernel": (3, 3)},
        {"kernel": (3, 3), "stride": (2, 1), "pad": (1, 2), "dilate": (1, 2)},
        {"kernel": (3, 3), "num_group": 2},
    ],
)
def test_convolution_v1_computes_convolution(params, ctx):
    weight = WEIGHT if params.get("num_group", 1) == 1 else WEIGHT[:, :1]
    args = [mx.nd.array(a, ctx=ctx) for a in (DATA, weight, BIAS)]
    legacy = mx.nd.Convolution_v1(*args, num_filter=4, **params)
    np.testing.assert_array_equal(legacy.asnumpy(), mx.nd.Convolution(*args, num_filter=4, **params).asnumpy())


def test_convolution_v1_gradients_match_mxnet():
    x, w = mx.nd.array(DATA), mx.nd.array(WEIGHT)
    x.attach_grad()
    w.attach_grad()
    with mx.autograd.record():
        y = mx.nd.Convolution_v1(x, w, mx.nd.array(BIAS), kernel=(3, 3), num_filter=4)
    y.backward()
    # MXNet 1.9.1: the sums of the data and weight gradients under a head of ones
    np.testing.assert_allclose([x.grad.asnumpy().sum(), w.grad.asnumpy().sum()], [217.6837, -0.170876], rtol=1e-4)
    check_gradient(
        "Convolution_v1",
        [DATA[:1].astype("float64"), WEIGHT.astype("float64"), BIAS.astype("float64")],
        {"kernel": (3, 3), "num_filter": 4, "stride": (2, 2)},
    )


# MXNet 1.9.1: Pooling_v1(DATA, ...).sum()
POOLING_SUMS = [
    ({"kernel": (3, 3), "pool_type": "max"}, 73.64059448242188),
    ({"kernel": (3, 3), "pool_type": "avg", "pad": (1, 1), "stride": (2, 2)}, 3.427596092224121),
    ({"kernel": (3, 3), "pool_type": "avg", "stride": (2, 2), "pooling_convention": "full"}, -2.8540420532226562),
    ({"kernel": (3, 3), "pool_type": "max", "stride": (2, 2), "pooling_convention": "full"}, 26.277341842651367),
    ({"kernel": (2, 2), "pool_type": "sum", "stride": (2, 2), "pad": (1, 1)}, -0.03716939687728882),
    ({"kernel": (3, 3), "pool_type": "avg", "global_pool": True}, -0.0008849860168993473),
]


@pytest.mark.parametrize("params,expected", POOLING_SUMS)
def test_pooling_v1_matches_mxnet(params, expected, ctx):
    pooled = mx.nd.Pooling_v1(mx.nd.array(DATA, ctx=ctx), **params).asnumpy()
    np.testing.assert_allclose(pooled.sum(), expected, rtol=1e-5, atol=1e-6)


def test_pooling_v1_average_divides_by_the_kernel_area_at_full_windows():
    params = {"kernel": (3, 3), "stride": (2, 2), "pooling_convention": "full"}
    legacy = mx.nd.Pooling_v1(mx.nd.array(DATA), pool_type="avg", **params).asnumpy()
    summed = mx.nd.Pooling(mx.nd.array(DATA), pool_type="sum", **params).asnumpy()
    np.testing.assert_allclose(legacy, summed / 9, rtol=1e-6)
    check_gradient("Pooling_v1", [DATA[:1].astype("float64")], {"pool_type": "avg", **params})


def test_legacy_parameter_sets_are_mxnets():
    with pytest.raises(LazyNDError, match="Pooling_v1.*pool_type"):
        mx.nd.Pooling_v1(mx.nd.array(DATA), kernel=(2, 2), pool_type="lp")
    with pytest.raises(LazyNDError, match="Pooling_v1.*pooling_convention"):
        mx.nd.Pooling_v1(mx.nd.array(DATA), kernel=(2, 2), pooling_convention="same")
    with pytest.raises(LazyNDError, match="Pooling_v1.*count_include_pad"):
        mx.nd.Pooling_v1(mx.nd.array(DATA), kernel=(2, 2), count_include_pad=False)
    with pytest.raises(LazyNDError, match="Convolution_v1.*num_filter"):
        sym.Convolution_v1(sym.Variable("d"), kernel=(3, 3))
    assert sym.Convolution_v1(
        sym.Variable("d"), kernel=(3, 3), num_filter=2, no_bias=True, name="c"
    ).list_arguments() == ["d", "c_weight"]


# written by MXNet 1.9.1 (tojson of Pooling_v1(Convolution_v1(d, kernel=(3, 3), num_filter=4), ...))
MXNET_JSON = """{"nodes": [{"op": "null", "name": "d", "inputs": []},
 {"op": "null", "name": "c_weight", "attrs": {"kernel": "(3, 3)", "num_filter": "4"}, "inputs": []},
 {"op": "null", "name": "c_bias", "attrs": {"kernel": "(3, 3)", "num_filter": "4"}, "inputs": []},
 {"op": "Convolution_v1", "name": "c", "attrs": {"kernel": "(3, 3)", "num_filter": "4"},
  "inputs": [[0, 0, 0], [1, 0, 0], [2, 0, 0]]},
 {"op": "Pooling_v1", "name": "p", "attrs": {"kernel": "(3, 3)", "pool_type": "avg"}, "inputs": [[3, 0, 0]]}],
 "arg_nodes": [0, 1, 2], "node_row_ptr": [0, 1, 2, 3, 4, 5], "heads": [[4, 0, 0]],
 "attrs": {"mxnet_version": ["int", 10901]}}"""


def test_mxnet_json_of_legacy_operators_loads_runs_and_saves_under_their_names():
    net = sym.load_json(MXNET_JSON)
    assert net.list_arguments() == ["d", "c_weight", "c_bias"]
    ex = net.simple_bind(mx.cpu(), d=DATA.shape)
    for name, value in (("d", DATA), ("c_weight", WEIGHT), ("c_bias", BIAS)):
        ex.arg_dict[name][:] = value
    conv = mx.nd.Convolution(*(mx.nd.array(a) for a in (DATA, WEIGHT, BIAS)), kernel=(3, 3), num_filter=4)
    expected = mx.nd.Pooling(conv, kernel=(3, 3), pool_type="avg").asnumpy()
    np.testing.assert_allclose(ex.forward()[0].asnumpy(), expected, rtol=1e-5)
    saved = json.loads(net.tojson())
    ops = [(n["op"], n.get("attrs")) for n in saved["nodes"] if n["op"] != "null"]
    assert ops == [
        ("Convolution_v1", {"kernel": "(3, 3)", "num_filter": "4"}),
        ("Pooling_v1", {"kernel": "(3, 3)", "pool_type": "avg"}),
    ]
