"""The host reductions behind softmax and the FullyConnected bias gradient agree with NumPy's."""

import numpy as np
import pytest

import lazynd as mx
from lazynd.ops import host_reduce
from lazynd.ops.host_reduce import SHORT_AXIS, column_sum_into, max_along, sum_along

SHAPES = [(128, 10), (16, 2), (5,), (3, 4, 5), (40, SHORT_AXIS), (40, SHORT_AXIS + 1), (128, 1), (0, 3), (7, 300)]


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int32"])
def test_max_along_is_numpys_exactly(shape, dtype):
    x = (np.random.default_rng(1).standard_normal(shape) * 100).astype(dtype)
    for axis in range(len(shape)):
        if x.size == 0 and shape[axis] == 0:
            continue  # a maximum over nothing is an error in NumPy too
        got, want = max_along(x, axis), np.maximum.reduce(x, axis=axis, keepdims=True)
        assert got.shape == want.shape and got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)


def test_max_along_propagates_nan_as_numpy_does():
    x = np.random.default_rng(2).standard_normal((64, 10)).astype(np.float32)
    x[3, 7] = np.nan
    got = max_along(x, 1)
    assert np.isnan(got[3, 0]) and np.isfinite(np.delete(got, 3, axis=0)).all()


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int64"])
def test_sum_along_matches_numpy(shape, dtype):
    x = (
        np.random.default_rng(3).uniform(-1, 1, shape).astype(dtype)
        if dtype != "int64"
        else np.arange(int(np.prod(shape)), dtype=dtype).reshape(shape)
    )
    for axis in range(len(shape)):
        got, want = sum_along(x, axis), np.add.reduce(x, axis=axis, keepdims=True)
        assert got.shape == want.shape and got.dtype == want.dtype
        tol = {"float16": 1e-2, "float32": 1e-5, "float64": 1e-12}.get(dtype, 0)
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol * 10)


def test_sum_along_of_a_strided_view_is_right():
    x = np.random.default_rng(4).standard_normal((64, 20)).astype(np.float32)[:, ::2]
    np.testing.assert_allclose(sum_along(x, 1), x.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-5)


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


def test_constant_tables_stay_bounded_and_read_only():
    for n in range(2, host_reduce.MAX_CONSTANTS + 50):
        vector = host_reduce.ones(n, np.dtype(np.float32))
        assert vector.shape == (n,) and (vector == 1).all() and not vector.flags.writeable
    assert host_reduce.ones.cache_info().currsize <= host_reduce.MAX_CONSTANTS


def test_identity_table_is_made_once_per_size_and_dtype():
    eye = host_reduce.identity(10, np.dtype(np.float32))
    np.testing.assert_array_equal(eye, np.eye(10, dtype=np.float32))
    assert not eye.flags.writeable and eye.dtype == np.float32
    assert host_reduce.identity(10, np.dtype(np.float32)) is eye
    assert host_reduce.identity(10, np.dtype(np.float64)).dtype == np.float64
    assert host_reduce.ones(10, np.dtype(np.float32)) is not eye


def test_other_array_types_take_their_own_reductions():
    # anything but a plain NumPy array (a device array, a subclass) gets its own keepdims reduction
    class Tagged(np.ndarray):
        pass

    x = np.random.default_rng(7).standard_normal((32, 10)).astype(np.float32).view(Tagged)
    assert type(max_along(x, 1)) is Tagged and type(sum_along(x, 1)) is Tagged
    np.testing.assert_array_equal(np.asarray(max_along(x, 1)), np.asarray(x).max(axis=1, keepdims=True))
    out = np.empty(10, np.float32).view(Tagged)
    column_sum_into(x, out)
    np.testing.assert_allclose(np.asarray(out), np.asarray(x).sum(axis=0), rtol=1e-5)


@pytest.mark.parametrize("blas_threads", [1, 2])
def test_large_sums_keep_off_a_threaded_blas(monkeypatch, blas_threads):
    # with BLAS threads of its own, a product OpenBLAS would split across them is not used (a
    # busy machine stalls it); the sums stay right either way
    monkeypatch.setattr(host_reduce, "BLAS_THREADS", blas_threads)
    products = []
    matmul = np.matmul

    def counted(*args, **kwargs):
        products.append(args[0].shape)
        return matmul(*args, **kwargs)

    monkeypatch.setattr(host_reduce.np, "matmul", counted)
    x = np.random.default_rng(5).uniform(-1, 1, (200, 100)).astype(np.float32)
    assert x.size >= host_reduce.THREADED_GEMV_MIN
    for axis in (0, 1):
        np.testing.assert_allclose(sum_along(x, axis), x.sum(axis=axis, keepdims=True), rtol=1e-5, atol=1e-4)
    out = np.empty(100, np.float32)
    column_sum_into(x, out)
    np.testing.assert_allclose(out, x.sum(axis=0), rtol=1e-5, atol=1e-4)
    assert len(products) == (3 if blas_threads == 1 else 0)
    small = x[:50, :20].copy()  # below the threshold: BLAS on the calling thread either way
    np.testing.assert_allclose(sum_along(small, 1), small.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-5)
    assert len(products) == (4 if blas_threads == 1 else 1)
