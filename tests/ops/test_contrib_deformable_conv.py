"""mx.nd.contrib DeformableConvolution and ModulatedDeformableConvolution against MXNet 1.9.1 and
central differences (they were missing: mx.nd.contrib.<op> raised).  The expected values were
computed with MXNet 1.9.1's CPU operators on the inputs below and pasted here (MXNet 1.9.1 has no
CPU backward for the modulated one; its version-1 gradients agreed with ours to 1e-6)."""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx
import lazynd_sym as sym
from lazynd.errors import LazyNDError
from lazynd.testing import check_gradient

_RNG = np.random.RandomState(7)
DATA = _RNG.rand(1, 4, 4, 5).astype(np.float32)
OFFSET_V1 = (_RNG.randn(1, 16, 3, 3) * 1.2).astype(np.float32)
OFFSET_V2 = (_RNG.randn(1, 16, 3, 3) * 1.2).astype(np.float32)
MASK = _RNG.rand(1, 8, 3, 3).astype(np.float32)
WEIGHT = _RNG.randn(2, 2, 2, 2).astype(np.float32)
BIAS = np.array([0.5, -0.25], np.float32)
# two groups of the product, two groups of offsets; many samples fall off the map
PARAMS = {"kernel": (2, 2), "stride": (1, 2), "pad": (0, 1), "num_filter": 2, "num_group": 2, "num_deformable_group": 2}


def _arrays(ctx, *values):
    return [mx.nd.array(v, ctx=ctx) for v in values]


def test_deformable_convolution_matches_mxnet(ctx):
    out = mx.nd.contrib.DeformableConvolution(*_arrays(ctx, DATA, OFFSET_V1, WEIGHT, BIAS), **PARAMS)
    expected = [
        0.5, 0.714685, 2.250516, 0.5, -0.979837, 0.221462, 0.014689, 0.279544, -0.055833,
        -1.321384, -3.608521, -0.25, -0.902978, -2.326416, -2.203207, -1.095075, -0.550831, -3.438495,
    ]  # fmt: skip
    np.testing.assert_allclose(out.asnumpy().ravel(), expected, rtol=1e-5, atol=1e-6)


def test_modulated_deformable_convolution_matches_mxnet(ctx):
    out = mx.nd.contrib.ModulatedDeformableConvolution(*_arrays(ctx, DATA, OFFSET_V2, MASK, WEIGHT, BIAS), **PARAMS)
    expected = [
        0.500802, 1.15447, 2.044955, 0.689268, 0.712786, 0.934654, 0.741575, 1.124712, 0.53664,
        -1.10586, -2.356614, -1.271935, -0.880604, -1.750843, -0.492234, -0.523737, -1.582399, -1.057586,
    ]  # fmt: skip
    np.testing.assert_allclose(out.asnumpy().ravel(), expected, rtol=1e-5, atol=1e-6)


def test_deformable_convolution_gradients_match_central_differences(ctx):
    inputs = [x.astype(np.float64) for x in (DATA, OFFSET_V1, WEIGHT, BIAS)]
    check_gradient("_contrib_DeformableConvolution", inputs, PARAMS, ctx=ctx, eps=1e-6)


def test_modulated_deformable_convolution_gradients_match_central_differences(ctx):
    inputs = [x.astype(np.float64) for x in (DATA, OFFSET_V2, MASK, WEIGHT, BIAS)]
    check_gradient("_contrib_ModulatedDeformableConvolution", inputs, PARAMS, ctx=ctx, eps=1e-6)


def test_zero_offsets_give_a_plain_convolution(ctx):
    params = {"kernel": (3, 3), "pad": (1, 1), "dilate": (2, 1), "num_filter": 3, "no_bias": True}
    data, weight = _RNG.rand(2, 4, 6, 5).astype(np.float32), _RNG.randn(3, 4, 3, 3).astype(np.float32)
    plain = mx.nd.Convolution(*_arrays(ctx, data, weight), **params).asnumpy()
    offset = mx.nd.zeros((2, 18, 4, 5), ctx=ctx)
    v1 = mx.nd.contrib.DeformableConvolution(mx.nd.array(data, ctx=ctx), offset, mx.nd.array(weight, ctx=ctx), **params)
    v2 = mx.nd.contrib.ModulatedDeformableConvolution(
        mx.nd.array(data, ctx=ctx), offset, mx.nd.ones((2, 9, 4, 5), ctx=ctx), mx.nd.array(weight, ctx=ctx), **params
    )
    np.testing.assert_allclose(v1.asnumpy(), plain, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(v2.asnumpy(), plain, rtol=1e-5, atol=1e-5)


def test_deformable_convolution_infers_its_parameter_shapes():
    net = sym.contrib.ModulatedDeformableConvolution(name="c", **PARAMS)
    assert net.list_arguments() == ["c_data", "c_offset", "c_mask", "c_weight", "c_bias"]
    args, outs, _ = net.infer_shape(c_data=(3, 4, 4, 5))
    assert args == [(3, 4, 4, 5), (3, 16, 3, 3), (3, 8, 3, 3), (2, 2, 2, 2), (2,)]
    assert outs == [(3, 2, 3, 3)]
    no_bias = sym.contrib.DeformableConvolution(name="c", kernel=(3, 3), num_filter=2, no_bias=True)
    assert no_bias.list_arguments() == ["c_data", "c_offset", "c_weight"]


def test_deformable_convolution_refuses_bad_shapes():
    with pytest.raises(LazyNDError, match=r"DeformableConvolution.*'offset'.*\(1, 16, 3, 3\)"):
        mx.nd.contrib.DeformableConvolution(
            mx.nd.array(DATA), mx.nd.zeros((1, 8, 3, 3)), mx.nd.array(WEIGHT), mx.nd.array(BIAS), **PARAMS
        )
    with pytest.raises(LazyNDError, match="channels of 'data' must divide by num_group 1 and num_deformable_group 3"):
        mx.nd.contrib.DeformableConvolution(
            mx.nd.array(DATA), mx.nd.zeros((1, 54, 3, 4)), mx.nd.zeros((2, 4, 2, 2)), kernel=(2, 2), num_filter=2,
            num_deformable_group=3, no_bias=True,
        )  # fmt: skip
    with pytest.raises(LazyNDError, match=r"only 2-D NCHW convolutions are supported, got kernel \(3,\)"):
        mx.nd.contrib.DeformableConvolution(
            mx.nd.zeros((1, 2, 5)),
            mx.nd.zeros((1, 6, 3)),
            mx.nd.zeros((2, 2, 3)),
            kernel=(3,),
            num_filter=2,
            no_bias=True,
        )
