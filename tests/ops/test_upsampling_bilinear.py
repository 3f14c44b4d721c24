"""Bilinear UpSampling: a depthwise Deconvolution with a learned weight (inputs ``data`` and ``weight``).

The NumPy reference below was checked against MXNet 1.9.1 (forward, data and weight
gradients, float64, scales 2 to 4, 1 to 5 channels: equal to 1e-14).
"""

from __future__ import annotations

import json

import numpy as np
import pytest

import lazynd
import lazynd_sym as sym
from lazynd.testing import check_gradient

rng = np.random.default_rng(0)


def kernel_size(scale: int) -> int:
    return 2 * scale - scale % 2


def reference_upsample(x: np.ndarray, weight: np.ndarray, scale: int) -> np.ndarray:
    """Each input pixel adds its channel's filter times its value at stride ``scale``, cropped by ``scale // 2``."""
    n, c, h, w = x.shape
    k, pad = weight.shape[-1], scale // 2
    full = np.zeros((n, c, (h - 1) * scale + k, (w - 1) * scale + k))
    for i in range(h):
        for j in range(w):
            full[:, :, i * scale : i * scale + k, j * scale : j * scale + k] += x[:, :, i, j, None, None] * weight[:, 0]
    return full[:, :, pad : pad + h * scale, pad : pad + w * scale]


@pytest.mark.parametrize("scale", [2, 3, 4])
@pytest.mark.parametrize("channels", [1, 3])
def test_bilinear_upsampling_is_a_depthwise_deconvolution(ctx, scale, channels):
    x = rng.standard_normal((2, channels, 3, 4))
    weight = rng.standard_normal((channels, 1, kernel_size(scale), kernel_size(scale)))
    y = lazynd.nd.UpSampling(
        lazynd.nd.array(x, ctx=ctx, dtype="float64"),
        lazynd.nd.array(weight, ctx=ctx, dtype="float64"),
        scale=scale,
        sample_type="bilinear",
        num_filter=channels,
    )
    assert y.shape == (2, channels, 3 * scale, 4 * scale)
    np.testing.assert_allclose(y.asnumpy(), reference_upsample(x, weight, scale), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("scale", [2, 3])
def test_bilinear_upsampling_gradients_of_data_and_weight(ctx, scale):
    x = rng.standard_normal((1, 2, 3, 3))
    weight = rng.standard_normal((2, 1, kernel_size(scale), kernel_size(scale)))
    params = dict(scale=scale, sample_type="bilinear", num_filter=2)
    grads = check_gradient("UpSampling", [x, weight], params, ctx=ctx, rtol=1e-5, atol=1e-7)
    assert grads[0].shape == x.shape and grads[1].shape == weight.shape
    check_gradient("UpSampling", [x, weight], params, ctx=ctx, rtol=1e-5, atol=1e-7, autograd=True)


def test_symbol_creates_the_weight_and_infers_its_shape():
    up = sym.UpSampling(sym.Variable("data"), scale=3, sample_type="bilinear", num_filter=4, name="up")
    assert up.list_arguments() == ["data", "up_weight"]
    arg_shapes, out_shapes, _ = up.infer_shape(data=(2, 4, 5, 6))
    assert arg_shapes == [(2, 4, 5, 6), (4, 1, 5, 5)]
    assert out_shapes == [(2, 4, 15, 18)]
    # as MXNet marks it, with its operator's parameters as MXNet 1.9.1 copies them
    assert up.attr_dict()["up_weight"] == {
        "__init__": '["bilinear", {}]',
        "num_args": "1",
        "num_filter": "4",
        "sample_type": "bilinear",
        "scale": "3",
    }


def test_a_given_weight_variable_is_marked_bilinear_unless_it_has_an_initializer():
    plain, own = sym.Variable("w"), sym.Variable("v", init=lazynd.init.Zero())
    up = sym.UpSampling(sym.Variable("data"), plain, scale=2, sample_type="bilinear", num_filter=1)
    assert up.list_arguments() == ["data", "w"]
    assert up.attr_dict()["w"]["__init__"] == '["bilinear", {}]'
    sym.UpSampling(sym.Variable("data"), own, scale=2, sample_type="bilinear", num_filter=1)
    assert own.attr_dict()["v"]["__init__"] == lazynd.init.Zero().dumps()


def test_module_initializes_the_weight_bilinear_whatever_the_global_initializer():
    up = sym.UpSampling(sym.Variable("data"), scale=2, sample_type="bilinear", num_filter=3, name="up")
    mod = lazynd.mod.Module(up, data_names=["data"], label_names=None)
    mod.bind(data_shapes=[("data", (1, 3, 4, 4))])
    mod.init_params(lazynd.init.Xavier())
    weight = mod.get_params()[0]["up_weight"].asnumpy()
    # MXNet 1.9.1's up_weight under Xavier: rows 0.0625 0.1875 0.1875 0.0625, 0.1875 0.5625 ...
    np.testing.assert_allclose(weight[1, 0], np.outer([0.25, 0.75, 0.75, 0.25], [0.25, 0.75, 0.75, 0.25]))


def test_bilinear_weights_keep_a_constant_image_constant_inside():
    up = sym.UpSampling(sym.Variable("data"), scale=2, sample_type="bilinear", num_filter=2, name="up")
    ex = up.simple_bind(lazynd.cpu(), data=(1, 2, 4, 4))
    lazynd.init.Bilinear()(lazynd.init.InitDesc("up_weight"), ex.arg_dict["up_weight"])
    ex.arg_dict["data"][:] = 1.0
    y = ex.forward()[0].asnumpy()
    np.testing.assert_allclose(y[:, :, 1:-1, 1:-1], 1.0, rtol=1e-6)


def test_symbol_json_of_mxnet_loads_with_num_args_1_and_two_inputs():
    # the file MXNet 1.9.1 writes for sym.UpSampling(data, scale=2, sample_type='bilinear', num_filter=3)
    attrs = {"num_args": "1", "num_filter": "3", "sample_type": "bilinear", "scale": "2"}
    graph = {
        "nodes": [
            {"op": "null", "name": "data", "inputs": []},
            {"op": "null", "name": "upsampling0_weight", "attrs": {"__init__": '["bilinear", {}]'}, "inputs": []},
            {"op": "UpSampling", "name": "upsampling0", "attrs": attrs, "inputs": [[0, 0, 0], [1, 0, 0]]},
        ],
        "arg_nodes": [0, 1],
        "node_row_ptr": [0, 1, 2, 3],
        "heads": [[2, 0, 0]],
        "attrs": {"mxnet_version": ["int", 10901]},
    }
    loaded = sym.load_json(json.dumps(graph))
    assert loaded.list_arguments() == ["data", "upsampling0_weight"]
    assert loaded.infer_shape(data=(1, 3, 4, 4))[1] == [(1, 3, 8, 8)]
    again = sym.load_json(loaded.tojson())
    assert again.list_arguments() == ["data", "upsampling0_weight"]


def test_nearest_upsampling_keeps_its_variadic_argument_names():
    up = sym.UpSampling(sym.Variable("a"), sym.Variable("b"), scale=2, num_args=2, name="up")
    assert up.list_arguments() == ["a", "b"]
    assert sym.UpSampling(scale=2, num_args=2, name="up").list_arguments() == ["up_arg0", "up_arg1"]


def test_bilinear_refuses_a_num_filter_other_than_the_channels():
    # MXNet 1.9.1 computes nonsense or dies of a floating-point exception here
    with pytest.raises(lazynd.LazyNDError, match=r"num_filter=2 needs data of 2 channels, got shape \(1, 3, 4, 4\)"):
        sym.UpSampling(sym.Variable("d"), scale=2, sample_type="bilinear", num_filter=2).infer_shape(d=(1, 3, 4, 4))
    with pytest.raises(lazynd.LazyNDError, match="bilinear' needs num_filter, the data's channel count, got 0"):
        lazynd.nd.UpSampling(
            lazynd.nd.ones((1, 3, 4, 4)), lazynd.nd.ones((3, 1, 4, 4)), scale=2, sample_type="bilinear"
        )


def test_bilinear_refuses_a_missing_or_misshapen_weight():
    x = lazynd.nd.ones((1, 3, 4, 4))
    with pytest.raises(lazynd.LazyNDError, match=r"UpSampling: expected 2 input\(s\) \(data, weight\), got 1"):
        lazynd.nd.UpSampling(x, scale=2, sample_type="bilinear", num_filter=3)
    with pytest.raises(
        lazynd.LazyNDError, match=r"UpSampling: shape of 'weight' is \(3, 1, 3, 3\), expected \(3, 1, 4, 4\)"
    ):
        lazynd.nd.UpSampling(x, lazynd.nd.ones((3, 1, 3, 3)), scale=2, sample_type="bilinear", num_filter=3)
