"""mx.nd.contrib / mx.sym.contrib elementwise operators against MXNet 1.9.1: isfinite, isnan,
isinf, div_sqrt_dim, quadratic, arange_like (they were missing: mx.nd.contrib.<op> raised)."""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx
import lazynd_sym as sym
from lazynd.errors import LazyNDError
from lazynd.testing import check_gradient

SPECIAL = np.array([1.0, np.inf, np.nan, -np.inf, 0.0, -2.5])


@pytest.mark.parametrize(
    "name,expected",
    [("isfinite", [1, 0, 0, 0, 1, 1]), ("isnan", [0, 0, 1, 0, 0, 0]), ("isinf", [0, 1, 0, 1, 0, 0])],
)
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_finiteness_tests_give_ones_and_zeros_in_the_data_dtype(name, expected, dtype, ctx):
    y = getattr(mx.nd.contrib, name)(mx.nd.array(SPECIAL, ctx=ctx, dtype=dtype))
    assert y.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(y.asnumpy(), expected)


def test_finiteness_test_of_integers_is_all_finite():
    # MXNet 1.9.1: isfinite of int32 data is 1 everywhere, in int32
    y = mx.nd.contrib.isfinite(mx.nd.array([1, 2, 3], dtype="int32"))
    assert y.dtype == np.int32 and y.asnumpy().tolist() == [1, 1, 1]


def test_finiteness_test_gradient_is_zero():
    x = mx.nd.array([1.0, 2.0])
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.contrib.isnan(x)
    y.backward()
    np.testing.assert_array_equal(x.grad.asnumpy(), [0, 0])


def test_div_sqrt_dim_divides_by_the_root_of_the_last_axis(ctx):
    # MXNet 1.9.1 of arange(6).reshape(2, 3): the division rounds 3 / sqrt(3) to 1.7320509
    y = mx.nd.contrib.div_sqrt_dim(mx.nd.array(np.arange(6).reshape(2, 3), ctx=ctx))
    np.testing.assert_array_equal(y.asnumpy()[1], np.float32([1.7320509, 2.309401, 2.8867514]))
    check_gradient("_contrib_div_sqrt_dim", [np.random.default_rng(0).normal(size=(2, 5))])


@pytest.mark.parametrize("dtype", ["int32", "int64", "int8", "uint8"])
def test_div_sqrt_dim_of_integers_truncates_like_mxnet(dtype, ctx):
    # MXNet 1.9.1 divides integers by the truncated root (sqrt(5) -> 2), truncating toward zero
    values = [5, 7, 9, 127, 1] if dtype == "uint8" else [5, -7, -9, 127, -128]
    y = mx.nd.contrib.div_sqrt_dim(mx.nd.array([values], dtype=dtype, ctx=ctx))
    expected = [2, 3, 4, 63, 0] if dtype == "uint8" else [2, -3, -4, 63, -64]
    assert y.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(y.asnumpy(), [expected])


def test_quadratic_matches_mxnet_and_its_gradient(ctx):
    x = mx.nd.array(np.arange(6).reshape(2, 3), ctx=ctx)
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.contrib.quadratic(x, a=1, b=2, c=3)
    y.backward()
    np.testing.assert_array_equal(y.asnumpy(), [[3, 6, 11], [18, 27, 38]])
    np.testing.assert_array_equal(x.grad.asnumpy(), 2 * np.arange(6).reshape(2, 3) + 2)
    check_gradient("_contrib_quadratic", [np.array([[-1.5, 0.2, 3.0]])], {"a": -0.7, "b": 1.3, "c": 2.0})


def test_quadratic_defaults_are_zero_and_integers_truncate():
    assert mx.nd.contrib.quadratic(mx.nd.array([4.0, -2.0])).asnumpy().tolist() == [0, 0]
    # MXNet 1.9.1: quadratic([1, 2] int32, a=1.5) = [1, 6]
    assert mx.nd.contrib.quadratic(mx.nd.array([1, 2], dtype="int32"), a=1.5).asnumpy().tolist() == [1, 6]


def test_arange_like_counts_over_the_shape_or_an_axis(ctx):
    x = mx.nd.zeros((2, 3), ctx=ctx)
    np.testing.assert_array_equal(mx.nd.contrib.arange_like(x).asnumpy(), np.arange(6).reshape(2, 3))
    y = mx.nd.contrib.arange_like(x, axis=1, start=2, step=0.5, repeat=2)
    np.testing.assert_array_equal(y.asnumpy(), [2, 2, 2.5])
    np.testing.assert_array_equal(mx.nd.contrib.arange_like(x, axis=-2).asnumpy(), [0, 1])


@pytest.mark.parametrize("axis,shape", [(None, (2, 0)), (1, (0,)), (0, (2,))])
def test_arange_like_of_zero_size_data_counts_what_is_there(axis, shape):
    # it raised "cannot infer the output shape" (a 0 was taken for an unknown dim); MXNet 1.9.1
    # under NumPy shape semantics gives the (empty) count
    y = mx.nd.contrib.arange_like(mx.nd.zeros((2, 0)), axis=axis)
    np.testing.assert_array_equal(y.asnumpy(), np.arange(int(np.prod(shape))).reshape(shape))


def test_arange_like_of_integers_truncates_as_mxnet():
    y = mx.nd.contrib.arange_like(mx.nd.zeros((2, 3), dtype="int32"), start=1.5)
    assert y.dtype == np.int32 and y.asnumpy().tolist() == [[1, 2, 3], [4, 5, 6]]


@pytest.mark.parametrize(
    "dtype,params,expected",
    [
        ("int32", {"start": 0.5, "step": 0.7}, [[0, 0, 0], [0, 0, 0]]),
        ("int32", {"start": -1.5, "step": 2.5, "repeat": 2}, [[-1, -1, 1], [1, 3, 3]]),
        ("uint8", {"start": 1.5, "step": 0.5}, [[1, 1, 1], [1, 1, 1]]),
    ],
)
def test_arange_like_of_integers_truncates_start_and_step_first_as_mxnet(dtype, params, expected):
    # MXNet 1.9.1's values; the count was taken in float64 and truncated after ([[0, 1, 1], [2, 3, 4]])
    y = mx.nd.contrib.arange_like(mx.nd.zeros((2, 3), dtype=dtype), **params)
    assert y.dtype == np.dtype(dtype) and y.asnumpy().tolist() == expected


def test_arange_like_symbol_infers_its_shape_and_runs():
    net = sym.contrib.arange_like(sym.Variable("x"), axis=0, step=3)
    _, out_shapes, _ = net.infer_shape(x=(4, 2))
    assert out_shapes == [(4,)]
    ex = net.simple_bind(mx.cpu(), x=(4, 2))
    ex.forward()
    np.testing.assert_array_equal(ex.outputs[0].asnumpy(), [0, 3, 6, 9])


def test_contrib_symbols_run_through_an_executor():
    x = sym.Variable("x")
    net = sym.Group([sym.contrib.quadratic(x, a=2.0), sym.contrib.div_sqrt_dim(x), sym.contrib.isinf(x)])
    ex = net.simple_bind(mx.cpu(), x=(1, 4))
    ex.arg_dict["x"][:] = np.array([[1.0, 2.0, 3.0, 4.0]])
    outs = [o.asnumpy() for o in ex.forward()]
    np.testing.assert_allclose(outs[0], [[2, 8, 18, 32]])
    np.testing.assert_allclose(outs[1], [[0.5, 1, 1.5, 2]])
    np.testing.assert_array_equal(outs[2], [[0, 0, 0, 0]])


def test_bad_arguments_are_clear_errors():
    with pytest.raises(LazyNDError, match="arange_like.*axis 2"):
        mx.nd.contrib.arange_like(mx.nd.zeros((2, 3)), axis=2)
    with pytest.raises(LazyNDError, match="arange_like.*repeat"):
        mx.nd.contrib.arange_like(mx.nd.zeros((2, 3)), repeat=0).asnumpy()
    with pytest.raises(LazyNDError, match="quadratic.*'a'"):
        mx.nd.contrib.quadratic(mx.nd.zeros((2,)), a="steep")
