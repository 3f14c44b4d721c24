"""Pooling (max/avg/sum, valid/full, global, NHWC) and nearest UpSampling."""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest

import lazynd
from lazynd.errors import ShapeError
from lazynd.testing import check_gradient

rng = np.random.default_rng(0)


def naive_pool(x, kernel, stride, pad, pool_type, full=False):
    n, c, h, w = x.shape
    outs = []
    for size, k, s, p in zip((h, w), kernel, stride, pad, strict=True):
        span = size + 2 * p - k
        outs.append((-(-span // s) if full else span // s) + 1)
    y = np.zeros((n, c, *outs))
    for i, j in itertools.product(range(outs[0]), range(outs[1])):
        r0, c0 = i * stride[0] - pad[0], j * stride[1] - pad[1]
        r1, c1 = min(r0 + kernel[0], h + pad[0]), min(c0 + kernel[1], w + pad[1])
        window = x[:, :, max(r0, 0) : min(r1, h), max(c0, 0) : min(c1, w)]
        if pool_type == "max":
            y[:, :, i, j] = window.max(axis=(2, 3))
        elif pool_type == "sum":
            y[:, :, i, j] = window.sum(axis=(2, 3))
        else:
            y[:, :, i, j] = window.sum(axis=(2, 3)) / ((r1 - r0) * (c1 - c0))
    return y


@pytest.mark.parametrize("pool_type", ["max", "avg", "sum"])
@pytest.mark.parametrize("convention", ["valid", "full"])
def test_pooling_matches_naive_reference(pool_type, convention):
    x = rng.standard_normal((2, 3, 7, 6))
    params = dict(kernel=(3, 2), stride=(2, 2), pad=(1, 0), pool_type=pool_type, pooling_convention=convention)
    y = lazynd.nd.Pooling(lazynd.nd.array(x, dtype="float64"), **params)
    expected = naive_pool(x, (3, 2), (2, 2), (1, 0), pool_type, convention == "full")
    np.testing.assert_allclose(y.asnumpy(), expected, rtol=1e-10)


@pytest.mark.parametrize("pool_type", ["max", "avg", "sum"])
def test_pooling_gradient(pool_type):
    x = rng.permutation(60).reshape(1, 3, 4, 5) / 10.0  # distinct values: max is unambiguous
    params = dict(kernel=(2, 3), stride=(2, 1), pad=(1, 1), pool_type=pool_type, pooling_convention="full")
    check_gradient("Pooling", [x], params, rtol=1e-4, atol=1e-6)


def naive_max_pool_backward(x, dy, kernel, stride):
    """Each output's gradient to the first maximum of its window (row-major order), no padding."""
    dx = np.zeros_like(x)
    for i, j in itertools.product(range(dy.shape[2]), range(dy.shape[3])):
        r0, c0 = i * stride[0], j * stride[1]
        window = x[:, :, r0 : r0 + kernel[0], c0 : c0 + kernel[1]].reshape(*x.shape[:2], -1)
        first = window.argmax(axis=2)  # argmax: the first maximum
        rows, cols = r0 + first // kernel[1], c0 + first % kernel[1]
        for n, c in itertools.product(range(x.shape[0]), range(x.shape[1])):
            dx[n, c, rows[n, c], cols[n, c]] += dy[n, c, i, j]
    return dx


@pytest.mark.parametrize(
    "shape,kernel,stride",
    [
        ((3, 2, 6, 8), (2, 2), (2, 2)),  # windows tile the input (LeNet's pools)
        ((3, 2, 7, 5), (2, 2), (2, 2)),  # a last row and column outside every window
        ((2, 3, 8, 9), (2, 2), (3, 3)),  # gaps between windows
        ((2, 2, 9, 6), (3, 2), (3, 2)),
        ((2, 2, 7, 7), (3, 3), (2, 2)),  # overlapping windows
    ],
)
@pytest.mark.parametrize("layout", [None, "NHWC"])
def test_max_pooling_gradient_goes_to_the_first_maximum_of_each_window(ctx, shape, kernel, stride, layout):
    # small integers: many windows hold their maximum twice, and only the first one takes the gradient
    x = rng.integers(0, 4, shape).astype(np.float64)
    params = dict(kernel=kernel, stride=stride, pool_type="max")
    y = naive_pool(x, kernel, stride, (0, 0), "max")
    dy = rng.standard_normal(y.shape)
    want = naive_max_pool_backward(x, dy, kernel, stride)
    to_layout = (lambda a: np.ascontiguousarray(a.transpose(0, 2, 3, 1))) if layout else (lambda a: a)
    arrays = [lazynd.nd.array(to_layout(a), ctx=ctx, dtype="float64") for a in (dy, x, y)]
    got = lazynd.nd._backward_Pooling(*arrays, layout=layout, **params).asnumpy()
    # a wrong maximum moves a whole gradient value; where windows overlap, a GPU adds an element's
    # shares in the order its threads finish, which may change the last bit of a float64
    np.testing.assert_allclose(got, to_layout(want), rtol=1e-12, atol=1e-12)


def test_global_pooling_reduces_all_spatial_positions():
    x = rng.standard_normal((2, 3, 4, 5))
    y = lazynd.nd.Pooling(lazynd.nd.array(x, dtype="float64"), global_pool=True, pool_type="avg")
    np.testing.assert_allclose(y.asnumpy(), x.mean(axis=(2, 3), keepdims=True), rtol=1e-10)


def test_pooling_nhwc_agrees_with_nchw():
    x = rng.standard_normal((2, 3, 6, 5)).astype("float32")
    params = dict(kernel=(3, 3), stride=(2, 1), pad=(1, 1), pool_type="max")
    nchw = lazynd.nd.Pooling(lazynd.nd.array(x), **params).asnumpy()
    nhwc = lazynd.nd.Pooling(lazynd.nd.array(x.transpose(0, 2, 3, 1)), layout="NHWC", **params).asnumpy()
    np.testing.assert_array_equal(nhwc.transpose(0, 3, 1, 2), nchw)


def test_pooling_1d_and_3d():
    x1 = rng.standard_normal((2, 3, 8))
    y1 = lazynd.nd.Pooling(lazynd.nd.array(x1, dtype="float64"), kernel=(2,), stride=(2,), pool_type="max")
    np.testing.assert_allclose(y1.asnumpy(), x1.reshape(2, 3, 4, 2).max(axis=3))
    x3 = rng.standard_normal((1, 2, 4, 4, 4))
    y3 = lazynd.nd.Pooling(lazynd.nd.array(x3, dtype="float64"), kernel=(2, 2, 2), stride=(2, 2, 2), pool_type="sum")
    np.testing.assert_allclose(y3.asnumpy(), x3.reshape(1, 2, 2, 2, 2, 2, 2, 2).sum(axis=(3, 5, 7)), rtol=1e-10)


def test_pooling_rejects_kernel_larger_than_input():
    with pytest.raises(ShapeError, match="larger"):
        lazynd.nd.Pooling(lazynd.nd.zeros((1, 1, 2, 2)), kernel=(3, 3))


def test_upsampling_nearest_repeats_pixels_and_sums_gradient():
    x = rng.standard_normal((1, 2, 2, 3))
    y = lazynd.nd.UpSampling(lazynd.nd.array(x, dtype="float64"), scale=2, sample_type="nearest")
    np.testing.assert_array_equal(y.asnumpy(), x.repeat(2, axis=2).repeat(2, axis=3))
    check_gradient("UpSampling", [x], dict(scale=2, sample_type="nearest"), rtol=1e-4, atol=1e-6)


def test_upsampling_concatenates_inputs_scaled_to_a_common_size():
    a, b = rng.standard_normal((1, 1, 2, 2)), rng.standard_normal((1, 2, 4, 4))
    y = lazynd.nd.UpSampling(lazynd.nd.array(a), lazynd.nd.array(b), scale=4, sample_type="nearest", num_args=2)
    assert y.shape == (1, 3, 8, 8)
    np.testing.assert_allclose(y.asnumpy()[:, 1:], b.repeat(2, axis=2).repeat(2, axis=3).astype("float32"))


@pytest.mark.parametrize("mode, b_channels", [("concat", 3), ("sum", 2)])
def test_upsampling_binds_with_gradients_of_every_input(mode, b_channels):
    import lazynd_sym as sym

    out = sym.UpSampling(
        sym.Variable("a"), sym.Variable("b"), scale=2, sample_type="nearest", multi_input_mode=mode, num_args=2
    )
    ex = out.simple_bind(lazynd.cpu(), a=(1, 2, 2, 2), b=(1, b_channels, 1, 1))
    ex.forward(is_train=True)
    head = np.arange(np.prod(ex.outputs[0].shape), dtype=np.float32).reshape(ex.outputs[0].shape)
    ex.backward(lazynd.nd.array(head))
    # each input's gradient sums the head over the pixels it was copied to (values MXNet 1.9.1 gives)
    begin = 2 if mode == "concat" else 0
    np.testing.assert_array_equal(ex.grad_dict["a"].asnumpy(), head[:, :2].reshape(1, 2, 2, 2, 2, 2).sum(axis=(3, 5)))
    expected_b = head[:, begin : begin + b_channels].sum(axis=(2, 3), keepdims=True)
    np.testing.assert_array_equal(ex.grad_dict["b"].asnumpy(), expected_b)


@pytest.mark.parametrize("stride, pad", [((0, 0), (0, 0)), ((1, 0), (0, 0)), ((1, 1), (-1, 0))])
def test_zero_stride_or_negative_pad_is_an_operator_error(stride, pad):
    x = lazynd.nd.ones((1, 1, 4, 4))
    with pytest.raises(lazynd.LazyNDError, match=rf"Pooling: stride \({stride[0]}, {stride[1]}\) must be positive"):
        lazynd.nd.Pooling(x, kernel=(2, 2), stride=stride, pad=pad, pool_type="max").asnumpy()


@pytest.mark.parametrize("pool_type", ["max", "avg"])
@pytest.mark.parametrize(
    "shape, kernel, pad", [((1, 1, 4, 4), (2, 2), (2, 2)), ((1, 1, 4, 4), (3, 3), (3, 1)), ((1, 1, 6), (2,), (3,))]
)
def test_a_pad_as_wide_as_the_kernel_is_refused(pool_type, shape, kernel, pad):
    # whole windows of padding: max pooling gave -inf there, avg 0; MXNet 1.9.1 refuses both
    x = lazynd.nd.ones(shape)
    with pytest.raises(lazynd.LazyNDError, match=r"Pooling: pad \(.*\) must be smaller than kernel"):
        lazynd.nd.Pooling(x, kernel=kernel, pad=pad, pool_type=pool_type)
    narrower = tuple(min(p, k - 1) for p, k in zip(pad, kernel, strict=True))
    assert np.isfinite(lazynd.nd.Pooling(x, kernel=kernel, pad=narrower, pool_type=pool_type).asnumpy()).all()


@pytest.mark.parametrize(
    "mode,second", [("sum", (1, 3, 4, 4)), ("concat", (2, 3, 4, 4))], ids=["sum-channels", "concat-batch"]
)
def test_upsampling_refuses_inputs_it_cannot_combine_at_the_call(mode, second):
    # MXNet refuses these too; lazynd failed inside the kernel with NumPy's broadcast error
    first = lazynd.nd.ones((1, 2, 2, 2))
    with pytest.raises(ShapeError, match=f"UpSampling: multi_input_mode='{mode}' needs inputs of one"):
        lazynd.nd.UpSampling(first, lazynd.nd.ones(second), scale=2, num_args=2, multi_input_mode=mode)


def test_avg_pooling_window_past_the_padded_input_averages_to_zero(ctx):
    """The full convention with a stride beyond the kernel: 7 columns, kernel 1, stride 4 give 3 windows,
    the last starting at column 8, past the input: it averages nothing, 0 (not 0 / 0)."""
    x = np.arange(14, dtype=np.float32).reshape(1, 1, 2, 7) + 1
    data = lazynd.nd.array(x, ctx=ctx)
    data.attach_grad()
    with lazynd.autograd.record():
        y = lazynd.nd.Pooling(data, kernel=(1, 1), stride=(1, 4), pool_type="avg", pooling_convention="full")
    y.backward()
    np.testing.assert_array_equal(y.asnumpy(), [[[[1, 5, 0], [8, 12, 0]]]])
    expected_grad = np.zeros_like(x)
    expected_grad[..., [0, 4]] = 1
    np.testing.assert_array_equal(data.grad.asnumpy(), expected_grad)


@pytest.mark.parametrize("dtype", ["int32", "uint8", "int64"])
def test_integer_max_pooling_window_of_padding_alone_gives_the_smallest_integer_without_a_warning(dtype):
    """Integers hold no -inf: a window of padding alone (the full convention's window past the input)
    gives the dtype's smallest value, with no invalid cast of -inf on the way."""
    x = lazynd.nd.array(np.arange(6).reshape(1, 1, 6), dtype=dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        y = lazynd.nd.Pooling(x, kernel=(2,), stride=(3,), pool_type="max", pooling_convention="full").asnumpy()
    np.testing.assert_array_equal(y, np.array([[[1, 4, np.iinfo(dtype).min]]], dtype=dtype))


@pytest.mark.parametrize(
    ("shape", "scale", "message"),
    [
        ((2, 3), 2, r"UpSampling: inputs must be 4-D .* got shape \(2, 3\)"),
        ((1, 2, 0, 3), 2, r"UpSampling: inputs must be 4-D .* with a height and a width, got shape \(1, 2, 0, 3\)"),
        ((1, 2, 3, 3), 0, "UpSampling: scale must be a positive integer, got 0"),
    ],
)
def test_upsampling_refuses_data_it_cannot_scale_by_name(shape, scale, message):
    with pytest.raises(lazynd.LazyNDError, match=message):
        lazynd.nd.UpSampling(lazynd.nd.ones(shape), scale=scale, sample_type="nearest", num_args=1).wait_to_read()
    with pytest.raises(lazynd.LazyNDError, match=message):
        lazynd.sym.UpSampling(lazynd.sym.Variable("a"), scale=scale, sample_type="nearest", num_args=1).infer_shape(
            a=shape
        )


def test_upsampling_names_an_input_that_needs_a_different_scale_per_axis():
    # (4, 2) -> 4x16 would need 1 on rows and 8 on columns: MXNet 1.9.1 infers the shape, then fails in its kernel
    first, second = lazynd.nd.ones((1, 1, 1, 4)), lazynd.nd.ones((1, 1, 4, 2))
    message = r"UpSampling: input 1 of shape \(1, 1, 4, 2\) cannot be scaled by one integer factor on both axes to 4x16"
    with pytest.raises(ShapeError, match=message):
        lazynd.nd.UpSampling(first, second, scale=4, sample_type="nearest", num_args=2)


@pytest.mark.parametrize(
    "pool_type,kwargs",
    [("sum", {}), ("avg", {}), ("avg", {"count_include_pad": False}), ("lp", {"p_value": 1})],
)
def test_float16_pooling_over_a_large_window_sums_in_float32(pool_type, kwargs):
    # a 64x64 window: float16 sums stop growing at 2048 times the step of their elements (2048 + 1
    # rounds back to 2048), so the sum of 4096 ones came out as 2048 and an average of values in
    # [0, 3) as 2.73 instead of 1.5; MXNet 1.9.1 sums in float32 and gives them to float16's precision
    gen = np.random.default_rng(3)
    x = (gen.random((2, 3, 64, 64)) * 3).astype(np.float16)
    data = lazynd.nd.array(x, dtype="float16")
    data.attach_grad()
    with lazynd.autograd.record():
        y = lazynd.nd.Pooling(data, kernel=(64, 64), pool_type=pool_type, **kwargs)
    dy = gen.random(y.shape).astype(np.float16)
    y.backward(lazynd.nd.array(dy, dtype="float16"))
    sums = x.astype(np.float64).sum(axis=(2, 3), keepdims=True)
    count = 1 if pool_type in ("sum", "lp") else 64 * 64
    assert y.dtype == np.float16 and data.grad.dtype == np.float16
    np.testing.assert_allclose(y.asnumpy(), sums / count, rtol=2e-3)
    grad = np.broadcast_to(dy.astype(np.float64) / count, x.shape)
    np.testing.assert_allclose(data.grad.asnumpy(), grad, rtol=2e-3, atol=1e-7)
