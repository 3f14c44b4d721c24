"""Contexts and creating NDArrays: creation functions, dtypes, properties, random seeds."""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx

DTYPES = ["float32", "float64", "float16", "uint8", "int8", "int32", "int64"]


def test_context_equality_hash_repr_and_scope() -> None:
    assert mx.cpu(0) == mx.cpu() and mx.gpu(1) != mx.gpu(0) and mx.cpu(0) != mx.gpu(0)
    assert len({mx.cpu(0), mx.cpu(0), mx.gpu(1)}) == 2
    assert repr(mx.cpu(0)) == "cpu(0)" and repr(mx.gpu(1)) == "gpu(1)"
    assert mx.current_context() == mx.cpu(0)
    with mx.cpu(1):
        assert mx.current_context() == mx.cpu(1)
        assert mx.nd.zeros((2,)).context == mx.cpu(1)
    assert mx.current_context() == mx.cpu(0)
    with pytest.raises(mx.ContextError, match="tpu"):
        mx.Context("tpu")


@pytest.mark.skipif(mx.num_gpus() > 0, reason="checks the message given when no GPU is usable")
def test_gpu_without_device_raises_clear_error() -> None:
    with pytest.raises(mx.ContextError, match=r"gpu\(0\)"):
        mx.nd.zeros((2,), ctx=mx.gpu(0))


@pytest.mark.parametrize("dtype", DTYPES)
def test_creation_functions_and_dtypes(ctx: mx.Context, dtype: str) -> None:
    assert mx.nd.zeros((2, 3), ctx, dtype).asnumpy().tolist() == [[0] * 3] * 2
    ones = mx.nd.ones((2,), ctx=ctx, dtype=dtype)
    assert ones.dtype == np.dtype(dtype).type and ones.asnumpy().tolist() == [1, 1]
    assert mx.nd.full((3,), 5, ctx=ctx, dtype=dtype).asnumpy().tolist() == [5] * 3
    assert mx.nd.empty((4, 1), ctx=ctx, dtype=dtype).shape == (4, 1)
    arr = mx.nd.array([[1, 2], [3, 4]], ctx=ctx, dtype=dtype)
    np.testing.assert_array_equal(arr.asnumpy(), np.array([[1, 2], [3, 4]], dtype=dtype))


def test_array_defaults_to_float32_and_snapshots_source() -> None:
    source = np.arange(4)
    arr = mx.nd.array(source)
    source[:] = 100
    assert arr.dtype == np.float32 and arr.asnumpy().tolist() == [0, 1, 2, 3]
    assert mx.nd.array(mx.nd.ones((2,), dtype="int32")).dtype == np.int32


def test_arange_with_repeat_and_concatenate() -> None:
    np.testing.assert_array_equal(mx.nd.arange(1, 4, repeat=2).asnumpy(), [1, 1, 2, 2, 3, 3])
    np.testing.assert_array_equal(mx.nd.arange(5).asnumpy(), np.arange(5, dtype=np.float32))
    cat = mx.nd.concatenate([mx.nd.ones((1, 2)), mx.nd.zeros((2, 2))])
    np.testing.assert_array_equal(cat.asnumpy(), [[1, 1], [0, 0], [0, 0]])
    with pytest.raises(mx.ShapeError, match=r"\(1, 3\)"):
        mx.nd.concatenate([mx.nd.ones((1, 2)), mx.nd.ones((1, 3))])


def test_concatenate_joins_arrays_of_several_devices_on_the_first_ones() -> None:
    # a multi-device loop joins its devices' outputs so (MXNet copies them to the first context)
    parts = [mx.nd.ones((1, 2), ctx=mx.cpu(0)), mx.nd.zeros((2, 2), ctx=mx.cpu(1))]
    rows = mx.nd.concatenate(parts)
    assert rows.context == mx.cpu(0)
    np.testing.assert_array_equal(rows.asnumpy(), [[1, 1], [0, 0], [0, 0]])
    columns = mx.nd.concatenate(parts[::-1][:1] + [mx.nd.ones((2, 1), ctx=mx.cpu(0))], axis=1)
    assert columns.context == mx.cpu(1)
    np.testing.assert_array_equal(columns.asnumpy(), [[0, 0, 1], [0, 0, 1]])


def test_properties_and_repr() -> None:
    a = mx.nd.ones((2, 3), dtype="float64")
    assert (a.shape, a.size, a.ndim, a.dtype, a.context, a.ctx) == ((2, 3), 6, 2, np.float64, mx.cpu(0), mx.cpu(0))
    assert repr(a) == "\n[[1. 1. 1.]\n [1. 1. 1.]]\n<NDArray 2x3 @cpu(0)>"


def test_random_is_reproducible_per_seed(ctx: mx.Context) -> None:
    mx.random.seed(7)
    a = mx.random.uniform(-1, 1, shape=(5,), ctx=ctx).asnumpy()
    n1 = mx.random.normal(0, 1, shape=(3,), ctx=ctx).asnumpy()
    mx.random.seed(7)
    b = mx.random.uniform(-1, 1, shape=(5,), ctx=ctx).asnumpy()
    n2 = mx.random.normal(0, 1, shape=(3,), ctx=ctx).asnumpy()
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(n1, n2)
    assert a.min() >= -1 and a.max() < 1
    ints = mx.random.randint(0, 3, shape=(100,), ctx=ctx).asnumpy()
    assert set(ints.tolist()) <= {0, 1, 2}


def test_full_wraps_out_of_range_values_like_mxnet() -> None:
    assert mx.nd.full((2,), 300, dtype="uint8").asnumpy().tolist() == [44, 44]
    assert mx.nd.full((2,), -2.7, dtype="int32").asnumpy().tolist() == [-2, -2]


def test_array_of_text_converts_numbers_and_refuses_the_rest_clearly() -> None:
    assert mx.nd.array(["1.5", "2"]).asnumpy().tolist() == [1.5, 2.0]  # as MXNet
    for source in ["abc", ["1", "x"]]:
        with pytest.raises(mx.LazyNDError, match="array: cannot convert"):
            mx.nd.array(source)


@pytest.mark.parametrize("value", ["x", None])
def test_full_of_a_value_no_element_can_hold_is_refused_at_the_call(value) -> None:
    with pytest.raises(mx.OperatorError, match="full: cannot store"):
        mx.nd.full((2,), value)


def test_array_of_numbers_held_as_objects_converts_them() -> None:
    # as MXNet 1.9.1 (NumPy's conversion): pandas columns, Fractions, Decimals, dtype=object
    import decimal
    import fractions

    assert mx.nd.array(np.array([[1, 2.5], [3, 4]], dtype=object)).asnumpy().tolist() == [[1, 2.5], [3, 4]]
    assert mx.nd.array([decimal.Decimal("1.5"), fractions.Fraction(1, 4)]).asnumpy().tolist() == [1.5, 0.25]
    exact = mx.nd.array(np.array([2**40 + 1], dtype=object), dtype="int64")
    assert exact.dtype == np.int64 and exact.asnumpy().tolist() == [2**40 + 1]
    assert mx.nd.array(np.array([1.7], dtype=object), dtype="int32").asnumpy().tolist() == [1]


@pytest.mark.parametrize("source", [[None], np.array([None, 1]), np.array([1 + 2j], dtype=object)])
def test_array_of_objects_that_are_not_real_numbers_is_refused(source) -> None:
    with pytest.raises(mx.LazyNDError, match="non-numbers"):
        mx.nd.array(source)
