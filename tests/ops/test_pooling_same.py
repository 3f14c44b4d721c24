"""Pooling with ``pooling_convention='same'``, checked against MXNet 1.9.1's values.

MXNet 1.9.1 pools 1-D data only with 'same' and takes no padding: ``ceil(width / stride)``
windows start at the first element; a window that runs past the last element holds only the
elements inside the input (max ignores the rest; avg divides by their count).  The expected
values below were produced by MXNet 1.9.1 (its native CPU kernels) for ``DATA`` and a head
gradient of ``1, 2, 3, ...`` over the output.
"""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx
import lazynd_sym as sym
from lazynd.errors import LazyNDError
from lazynd.testing import check_gradient

DATA = np.array([[[3.0, 1.0, 4.0, 1.5, 5.0, 9.0, 2.0], [6.0, 5.0, 3.0, 5.5, 8.0, 9.5, 7.0]]])

# (parameters, MXNet's output, MXNet's gradient of the data) for DATA, one row per channel
MXNET_CASES = [
    (
        dict(kernel=(3,), stride=(1,), pool_type="max"),
        [[4.0, 4.0, 5.0, 9.0, 9.0, 9.0, 2.0], [6.0, 5.5, 8.0, 9.5, 9.5, 9.5, 7.0]],
        [[0.0, 0.0, 3.0, 0.0, 3.0, 15.0, 7.0], [8.0, 0.0, 0.0, 9.0, 10.0, 36.0, 14.0]],
    ),
    (
        dict(kernel=(3,), stride=(2,), pool_type="max"),
        [[4.0, 5.0, 9.0, 2.0], [6.0, 8.0, 9.5, 7.0]],
        [[0.0, 0.0, 1.0, 0.0, 2.0, 3.0, 4.0], [5.0, 0.0, 0.0, 0.0, 6.0, 7.0, 8.0]],
    ),
    (
        dict(kernel=(2,), stride=(1,), pool_type="max"),
        [[3.0, 4.0, 4.0, 5.0, 9.0, 9.0, 2.0], [6.0, 5.0, 5.5, 8.0, 9.5, 9.5, 7.0]],
        [[1.0, 0.0, 5.0, 0.0, 4.0, 11.0, 7.0], [8.0, 9.0, 0.0, 10.0, 11.0, 25.0, 14.0]],
    ),
    (
        dict(kernel=(2,), stride=(2,), pool_type="max"),
        [[3.0, 4.0, 9.0, 2.0], [6.0, 5.5, 9.5, 7.0]],
        [[1.0, 0.0, 2.0, 0.0, 0.0, 3.0, 4.0], [5.0, 0.0, 0.0, 6.0, 0.0, 7.0, 8.0]],
    ),
    (
        dict(kernel=(4,), stride=(3,), pool_type="max"),
        [[4.0, 9.0, 2.0], [6.0, 9.5, 7.0]],
        [[0.0, 0.0, 1.0, 0.0, 0.0, 2.0, 3.0], [4.0, 0.0, 0.0, 0.0, 0.0, 5.0, 6.0]],
    ),
    (
        dict(kernel=(3,), stride=(1,), pool_type="avg"),
        [[2.6667, 2.1667, 3.5, 5.1667, 5.3333, 5.5, 2.0], [4.6667, 4.5, 5.5, 7.6667, 8.1667, 8.25, 7.0]],
        [[0.3333, 1.0, 2.0, 3.0, 4.0, 6.0, 11.6667], [2.6667, 5.6667, 9.0, 10.0, 11.0, 14.1667, 24.5]],
    ),
    (
        dict(kernel=(3,), stride=(2,), pool_type="avg"),
        [[2.6667, 3.5, 5.3333, 2.0], [4.6667, 5.5, 8.1667, 7.0]],
        [[0.3333, 0.3333, 1.0, 0.6667, 1.6667, 1.0, 5.0], [1.6667, 1.6667, 3.6667, 2.0, 4.3333, 2.3333, 10.3333]],
    ),
    (
        dict(kernel=(2,), stride=(1,), pool_type="avg"),
        [[2.0, 2.5, 2.75, 3.25, 7.0, 5.5, 2.0], [5.5, 4.0, 4.25, 6.75, 8.75, 8.25, 7.0]],
        [[0.5, 1.5, 2.5, 3.5, 4.5, 5.5, 10.0], [4.0, 8.5, 9.5, 10.5, 11.5, 12.5, 20.5]],
    ),
    (
        dict(kernel=(2,), stride=(2,), pool_type="avg"),
        [[2.0, 2.75, 7.0, 2.0], [5.5, 4.25, 8.75, 7.0]],
        [[0.5, 0.5, 1.0, 1.0, 1.5, 1.5, 4.0], [2.5, 2.5, 3.0, 3.0, 3.5, 3.5, 8.0]],
    ),
    (
        dict(kernel=(4,), stride=(3,), pool_type="avg"),
        [[2.375, 4.375, 2.0], [4.875, 7.5, 7.0]],
        [[0.25, 0.25, 0.25, 0.75, 0.5, 0.5, 3.5], [1.0, 1.0, 1.0, 2.25, 1.25, 1.25, 7.25]],
    ),
    (
        dict(kernel=(3,), stride=(2,), pool_type="avg", count_include_pad=False),
        [[2.6667, 3.5, 5.3333, 2.0], [4.6667, 5.5, 8.1667, 7.0]],
        [[0.3333, 0.3333, 1.0, 0.6667, 1.6667, 1.0, 5.0], [1.6667, 1.6667, 3.6667, 2.0, 4.3333, 2.3333, 10.3333]],
    ),
    (
        dict(kernel=(2,), stride=(2,), pool_type="sum"),
        [[4.0, 5.5, 14.0, 2.0], [11.0, 8.5, 17.5, 7.0]],
        [[1.0, 1.0, 2.0, 2.0, 3.0, 3.0, 4.0], [5.0, 5.0, 6.0, 6.0, 7.0, 7.0, 8.0]],
    ),
    (
        dict(kernel=(3,), stride=(2,), pool_type="lp", p_value=2),
        [[5.099, 6.5765, 10.4881, 2.0], [8.3666, 10.1612, 14.2566, 7.0]],
        [
            [0.5883, 0.1961, 2.0009, 0.4562, 2.9508, 2.5743, 4.5721],
            [3.5857, 2.9881, 3.5643, 3.2476, 8.6519, 4.6645, 11.437],
        ],
    ),
]


@pytest.mark.parametrize(("params", "want", "want_grad"), MXNET_CASES)
def test_same_pooling_matches_mxnet(params, want, want_grad, ctx):
    x = mx.nd.array(DATA, ctx=ctx)
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.Pooling(x, pooling_convention="same", pad=(0, 0, 0), **params)
    head = np.arange(1, y.size + 1, dtype=np.float32).reshape(y.shape)
    y.backward(mx.nd.array(head, ctx=ctx))
    np.testing.assert_allclose(y.asnumpy()[0], want, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(x.grad.asnumpy()[0], want_grad, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize(
    ("width", "kernel", "stride", "want"), [(7, 3, 1, 7), (7, 3, 2, 4), (6, 2, 2, 3), (7, 4, 3, 3)]
)
def test_same_output_width_is_width_over_stride_rounded_up(width, kernel, stride, want):
    net = sym.Pooling(sym.Variable("x"), kernel=(kernel,), stride=(stride,), pooling_convention="same")
    _, out_shapes, _ = net.infer_shape(x=(2, 3, width))
    assert out_shapes == [(2, 3, want)]


def test_same_accepts_pad_omitted_or_zero():
    x = mx.nd.array(DATA)
    want = mx.nd.Pooling(x, kernel=(3,), stride=(2,), pooling_convention="same", pad=(0, 0, 0)).asnumpy()
    for pad in ((), (0,)):
        got = mx.nd.Pooling(x, kernel=(3,), stride=(2,), pooling_convention="same", pad=pad)
        np.testing.assert_array_equal(got.asnumpy(), want)


def test_same_with_channels_last_layout_matches_mxnet():
    x = mx.nd.array(np.arange(7.0).reshape(1, 7, 1))
    y = mx.nd.Pooling(x, kernel=(3,), stride=(2,), pooling_convention="same", layout="NWC")
    np.testing.assert_array_equal(y.asnumpy().ravel(), [2.0, 4.0, 6.0, 6.0])


def test_same_with_global_pool_gives_one_position():
    y = mx.nd.Pooling(
        mx.nd.array(np.arange(7.0).reshape(1, 1, 7)), kernel=(3,), global_pool=True, pooling_convention="same"
    )
    np.testing.assert_array_equal(y.asnumpy(), [[[6.0]]])


@pytest.mark.parametrize("params", [{"pool_type": "max"}, {"pool_type": "avg"}])
def test_same_pooling_numerical_gradient(params):
    check_gradient(
        "Pooling",
        [np.random.default_rng(1).uniform(-1, 1, (2, 2, 7))],
        {"kernel": (3,), "stride": (2,), "pooling_convention": "same", **params},
    )


def test_same_pooling_runs_through_an_executor():
    net = sym.Pooling(sym.Variable("x"), kernel=(2,), stride=(2,), pool_type="avg", pooling_convention="same")
    exe = net.simple_bind(mx.cpu(), x=DATA.shape)
    exe.forward(is_train=True, x=mx.nd.array(DATA))
    np.testing.assert_allclose(exe.outputs[0].asnumpy()[0], [[2.0, 2.75, 7.0, 2.0], [5.5, 4.25, 8.75, 7.0]])


@pytest.mark.parametrize("global_pool", [False, True])
@pytest.mark.parametrize("shape", [(1, 1, 4, 5), (1, 1, 3, 4, 5)])
def test_same_pooling_of_2d_or_3d_data_is_refused_naming_the_convention(shape, global_pool):
    kernel = (2,) * (len(shape) - 2)
    with pytest.raises(LazyNDError, match="pooling_convention='same'.*1-D"):
        mx.nd.Pooling(
            mx.nd.ones(shape), kernel=kernel, global_pool=global_pool, pooling_convention="same"
        ).wait_to_read()


def test_same_pooling_with_padding_is_refused_naming_pad():
    with pytest.raises(LazyNDError, match=r"pooling_convention='same' takes no padding, got pad=\(1,\)"):
        mx.nd.Pooling(mx.nd.ones((1, 1, 5)), kernel=(3,), pad=(1,), pooling_convention="same").wait_to_read()


def test_same_pooling_kernel_wider_than_the_input_is_refused():
    with pytest.raises(LazyNDError, match="kernel"):
        mx.nd.Pooling(mx.nd.ones((1, 1, 7)), kernel=(8,), pooling_convention="same").wait_to_read()
