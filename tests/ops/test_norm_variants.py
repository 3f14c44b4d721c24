"""BatchNorm under other names: MXNet 0.9's BatchNorm_v1 and mx.nd/sym.contrib SyncBatchNorm and
BatchNormWithReLU, against MXNet 1.9.1 (values computed with MXNet 1.9.1 and pasted in)."""

from __future__ import annotations

import json

import numpy as np
import pytest

import lazynd as mx
import lazynd_sym as sym
from lazynd.errors import LazyNDError
from lazynd.testing import check_gradient

DATA = np.sin(np.arange(24) * 0.7).reshape(2, 3, 2, 2).astype("float32")
HEAD = np.cos(np.arange(24)).reshape(2, 3, 2, 2)
GAMMA = np.float32([1.5, 0.5, -1])
BETA = np.float32([0.1, -0.2, 0.3])
# MXNet 1.9.1, an executor in training (fix_gamma=False, moving_var 1): the batch mean, the
# ``var`` output (the variance), the moving statistics after the step, sum(head * data gradient),
# the gamma and beta gradients, and the sum of the output in prediction mode
MXNET_VARIANCE_OUT = {
    "mean": [0.3025499, -0.34549317, 0.3485129],
    "var": [0.39241266, 0.34944198, 0.346206],
    "moving_mean": [0.030255, -0.03454933, 0.0348513],
    "moving_var": [0.93924123, 0.93494415, 0.93462056],
    "data_grad": 11.01532395140896,
    "gamma_grad": [0.5266695, 0.8516867, 1.0405374],
    "beta_grad": [1.262513, 1.7602897, -3.5637171],
    "predicted_sum": 1.0899551,
}


def _train_step(net, ctx=mx.cpu()):
    ex = net.simple_bind(ctx, d=DATA.shape)
    ex.arg_dict["d"][:] = DATA
    ex.arg_dict["bn_gamma"][:] = GAMMA
    ex.arg_dict["bn_beta"][:] = BETA
    ex.aux_dict["bn_moving_var"][:] = 1
    outs = [o.asnumpy() for o in ex.forward(is_train=True)]
    ex.backward([mx.nd.array(HEAD, ctx=ctx), mx.nd.zeros(3, ctx=ctx), mx.nd.zeros(3, ctx=ctx)])
    return ex, outs


@pytest.mark.parametrize(
    "make",
    [
        lambda d: sym.BatchNorm_v1(d, name="bn", fix_gamma=False, output_mean_var=True),
        lambda d: sym.contrib.SyncBatchNorm(d, name="bn", fix_gamma=False, output_mean_var=True, key="bn", ndev=1),
    ],
    ids=["BatchNorm_v1", "SyncBatchNorm"],
)
def test_variance_output_variants_match_mxnet(make, ctx):
    ex, (out, mean, var) = _train_step(make(sym.Variable("d")), ctx)
    expected = MXNET_VARIANCE_OUT
    np.testing.assert_allclose(mean, expected["mean"], rtol=1e-5)
    np.testing.assert_allclose(var, expected["var"], rtol=1e-5)
    np.testing.assert_allclose(ex.aux_dict["bn_moving_mean"].asnumpy(), expected["moving_mean"], rtol=1e-5)
    np.testing.assert_allclose(ex.aux_dict["bn_moving_var"].asnumpy(), expected["moving_var"], rtol=1e-5)
    np.testing.assert_allclose((ex.grad_dict["d"].asnumpy() * HEAD).sum(), expected["data_grad"], rtol=1e-5)
    np.testing.assert_allclose(ex.grad_dict["bn_gamma"].asnumpy(), expected["gamma_grad"], rtol=1e-5)
    np.testing.assert_allclose(ex.grad_dict["bn_beta"].asnumpy(), expected["beta_grad"], rtol=1e-5)
    np.testing.assert_allclose(ex.forward(is_train=False)[0].asnumpy().sum(), expected["predicted_sum"], rtol=1e-5)


def test_variance_output_gradient_matches_central_differences():
    inputs = [DATA.astype("float64"), GAMMA.astype("float64"), BETA.astype("float64")]
    aux = [np.zeros(3), np.ones(3)]
    for op in ("BatchNorm_v1", "_contrib_SyncBatchNorm"):
        params = {"fix_gamma": False} | ({"key": "k"} if "Sync" in op else {})
        check_gradient(op, inputs, params, aux=aux, is_train=True)


def test_batchnorm_with_relu_is_relu_of_batchnorm(ctx):
    args = [mx.nd.array(a, ctx=ctx) for a in (DATA, GAMMA, BETA, np.zeros(3), np.ones(3))]
    with mx.autograd.train_mode():
        fused = mx.nd.contrib.BatchNormWithReLU(*args, fix_gamma=False)
        plain = mx.nd.relu(mx.nd.BatchNorm(*args, fix_gamma=False))
    np.testing.assert_allclose(fused.asnumpy(), plain.asnumpy(), rtol=1e-6)
    assert (fused.asnumpy() == 0).any()  # the ReLU cut something


def test_batchnorm_with_relu_gradient_is_masked():
    inputs = [DATA.astype("float64"), GAMMA.astype("float64"), BETA.astype("float64")]
    check_gradient(
        "_contrib_BatchNormWithReLU", inputs, {"fix_gamma": False}, aux=[np.zeros(3), np.ones(3)], is_train=True
    )


def test_parameter_sets_are_mxnets():
    with pytest.raises(LazyNDError, match="BatchNorm_v1.*axis"):
        sym.BatchNorm_v1(sym.Variable("d"), axis=1)
    with pytest.raises(LazyNDError, match="SyncBatchNorm.*key"):
        sym.contrib.SyncBatchNorm(sym.Variable("d"))
    net = sym.contrib.BatchNormWithReLU(sym.Variable("d"), axis=-1, min_calib_range=-1.0, cudnn_off=True)
    assert net.infer_shape(d=(2, 5))[0][1] == (5,)


def test_sync_batchnorm_refuses_several_devices():
    with pytest.raises(LazyNDError, match="SyncBatchNorm: ndev=2.*expected ndev=1"):
        args = [mx.nd.ones(s) for s in ((2, 3), (3,), (3,), (3,), (3,))]
        mx.nd.contrib.SyncBatchNorm(*args, key="bn", ndev=2)


@pytest.mark.parametrize("op", ["SyncBatchNorm", "BatchNormWithReLU"])
def test_variants_name_themselves_in_shape_and_type_errors(op):
    # they named BatchNorm, an operator the caller did not call
    make = getattr(mx.nd.contrib, op)
    params = {"key": "bn"} if op == "SyncBatchNorm" else {}
    data, three = mx.nd.ones((2, 3, 2, 2)), mx.nd.ones(3)
    with pytest.raises(LazyNDError, match=rf"_contrib_{op}: shape of 'gamma' is \(2,\), expected \(3,\)"):
        make(data, mx.nd.ones(2), three, three, three, **params)
    with pytest.raises(LazyNDError, match=rf"_contrib_{op}: beta has dtype float64"):
        make(data, three, mx.nd.ones(3, dtype="float64"), three, three, **params)


# written by MXNet 1.9.1: mx.sym.BatchNorm_v1(mx.sym.var('d'), name='bn').tojson()
MXNET_V1_JSON = """{"nodes": [{"op": "null", "name": "d", "inputs": []},
 {"op": "null", "name": "bn_gamma", "inputs": []}, {"op": "null", "name": "bn_beta", "inputs": []},
 {"op": "null", "name": "bn_moving_mean", "attrs": {"__init__": "[\\"zero\\", {}]"}, "inputs": []},
 {"op": "null", "name": "bn_moving_var", "attrs": {"__init__": "[\\"one\\", {}]"}, "inputs": []},
 {"op": "BatchNorm_v1", "name": "bn", "inputs": [[0, 0, 0], [1, 0, 0], [2, 0, 0], [3, 0, 1], [4, 0, 1]]}],
 "arg_nodes": [0, 1, 2, 3, 4], "node_row_ptr": [0, 1, 2, 3, 4, 5, 8], "heads": [[5, 0, 0]],
 "attrs": {"mxnet_version": ["int", 10901]}}"""


def test_mxnet_json_of_batchnorm_v1_loads_and_saves_under_its_name():
    net = sym.load_json(MXNET_V1_JSON)
    assert net.list_auxiliary_states() == ["bn_moving_mean", "bn_moving_var"]
    saved = json.loads(net.tojson())
    assert [n["op"] for n in saved["nodes"]][-1] == "BatchNorm_v1"
    assert saved["node_row_ptr"] == [0, 1, 2, 3, 4, 5, 8]
    assert sym.load_json(net.tojson()).infer_shape(d=(2, 3, 4, 4))[2] == [(3,), (3,)]


@pytest.mark.parametrize(
    ("op", "params"), [("BatchNorm_v1", {}), ("SyncBatchNorm", {"key": "k"}), ("BatchNormWithReLU", {})]
)
def test_variants_mark_their_moving_statistics_initialisers_as_mxnet(op, params):
    # MXNet 1.9.1 gives every BatchNorm's moving statistics their __init__ attributes (in the JSON too)
    make = getattr(mx.sym, op, None) or getattr(mx.sym.contrib, op)
    attrs = make(mx.sym.Variable("d"), name="bn", **params).attr_dict()
    assert attrs["bn_moving_mean"]["__init__"] == '["zero", {}]'
    assert attrs["bn_moving_var"]["__init__"] == '["one", {}]'
