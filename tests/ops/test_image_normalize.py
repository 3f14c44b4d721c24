"""mx.nd.image.normalize / mx.sym.image.normalize: per-channel (data - mean) / std, MXNet 1.x's operator."""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx
import lazynd_sym as sym
from lazynd.errors import ShapeError
from lazynd.test_utils import check_numeric_gradient, check_symbolic_backward

MEAN, STD = (0.0, 1.0, 2.0), (3.0, 2.0, 1.0)


def _reference(x: np.ndarray) -> np.ndarray:
    column = (3, 1, 1)
    return (x - np.reshape(MEAN, column)) / np.reshape(STD, column)


@pytest.mark.parametrize("shape", [(3, 4, 5), (2, 3, 4, 5)])
def test_normalize_each_channel(ctx, shape):
    x = np.random.default_rng(0).uniform(0, 1, shape).astype(np.float32)
    out = mx.nd.image.normalize(mx.nd.array(x, ctx=ctx), mean=MEAN, std=STD)
    np.testing.assert_allclose(out.asnumpy(), _reference(x), rtol=1e-6)


def test_one_value_serves_every_channel_and_defaults_leave_data_alone(ctx):
    x = mx.nd.ones((2, 3, 2, 2), ctx=ctx)
    out = mx.nd.image.normalize(x, mean=0.5, std=(1, 2, 4))
    np.testing.assert_allclose(out.asnumpy()[1, :, 0, 0], [0.5, 0.25, 0.125])
    np.testing.assert_array_equal(mx.nd.image.normalize(x).asnumpy(), x.asnumpy())


def test_gradient_is_the_head_over_std():
    data = sym.Variable("data")
    net = sym.image.normalize(data=data, mean=MEAN, std=STD)
    x = np.random.default_rng(1).uniform(0, 1, (3, 4, 5))
    expected = np.ones((3, 4, 5)) / np.reshape(STD, (3, 1, 1))
    check_symbolic_backward(net, [x], [np.ones((3, 4, 5))], [expected], rtol=1e-6)
    check_numeric_gradient(net, [x])


def test_bad_shapes_name_the_operator_and_argument():
    with pytest.raises(ShapeError, match=r"_image_normalize: mean has 2 values, expected 1 or one per channel \(3\)"):
        mx.nd.image.normalize(mx.nd.ones((3, 2, 2)), mean=(1, 2), std=1)
    with pytest.raises(ShapeError, match=r"_image_normalize: shape of 'data' is \(2, 2\), expected \(C, H, W\)"):
        mx.nd.image.normalize(mx.nd.ones((2, 2)))


@pytest.mark.parametrize("dtype", ["int32", "int8", "uint8"])
def test_integer_images_are_computed_in_float_and_truncated_into_their_dtype(ctx, dtype):
    # MXNet 1.9.1's values (NumPy failed at the wait: a float64 quotient cannot be stored in ints)
    x = mx.nd.array(np.arange(12).reshape(3, 2, 2), dtype=dtype, ctx=ctx)
    out = mx.nd.image.normalize(x, mean=(0.5, 1.0, 2.0), std=(2.0, 3.0, 0.5))
    assert out.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(out.asnumpy().ravel(), [0, 0, 0, 1, 1, 1, 1, 2, 12, 14, 16, 18])
    batch = mx.nd.image.normalize(x.reshape((1, 3, 2, 2)), mean=(0.5,), std=(2.0,))
    np.testing.assert_array_equal(batch.asnumpy().ravel(), [0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5])


def test_negative_integer_results_truncate_toward_zero():
    x = mx.nd.array(np.array([0, 1, 7, -7] * 3).reshape(3, 2, 2), dtype="int32")
    out = mx.nd.image.normalize(x, mean=(0.5,), std=(2.0,)).asnumpy()
    np.testing.assert_array_equal(out.ravel(), [0, 0, 3, -3] * 3)  # as MXNet 1.9.1
