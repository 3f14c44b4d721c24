"""How the CPU runs a convolution: the batch-last paths agree with the per-sample ones and are taken where
they pay, and a backward leaves out the gradients nobody reads.
"""

from __future__ import annotations

import numpy as np
import pytest
from conv_reference import naive_conv

import lazynd
from lazynd.ops import registry


@pytest.mark.parametrize(
    "shape,kernel,stride,pad,dilate,groups,layout",
    [
        ((9, 3, 9), (3,), (2,), (1,), (1,), 1, None),
        ((8, 4, 7, 8), (3, 2), (1, 2), (1, 0), (2, 1), 2, None),
        ((8, 2, 5, 4, 6), (2, 3, 2), (1, 1, 2), (0, 1, 1), (1, 1, 1), 1, None),
        ((10, 6, 5, 4), (3, 3), (1, 1), (1, 1), (1, 1), 1, "NHWC"),
    ],
)
def test_convolution_batch_last_backward_matches_per_sample_backward(
    monkeypatch, shape, kernel, stride, pad, dilate, groups, layout
):
    # batches of BATCH_LAST_MIN_BATCH or more take the batch-last CPU backward (forced here for
    # columns of any length), against the per-sample one
    from lazynd.ops import conv_columns

    monkeypatch.setattr(conv_columns, "BATCH_LAST_MIN_BACKWARD_COLUMN", 0)

    rng = np.random.default_rng(7)
    channels = shape[-1] if layout else shape[1]
    x = rng.standard_normal(shape)
    w = rng.standard_normal((4, channels // groups, *kernel))
    if layout:
        w = np.moveaxis(w, 1, -1)
    params = dict(kernel=kernel, stride=stride, pad=pad, dilate=dilate, num_filter=4, num_group=groups, layout=layout)
    args = [lazynd.nd.array(a, dtype="float64") for a in (x, w, rng.standard_normal(4))]
    y = lazynd.nd.Convolution(*args, **params)
    dy = lazynd.nd.array(rng.standard_normal(y.shape), dtype="float64")
    batch_last = [g.asnumpy() for g in lazynd.nd._backward_Convolution(dy, args[0], args[1], **params)]
    monkeypatch.setattr(conv_columns, "BATCH_LAST_MIN_BATCH", 1 << 30)
    per_sample = [g.asnumpy() for g in lazynd.nd._backward_Convolution(dy, args[0], args[1], **params)]
    for got, want in zip(batch_last, per_sample, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize(
    "shape,kernel,stride,pad,dilate,groups,layout",
    [
        ((9, 3, 9), (3,), (2,), (1,), (1,), 1, None),
        ((8, 4, 7, 8), (3, 2), (1, 2), (1, 0), (2, 1), 2, None),
        ((8, 4, 9, 9), (3, 3), (2, 2), (2, 1), (1, 2), 4, None),
        ((8, 2, 5, 4, 6), (2, 3, 2), (1, 1, 2), (0, 1, 1), (1, 1, 1), 1, None),
        ((10, 6, 5, 4), (3, 3), (1, 1), (1, 1), (1, 1), 1, "NHWC"),
        ((8, 7, 6, 6), (5, 5), (1, 1), (0, 0), (1, 1), 1, None),
    ],
)
def test_convolution_batch_last_forward_matches_naive_reference(shape, kernel, stride, pad, dilate, groups, layout):
    # batches of BATCH_LAST_MIN_BATCH or more with few output positions take the batch-last CPU forward
    from lazynd.ops import conv_columns

    rng = np.random.default_rng(9)
    x = rng.standard_normal(shape).astype("float32")
    channels = shape[-1] if layout else shape[1]
    w = rng.standard_normal((4, channels // groups, *kernel)).astype("float32")
    b = rng.standard_normal(4).astype("float32")
    x_nc = np.moveaxis(x, -1, 1) if layout else x
    w_given = np.moveaxis(w, 1, -1) if layout else w
    geometry = conv_columns.Geometry("Convolution", dict(kernel=kernel, stride=stride, pad=pad, dilate=dilate), x.ndim)
    positions = int(np.prod(geometry.out_size("Convolution", x_nc.shape[2:])))
    assert conv_columns.uses_batch_last(np, shape[0], positions)
    params = dict(kernel=kernel, stride=stride, pad=pad, dilate=dilate, num_filter=4, num_group=groups, layout=layout)
    for no_bias in (False, True):
        args = [lazynd.nd.array(a) for a in ((x, w_given) if no_bias else (x, w_given, b))]
        y = lazynd.nd.Convolution(*args, no_bias=no_bias, **params).asnumpy()
        want = naive_conv(x_nc, w, None if no_bias else b, stride, pad, dilate, groups)
        got = np.moveaxis(y, -1, 1) if layout else y
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize(
    ("channels", "kernel", "batch_last"), [(1, 5, False), (3, 3, False), (4, 3, True), (20, 5, True)]
)
def test_convolution_backward_takes_batch_last_only_for_long_columns(monkeypatch, channels, kernel, batch_last):
    from lazynd.ops import conv

    taken = []
    real = conv.conv_backward_batch_last
    monkeypatch.setattr(conv, "conv_backward_batch_last", lambda *a: (taken.append(True), real(*a)))
    rng = np.random.default_rng(11)
    x = lazynd.nd.array(rng.standard_normal((8, channels, 9, 9)).astype("float32"))
    w = lazynd.nd.array(rng.standard_normal((4, channels, kernel, kernel)).astype("float32"))
    dy = lazynd.nd.array(rng.standard_normal((8, 4, 10 - kernel, 10 - kernel)).astype("float32"))
    grads = lazynd.nd._backward_Convolution(dy, x, w, kernel=(kernel, kernel), num_filter=4, no_bias=True)
    assert all(np.isfinite(g.asnumpy()).all() for g in grads)
    assert bool(taken) is batch_last


def test_convolution_forward_layouts_agree_at_batch_8(monkeypatch):
    from lazynd.ops import conv_columns

    rng = np.random.default_rng(10)
    args = [rng.standard_normal(s) for s in ((8, 6, 7, 7), (6, 3, 3, 3), (6,))]
    params = dict(kernel=(3, 3), stride=(2, 1), pad=(1, 1), num_filter=6, num_group=2)
    arrays = [lazynd.nd.array(a, dtype="float64") for a in args]
    batch_last = lazynd.nd.Convolution(*arrays, **params).asnumpy()
    monkeypatch.setattr(conv_columns, "BATCH_LAST_MAX_FORWARD_POSITIONS", 0)
    batch_first = lazynd.nd.Convolution(*arrays, **params).asnumpy()
    np.testing.assert_allclose(batch_last, batch_first, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("batch_last", [False, True])
@pytest.mark.parametrize(
    "shape,kernel,stride,pad,groups,layout",
    [((8, 4, 7, 8), (3, 2), (1, 2), (1, 0), 2, None), ((10, 6, 5, 4), (3, 3), (1, 1), (1, 1), 1, "NHWC")],
)
@pytest.mark.parametrize("left_out", [0, 1, 2, (0, 2)])
def test_convolution_backward_leaves_out_the_gradients_given_as_none(
    monkeypatch, ctx, batch_last, shape, kernel, stride, pad, groups, layout, left_out
):
    # an executor passes None for a gradient nobody reads (the first layer's data gradient, a
    # frozen weight's): the others are what the full backward gives
    from lazynd.ops import conv_columns

    if batch_last:
        monkeypatch.setattr(conv_columns, "BATCH_LAST_MIN_BACKWARD_COLUMN", 0)
    else:
        monkeypatch.setattr(conv_columns, "BATCH_LAST_MIN_BATCH", 1 << 30)
    rng = np.random.default_rng(3)
    channels = shape[-1] if layout else shape[1]
    w = rng.standard_normal((4, channels // groups, *kernel))
    if layout:
        w = np.moveaxis(w, 1, -1)
    params = dict(kernel=kernel, stride=stride, pad=pad, num_filter=4, num_group=groups, layout=layout)
    x, w = (lazynd.nd.array(a, ctx=ctx, dtype="float64") for a in (rng.standard_normal(shape), w))
    y = lazynd.nd.Convolution(x, w, lazynd.nd.zeros((4,), ctx=ctx, dtype="float64"), **params)
    dy = lazynd.nd.array(rng.standard_normal(y.shape), ctx=ctx, dtype="float64")
    full = [g.asnumpy() for g in lazynd.nd._backward_Convolution(dy, x, w, **params)]
    skipped = {left_out} if isinstance(left_out, int) else set(left_out)
    out = [None if i in skipped else lazynd.nd.zeros(g.shape, ctx=ctx, dtype="float64") for i, g in enumerate(full)]
    lazynd.nd._backward_Convolution(dy, x, w, out=out, **params)
    for i, (got, want) in enumerate(zip(out, full, strict=True)):
        if got is not None:
            np.testing.assert_allclose(got.asnumpy(), want, rtol=1e-10, atol=1e-10, err_msg=f"gradient {i}")


@pytest.mark.parametrize("left_out", [0, 1, 2])
def test_deconvolution_backward_leaves_out_the_gradients_given_as_none(ctx, left_out):
    rng = np.random.default_rng(4)
    params = dict(kernel=(3, 3), stride=(2, 2), pad=(1, 1), num_filter=3, num_group=1, no_bias=False)
    x, w = (lazynd.nd.array(rng.standard_normal(s), ctx=ctx, dtype="float64") for s in ((2, 4, 5, 5), (4, 3, 3, 3)))
    y = lazynd.nd.Deconvolution(x, w, lazynd.nd.zeros((3,), ctx=ctx, dtype="float64"), **params)
    dy = lazynd.nd.array(rng.standard_normal(y.shape), ctx=ctx, dtype="float64")
    full = [g.asnumpy() for g in lazynd.nd._backward_Deconvolution(dy, x, w, **params)]
    out = [None if i == left_out else lazynd.nd.zeros(g.shape, ctx=ctx, dtype="float64") for i, g in enumerate(full)]
    lazynd.nd._backward_Deconvolution(dy, x, w, out=out, **params)
    for i, (got, want) in enumerate(zip(out, full, strict=True)):
        if got is not None:
            np.testing.assert_allclose(got.asnumpy(), want, rtol=1e-10, atol=1e-10, err_msg=f"gradient {i}")


def test_an_executor_skips_the_data_gradient_of_a_first_convolution(monkeypatch):
    # LeNet's first layer: no one reads the data gradient, so the backward does not compute it
    import lazynd_sym as sym

    op = registry.get("_backward_Convolution")
    seen = []
    kernel = op.raw_forward  # a host executor calls its kernels raw, inside one switch of NumPy's warnings

    def spy(kctx, attrs, inputs, outputs, aux):
        seen.append([o is None for o in outputs])
        kernel(kctx, attrs, inputs, outputs, aux)

    monkeypatch.setattr(op, "raw_forward", spy)
    net = sym.Convolution(sym.Variable("data"), kernel=(3, 3), num_filter=2, name="conv")
    ex = net.simple_bind(
        lazynd.cpu(), grad_req={"data": "null", "conv_weight": "write", "conv_bias": "write"}, data=(2, 1, 5, 5)
    )
    ex.forward(is_train=True)
    ex.backward(lazynd.nd.ones((2, 2, 3, 3)))
    lazynd.nd.waitall()
    assert seen == [[True, False, False]]
    np.testing.assert_allclose(ex.grad_dict["conv_bias"].asnumpy(), [18.0, 18.0])
