"""Unary elementwise operators give MXNet 1.9.1's values: its 1.x operators at edge values, their
gradients and integer results, and relu's gradient where the data is NaN.  (Forward against NumPy,
numerical gradients and errors: ``test_unary.py``.)"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import lazynd as mx
from lazynd.testing import assert_almost_equal

# -- MXNet 1.x unary operators: values MXNet 1.9.1 gives, edge values included ----------------------
EDGES = [-2, -1, -0.5, 0, 0.5, 1, 2, np.nan, np.inf]
MXNET_VALUES = {
    "reciprocal": [-0.5, -1, -2, np.inf, 2, 1, 0.5, np.nan, 0],
    "cbrt": [-1.2599211, -1, -0.7937005, 0, 0.7937005, 1, 1.2599211, np.nan, np.inf],
    "rcbrt": [-0.7937005, -1, -1.2599211, np.inf, 1.2599211, 1, 0.7937005, np.nan, 0],
    "erf": [-0.9953223, -0.8427008, -0.5204999, 0, 0.5204999, 0.8427008, 0.9953223, np.nan, 1],
    "trunc": [-2, -1, -0.0, 0, 0, 1, 2, np.nan, np.inf],
    "logical_not": [0, 0, 0, 1, 0, 0, 0, 0, 0],  # NaN is true
}


@pytest.mark.parametrize("name", sorted(MXNET_VALUES))
def test_mxnet1_unary_gives_mxnets_values_at_edges(name, ctx):
    out = getattr(mx.nd, name)(mx.nd.array(EDGES, ctx=ctx))
    assert_almost_equal(out.asnumpy(), np.array(MXNET_VALUES[name], dtype=np.float32), 1e-6, 1e-7, equal_nan=True)


def test_erfinv_gives_mxnets_values_infinite_at_one_and_nan_outside(ctx):
    x = mx.nd.array([-1, -0.999, -0.5, 0, 0.3, 0.9999, 1, 1.5], ctx=ctx)
    expected = [-np.inf, -2.3267562, -0.47693628, 0, 0.27246273, 2.7510355, np.inf, np.nan]
    assert_almost_equal(mx.nd.erfinv(x).asnumpy(), np.array(expected, dtype=np.float32), 1e-6, 0, equal_nan=True)


def test_erfinv_inverts_erf_in_float64():
    x = np.linspace(-0.999999, 0.999999, 41)
    back = mx.nd.erf(mx.nd.erfinv(mx.nd.array(x, dtype="float64"))).asnumpy()
    assert_almost_equal(back, x, rtol=1e-14, atol=1e-15)


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("reciprocal", [-11.111111, -2.7777777]),
        ("cbrt", [0.7438144, 0.46857372]),
        ("rcbrt", [-1.6597794, -0.65868396]),
        ("erf", [1.0312608, 0.78724337]),
        ("erfinv", [0.9545204, 1.2628626]),
        ("trunc", [0, 0]),
        ("logical_not", [0, 0]),
    ],
)
def test_mxnet1_unary_gradients_are_mxnets(name, expected):
    x = mx.nd.array([0.3, -0.6])
    x.attach_grad()
    with mx.autograd.record():
        y = getattr(mx.nd, name)(x)
    y.backward()
    assert_almost_equal(x.grad.asnumpy(), np.array(expected, dtype=np.float32), rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize(
    ("name", "expected"), [("cbrt", [-1, 0, 1, 1]), ("trunc", [-3, 0, 2, 7]), ("logical_not", [0, 1, 0, 0])]
)
def test_mxnet1_unary_of_int32_truncate_like_mxnet(name, expected):
    out = getattr(mx.nd, name)(mx.nd.array([-3, 0, 2, 7], dtype="int32"))
    assert out.dtype == np.int32
    assert_almost_equal(out.asnumpy(), np.array(expected, dtype=np.int32))


@pytest.mark.parametrize("form", ["relu", "Activation"])
def test_relu_gradient_of_nan_is_nan_as_mxnet(form, ctx):
    # MXNet 1.9.1: relu's gradient at a NaN input is NaN (a diverged value stays visible), not 0
    x = mx.nd.array([np.nan, -1.0, 2.0], ctx=ctx)
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.relu(x) if form == "relu" else mx.nd.Activation(x, act_type="relu")
    y.backward(mx.nd.array([3.0, 3.0, 3.0], ctx=ctx))
    np.testing.assert_array_equal(x.grad.asnumpy(), [np.nan, 0.0, 3.0])


@pytest.mark.parametrize("form", ["relu", "Activation"])
def test_relu_gradient_is_the_gradient_times_relu_grad_as_mxnet(form, ctx):
    # MXNet 1.9.1 multiplies: an infinite gradient of a unit that is off is NaN (inf * 0), a negative
    # one is -0.0; silently (no RuntimeWarning from NumPy)
    x = mx.nd.array([-1.0, -1.0, 2.0, np.nan, 0.0, np.inf], ctx=ctx)
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.relu(x) if form == "relu" else mx.nd.Activation(x, act_type="relu")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        y.backward(mx.nd.array([np.inf, -2.0, np.inf, 1.0, -3.0, 5.0], ctx=ctx))
        grad = x.grad.asnumpy()
    np.testing.assert_array_equal(grad, [np.nan, 0.0, np.inf, np.nan, 0.0, 5.0])
    # (a NaN's sign is the hardware's: x86 makes inf * 0 a negative NaN, an NVIDIA GPU a positive one)
    assert np.signbit(grad[[1, 2, 4, 5]]).tolist() == [True, False, True, False]


def test_relu_backward_operator_takes_any_output_as_mxnet():
    # _backward_relu(g, y) is g * relu_grad(y) for any y: 0 at and below 0
    out = mx.nd._backward_relu(mx.nd.array([3.0, 3.0, 3.0, 3.0]), mx.nd.array([-2.0, -0.0, 0.0, 5.0]))
    np.testing.assert_array_equal(out.asnumpy(), [0.0, 0.0, 0.0, 3.0])


def test_relu_gradient_of_nan_is_nan_in_an_executor():
    data = mx.sym.Variable("data")
    exe = mx.sym.relu(data).simple_bind(mx.cpu(), data=(3,))
    exe.forward(is_train=True, data=mx.nd.array([np.nan, -1.0, 2.0]))
    exe.backward(mx.nd.ones((3,)))
    np.testing.assert_array_equal(exe.grad_dict["data"].asnumpy(), [np.nan, 0.0, 1.0])


def test_relu_backward_operator_into_its_head_gradient_keeps_mxnet_values():
    # the in-place option lets the result take the head gradient's memory (out=g): the rule must
    # read all of g first; a NaN, an infinity times an unit that is off, and the sign of zeros
    y = np.array([-2.0, -0.0, 0.0, 5.0, np.nan, -1.0, 3.0], np.float32)
    g = np.array([3.0, -3.0, -3.0, -2.0, 1.0, np.inf, -0.0], np.float32)
    expected = [0.0, -0.0, -0.0, -2.0, np.nan, np.nan, -0.0]
    fresh = mx.nd._backward_relu(mx.nd.array(g), mx.nd.array(y)).asnumpy()
    head = mx.nd.array(g)
    mx.nd._backward_relu(head, mx.nd.array(y), out=head)
    for got in (fresh, head.asnumpy()):
        np.testing.assert_array_equal(got, expected)
        assert np.signbit(got[[0, 1, 2, 3, 6]]).tolist() == [False, True, True, True, True]
