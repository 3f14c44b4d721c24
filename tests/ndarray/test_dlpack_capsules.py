"""nd.from_dlpack takes the bare capsules that to_dlpack_for_read/_for_write hand out, as in MXNet."""

from __future__ import annotations

import time

import numpy as np
import pytest

import lazynd as mx
from lazynd.engine import get_engine


@pytest.mark.parametrize("export", [mx.nd.to_dlpack_for_read, mx.nd.NDArray.to_dlpack_for_read])
def test_a_read_capsule_round_trips_to_the_same_values(ctx: mx.Context, export) -> None:
    a = mx.nd.random.uniform(shape=(3, 4), ctx=ctx)
    b = mx.nd.from_dlpack(export(a))
    # (the context comes from the capsule's device: the CUDA emulator's capsules say cpu)
    assert b.shape == (3, 4) and (b.context == ctx or ctx.device_type == "gpu")
    np.testing.assert_array_equal(b.asnumpy(), a.asnumpy())


def test_the_import_of_a_write_capsule_shares_memory_and_is_writable(ctx: mx.Context) -> None:
    a = mx.nd.zeros((2, 3), ctx=ctx)
    b = mx.nd.from_dlpack(a.to_dlpack_for_write())
    b[:] = 5  # NumPy imports an unversioned capsule read-only; an MXNet array is writable
    np.testing.assert_array_equal(a.asnumpy(), np.full((2, 3), 5, dtype=np.float32))


@pytest.mark.parametrize("export", ["to_dlpack_for_write", "to_dlpack_for_read", "__dlpack__", "the array"])
def test_a_write_through_the_import_is_ordered_before_the_sources_reads(ctx: mx.Context, export) -> None:
    # the write through the import waits for a host operation that takes a while; the source's
    # read must wait for that write (on a GPU the read is a copy on another stream), so the import
    # of our own array (its capsule, or the array itself through the protocol) shares the source's
    # dependencies
    a = mx.nd.zeros((2, 3), ctx=ctx)
    b = mx.nd.from_dlpack(a if export == "the array" else getattr(a, export)())
    gate = mx.nd.zeros((2, 3), ctx=ctx)
    get_engine().push(time.sleep, (0.2,), [], [gate.var], name="slow_host_work")
    b[:] = gate + 1
    np.testing.assert_array_equal(a.asnumpy(), np.ones((2, 3), dtype=np.float32))


def test_the_import_keeps_the_memory_alive_after_the_source_is_gone() -> None:
    a = mx.nd.arange(6).reshape((2, 3))
    b = mx.nd.from_dlpack(a[1].to_dlpack_for_read())
    del a
    np.testing.assert_array_equal(b.asnumpy(), [3.0, 4.0, 5.0])


def test_a_capsule_is_consumed_once() -> None:
    capsule = mx.nd.ones((2,)).to_dlpack_for_read()
    mx.nd.from_dlpack(capsule)
    with pytest.raises(mx.OperatorError, match="from_dlpack: the DLPack capsule was already imported"):
        mx.nd.from_dlpack(capsule)


def test_something_without_dlpack_is_refused_by_name() -> None:
    with pytest.raises(mx.OperatorError, match="from_dlpack: expected a DLPack capsule .* got list"):
        mx.nd.from_dlpack([1, 2])
