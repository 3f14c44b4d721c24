"""mx.nd.contrib / mx.sym.contrib allclose, index_array, gradientmultiplier, round_ste and
sign_ste against MXNet 1.9.1 (values below were computed with MXNet 1.9.1 and pasted in)."""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx
import lazynd_sym as sym
from lazynd.errors import LazyNDError

HEAD = [1.0, 2.0, 3.0, 4.0, 5.0]
DATA = [1.4, -2.6, 0.5, -0.5, 2.5]


def test_allclose_is_a_0d_uint8_with_nans_equal_by_default(ctx):
    a = mx.nd.array([1, 2, np.nan], ctx=ctx)
    b = mx.nd.array([1, 2.00001, np.nan], ctx=ctx)
    close = mx.nd.contrib.allclose(a, b)
    assert close.shape == () and close.dtype == np.uint8 and int(close.asnumpy()) == 1
    assert int(mx.nd.contrib.allclose(a, b, equal_nan=False).asnumpy()) == 0
    assert int(mx.nd.contrib.allclose(a, b + 1e-3, rtol=0, atol=1e-2).asnumpy()) == 1


@pytest.mark.parametrize(
    "a,b,expected",
    [
        ([np.inf, 1], [np.inf, 1], 1),
        ([-np.inf, 1], [-np.inf, 1], 1),
        ([np.inf, 1], [-np.inf, 1], 1),
        ([np.inf], [1], 0),
    ],
)
def test_allclose_of_infinities_as_mxnet(a, b, expected):
    # MXNet 1.9.1's values: equal infinities are close (they were not: inf - inf is NaN), and
    # opposite ones pass its |a - b| <= atol + rtol * |b| (inf <= inf)
    assert int(mx.nd.contrib.allclose(mx.nd.array(a), mx.nd.array(b), equal_nan=False).asnumpy()) == expected


def test_allclose_symbol_infers_a_0d_uint8():
    net = sym.contrib.allclose(sym.Variable("a"), sym.Variable("b"))
    assert net.infer_shape(a=(2, 3), b=(2, 3))[1] == [()]
    assert net.infer_type(a="float32", b="float32")[1] == [np.uint8]


def test_allclose_refuses_different_shapes_and_dtypes():
    with pytest.raises(LazyNDError, match="allclose.*'b'"):
        mx.nd.contrib.allclose(mx.nd.ones((2, 3)), mx.nd.ones((3,)))
    with pytest.raises(LazyNDError, match="allclose.*'b' has dtype float64"):
        mx.nd.contrib.allclose(mx.nd.ones((2,)), mx.nd.ones((2,), dtype="float64"))


def test_index_array_gives_every_index_as_int64(ctx):
    idx = mx.nd.contrib.index_array(mx.nd.zeros((2, 3, 4), ctx=ctx, dtype="float16"))
    assert idx.shape == (2, 3, 4, 3) and idx.dtype == np.int64
    np.testing.assert_array_equal(idx.asnumpy(), np.stack(np.indices((2, 3, 4)), axis=-1))


def test_index_array_with_axes_keeps_their_order(ctx):
    # MXNet 1.9.1: index_array(zeros((2, 3, 4)), axes=(-1, 0))[1, 2, 3] = [3, 1]
    idx = mx.nd.contrib.index_array(mx.nd.zeros((2, 3, 4), ctx=ctx), axes=(-1, 0))
    assert idx.shape == (2, 3, 4, 2)
    np.testing.assert_array_equal(idx.asnumpy()[1, 2, 3], [3, 1])
    with pytest.raises(LazyNDError, match="index_array: axis 2"):
        mx.nd.contrib.index_array(mx.nd.zeros((2, 3)), axes=(2,))


def _forward_and_grad(name: str, ctx, **params) -> tuple[np.ndarray, np.ndarray]:
    x = mx.nd.array(DATA, ctx=ctx)
    x.attach_grad()
    with mx.autograd.record():
        y = getattr(mx.nd.contrib, name)(x, **params)
    y.backward(mx.nd.array(HEAD, ctx=ctx))
    return y.asnumpy(), x.grad.asnumpy()


def test_gradientmultiplier_is_the_identity_with_a_scaled_gradient(ctx):
    y, grad = _forward_and_grad("gradientmultiplier", ctx, scalar=-2.5)
    np.testing.assert_array_equal(y, np.float32(DATA))
    np.testing.assert_allclose(grad, [-2.5, -5, -7.5, -10, -12.5])


@pytest.mark.parametrize(
    "name,expected",
    [("round_ste", [1, -3, 1, -1, 3]), ("sign_ste", [1, -1, 1, -1, 1])],  # MXNet 1.9.1
)
def test_straight_through_estimators_pass_the_gradient_unchanged(name, expected, ctx):
    y, grad = _forward_and_grad(name, ctx)
    np.testing.assert_array_equal(y, expected)
    np.testing.assert_array_equal(grad, HEAD)


def test_straight_through_symbol_gradient():
    x = sym.Variable("x")
    ex = sym.contrib.round_ste(x).simple_bind(mx.cpu(), x=(5,))
    ex.arg_dict["x"][:] = np.array(DATA)
    ex.forward(is_train=True)
    ex.backward(mx.nd.array(HEAD))
    np.testing.assert_array_equal(ex.grad_dict["x"].asnumpy(), HEAD)


def test_round_ste_of_the_float_just_below_a_half_is_zero():
    below_half = float(np.nextafter(np.float32(0.5), np.float32(0)))
    out = mx.nd.contrib.round_ste(mx.nd.array([below_half, -below_half, 0.5, -2.5]))
    assert out.asnumpy().tolist() == [0, 0, 1, -3]


def test_round_ste_of_integers_is_unchanged():
    assert mx.nd.contrib.round_ste(mx.nd.array([1, 2], dtype="int32")).asnumpy().tolist() == [1, 2]
