"""Convolution and Deconvolution: forward vs a naive loop reference, gradients, layouts, shape errors."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import lazynd
from lazynd.errors import ShapeError
from lazynd.ops import registry


def naive_conv(x, w, b, stride, pad, dilate, groups):
    """Direct convolution with loops (N, C, *spatial) x (F, C/g, *k): the reference."""
    nd = x.ndim - 2
    x = np.pad(x, [(0, 0), (0, 0)] + [(p, p) for p in pad])
    n, c = x.shape[:2]
    f, cg = w.shape[:2]
    k = w.shape[2:]
    out = [(x.shape[2 + i] - dilate[i] * (k[i] - 1) - 1) // stride[i] + 1 for i in range(nd)]
    y = np.zeros((n, f, *out))
    fg = f // groups
    for o in itertools.product(*[range(v) for v in out]):
        for kk in itertools.product(*[range(v) for v in k]):
            idx = tuple(o[i] * stride[i] + kk[i] * dilate[i] for i in range(nd))
            patch = x[(slice(None), slice(None), *idx)]  # (n, c)
            for g in range(groups):
                wk = w[(slice(g * fg, (g + 1) * fg), slice(None), *kk)]  # (fg, cg)
                y[(slice(None), slice(g * fg, (g + 1) * fg), *o)] += patch[:, g * cg : (g + 1) * cg] @ wk.T
    if b is not None:
        y += b.reshape((1, -1) + (1,) * nd)
    return y


def numeric_gradient_check(op_name, arrays, params, rtol=1e-4, atol=1e-6, eps=1e-6):
    """Compare op.gradient (with F = lazynd.nd) against central differences of sum(out * head), in float64."""
    op = registry.get(op_name)
    fn = getattr(lazynd.nd, op_name)
    rng = np.random.default_rng(3)
    inputs = [lazynd.nd.array(a, dtype="float64") for a in arrays]
    out = fn(*inputs, **params)
    head = rng.standard_normal(out.shape)
    grads = op.gradient(lazynd.nd, op.parse(params), inputs, [out], [lazynd.nd.array(head, dtype="float64")])
    for i, (a, g) in enumerate(zip(arrays, grads, strict=True)):
        numeric = np.zeros_like(a)
        for j in range(a.size):
            plus, minus = a.copy(), a.copy()
            plus.flat[j] += eps
            minus.flat[j] -= eps
            args_p = [lazynd.nd.array(plus if k == i else v, dtype="float64") for k, v in enumerate(arrays)]
            args_m = [lazynd.nd.array(minus if k == i else v, dtype="float64") for k, v in enumerate(arrays)]
            fp = (fn(*args_p, **params).asnumpy() * head).sum()
            fm = (fn(*args_m, **params).asnumpy() * head).sum()
            numeric.flat[j] = (fp - fm) / (2 * eps)
        np.testing.assert_allclose(g.asnumpy(), numeric, rtol=rtol, atol=atol, err_msg=f"{op_name} input {i}")


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
    kernel = op.forward

    def spy(kctx, attrs, inputs, outputs, aux):
        seen.append([o is None for o in outputs])
        kernel(kctx, attrs, inputs, outputs, aux)

    monkeypatch.setattr(op, "forward", spy)
    net = sym.Convolution(sym.Variable("data"), kernel=(3, 3), num_filter=2, name="conv")
    ex = net.simple_bind(
        lazynd.cpu(), grad_req={"data": "null", "conv_weight": "write", "conv_bias": "write"}, data=(2, 1, 5, 5)
    )
    ex.forward(is_train=True)
    ex.backward(lazynd.nd.ones((2, 2, 3, 3)))
    lazynd.nd.waitall()
    assert seen == [[True, False, False]]
    np.testing.assert_allclose(ex.grad_dict["conv_bias"].asnumpy(), [18.0, 18.0])


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
    real = conv._conv_backward_batch_last
    monkeypatch.setattr(conv, "_conv_backward_batch_last", lambda *a: (taken.append(True), real(*a)))
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


def test_convolution_infers_weight_and_bias_shapes():
    op = registry.get("Convolution")
    attrs = op.parse(dict(kernel=(5, 5), num_filter=20, stride=(2, 2)))
    ins, outs, _ = op.infer_shape(attrs, [(128, 3, 28, 28), None, None])
    assert ins[1:] == [(20, 3, 5, 5), (20,)]
    assert outs == [(128, 20, 12, 12)]


def test_convolution_takes_the_data_batch_from_a_known_output():
    # MXNet's rule: a convolutional RNN cell's begin state is zeros of batch 0, resolved from the output
    op = registry.get("Convolution")
    attrs = op.parse(dict(kernel=(3, 3), pad=(1, 1), num_filter=4))
    ins, outs, _ = op.infer_shape(attrs, [(0, 4, 5, 5), None, None], [], [(2, 4, 5, 5)])
    assert ins[0] == (2, 4, 5, 5) and outs == [(2, 4, 5, 5)]


def test_convolution_rejects_mismatched_weight():
    x, w = lazynd.nd.zeros((1, 3, 8, 8)), lazynd.nd.zeros((4, 2, 3, 3))
    with pytest.raises(ShapeError, match="weight"):
        lazynd.nd.Convolution(x, w, kernel=(3, 3), num_filter=4, no_bias=True)


def test_convolution_rejects_kernel_larger_than_input():
    with pytest.raises(ShapeError, match="smaller than kernel"):
        lazynd.nd.Convolution(
            lazynd.nd.zeros((1, 1, 2, 2)), lazynd.nd.zeros((1, 1, 3, 3)), kernel=(3, 3), num_filter=1, no_bias=True
        )


@pytest.mark.parametrize("op_name", ["Convolution", "Deconvolution"])
@pytest.mark.parametrize(
    ("data", "params", "message"),
    [
        ((1, 4, 8, 8), dict(num_filter=3, num_group=2), "num_filter 3 must be a positive multiple of num_group 2"),
        ((1, 4, 8, 8), dict(num_filter=0), "num_filter 0 must be a positive multiple of num_group 1"),
        ((4, 8, 8), dict(num_filter=2), r"data must be 4-D for kernel \(3, 3\), got shape \(4, 8, 8\)"),
        ((1, 3, 8, 8), dict(num_filter=2, num_group=2), "data has 3 channels, not a multiple of num_group 2"),
    ],
)
def test_convolutions_reject_bad_groups_and_data_rank_naming_the_operator(op_name, data, params, message):
    op = registry.get(op_name)
    attrs = op.parse(dict(kernel=(3, 3), **params))
    with pytest.raises(lazynd.LazyNDError, match=f"^{op_name}: {message}"):
        op.infer_shape(attrs, [data, None, None])


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


@pytest.mark.parametrize("option", [{"stride": (0, 1)}, {"dilate": (1, 0)}, {"pad": (-1, 0)}], ids=str)
def test_zero_stride_or_dilate_names_the_values_given(option):
    x, w = lazynd.nd.ones((1, 1, 4, 4)), lazynd.nd.ones((1, 1, 2, 2))
    value = next(iter(option.values()))
    with pytest.raises(lazynd.LazyNDError, match=rf"Convolution: .*\({value[0]}, {value[1]}\)"):
        lazynd.nd.Convolution(x, w, kernel=(2, 2), num_filter=1, no_bias=True, **option).asnumpy()


def test_zero_kernel_is_an_operator_error():
    with pytest.raises(lazynd.LazyNDError, match=r"Convolution: kernel .*\(0, 0\)"):
        lazynd.nd.Convolution(
            lazynd.nd.ones((1, 1, 4, 4)), lazynd.nd.ones((1, 1, 1, 1)), kernel=(0, 0), num_filter=1, no_bias=True
        )


def test_deconvolution_rejects_a_pad_that_leaves_no_output(ctx):
    # (3 - 1) * 1 + 2 - 2 * 2 = 0 output columns
    data = lazynd.nd.ones((1, 2, 3), ctx=ctx)
    with pytest.raises(ShapeError, match="leaves no output"):
        lazynd.nd.Deconvolution(data, lazynd.nd.ones((2, 2, 2), ctx=ctx), kernel=(2,), pad=(2,), num_filter=2)
