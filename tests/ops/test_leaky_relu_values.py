"""LeakyReLU's 'leaky' kind computes the select ``where(x > 0, x, slope * x)`` and its gradient
exactly, through its two-pass forms (max for 0 < slope <= 1, a factor of 1 or slope): zeros' signs,
infinities and NaNs included, in every float dtype, with the gradient written over dy or not."""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx
from lazynd.ops import activation

SPECIAL = [0.0, -0.0, np.nan, np.inf, -np.inf, 1e-30, -1e-30]


def _data(dtype) -> np.ndarray:
    x = np.random.default_rng(3).standard_normal((3, 4, 5, 6)).astype(dtype)
    x.flat[: len(SPECIAL)] = SPECIAL
    return x


def _select(x, slope):
    with np.errstate(all="ignore"):
        return np.where(x > 0, x, x * slope)


def _same(a, b) -> bool:
    return a.dtype == b.dtype and np.array_equal(a, b, equal_nan=True) and np.array_equal(np.signbit(a), np.signbit(b))


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("slope", [0.25, 1e-3, 1.0, 0.0, 1.5, -0.5])
def test_forward_and_gradient_are_the_select_exactly(dtype, slope):
    x = _data(dtype)
    dy = np.random.default_rng(4).standard_normal(x.shape).astype(dtype)
    dy.flat[7:10] = [np.inf, -0.0, np.nan]
    data = mx.nd.array(x, dtype=dtype)
    data.attach_grad()
    with mx.autograd.record():
        y = mx.nd.LeakyReLU(data, act_type="leaky", slope=slope)
    y.backward(mx.nd.array(dy, dtype=dtype))
    assert _same(y.asnumpy(), _select(x, slope))
    with np.errstate(all="ignore"):
        expected = np.where(x > 0, dy, dy * slope)
    assert _same(data.grad.asnumpy(), expected)


def test_the_gradient_may_be_written_over_dy():
    x = _data(np.float32)
    dy = np.random.default_rng(5).standard_normal(x.shape).astype(np.float32)
    expected = np.where(x > 0, dy, dy * np.float32(0.25))
    buffer = dy.copy()
    activation._leaky_backward(_Kernel(), {"act_type": "leaky", "slope": 0.25}, [buffer, x], [buffer], [])
    assert _same(buffer, expected)


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.int64, np.uint8])
def test_integer_data_takes_the_select_truncated(dtype):
    # the two-pass form wrote the float64 slope * x into an integer out: an EngineError at the wait
    x = np.array([[-9, -3, 0, 5, 8]]).astype(dtype)
    data = mx.nd.array(x, dtype=dtype)
    data.attach_grad()
    with mx.autograd.record():
        y = mx.nd.LeakyReLU(data, act_type="leaky", slope=0.25)
    y.backward(mx.nd.array(np.full(x.shape, 8), dtype=dtype))
    assert y.dtype == dtype and data.grad.dtype == dtype
    np.testing.assert_array_equal(y.asnumpy(), _select(x, 0.25).astype(dtype))
    np.testing.assert_array_equal(data.grad.asnumpy(), np.where(x > 0, 8, 2).astype(dtype))


class _Kernel:
    """The kernel context the CPU kernels read: the array module."""

    xp = np
