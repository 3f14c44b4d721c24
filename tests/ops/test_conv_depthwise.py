"""The CPU forward and backward of depthwise convolutions by shifted flat columns: the output and the
gradients of a loop over output positions and kernel offsets, for every geometry they take, and the
routes that take them."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from conv_reference import check_gradients_left_out

import lazynd
from lazynd.ops import conv, conv_depthwise


def _naive_gradients(x, w, dy, stride, pad, dilate):
    """Data and weight gradients of a depthwise convolution (F = multiplier x C filters, filter
    ``c * multiplier + j`` reading channel c), by a loop over output positions and kernel offsets."""
    n, channels = x.shape[:2]
    multiplier, kernel = w.shape[0] // channels, w.shape[2:]
    padded = np.pad(x, [(0, 0), (0, 0)] + [(p, p) for p in pad])
    dx_padded, dw = np.zeros_like(padded), np.zeros_like(w)
    dy_split = dy.reshape(n, channels, multiplier, *dy.shape[2:])
    w_split = w.reshape(channels, multiplier, *kernel)
    for o in itertools.product(*[range(v) for v in dy.shape[2:]]):
        for k in itertools.product(*[range(v) for v in kernel]):
            at = (slice(None), slice(None), *[o[i] * stride[i] + k[i] * dilate[i] for i in range(len(k))])
            head = dy_split[(slice(None), slice(None), slice(None), *o)]  # (n, C, multiplier)
            dx_padded[at] += (head * w_split[(slice(None), slice(None), *k)]).sum(axis=-1)
            dw[(slice(None), 0, *k)] += (head * padded[at][:, :, None]).sum(axis=0).reshape(-1)
    interior = tuple(slice(p, p + s) for p, s in zip(pad, x.shape[2:], strict=True))
    return dx_padded[(slice(None), slice(None), *interior)], dw


def _naive_output(x, w, bias, stride, pad, dilate):
    """The output of a depthwise convolution (filter ``c * multiplier + j`` reading channel c), by a loop
    over output positions and kernel offsets."""
    n, channels = x.shape[:2]
    multiplier, kernel = w.shape[0] // channels, w.shape[2:]
    padded = np.pad(x, [(0, 0), (0, 0)] + [(p, p) for p in pad])
    spans = [d * (k - 1) + 1 for k, d in zip(kernel, dilate, strict=True)]
    out = [(s - span) // st + 1 for s, span, st in zip(padded.shape[2:], spans, stride, strict=True)]
    y = np.zeros((n, channels, multiplier, *out))
    w_split = w.reshape(channels, multiplier, *kernel)
    for o in itertools.product(*[range(v) for v in out]):
        for k in itertools.product(*[range(v) for v in kernel]):
            at = (slice(None), slice(None), *[o[i] * stride[i] + k[i] * dilate[i] for i in range(len(k))])
            y[(slice(None), slice(None), slice(None), *o)] += (
                padded[at][:, :, None] * w_split[(slice(None), slice(None), *k)]
            )
    y = y.reshape(n, channels * multiplier, *out)
    return y if bias is None else y + bias.reshape(1, -1, *[1] * len(out))


def _spy(monkeypatch, name="conv_backward_depthwise") -> list:
    taken: list = []
    real = getattr(conv, name)
    monkeypatch.setattr(conv, name, lambda *a: (taken.append(True), real(*a)))
    return taken


# (data shape, kernel, pad, dilate, multiplier): stride 1, which is all the route takes
CASES = [
    ((3, 6, 7, 7), (3, 3), (1, 1), (1, 1), 1),  # a late layer's small image
    ((2, 3, 20, 18), (3, 3), (1, 1), (1, 1), 1),
    ((2, 4, 9, 10), (3, 3), (0, 0), (1, 1), 1),  # pad 0
    ((2, 4, 9, 9), (3, 3), (2, 2), (2, 2), 1),  # dilation 2
    ((2, 3, 11, 9), (5, 5), (2, 2), (1, 1), 1),  # 5x5
    ((2, 4, 8, 7), (3, 3), (1, 1), (1, 1), 2),  # multiplier 2: out channels = 2 x groups
    ((2, 3, 9, 8), (5, 3), (2, 0), (1, 2), 2),  # everything at once, pads and dilations per axis
    ((3, 5, 11), (3,), (1,), (2,), 2),  # 1-D
    ((2, 3, 4, 5, 6), (2, 3, 2), (0, 1, 1), (1, 1, 2), 1),  # 3-D
]


@pytest.mark.parametrize("shape,kernel,pad,dilate,multiplier", CASES)
@pytest.mark.parametrize("dtype,tolerance", [("float64", 1e-10), ("float32", 1e-5), ("float16", 2e-2)])
@pytest.mark.parametrize("block_elements", [conv_depthwise.COLUMN_BLOCK_ELEMENTS, 1])
def test_depthwise_backward_matches_a_loop_over_offsets(
    monkeypatch, shape, kernel, pad, dilate, multiplier, dtype, tolerance, block_elements
):
    # a block of one element makes a block of one channel of one sample: the walk over channels and samples
    monkeypatch.setattr(conv_depthwise, "COLUMN_BLOCK_ELEMENTS", block_elements)
    taken = _spy(monkeypatch)
    rng = np.random.default_rng(1)
    channels, filters = shape[1], shape[1] * multiplier
    x = rng.standard_normal(shape).astype(dtype)
    w = rng.standard_normal((filters, 1, *kernel)).astype(dtype)
    params = dict(kernel=kernel, pad=pad, dilate=dilate, num_filter=filters, num_group=channels)
    xa, wa = lazynd.nd.array(x, dtype=dtype), lazynd.nd.array(w, dtype=dtype)
    y = lazynd.nd.Convolution(xa, wa, no_bias=True, **params)
    dy = rng.standard_normal(y.shape).astype(dtype)
    got = lazynd.nd._backward_Convolution(lazynd.nd.array(dy, dtype=dtype), xa, wa, **params)
    want = [*_naive_gradients(*(a.astype("float64") for a in (x, w, dy)), (1,) * len(kernel), pad, dilate)]
    want.append(dy.astype("float64").sum(axis=(0, *range(2, dy.ndim))))
    for name, g, expected in zip(("data", "weight", "bias"), got, want, strict=True):
        assert g.dtype == np.dtype(dtype)
        scale = np.abs(expected).max()
        np.testing.assert_allclose(g.asnumpy(), expected, rtol=tolerance, atol=tolerance * scale, err_msg=name)
    assert taken == [True]


@pytest.mark.parametrize("shape,kernel,pad,dilate,multiplier", CASES)
@pytest.mark.parametrize("dtype,tolerance", [("float64", 1e-10), ("float32", 1e-5), ("float16", 2e-2)])
@pytest.mark.parametrize("block_elements", [conv_depthwise.COLUMN_BLOCK_ELEMENTS, 1])
@pytest.mark.parametrize("with_bias", [True, False])
def test_depthwise_forward_matches_a_loop_over_offsets(
    monkeypatch, shape, kernel, pad, dilate, multiplier, dtype, tolerance, block_elements, with_bias
):
    monkeypatch.setattr(conv_depthwise, "COLUMN_BLOCK_ELEMENTS", block_elements)
    taken = _spy(monkeypatch, "conv_forward_depthwise")
    rng = np.random.default_rng(6)
    channels, filters = shape[1], shape[1] * multiplier
    x = rng.standard_normal(shape).astype(dtype)
    w = rng.standard_normal((filters, 1, *kernel)).astype(dtype)
    b = rng.standard_normal(filters).astype(dtype)
    params = dict(kernel=kernel, pad=pad, dilate=dilate, num_filter=filters, num_group=channels)
    args = [lazynd.nd.array(a, dtype=dtype) for a in ((x, w, b) if with_bias else (x, w))]
    y = lazynd.nd.Convolution(*args, no_bias=not with_bias, **params)
    want = _naive_output(
        x.astype("float64"),
        w.astype("float64"),
        b.astype("float64") if with_bias else None,
        (1,) * len(kernel),
        pad,
        dilate,
    )
    assert y.dtype == np.dtype(dtype)
    np.testing.assert_allclose(y.asnumpy(), want, rtol=tolerance, atol=tolerance * np.abs(want).max())
    assert taken == [True]


# (data shape, kernel, stride, pad, dilate, multiplier): strides, which the kernels compute by phases
STRIDED_CASES = [
    ((2, 3, 14, 14), (3, 3), (2, 2), (1, 1), (1, 1), 1),  # MobileNet's: phase kernels 2x2, 2x1, 1x2, 1x1
    ((2, 4, 7, 8), (3, 3), (2, 2), (0, 0), (1, 1), 1),  # pad 0, odd and even sizes
    ((2, 3, 9, 10), (3, 3), (2, 2), (2, 2), (2, 2), 1),  # dilation 2: the odd phases are read by no tap
    ((2, 3, 11, 12), (5, 5), (2, 2), (2, 2), (1, 1), 1),  # 5x5: phase kernels 3x3, 3x2, 2x3, 2x2
    ((2, 4, 9, 8), (3, 3), (2, 2), (1, 1), (1, 1), 2),  # multiplier 2
    ((2, 3, 13, 11), (3, 3), (3, 3), (1, 1), (1, 1), 1),  # stride 3: nine phases of one tap
    ((2, 3, 14, 13), (5, 5), (3, 3), (2, 2), (2, 2), 2),  # stride 3, dilation 2: taps 0, 2, 4 -> residues 0, 2, 1
    ((2, 3, 10, 9), (5, 3), (2, 3), (0, 2), (1, 2), 1),  # strides, pads and dilations per axis
    ((1, 2, 3, 3), (3, 3), (3, 3), (2, 2), (1, 1), 1),  # a small image: a phase holds pad alone
    ((3, 5, 11), (3,), (2,), (1,), (1,), 2),  # 1-D
    ((2, 3, 7, 6, 8), (3, 2, 3), (2, 1, 3), (1, 0, 1), (1, 1, 2), 1),  # 3-D
]


@pytest.mark.parametrize("shape,kernel,stride,pad,dilate,multiplier", STRIDED_CASES)
@pytest.mark.parametrize("dtype,tolerance", [("float64", 1e-10), ("float32", 1e-5), ("float16", 2e-2)])
@pytest.mark.parametrize("block_elements", [conv_depthwise.COLUMN_BLOCK_ELEMENTS, 1])
def test_strided_depthwise_kernels_match_a_loop_over_offsets(
    monkeypatch, shape, kernel, stride, pad, dilate, multiplier, dtype, tolerance, block_elements
):
    # the kernels themselves, whichever strides the routes give them
    monkeypatch.setattr(conv_depthwise, "COLUMN_BLOCK_ELEMENTS", block_elements)
    rng = np.random.default_rng(7)
    x = rng.standard_normal(shape).astype(dtype)
    w = rng.standard_normal((multiplier * shape[1], 1, *kernel)).astype(dtype)
    b = rng.standard_normal(w.shape[0]).astype(dtype)
    g = conv_depthwise.Geometry("Convolution", dict(kernel=kernel, stride=stride, pad=pad, dilate=dilate))
    y = np.full((shape[0], w.shape[0], *g.out_size("Convolution", shape[2:])), np.nan, dtype)
    conv_depthwise.conv_forward_depthwise(x, w, b, y, g)
    dy = rng.standard_normal(y.shape).astype(dtype)
    dx, dw, db = np.full_like(x, np.nan), np.full_like(w, np.nan), np.full_like(b, np.nan)
    conv_depthwise.conv_backward_depthwise(x, w, dy, g, [dx, dw, db])
    x64, w64, b64, dy64 = (a.astype("float64") for a in (x, w, b, dy))
    want = [_naive_output(x64, w64, b64, stride, pad, dilate), *_naive_gradients(x64, w64, dy64, stride, pad, dilate)]
    for name, got, expected in zip(("output", "data", "weight"), (y, dx, dw), want, strict=True):
        assert got.dtype == np.dtype(dtype)
        scale = np.abs(expected).max()
        np.testing.assert_allclose(got, expected, rtol=tolerance, atol=tolerance * scale, err_msg=name)
    np.testing.assert_allclose(db, dy64.sum(axis=(0, *range(2, dy.ndim))), rtol=tolerance, atol=tolerance * 10)


def test_depthwise_forward_of_a_channel_last_layout(monkeypatch):
    taken = _spy(monkeypatch, "conv_forward_depthwise")
    rng = np.random.default_rng(8)
    x, w, b = rng.standard_normal((2, 6, 5, 4)), rng.standard_normal((8, 1, 3, 3)), rng.standard_normal(8)
    params = dict(kernel=(3, 3), pad=(1, 1), num_filter=8, num_group=4, layout="NHWC")
    # NHWC: data (N, H, W, C), weight (F, kh, kw, 1), output (N, H, W, F)
    args = [lazynd.nd.array(a, dtype="float64") for a in (x, w.transpose(0, 2, 3, 1), b)]
    y = lazynd.nd.Convolution(*args, **params)
    want = _naive_output(x.transpose(0, 3, 1, 2), w, b, (1, 1), (1, 1), (1, 1))
    np.testing.assert_allclose(y.asnumpy(), want.transpose(0, 2, 3, 1), rtol=1e-10, atol=1e-10)
    assert taken == [True]


@pytest.mark.parametrize(
    "filters,groups,stride,batch,positions,dtype,depthwise",
    [
        (64, 64, (1, 1), 16, 56 * 56, "float32", True),
        (128, 64, (1, 1), 16, 28 * 28, "float64", True),  # multiplier 2
        (64, 64, (1, 1), 1, 7 * 7, "float32", True),  # a small image of one sample: im2col's route is slower
        (64, 64, (1, 1), 16, 10 * 10, "float32", True),
        (64, 64, (1, 1), 16, 7 * 7, "float32", False),  # a small image of a batch: batch-last columns
        (64, 64, (1, 1), 16, 7 * 7, "float16", True),  # ... but not in float16, which has no BLAS
        (64, 64, (2, 2), 1, 56 * 56, "float32", True),  # stride 2 by phases on a large image
        (64, 64, (2, 1), 1, 112 * 56, "float64", True),
        (64, 64, (2, 2), 1, 28 * 28, "float32", False),  # ... not on one sample of 28x28 (im2col's is as fast)
        (64, 64, (2, 2), 16, 28 * 28, "float32", True),  # ... but on a batch of them
        (64, 64, (2, 2), 16, 14 * 14, "float32", False),  # small strided images keep im2col's or batch-last's
        (64, 64, (2, 2), 1, 7 * 7, "float16", True),  # ... but not in float16, at any size and stride
        (64, 64, (3, 3), 16, 7 * 7, "float16", True),
        (64, 64, (3, 3), 16, 56 * 56, "float32", False),  # stride 3's forward lost at 3x3
        (256, 64, (1, 1), 1, 28 * 28, "float32", False),  # multiplier 4
        (20, 1, (1, 1), 1, 24 * 24, "float32", False),  # LeNet's first layer (one channel, 20 filters)
        (64, 32, (1, 1), 1, 28 * 28, "float32", False),  # 2 channels per group
    ],
)
def test_depthwise_forward_route(filters, groups, stride, batch, positions, dtype, depthwise):
    channels = 1 if groups == 1 else 64
    got = conv_depthwise.uses_depthwise_forward(np, channels, filters, groups, stride, batch, positions, dtype)
    assert got is depthwise


@pytest.mark.parametrize("stride", [(2, 2), (1, 2)])
def test_a_strided_depthwise_backward_matches_a_loop_over_offsets(stride):
    rng = np.random.default_rng(5)
    x, w = rng.standard_normal((2, 8, 9, 8)), rng.standard_normal((8, 1, 3, 3))
    params = dict(kernel=(3, 3), stride=stride, pad=(1, 1), num_filter=8, num_group=8, no_bias=True)
    xa, wa = lazynd.nd.array(x, dtype="float64"), lazynd.nd.array(w, dtype="float64")
    dy = rng.standard_normal(lazynd.nd.Convolution(xa, wa, **params).shape)
    dx, dw = lazynd.nd._backward_Convolution(lazynd.nd.array(dy, dtype="float64"), xa, wa, **params)
    want_dx, want_dw = _naive_gradients(x, w, dy, stride, (1, 1), (1, 1))
    np.testing.assert_allclose(dx.asnumpy(), want_dx, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(dw.asnumpy(), want_dw, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("layout", [None, "NHWC"])
def test_a_large_strided_depthwise_layer_takes_the_phases_both_ways(monkeypatch, layout):
    # MobileNet's stride-2 layer of 56x56 outputs: both routes take it, and agree with the loop
    forward, backward = _spy(monkeypatch, "conv_forward_depthwise"), _spy(monkeypatch)
    rng = np.random.default_rng(9)
    x, w, b = rng.standard_normal((1, 3, 112, 111)), rng.standard_normal((3, 1, 3, 3)), rng.standard_normal(3)
    params = dict(kernel=(3, 3), stride=(2, 2), pad=(1, 1), num_filter=3, num_group=3, layout=layout)
    nhwc = (lambda a: a.transpose(0, 2, 3, 1)) if layout else (lambda a: a)
    xa, wa, ba = (lazynd.nd.array(a, dtype="float32") for a in (nhwc(x), nhwc(w), b))
    y = lazynd.nd.Convolution(xa, wa, ba, **params)
    np.testing.assert_allclose(y.asnumpy(), nhwc(_naive_output(x, w, b, (2, 2), (1, 1), (1, 1))), rtol=1e-4, atol=1e-4)
    dy = rng.standard_normal(_naive_output(x, w, None, (2, 2), (1, 1), (1, 1)).shape)
    dx, dw, _ = lazynd.nd._backward_Convolution(lazynd.nd.array(nhwc(dy), dtype="float32"), xa, wa, **params)
    want_dx, want_dw = _naive_gradients(x, w, dy, (2, 2), (1, 1), (1, 1))
    np.testing.assert_allclose(dx.asnumpy(), nhwc(want_dx), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(dw.asnumpy(), nhwc(want_dw), rtol=1e-4, atol=1e-3)
    assert forward == [True] and backward == [True]


def test_depthwise_backward_of_a_channel_last_layout(monkeypatch):
    taken = _spy(monkeypatch)
    rng = np.random.default_rng(2)
    x, w = rng.standard_normal((2, 6, 5, 4)), rng.standard_normal((8, 1, 3, 3))
    params = dict(kernel=(3, 3), pad=(1, 1), num_filter=8, num_group=4, no_bias=True)
    dy = rng.standard_normal((2, 8, 6, 5))
    want = _naive_gradients(x.transpose(0, 3, 1, 2), w, dy, (1, 1), (1, 1), (1, 1))
    # NHWC: data (N, H, W, C), weight (F, kh, kw, 1), dy (N, H, W, F)
    args = [lazynd.nd.array(a, dtype="float64") for a in (dy.transpose(0, 2, 3, 1), x, w.transpose(0, 2, 3, 1))]
    dx, dw = lazynd.nd._backward_Convolution(*args, layout="NHWC", **params)
    np.testing.assert_allclose(dx.asnumpy(), want[0].transpose(0, 2, 3, 1), rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(dw.asnumpy(), want[1].transpose(0, 2, 3, 1), rtol=1e-10, atol=1e-10)
    assert taken == [True]


@pytest.mark.parametrize("left_out", [0, 1, 2, (0, 1)])
def test_depthwise_backward_leaves_out_the_gradients_given_as_none(monkeypatch, left_out):
    taken = _spy(monkeypatch)
    params = dict(kernel=(3, 3), pad=(1, 1), num_filter=16, num_group=8)
    check_gradients_left_out(params, ((2, 8, 5, 5), (16, 1, 3, 3), (2, 16, 5, 5)), left_out)
    assert taken == [True, True]


@pytest.mark.parametrize(
    "channels,filters,groups,stride,positions,dtype,depthwise",
    [
        (64, 64, 64, (1, 1), 7 * 7, "float32", True),
        (4, 4, 4, (1, 1), 56 * 56, "float32", True),  # few groups
        (64, 128, 64, (1, 1), 28 * 28, "float32", True),  # multiplier 2
        (64, 256, 64, (1, 1), 28 * 28, "float32", False),  # multiplier 4: the weight gradient's products grow
        (1, 20, 1, (1, 1), 24 * 24, "float32", False),  # LeNet's first layer (multiplier 20)
        (64, 64, 64, (2, 1), 28 * 28, "float32", True),  # a stride, by phases, from 28x28 outputs
        (64, 128, 64, (3, 3), 56 * 56, "float64", True),
        (64, 64, 64, (2, 2), 14 * 14, "float32", False),  # ... not below: conv_direct's loop is faster there
        (64, 64, 64, (2, 2), 7 * 7, "float16", True),  # ... but not in float16
        (64, 64, 32, (1, 1), 28 * 28, "float32", False),  # 2 channels per group
        (20, 50, 1, (1, 1), 28 * 28, "float32", False),  # dense
    ],
)
def test_depthwise_backward_route(channels, filters, groups, stride, positions, dtype, depthwise):
    got = conv_depthwise.uses_depthwise_backward(np, channels, filters, groups, stride, positions, dtype)
    assert got is depthwise


def test_depthwise_backward_route_leaves_gpu_arrays_to_the_gpu_kernels():
    class FakeCupy:  # any array module but NumPy's
        pass

    assert not conv_depthwise.uses_depthwise_backward(FakeCupy, 64, 64, 64, (1, 1), 3136, "float16")
    assert not conv_depthwise.uses_depthwise_forward(FakeCupy, 64, 64, 64, (2, 2), 1, 3136, "float16")


@pytest.mark.parametrize("shape", [(2, 4, 0, 5), (2, 4, 5, 0), (0, 4, 5, 5)])
@pytest.mark.parametrize("stride,groups", [((1, 1), 4), ((2, 2), 4), ((1, 1), 1)])
def test_a_convolution_without_output_positions_has_zero_gradients(shape, stride, groups):
    # a spatial size of 0 gives an output of none: every term of every gradient holds an element of it
    # (the depthwise kernels' spans and the direct path's blocks failed on it)
    params = dict(kernel=(3, 3), stride=stride, pad=(1, 1), num_filter=4, num_group=groups)
    x = lazynd.nd.zeros(shape, dtype="float64")
    w = lazynd.nd.ones((4, 4 // groups, 3, 3), dtype="float64")
    y = lazynd.nd.Convolution(x, w, lazynd.nd.ones((4,), dtype="float64"), **params)
    grads = lazynd.nd._backward_Convolution(lazynd.nd.ones(y.shape, dtype="float64"), x, w, **params)
    for g, want in zip(grads, (shape, w.shape, (4,)), strict=True):
        assert g.shape == want
        assert not g.asnumpy().any()
