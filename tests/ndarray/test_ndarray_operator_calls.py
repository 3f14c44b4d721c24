"""Operator calls on NDArrays: cached plans, rejected parameters, and the order of reads and writes."""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx
from lazynd.ops import registry


def test_bad_operator_parameter_names_op_parameter_and_value() -> None:
    with pytest.raises(mx.OperatorError, match=r"dot: invalid value 'maybe' for parameter 'transpose_a'"):
        mx.nd.dot(mx.nd.ones((2, 2)), mx.nd.ones((2, 2)), transpose_a="maybe")
    with pytest.raises(mx.OperatorError, match="unknown parameter 'bogus'"):
        mx.nd.dot(mx.nd.ones((2, 2)), mx.nd.ones((2, 2)), bogus=1)


def test_repeated_calls_reuse_one_plan_and_parameters_stay_distinct() -> None:
    from lazynd.runtime import plan as plans

    x = mx.nd.array(np.linspace(-2, 2, 12, dtype=np.float32).reshape(3, 4))
    # one array and no parameters: the plan hangs on the array's signature
    sig = x.signature
    sig.plans.clear()
    for _ in range(5):
        mx.nd.relu(x)
    assert list(sig.plans) == [registry.get("relu")]
    plan = sig.plans[registry.get("relu")]
    mx.nd.relu(mx.nd.zeros((3, 4)))  # another array of the same signature: the same plan
    assert sig.plans[registry.get("relu")] is plan and len(sig.plans) == 1
    # with parameters: one plan per distinct call in the shared table
    plans._plans.clear()
    for _ in range(5):
        mx.nd.clip(x, a_min=-1.0, a_max=1.0)
    assert plans.cached_plans() == 1
    low = mx.nd.clip(x, a_min=-1.0, a_max=1.0)
    high = mx.nd.clip(x, a_min=0.0, a_max=1.5)
    assert plans.cached_plans() == 2
    np.testing.assert_array_equal(low.asnumpy(), np.clip(x.asnumpy(), -1.0, 1.0))
    np.testing.assert_array_equal(high.asnumpy(), np.clip(x.asnumpy(), 0.0, 1.5))
    # a list parameter cannot key the cache; the call still works
    np.testing.assert_array_equal(mx.nd.transpose(x, axes=[1, 0]).asnumpy(), x.asnumpy().T)


def test_plans_never_mix_arrays_of_another_shape_dtype_or_view() -> None:
    from lazynd.runtime import clear_plans

    base = np.arange(12, dtype=np.float64).reshape(3, 4) - 5.5
    arrays = [
        mx.nd.array(base, dtype="float32"),
        mx.nd.array(base, dtype="float64"),
        mx.nd.array(base.reshape(4, 3), dtype="float32"),
        mx.nd.array(base, dtype="float32")[1:],  # a view: a signature of its own shape
    ]
    for emptied in (False, True):
        if emptied:  # arrays signed before the table was emptied keep working, and stay apart
            clear_plans()
        for x in arrays:
            got = mx.nd.abs(x)
            assert got.shape == x.shape and got.dtype == x.dtype
            np.testing.assert_array_equal(got.asnumpy(), np.abs(x.asnumpy()))
    # one interned signature per (shape, dtype, device), however many arrays share it
    a, b = mx.nd.zeros((2, 5)), mx.nd.ones((2, 5))
    assert a.signature is b.signature
    assert a.signature is not mx.nd.zeros((2, 5), dtype="float64").signature


def test_a_rejected_call_is_rejected_every_time() -> None:
    a, b = mx.nd.ones((2, 3)), mx.nd.ones((3, 2))
    for _ in range(2):
        with pytest.raises(mx.LazyNDError, match="_plus"):
            mx.nd.elemwise_add(a, b)


def test_whole_array_assignment_waits_for_its_source_and_blocks_later_readers() -> None:
    weight, grad = mx.nd.ones((64, 64)), mx.nd.full((64, 64), 3.0)
    big = mx.nd.array(np.full((256, 4096), 2.0, np.float32))
    # grad is rewritten by work queued on a worker; weight[:] = grad must copy the new values
    mx.nd.broadcast_to(mx.nd.sum(big, axis=(0, 1), keepdims=True), shape=(64, 64), out=grad)
    weight[:] = grad
    seen = weight * 1.0
    expected = np.full((64, 64), 2.0 * 256 * 4096, np.float32)
    np.testing.assert_array_equal(seen.asnumpy(), expected)
    with pytest.raises(mx.LazyNDError, match="shape"):
        weight[:] = mx.nd.ones((3, 3))


def test_an_index_array_changed_after_the_push_does_not_change_the_result() -> None:
    import threading

    from lazynd.engine import get_engine

    x = mx.nd.array(np.arange(5, dtype=np.float32))
    x.wait_to_read()
    release = threading.Event()
    # a pending write of x keeps the gather below queued until the index array has changed
    get_engine().push(lambda: release.wait(10), (), [], [x.handle], "hold", mx.cpu())
    index = np.array([0, 2])
    picked = x[index]
    index[:] = [4, 4]
    release.set()
    assert picked.asnumpy().tolist() == [0.0, 2.0]
