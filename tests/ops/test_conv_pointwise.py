"""1x1 convolutions (stride 1, no padding) take the data as their columns: the same values and
gradients as the products they stand for, in both CPU layouts, with groups, channel-last data,
and through im2col/col2im and Deconvolution, which share the columns' code."""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx

rng = np.random.default_rng(21)


def _reference(x, w, b, groups):
    n, c = x.shape[:2]
    f = w.shape[0]
    xg = x.reshape(n, groups, c // groups, -1)
    wg = w.reshape(groups, f // groups, c // groups)
    y = np.einsum("gfc,ngcp->ngfp", wg, xg).reshape(n, f, *x.shape[2:])
    return y + b.reshape(1, -1, *(1,) * (x.ndim - 2))


@pytest.mark.parametrize("batch", [2, 16])  # batch-first and batch-last kernels
@pytest.mark.parametrize("groups", [1, 2])
@pytest.mark.parametrize("spatial", [(5, 7), (6,)])
def test_pointwise_convolution_values_and_gradients(batch, groups, spatial):
    x = rng.standard_normal((batch, 4, *spatial))
    w = rng.standard_normal((6, 4 // groups, *(1,) * len(spatial)))
    b = rng.standard_normal(6)
    dy = rng.standard_normal((batch, 6, *spatial))
    args = [mx.nd.array(a, dtype="float64") for a in (x, w, b)]
    for a in args:
        a.attach_grad()
    with mx.autograd.record():
        y = mx.nd.Convolution(*args, kernel=(1,) * len(spatial), num_filter=6, num_group=groups)
    y.backward(mx.nd.array(dy, dtype="float64"))
    np.testing.assert_allclose(y.asnumpy(), _reference(x, w, b, groups), rtol=1e-12, atol=1e-12)
    # the gradients by the adjoint products
    wg = w.reshape(groups, 6 // groups, 4 // groups)
    dyg = dy.reshape(batch, groups, 6 // groups, -1)
    xg = x.reshape(batch, groups, 4 // groups, -1)
    dx = np.einsum("gfc,ngfp->ngcp", wg, dyg).reshape(x.shape)
    dw = np.einsum("ngfp,ngcp->gfc", dyg, xg).reshape(w.shape)
    np.testing.assert_allclose(args[0].grad.asnumpy(), dx, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(args[1].grad.asnumpy(), dw, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(
        args[2].grad.asnumpy(), dy.sum(axis=tuple(i for i in range(dy.ndim) if i != 1)), rtol=1e-12
    )


def test_pointwise_convolution_on_channel_last_data():
    x = rng.standard_normal((3, 5, 5, 4)).astype(np.float32)
    w = rng.standard_normal((6, 1, 1, 4)).astype(np.float32)
    y = mx.nd.Convolution(mx.nd.array(x), mx.nd.array(w), kernel=(1, 1), num_filter=6, no_bias=True, layout="NHWC")
    np.testing.assert_allclose(y.asnumpy(), np.einsum("nhwc,fc->nhwf", x, w[:, 0, 0, :]), rtol=1e-5, atol=1e-5)


def test_a_strided_or_padded_1x1_window_is_no_pointwise_geometry():
    x = rng.standard_normal((2, 3, 6, 6))
    w = rng.standard_normal((2, 3, 1, 1))
    strided = mx.nd.Convolution(
        mx.nd.array(x), mx.nd.array(w), kernel=(1, 1), stride=(2, 2), num_filter=2, no_bias=True
    )
    np.testing.assert_allclose(
        strided.asnumpy(), np.einsum("nchw,fc->nfhw", x[:, :, ::2, ::2], w[:, :, 0, 0]), rtol=1e-5
    )
    padded = mx.nd.Convolution(mx.nd.array(x), mx.nd.array(w), kernel=(1, 1), pad=(1, 1), num_filter=2, no_bias=True)
    assert padded.shape == (2, 2, 8, 8) and np.all(padded.asnumpy()[:, :, 0, :] == 0)


def test_im2col_col2im_and_deconvolution_with_a_1x1_window():
    x = rng.standard_normal((2, 3, 4, 5))
    col = mx.nd.im2col(mx.nd.array(x), kernel=(1, 1))
    np.testing.assert_array_equal(col.asnumpy(), x.reshape(2, 3, 20).astype(np.float32))
    back = mx.nd.col2im(col, output_size=(4, 5), kernel=(1, 1))
    np.testing.assert_array_equal(back.asnumpy(), x.astype(np.float32))
    w = rng.standard_normal((3, 2, 1, 1))
    y = mx.nd.Deconvolution(mx.nd.array(x), mx.nd.array(w), kernel=(1, 1), num_filter=2, no_bias=True)
    np.testing.assert_allclose(y.asnumpy(), np.einsum("nchw,cf->nfhw", x, w[:, :, 0, 0]), rtol=1e-5, atol=1e-5)
