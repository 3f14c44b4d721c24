"""Reductions (sum, mean, prod, max, min, nan*, norm): values vs NumPy over axes/keepdims/exclude, MXNet shapes
and dtypes, errors, arrays with no elements, devices.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from reduce_inputs import NUMPY, reduce_data

import lazynd as mx
from lazynd.testing import assert_almost_equal, check_consistency, check_forward, np_reduce

AXES = [None, 0, 1, -1, (0, 2), (1, 2)]


@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("axis", AXES)
@pytest.mark.parametrize("name", sorted(NUMPY))
def test_reduction_matches_numpy(name, axis, keepdims, ctx):
    x = reduce_data("float32")

    def reference(v):
        out = np_reduce(v.astype(np.float64), axis, keepdims, NUMPY[name])
        return out.reshape(out.shape or (1,))

    check_forward(name, [x], {"axis": axis, "keepdims": keepdims}, reference, ctx=ctx, rtol=1e-5)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "int32"])
@pytest.mark.parametrize("name", ["sum", "max", "mean"])
def test_last_axis_reduction_over_long_rows(name, dtype, ctx):
    # rows longer than one GPU block exercise the row kernel's strided pass and tree
    x = np.random.default_rng(1).uniform(-2, 2, size=(5, 1000)).astype(dtype)
    want = NUMPY[name](x.astype(np.float64), axis=-1)
    got = check_forward(name, [x], {"axis": -1}, None, ctx=ctx)[0]
    tol = {"float16": 5e-2, "float32": 1e-4}.get(dtype, 1e-9)
    assert_almost_equal(got.astype(np.float64), want.astype(x.dtype).astype(np.float64), rtol=tol, atol=tol)


def test_reduce_all_axes_has_shape_one():
    assert mx.nd.sum(mx.nd.ones((2, 3))).shape == (1,)
    assert mx.nd.sum(mx.nd.ones((2, 3)), keepdims=True).shape == (1, 1)


def test_exclude_reduces_the_other_axes(ctx):
    x = reduce_data()
    check_forward("sum", [x], {"axis": 1, "exclude": True}, lambda v: v.sum(axis=(0, 2)), ctx=ctx)


@pytest.mark.parametrize("axis", [None, ()])
@pytest.mark.parametrize("keepdims", [False, True])
def test_exclude_without_axes_still_reduces_every_axis(axis, keepdims):
    # MXNet 1.9.1: no axis (or an empty tuple) reduces all, whatever ``exclude`` says
    x = reduce_data()
    out = mx.nd.sum(mx.nd.array(x), axis=axis, keepdims=keepdims, exclude=True)
    assert out.shape == ((1, 1, 1) if keepdims else (1,))
    assert_almost_equal(out.asnumpy().reshape(-1), np.array([x.sum()]))


def test_axis_given_as_string_like_symbol_json():
    x = reduce_data()
    check_forward("max", [x], {"axis": "(0, 2)", "keepdims": "True"}, lambda v: v.max(axis=(0, 2), keepdims=True))


def test_old_axis_names_are_aliases():
    x = mx.nd.array(reduce_data())
    assert_almost_equal(mx.nd.sum_axis(x, axis=1), mx.nd.sum(x, axis=1))
    assert_almost_equal(mx.nd.max_axis(x, axis=2), mx.nd.max(x, axis=2))
    assert_almost_equal(mx.nd.min_axis(x, axis=0), mx.nd.min(x, axis=0))


def test_reduction_as_ndarray_method():
    x = mx.nd.array(reduce_data())
    assert_almost_equal(x.sum(axis=1), reduce_data().sum(axis=1).astype(np.float32))


def test_nan_reductions_skip_nans():
    x = np.array([[1.0, np.nan, 2.0], [np.nan, 3.0, 4.0]])
    check_forward("nansum", [x], {"axis": 1}, lambda v: np.nansum(v, axis=1))
    check_forward("nanprod", [x], {"axis": 1}, lambda v: np.nanprod(v, axis=1))


@pytest.mark.parametrize("ord", [1, 2])
@pytest.mark.parametrize("axis", [None, 1, (0, 2)])
def test_norm_matches_numpy(ord, axis, ctx):
    x = reduce_data() - 1.0

    def reference(v):
        out = np_reduce(np.abs(v) ** ord, axis, False, np.sum) ** (1.0 / ord)
        return out.reshape(out.shape or (1,))

    check_forward("norm", [x], {"ord": ord, "axis": axis}, reference, ctx=ctx)


@pytest.mark.parametrize("dtype", ["uint8", "int8", "int32", "int64"])
def test_norm_of_integers_is_the_exact_norm_truncated(dtype, ctx):
    # the squares wrapped in the integer dtype (100 ** 2 is 16 in int8: [16, 100] gave 4); MXNet 1.9.1's
    # integer norm is no better ([3, 4] gives 4, negative int8 data dies of SIGFPE)
    x = mx.nd.array([[16, 100], [3, 4], [1, 2]], ctx=ctx, dtype=dtype)
    got = mx.nd.norm(x, axis=1)
    assert got.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(got.asnumpy(), [101, 5, 2])
    assert mx.nd.norm(x).asnumpy().tolist() == [101]


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("keepdims", [False, True])
def test_norm_of_a_whole_array(dtype, keepdims):
    # float32/float64 take one BLAS dot; float16 the general path (accumulated in float32)
    x = (reduce_data(seed=3) - 1.0).astype(dtype)
    got = mx.nd.norm(mx.nd.array(x, dtype=dtype), keepdims=keepdims)
    assert got.shape == ((1, 1, 1) if keepdims else (1,)) and got.dtype == np.dtype(dtype)
    tol = 1e-2 if dtype == "float16" else 1e-6
    np.testing.assert_allclose(got.asnumpy().reshape(()), np.linalg.norm(x.astype(np.float64)), rtol=tol)
    whole = mx.nd.norm(mx.nd.array(x, dtype=dtype), axis=(0, 1, 2)).asnumpy()
    np.testing.assert_allclose(got.asnumpy().reshape(()), whole.reshape(()), rtol=tol)
    if dtype != "float16":  # the square root taken in double rounds to the dtype's own, bit for bit
        flat = x.reshape(-1)
        assert got.asnumpy().reshape(()) == np.sqrt(np.dot(flat, flat))


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("axis", [None, 1, (0, 1)])
def test_norm_neither_overflows_nor_underflows_where_the_norm_fits(dtype, axis, ctx):
    # the squares of float32 data beyond 1.8e19 overflowed (the norm of 1e30 was inf) and those below
    # 1e-19 underflowed (the norm of 1e-30 was 0); MXNet 1.9.1 scales by the largest magnitude
    big, small = {"float16": (3e4, 1e-4), "float32": (1e30, 1e-30), "float64": (1e200, 1e-200)}[dtype]
    data = np.array([[big, big], [small, small], [0.0, 0.0], [np.inf, 1.0], [np.nan, 1.0]], dtype=dtype)
    got = mx.nd.norm(mx.nd.array(data, ctx=ctx, dtype=dtype), axis=axis)
    scale = np.array([big, small, 1.0, 1.0, 1.0])[:, None]
    rows = scale[:, 0] * np.sqrt(((data.astype(np.float64) / scale) ** 2).sum(axis=1))
    expected = {None: np.array([np.nan]), 1: rows, (0, 1): np.array([np.nan])}[axis]
    assert got.dtype == np.dtype(dtype)
    np.testing.assert_allclose(got.asnumpy().astype(np.float64), expected, rtol=2e-3 if dtype == "float16" else 1e-6)
    finite = mx.nd.norm(mx.nd.array(data[:3], ctx=ctx, dtype=dtype), axis=axis).asnumpy().astype(np.float64)
    whole = np.sqrt(2.0) * big
    np.testing.assert_allclose(finite, whole if axis != 1 else rows[:3], rtol=2e-3 if dtype == "float16" else 1e-6)


@pytest.mark.parametrize("name", ["sum", "prod", "nansum", "nanprod"])
def test_a_float16_reduction_past_the_range_is_inf_without_a_warning(name, ctx):
    # accumulated in float32, then cast to float16: the cast's overflow warned (NumPy's RuntimeWarning
    # reached the user; MXNet, the GPU kernels and every elementwise operator are silent)
    x = mx.nd.array([60000, 60000], ctx=ctx, dtype="float16")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = getattr(mx.nd, name)(x, axis=0).asnumpy()
    assert got.dtype == np.float16 and np.isinf(got).all()


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int32", "int64", "bool", "float16", "float32", "float64"])
def test_the_mean_of_no_elements_is_nan_for_floats_and_0_for_integers_without_a_warning(dtype, ctx):
    # integer data: NumPy's NaN cast to the dtype was INT_MIN for int32, True for bool (MXNet 1.9.1 dies
    # of SIGFPE); float data: NumPy's NaN, which warned "Mean of empty slice" (MXNet is silent)
    empty = mx.nd.zeros((2, 0, 4), ctx=ctx, dtype=dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        whole, rows = mx.nd.mean(empty).asnumpy(), mx.nd.mean(empty, axis=1, keepdims=True).asnumpy()
    expected = np.nan if dtype.startswith("float") else 0
    assert whole.dtype == rows.dtype == np.dtype(dtype) and rows.shape == (2, 1, 4)
    np.testing.assert_array_equal(whole, np.full((1,), expected, dtype))
    np.testing.assert_array_equal(rows, np.full((2, 1, 4), expected, dtype))


def test_axis_out_of_range_is_a_clear_error():
    with pytest.raises(mx.OperatorError, match="sum: axis 3 is out of range for an input of 2 dims"):
        mx.nd.sum(mx.nd.ones((2, 3)), axis=3)


def test_repeated_axis_is_rejected():
    with pytest.raises(mx.OperatorError, match="names an axis twice"):
        mx.nd.sum(mx.nd.ones((2, 3)), axis=(1, -1))


@pytest.mark.parametrize("out_dtype", ["float32", "float64"])
def test_norm_writes_its_out_dtype_and_the_gradient_keeps_the_inputs(out_dtype, ctx):
    # MXNet 1.x's out_dtype: the output in that dtype, the input's gradient in the input's
    x = mx.nd.array([[3.0, 4.0], [6.0, 8.0]], ctx=ctx, dtype="float16")
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.norm(x, axis=1, out_dtype=out_dtype)
    y.backward()
    assert y.dtype == np.dtype(out_dtype)
    np.testing.assert_array_equal(y.asnumpy(), [5.0, 10.0])
    assert x.grad.dtype == np.float16
    np.testing.assert_allclose(x.grad.asnumpy(), [[0.6, 0.8], [0.6, 0.8]], rtol=1e-3)


def test_norm_refuses_an_out_dtype_mxnet_lacks():
    with pytest.raises(mx.LazyNDError, match="norm: invalid value 'uint8' for parameter 'out_dtype'"):
        mx.nd.norm(mx.nd.ones((2,)), out_dtype="uint8")


def test_bad_norm_order_is_rejected():
    with pytest.raises(mx.OperatorError, match="norm: invalid value 3 for parameter 'ord'"):
        mx.nd.norm(mx.nd.ones((2,)), ord=3)


def test_max_of_empty_array_raises():
    with pytest.raises(mx.LazyNDError, match="empty"):
        mx.nd.max(mx.nd.zeros((0, 3)), axis=0).asnumpy()


@pytest.mark.parametrize("name", ["max", "min"])
@pytest.mark.parametrize(
    ("shape", "params", "expected"), [((2, 0, 3), {"axis": 0}, (0, 3)), ((0,), {"axis": 0, "exclude": True}, (0,))]
)
def test_max_with_an_empty_result_is_empty(name, shape, params, expected):
    # NumPy's rule, as for argmax: only a reduction over no elements into a non-empty result has no answer
    out = getattr(mx.nd, name)(mx.nd.zeros(shape), **params)
    assert out.shape == expected and out.asnumpy().shape == expected


@pytest.mark.parametrize("name", ["sum", "mean", "max", "min", "prod", "norm"])
def test_reductions_cpu_and_gpu_agree(name):
    check_consistency(name, [reduce_data("float32", shape=(3, 300))], {"axis": -1}, rtol=1e-4, atol=1e-4)
    check_consistency(name, [reduce_data("float32")], {"axis": (0, 2)}, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("name", ["max", "min"])
def test_max_and_min_of_no_elements_raise_at_the_call(ctx, name):
    """As in MXNet, at the call itself: a program that never waits on the result still hears of it."""
    empty = mx.nd.zeros((5, 0), ctx=ctx)
    with pytest.raises(mx.MXNetError, match=rf"{name}: cannot reduce an empty array of shape \(5, 0\)"):
        getattr(empty, name)()
    assert getattr(mx.nd, name)(empty, axis=0).shape == (0,)


@pytest.mark.gpu
@pytest.mark.skipif(mx.num_gpus() == 0, reason="needs an NVIDIA GPU with CuPy (none visible)")
@pytest.mark.parametrize("name", ["sum", "mean", "max", "min"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize(
    ("shape", "axis"), [((3 * 65536 + 7,), None), ((5, 70001), None), ((2, 3, 65537), (0, 1, 2)), ((9, 40003), 1)]
)
def test_large_gpu_reductions_in_pieces_agree_with_numpy(name, dtype, shape, axis):
    """Whole-array reductions of 65,536 elements or more run as pieces, then one row of their
    results (sizes that do not divide evenly leave a shorter last piece); rows reduce with four
    loads in flight per thread."""
    host = np.random.default_rng(len(shape)).standard_normal(shape).astype(dtype)
    host.flat[12345] = 40.0  # a maximum inside the first piece, a minimum in the last
    host.flat[-3] = -40.0
    got = getattr(mx.nd, name)(mx.nd.array(host, ctx=mx.gpu(0), dtype=dtype), axis=axis).asnumpy()
    want = getattr(np, name)(host.astype(np.float64), axis=axis)
    np.testing.assert_allclose(
        got, want, rtol=1e-4 if dtype == "float32" else 1e-10, atol=1e-3 if dtype == "float32" else 1e-9
    )
