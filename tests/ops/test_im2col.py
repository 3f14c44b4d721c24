"""im2col / col2im: MXNet 1.9.1's column layout, each the other's gradient, shapes refused by name."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import lazynd as mx
import lazynd_sym as sym
from lazynd.errors import OperatorError, ShapeError
from lazynd.testing import assert_almost_equal, check_gradient

X = np.arange(18, dtype=np.float32).reshape(1, 2, 3, 3)
WINDOW = {"kernel": (2, 2), "stride": (2, 1), "pad": (1, 0)}
# MXNet 1.9.1's results for X and WINDOW
MXNET_COLUMNS = [
    [[0, 0, 3, 4], [0, 0, 4, 5], [0, 1, 6, 7], [1, 2, 7, 8],
     [0, 0, 12, 13], [0, 0, 13, 14], [9, 10, 15, 16], [10, 11, 16, 17]],
]  # fmt: skip
MXNET_IMAGE = [[[[0, 2, 2], [3, 8, 5], [6, 14, 8]], [[9, 20, 11], [12, 26, 14], [15, 32, 17]]]]


def _reference_im2col(x, kernel, stride, dilate, pad):
    """Loop over every window and kernel offset: rows (channel, offset), columns the positions."""
    n, c, *spatial = x.shape
    padded = np.pad(x, [(0, 0), (0, 0)] + [(p, p) for p in pad])
    out = [
        (s + 2 * p - d * (k - 1) - 1) // st + 1
        for s, p, d, k, st in zip(spatial, pad, dilate, kernel, stride, strict=True)
    ]
    rows = []
    for ch in range(c):
        for offset in itertools.product(*[range(k) for k in kernel]):
            row = []
            for pos in itertools.product(*[range(o) for o in out]):
                index = tuple(p * st + o * d for p, st, o, d in zip(pos, stride, offset, dilate, strict=True))
                row.append(padded[(slice(None), ch, *index)])
            rows.append(np.stack(row, axis=-1))
    return np.stack(rows, axis=1)


def test_im2col_matches_mxnet(ctx):
    columns = mx.nd.im2col(mx.nd.array(X, ctx=ctx), **WINDOW)
    assert columns.shape == (1, 8, 4)
    assert columns.asnumpy().tolist() == MXNET_COLUMNS


def test_col2im_matches_mxnet(ctx):
    image = mx.nd.col2im(mx.nd.array(MXNET_COLUMNS, ctx=ctx), output_size=(3, 3), **WINDOW)
    assert image.shape == (1, 2, 3, 3)
    assert image.asnumpy().tolist() == MXNET_IMAGE


@pytest.mark.parametrize(
    ("shape", "window"),
    [
        ((2, 3, 7), {"kernel": (3,), "stride": (2,), "dilate": (2,), "pad": (1,)}),
        ((2, 2, 5, 6), {"kernel": (2, 3), "stride": (1, 2), "dilate": (2, 1), "pad": (1, 1)}),
        ((1, 2, 4, 3, 5), {"kernel": (2, 2, 3), "stride": (2, 1, 1), "pad": (0, 1, 1)}),
    ],
)
def test_im2col_matches_a_loop_over_windows_in_1d_2d_and_3d(ctx, shape, window):
    x = np.random.default_rng(1).standard_normal(shape).astype(np.float32)
    full = {
        "stride": (1,) * len(window["kernel"]),
        "dilate": (1,) * len(window["kernel"]),
        "pad": (0,) * len(window["kernel"]),
    }
    full.update(window)
    expected = _reference_im2col(x, full["kernel"], full["stride"], full["dilate"], full["pad"])
    assert_almost_equal(mx.nd.im2col(mx.nd.array(x, ctx=ctx), **window).asnumpy(), expected)


def test_col2im_is_the_adjoint_of_im2col(ctx):
    rng = np.random.default_rng(2)
    x = rng.standard_normal((2, 3, 5, 4))
    window = {"kernel": (3, 2), "stride": (2, 1), "dilate": (1, 2), "pad": (1, 1)}
    columns = mx.nd.im2col(mx.nd.array(x, ctx=ctx, dtype="float64"), **window)
    y = rng.standard_normal(columns.shape)
    back = mx.nd.col2im(mx.nd.array(y, ctx=ctx, dtype="float64"), output_size=(5, 4), **window)
    assert np.isclose((columns.asnumpy() * y).sum(), (x * back.asnumpy()).sum())


def test_float16_columns_on_every_device(ctx):
    columns = mx.nd.im2col(mx.nd.array(X, ctx=ctx, dtype="float16"), **WINDOW)
    assert columns.dtype == np.float16
    assert columns.asnumpy().tolist() == MXNET_COLUMNS


def test_gradients_are_checked_numerically():
    x = np.random.default_rng(3).standard_normal((1, 2, 4, 4))
    check_gradient("im2col", [x], {"kernel": (2, 2), "stride": (1, 2), "pad": (1, 0)})
    cols = np.random.default_rng(4).standard_normal((1, 8, 10))
    check_gradient("col2im", [cols], {"output_size": (4, 4), "kernel": (2, 2), "stride": (1, 2), "pad": (1, 0)})


def test_im2col_and_col2im_in_a_bound_executor():
    data = sym.Variable("data")
    net = sym.col2im(sym.im2col(data, **WINDOW) * 2, output_size=(3, 3), **WINDOW)
    _, out_shapes, _ = net.infer_shape(data=(1, 2, 3, 3))
    assert out_shapes == [(1, 2, 3, 3)]
    grad = mx.nd.zeros((1, 2, 3, 3))
    exe = net.bind(mx.cpu(), args={"data": mx.nd.array(X)}, args_grad={"data": grad})
    exe.forward(is_train=True)
    assert exe.outputs[0].asnumpy().tolist() == (2 * np.array(MXNET_IMAGE)).tolist()
    exe.backward(mx.nd.ones((1, 2, 3, 3)))
    # each pixel's gradient: 2 times the number of windows it falls in
    counts = mx.nd.col2im(mx.nd.im2col(mx.nd.ones((1, 2, 3, 3)), **WINDOW), output_size=(3, 3), **WINDOW)
    assert_almost_equal(grad.asnumpy(), 2 * counts.asnumpy())


def test_a_kernel_larger_than_the_padded_input_is_refused():
    with pytest.raises(ShapeError, match=r"im2col: input size \(2, 2\) with pad \(0, 0\) is smaller than kernel"):
        mx.nd.im2col(mx.nd.ones((1, 1, 2, 2)), kernel=(3, 3))


def test_a_stride_not_matching_the_kernel_is_refused():
    with pytest.raises(OperatorError, match=r"im2col: stride \(1,\) must have 2 entries like kernel \(2, 2\)"):
        mx.nd.im2col(mx.nd.ones((1, 1, 4, 4)), kernel=(2, 2), stride=(1,))


def test_data_of_the_wrong_rank_for_the_kernel_is_refused():
    with pytest.raises(ShapeError, match=r"im2col: data must be 4-D for a 2-D kernel"):
        mx.nd.im2col(mx.nd.ones((1, 4, 4)), kernel=(2, 2))


def test_col2im_refuses_columns_not_fitting_the_kernel_or_output_size():
    with pytest.raises(ShapeError, match=r"col2im: data's second dimension 5 is not a multiple of the kernel's size 4"):
        mx.nd.col2im(mx.nd.ones((1, 5, 16)), output_size=(5, 5), kernel=(2, 2))
    with pytest.raises(ShapeError, match=r"col2im: data has 10 positions, expected 16 for output_size \(5, 5\)"):
        mx.nd.col2im(mx.nd.ones((1, 4, 10)), output_size=(5, 5), kernel=(2, 2))
    with pytest.raises(ShapeError, match=r"col2im: output_size \(5,\) must have 2 positive sizes"):
        mx.nd.col2im(mx.nd.ones((1, 4, 16)), output_size=(5,), kernel=(2, 2))


def test_im2col_refuses_integer_data():
    with pytest.raises(OperatorError, match=r"im2col: input 'data' has dtype int32"):
        mx.nd.im2col(mx.nd.ones((1, 1, 3, 3), dtype="int32"), kernel=(2, 2))
