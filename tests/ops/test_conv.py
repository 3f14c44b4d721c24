"""Convolution and Deconvolution: forward vs a naive loop reference, gradients vs central differences, both layouts."""

from __future__ import annotations

import numpy as np
import pytest
from conv_reference import naive_conv, numeric_gradient_check

import lazynd


@pytest.mark.parametrize(
    "shape,kernel,stride,pad,dilate,groups",
    [
        ((2, 3, 9), (3,), (2,), (1,), (1,), 1),
        ((2, 4, 7, 8), (3, 2), (1, 2), (1, 0), (2, 1), 2),
        ((1, 2, 5, 4, 6), (2, 3, 2), (1, 1, 2), (0, 1, 1), (1, 1, 1), 1),
    ],
)
def test_convolution_matches_naive_reference(shape, kernel, stride, pad, dilate, groups):
    rng = np.random.default_rng(0)
    x = rng.standard_normal(shape).astype("float32")
    w = rng.standard_normal((4, shape[1] // groups, *kernel)).astype("float32")
    b = rng.standard_normal(4).astype("float32")
    y = lazynd.nd.Convolution(
        lazynd.nd.array(x),
        lazynd.nd.array(w),
        lazynd.nd.array(b),
        kernel=kernel,
        stride=stride,
        pad=pad,
        dilate=dilate,
        num_filter=4,
        num_group=groups,
    )
    np.testing.assert_allclose(y.asnumpy(), naive_conv(x, w, b, stride, pad, dilate, groups), rtol=1e-4, atol=1e-4)


def test_convolution_gradient_matches_central_differences():
    rng = np.random.default_rng(1)
    x, w, b = rng.standard_normal((2, 2, 5, 4)), rng.standard_normal((4, 1, 3, 2)), rng.standard_normal(4)
    params = dict(kernel=(3, 2), stride=(2, 1), pad=(1, 1), dilate=(1, 2), num_filter=4, num_group=2)
    numeric_gradient_check("Convolution", [x, w, b], params)


def test_convolution_gradient_at_batch_8_matches_central_differences():
    rng = np.random.default_rng(8)
    x, w, b = rng.standard_normal((8, 2, 4, 3)), rng.standard_normal((2, 2, 2, 2)), rng.standard_normal(2)
    numeric_gradient_check("Convolution", [x, w, b], dict(kernel=(2, 2), pad=(1, 0), num_filter=2))


def test_convolution_without_bias_has_two_gradients():
    rng = np.random.default_rng(2)
    x, w = rng.standard_normal((1, 2, 4)), rng.standard_normal((3, 2, 2))
    numeric_gradient_check("Convolution", [x, w], dict(kernel=(2,), num_filter=3, no_bias=True))


def test_convolution_nhwc_agrees_with_nchw():
    rng = np.random.default_rng(4)
    x = rng.standard_normal((2, 3, 6, 5)).astype("float32")
    w = rng.standard_normal((4, 3, 3, 3)).astype("float32")
    b = rng.standard_normal(4).astype("float32")
    params = dict(kernel=(3, 3), stride=(2, 1), pad=(1, 1), num_filter=4)
    nchw = lazynd.nd.Convolution(lazynd.nd.array(x), lazynd.nd.array(w), lazynd.nd.array(b), **params)
    nhwc = lazynd.nd.Convolution(
        lazynd.nd.array(x.transpose(0, 2, 3, 1)),
        lazynd.nd.array(w.transpose(0, 2, 3, 1)),
        lazynd.nd.array(b),
        layout="NHWC",
        **params,
    )
    np.testing.assert_allclose(nhwc.asnumpy().transpose(0, 3, 1, 2), nchw.asnumpy(), rtol=1e-5, atol=1e-5)


def test_convolution_nhwc_gradient_matches_central_differences():
    rng = np.random.default_rng(5)
    x, w = rng.standard_normal((1, 4, 3, 2)), rng.standard_normal((2, 2, 2, 2))
    numeric_gradient_check("Convolution", [x, w], dict(kernel=(2, 2), num_filter=2, no_bias=True, layout="NHWC"))


def naive_deconv(x, w, stride, pad, adj):
    """Scatter each input pixel times the kernel into the output: the transpose of convolution."""
    n, c, h, wd = x.shape
    f, kh, kw = w.shape[1:]
    full = np.zeros((n, f, (h - 1) * stride[0] + kh + adj[0], (wd - 1) * stride[1] + kw + adj[1]))
    for i in range(h):
        for j in range(wd):
            full[:, :, i * stride[0] : i * stride[0] + kh, j * stride[1] : j * stride[1] + kw] += np.einsum(
                "nc,cfab->nfab", x[:, :, i, j], w
            )
    return full[:, :, pad[0] : full.shape[2] - pad[0], pad[1] : full.shape[3] - pad[1]]


def test_deconvolution_matches_naive_reference():
    rng = np.random.default_rng(6)
    x = rng.standard_normal((2, 3, 4, 5))
    w = rng.standard_normal((3, 2, 3, 3))
    y = lazynd.nd.Deconvolution(
        lazynd.nd.array(x, dtype="float64"),
        lazynd.nd.array(w, dtype="float64"),
        kernel=(3, 3),
        stride=(2, 2),
        pad=(1, 1),
        adj=(1, 0),
        num_filter=2,
    )
    np.testing.assert_allclose(y.asnumpy(), naive_deconv(x, w, (2, 2), (1, 1), (1, 0)), rtol=1e-10)


def test_deconvolution_target_shape_sets_output_size():
    y = lazynd.nd.Deconvolution(
        lazynd.nd.zeros((1, 2, 4, 4)),
        lazynd.nd.zeros((2, 3, 4, 4)),
        kernel=(4, 4),
        stride=(2, 2),
        target_shape=(8, 8),
        num_filter=3,
    )
    assert y.shape == (1, 3, 8, 8)


def test_deconvolution_target_shape_of_zeros_means_unset():
    x, w = lazynd.nd.ones((1, 2, 4, 4)), lazynd.nd.ones((2, 3, 3, 3))
    params = dict(kernel=(3, 3), stride=(2, 2), pad=(1, 1), adj=(1, 1), num_filter=3, no_bias=True)
    y = lazynd.nd.Deconvolution(x, w, target_shape=(0, 0), **params)
    assert y.shape == (1, 3, 8, 8)  # 2 * (4 - 1) + 3 - 2 * 1 + 1: pad and adj are used
    np.testing.assert_array_equal(y.asnumpy(), lazynd.nd.Deconvolution(x, w, **params).asnumpy())


def test_deconvolution_gradient_matches_central_differences():
    rng = np.random.default_rng(7)
    x, w, b = rng.standard_normal((1, 2, 3, 2)), rng.standard_normal((2, 2, 2, 3)), rng.standard_normal(4)
    params = dict(kernel=(2, 3), stride=(2, 1), pad=(1, 0), adj=(1, 0), num_filter=4, num_group=2, no_bias=False)
    numeric_gradient_check("Deconvolution", [x, w, b], params)


def test_a_deconvolutions_gradient_leaves_out_a_data_that_takes_none():
    # a generator's noise takes no gradient: its col2im-sized product is not computed, and the
    # weight's gradient is written into its buffer
    from lazynd.runtime.capture import PushCapture

    z, w = lazynd.nd.ones((2, 3, 4, 4)), lazynd.nd.ones((3, 2, 3, 3))
    w.attach_grad()
    with lazynd.autograd.record():
        y = lazynd.nd.Deconvolution(z, w, kernel=(3, 3), num_filter=2, no_bias=True)
    with PushCapture() as seen:
        y.backward()
    (outs,) = [args[3] for _, _, args, _, _, op in seen.pushes if op == "_backward_Deconvolution"]
    assert outs[0] is None and outs[1] is w.grad.data_array
    # every output position sums the input over the windows reaching it: each weight sees 2 * 16 ones
    np.testing.assert_array_equal(w.grad.asnumpy(), np.full((3, 2, 3, 3), 32.0))
