"""``x[key] = numpy_array``: the value at the call, copied once (MXNet's assignment from NumPy)."""

from __future__ import annotations

import threading
import tracemalloc

import numpy as np
import pytest

import lazynd as mx
from lazynd.engine import get_engine


def test_a_batch_into_a_free_array_is_copied_once() -> None:
    x = mx.nd.zeros((128, 784))
    batch = np.random.default_rng(0).random((128, 784), dtype=np.float32)
    x.wait_to_read()
    tracemalloc.start()
    try:
        x[:] = batch
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < batch.nbytes // 2  # no snapshot of the batch on the way
    batch[:] = -1  # the caller reuses its buffer at once
    np.testing.assert_array_equal(x.asnumpy(), np.random.default_rng(0).random((128, 784), dtype=np.float32))


def test_a_batch_into_a_busy_array_is_the_value_at_the_call() -> None:
    # an operation still reads x: the write cannot run now, so it must not read the batch later
    x = mx.nd.zeros((4, 3))
    release = threading.Event()
    get_engine().push(release.wait, (10,), [x.var], [], "slow reader")
    batch = np.arange(12, dtype=np.float32).reshape(4, 3)
    x[:] = batch
    batch[:] = -1
    release.set()
    np.testing.assert_array_equal(x.asnumpy(), np.arange(12, dtype=np.float32).reshape(4, 3))


@pytest.mark.parametrize("policy", ["deferring", "plain"])
def test_the_value_at_the_call_under_either_policy(policy: str) -> None:
    mx.engine.set_engine("threaded", policy=policy)
    try:
        x = mx.nd.zeros((2, 5))
        batch = np.ones((2, 5), np.float32)
        for step in range(20):
            batch[:] = step
            x[1:] = batch[1:]  # a partial write: it also waits for earlier writes of x
            x[:1] = batch[:1]
            np.testing.assert_array_equal(x.asnumpy(), np.full((2, 5), step, np.float32))
    finally:
        mx.engine.set_engine("threaded")


def test_a_float64_batch_is_cast_to_the_arrays_dtype() -> None:
    x = mx.nd.zeros((3,), dtype="float32")
    x[:] = np.array([0.1, 3.75, -2.5])
    np.testing.assert_array_equal(x.asnumpy(), np.array([0.1, 3.75, -2.5], np.float32))
    n = mx.nd.zeros((3,), dtype="int32")
    n[:] = np.array([1.9, -1.9, 7.0])
    np.testing.assert_array_equal(n.asnumpy(), [1, -1, 7])


def test_a_value_that_does_not_convert_fails_at_the_call() -> None:
    x = mx.nd.zeros((2,))
    with pytest.raises(ValueError):
        x[:] = np.array(["a", "b"])


def test_values_into_an_integer_array_convert_as_a_scalar_does() -> None:
    # toward zero, wrapped to the width: 2**40 was INT_MIN (NumPy's float cast), as a scalar gives 0
    x = mx.nd.zeros((3,), dtype="int32")
    x[:] = np.array([2.0**40, -1.7, 3.9])
    np.testing.assert_array_equal(x.asnumpy(), [0, -1, 3])


@pytest.mark.parametrize("value", [np.array([np.nan, 1.0]), [np.inf, 1.0]], ids=["numpy-nan", "list-inf"])
def test_a_value_no_integer_holds_is_refused_as_the_scalar_is(value) -> None:
    # x[0] = nan is refused by name; the same value in an array gave INT_MIN (as MXNet's does)
    x = mx.nd.zeros((2,), dtype="int32")
    with pytest.raises(mx.OperatorError, match=r"__setitem__: the value (nan|inf) has no value in an array of int32"):
        x[:] = value
    with pytest.raises(mx.OperatorError, match="complex values"):
        x[:] = np.array([1 + 1j, 2])  # (its imaginary part was dropped)
    np.testing.assert_array_equal(x.asnumpy(), [0, 0])


def test_a_nonzero_fraction_into_a_bool_array_is_true_as_in_mxnet() -> None:
    # MXNet's static_cast<bool>(0.5) is true; truncating toward zero first made it false
    x = mx.nd.zeros((3,), dtype="bool")
    x[0] = 0.5
    x[1:] = [-0.5, 0.0]
    np.testing.assert_array_equal(x.asnumpy(), [True, True, False])
    assert mx.nd.full((2,), 0.25, dtype="bool").asnumpy().all()
