"""The direct CPU backward of depthwise and grouped convolutions: the same gradients as im2col's, the
gradients of central differences, and the route that takes it."""

from __future__ import annotations

import numpy as np
import pytest
from conv_reference import check_gradients_left_out, naive_conv, numeric_gradient_check

import lazynd
from lazynd.ops import conv, conv_direct


def _route_all_to_direct(monkeypatch) -> None:
    """Route every CPU convolution backward, whatever its groups, to the direct path (stride-1 depthwise
    ones too, which take conv_depthwise's route first)."""
    monkeypatch.setattr(conv, "uses_depthwise_backward", lambda *a: False)
    monkeypatch.setattr(conv_direct, "DIRECT_MIN_GROUPS", 1)
    monkeypatch.setattr(conv_direct, "DIRECT_MAX_CHANNELS_PER_GROUP", 1 << 30)
    monkeypatch.setattr(conv_direct, "DIRECT_MAX_FILTERS_PER_GROUP", 1 << 30)


@pytest.fixture
def direct_everywhere(monkeypatch):
    _route_all_to_direct(monkeypatch)


def _spy_direct(monkeypatch) -> list:
    taken: list = []
    real = conv.conv_backward_direct
    monkeypatch.setattr(conv, "conv_backward_direct", lambda *a: (taken.append(True), real(*a)))
    return taken


def _backward(monkeypatch, direct: bool, arrays, params, dtype):
    """Convolution's gradients of a random head, by the direct path or by im2col's."""
    if direct:
        _route_all_to_direct(monkeypatch)
    else:
        monkeypatch.setattr(conv_direct, "DIRECT_MAX_CHANNELS_PER_GROUP", 0)
        monkeypatch.setattr(conv, "uses_depthwise_backward", lambda *a: False)
    taken = _spy_direct(monkeypatch)
    x, w = (lazynd.nd.array(a, dtype=dtype) for a in arrays)
    y = lazynd.nd.Convolution(x, w, lazynd.nd.zeros((params["num_filter"],), dtype=dtype), **params)
    dy = lazynd.nd.array(np.random.default_rng(5).standard_normal(y.shape), dtype=dtype)
    grads = [g.asnumpy() for g in lazynd.nd._backward_Convolution(dy, x, w, **params)]
    assert bool(taken) is direct
    return grads


# (data shape, kernel, stride, pad, dilate, groups, num_filter, layout)
CASES = [
    ((3, 6, 7, 8), (3, 3), (1, 1), (1, 1), (1, 1), 6, 6, None),  # depthwise
    ((2, 4, 7, 6), (3, 3), (1, 1), (1, 1), (1, 1), 4, 8, None),  # depthwise, multiplier 2
    ((2, 4, 9, 9), (3, 3), (2, 2), (1, 1), (1, 1), 4, 4, None),  # stride 2
    ((2, 4, 9, 8), (3, 2), (1, 2), (0, 1), (2, 2), 4, 4, None),  # dilation 2, pads differing per axis
    ((2, 4, 9, 9), (5, 3), (2, 1), (2, 0), (1, 3), 4, 8, None),  # everything at once
    ((3, 5, 11), (3,), (2,), (1,), (2,), 5, 10, None),  # 1-D
    ((2, 3, 4, 5, 4), (2, 3, 2), (1, 1, 2), (0, 1, 1), (1, 1, 1), 3, 3, None),  # 3-D
    ((2, 8, 6, 6), (3, 3), (1, 1), (1, 1), (1, 1), 4, 4, None),  # 2 channels per group
    ((2, 7, 5, 6), (3, 3), (2, 1), (1, 1), (1, 1), 6, 12, "NHWC"),  # channel-last
]


@pytest.mark.parametrize("shape,kernel,stride,pad,dilate,groups,filters,layout", CASES)
@pytest.mark.parametrize("dtype,tolerance", [("float64", 1e-10), ("float32", 2e-5)])
def test_direct_backward_matches_im2col_backward(
    monkeypatch, shape, kernel, stride, pad, dilate, groups, filters, layout, dtype, tolerance
):
    rng = np.random.default_rng(1)
    channels = shape[-1] if layout else shape[1]
    x = rng.standard_normal(shape)
    w = rng.standard_normal((filters, channels // groups, *kernel))
    if layout:
        w = np.moveaxis(w, 1, -1)
    params = dict(
        kernel=kernel, stride=stride, pad=pad, dilate=dilate, num_filter=filters, num_group=groups, layout=layout
    )
    direct = _backward(monkeypatch, True, (x, w), params, dtype)
    im2col = _backward(monkeypatch, False, (x, w), params, dtype)
    for name, got, want in zip(("data", "weight", "bias"), direct, im2col, strict=True):
        scale = np.abs(want).max()
        np.testing.assert_allclose(got, want, rtol=tolerance, atol=tolerance * scale, err_msg=f"{name} gradient")


@pytest.mark.parametrize(
    "shape,kernel,stride,pad,dilate,groups,filters",
    [
        ((2, 3, 5, 4), (3, 3), (1, 1), (1, 1), (1, 1), 3, 3),
        ((2, 2, 5, 5), (3, 2), (2, 1), (1, 0), (1, 2), 2, 4),
        ((2, 3, 7), (3,), (2,), (2,), (2,), 3, 6),
    ],
)
def test_direct_backward_matches_central_differences(
    direct_everywhere, shape, kernel, stride, pad, dilate, groups, filters
):
    rng = np.random.default_rng(2)
    x, w = rng.standard_normal(shape), rng.standard_normal((filters, 1, *kernel))
    b = rng.standard_normal(filters)
    params = dict(kernel=kernel, stride=stride, pad=pad, dilate=dilate, num_filter=filters, num_group=groups)
    numeric_gradient_check("Convolution", [x, w, b], params)


@pytest.mark.parametrize("left_out", [0, 1, 2, (0, 1)])
def test_direct_backward_leaves_out_the_gradients_given_as_none(monkeypatch, left_out):
    # a strided depthwise layer: the direct path's own (stride 1 takes conv_depthwise's)
    taken = _spy_direct(monkeypatch)
    params = dict(kernel=(3, 3), stride=(2, 2), pad=(1, 1), num_filter=8, num_group=8)
    check_gradients_left_out(params, ((2, 8, 5, 5), (8, 1, 3, 3), (2, 8, 3, 3)), left_out)
    assert len(taken) == 2


def test_a_depthwise_convolution_backward_takes_the_direct_path_on_the_cpu_only(monkeypatch, ctx):
    # the user's MobileNet layer: 64 groups of one channel, 3x3, pad 1; a GPU keeps its kernels (the
    # stride-1 layer takes conv_depthwise's route on the CPU, so here it is taken away)
    monkeypatch.setattr(conv, "uses_depthwise_backward", lambda *a: False)
    taken = _spy_direct(monkeypatch)
    rng = np.random.default_rng(4)
    x_np, w_np = rng.standard_normal((4, 64, 8, 8)), rng.standard_normal((64, 1, 3, 3))
    x, w = (lazynd.nd.array(a, ctx=ctx, dtype="float64") for a in (x_np, w_np))
    params = dict(kernel=(3, 3), pad=(1, 1), num_filter=64, num_group=64, no_bias=True)
    y = lazynd.nd.Convolution(x, w, **params)
    want = naive_conv(x_np, w_np, None, (1, 1), (1, 1), (1, 1), 64)
    np.testing.assert_allclose(y.asnumpy(), want, rtol=1e-10, atol=1e-10)
    dx, dw = lazynd.nd._backward_Convolution(lazynd.nd.ones_like(y), x, w, **params)
    # with a head of ones, dw[c, a, b] sums channel c of the padded data over the window at offset (a, b)
    padded = np.pad(x_np, [(0, 0), (0, 0), (1, 1), (1, 1)])
    want_dw = [[padded[:, :, a : a + 8, b : b + 8].sum(axis=(0, 2, 3)) for b in range(3)] for a in range(3)]
    np.testing.assert_allclose(dw.asnumpy()[:, 0], np.moveaxis(np.array(want_dw), -1, 0), rtol=1e-10, atol=1e-10)
    # ... and dx at each pixel sums the weights of the offsets whose window covers it
    want_dx = np.zeros((64, 10, 10))
    for a in range(3):
        for b in range(3):
            want_dx[:, a : a + 8, b : b + 8] += w_np[:, 0, a, b, None, None]
    np.testing.assert_allclose(dx.asnumpy(), np.broadcast_to(want_dx[:, 1:9, 1:9], x.shape), rtol=1e-10, atol=1e-10)
    assert taken == ([True] if ctx.device_type == "cpu" else [])


@pytest.mark.parametrize(
    "channels,filters,groups,direct",
    [
        (64, 64, 64, True),  # depthwise
        (8, 8, 8, True),
        (4, 4, 4, False),  # too few groups: the groups are the direct path's innermost loop
        (64, 128, 64, False),  # multiplier 2
        (64, 64, 32, False),  # 2 channels per group
        (1, 20, 1, False),  # LeNet's first layer
        (20, 50, 1, False),  # dense
    ],
)
def test_direct_backward_route(channels, filters, groups, direct):
    assert conv_direct.uses_direct_backward(np, channels, filters, groups) is direct


def test_direct_backward_route_leaves_gpu_arrays_to_the_gpu_kernels():
    class FakeCupy:  # any array module but NumPy's
        pass

    assert not conv_direct.uses_direct_backward(FakeCupy, 64, 64, 64)
