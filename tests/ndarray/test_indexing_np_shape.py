"""Reading one element by an integer per axis under NumPy shapes (``mx.set_np_shape(True)`` or the
``np_shape`` scope) gives a 0-d view, as MXNet 1.9.1 does; without them, or with a key holding
``...``, ``None`` or a slice, it stays (1,)-shaped.  Shapes and values recorded from MXNet 1.9.1."""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx

ARRAYS = {1: np.arange(4.0), 2: np.arange(12.0).reshape(3, 4), 3: np.arange(24.0).reshape(2, 3, 4)}

# (ndim, key, shape with np_shape on, shape with it off), MXNet 1.9.1's answers
CASES = [
    (1, 1, (), (1,)),
    (1, -1, (), (1,)),
    (1, (2,), (), (1,)),
    (2, (1, 2), (), (1,)),
    (2, (-1, -1), (), (1,)),
    (2, (np.int64(1), np.int32(2)), (), (1,)),
    (2, 1, (4,), (4,)),
    (2, (slice(1, 3), -1), (2,), (2,)),
    (3, (1, 2, 3), (), (1,)),
    (3, (-1, -1, -1), (), (1,)),
    (3, (1, 2), (4,), (4,)),
    (3, (1, slice(None), 2), (3,), (3,)),
    (3, (1, 2, 3, Ellipsis), (1,), (1,)),
    (3, (Ellipsis, 1, 2, 3), (1,), (1,)),
    (3, (1, 2, 3, None), (1,), (1,)),
    (3, (None, 1, 2, 3), (1,), (1,)),
    (3, (1, 2, slice(3, 4)), (1,), (1,)),
]


@pytest.mark.parametrize("np_shape", [True, False])
@pytest.mark.parametrize(("ndim", "key", "on", "off"), CASES)
def test_getitem_shape_follows_mxnet_under_np_shape(ctx, np_shape, ndim, key, on, off):
    host = ARRAYS[ndim]
    with mx.np_shape(np_shape):
        got = mx.nd.array(host, ctx=ctx)[key]
        assert got.shape == (on if np_shape else off)
        np.testing.assert_array_equal(got.asnumpy().reshape(-1), np.asarray(host[key]).reshape(-1))


@pytest.mark.parametrize("value", [7, mx.nd.array([7.0]), mx.nd.array([[7.0]]), np.array(7.0), [7.0]])
@pytest.mark.parametrize(("ndim", "key"), [(1, 1), (2, (1, 2)), (2, (-1, -1)), (3, (1, 2, 3))])
def test_setitem_of_one_element_reads_back_0d_under_np_shape(ctx, ndim, key, value):
    with mx.np_shape(True):
        x = mx.nd.array(ARRAYS[ndim], ctx=ctx)
        x[key] = value.as_in_context(ctx) if isinstance(value, mx.nd.NDArray) else value
        assert x[key].shape == ()
        assert x[key].asscalar() == 7
        expected = ARRAYS[ndim].copy()
        expected[key] = 7
        np.testing.assert_array_equal(x.asnumpy(), expected)


def test_a_0d_element_is_a_view_that_writes_through(ctx):
    with mx.np_shape(True):
        x = mx.nd.array(ARRAYS[2], ctx=ctx)
        element = x[1, 2]
        element[()] = 42
        assert x.asnumpy()[1, 2] == 42
    assert element.shape == ()  # it stays 0-d once the scope ends, as in MXNet 1.9.1


def test_gradient_through_a_0d_element(ctx):
    x = mx.nd.array(ARRAYS[2], ctx=ctx)
    x.attach_grad()
    with mx.np_shape(True), mx.autograd.record():
        y = x[1, 2] * 3
    assert y.shape == ()
    y.backward()
    expected = np.zeros((3, 4))
    expected[1, 2] = 3
    np.testing.assert_array_equal(x.grad.asnumpy(), expected)
