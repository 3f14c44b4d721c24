"""The host reductions behind softmax and the FullyConnected bias gradient agree with NumPy's."""

import numpy as np
import pytest

import lazynd as mx
from lazynd.ops.host_reduce import SHORT_AXIS, column_sum_into, host_max, host_sum

SHAPES = [(128, 10), (16, 2), (5,), (3, 4, 5), (40, SHORT_AXIS), (40, SHORT_AXIS + 1), (128, 1), (0, 3), (7, 300)]


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int32"])
def test_host_max_is_numpys_exactly(shape, dtype):
    x = (np.random.default_rng(1).standard_normal(shape) * 100).astype(dtype)
    for axis in range(len(shape)):
        if x.size == 0 and shape[axis] == 0:
            continue  # a maximum over nothing is an error in NumPy too
        got, want = host_max(x, axis), np.maximum.reduce(x, axis=axis, keepdims=True)
        assert got.shape == want.shape and got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)


def test_host_max_propagates_nan_as_numpy_does():
    x = np.random.default_rng(2).standard_normal((64, 10)).astype(np.float32)
    x[3, 7] = np.nan
    got = host_max(x, 1)
    assert np.isnan(got[3, 0]) and np.isfinite(np.delete(got, 3, axis=0)).all()


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int64"])
def test_host_sum_matches_numpy(shape, dtype):
    x = np.random.default_rng(3).uniform(-1, 1, shape).astype(dtype) if dtype != "int64" else np.arange(
        int(np.prod(shape)), dtype=dtype
    ).reshape(shape)
    for axis in range(len(shape)):
        got, want = host_sum(x, axis), np.add.reduce(x, axis=axis, keepdims=True)
        assert got.shape == want.shape and got.dtype == want.dtype
        tol = {"float16": 1e-2, "float32": 1e-5, "float64": 1e-12}.get(dtype, 0)
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol * 10)


def test_host_sum_of_a_strided_view_is_right():
    x = np.random.default_rng(4).standard_normal((64, 20)).astype(np.float32)[:, ::2]
    np.testing.assert_allclose(host_sum(x, 1), x.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("rows", [1, 2, 128])
def test_column_sum_into(rows):
    g = np.random.default_rng(5).standard_normal((rows, 33)).astype(np.float32)
    out = np.full(33, np.nan, np.float32)
    column_sum_into(g, out)
    np.testing.assert_allclose(out, g.sum(axis=0), rtol=1e-5, atol=1e-5)
    with pytest.raises(ValueError):
        column_sum_into(g, np.empty(32, np.float32))  # a wrong-sized output is refused, not written past


def test_softmax_of_short_rows_still_sums_to_one_and_matches_numpy():
    z = np.random.default_rng(6).standard_normal((128, 10)).astype(np.float32) * 30
    p = mx.nd.softmax(mx.nd.array(z)).asnumpy()
    e = np.exp(z - z.max(axis=1, keepdims=True))
    np.testing.assert_allclose(p, e / e.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(p.sum(axis=1), 1, rtol=1e-5)
