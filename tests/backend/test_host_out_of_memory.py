"""A host array too large for the machine: a DeviceMemoryError naming the bytes, as on a GPU."""

from __future__ import annotations

import pytest

import lazynd as mx
from lazynd.errors import DeviceMemoryError

HUGE = 1 << 40  # float32 elements: 4 TiB


@pytest.mark.parametrize(
    "make",
    [
        lambda: mx.nd.zeros((HUGE,)),
        lambda: mx.nd.empty((HUGE,)),
        lambda: mx.nd.ones((HUGE,)),
        lambda: mx.nd.full((HUGE,), 3),
        lambda: mx.nd.ones((1 << 20, 1)) * mx.nd.ones((1, 1 << 20)),  # an operator's fresh output
    ],
    ids=["zeros", "empty", "ones", "full", "broadcast output"],
)
def test_a_host_array_too_large_is_a_device_memory_error(make):
    # a bare NumPy MemoryError before
    with pytest.raises(DeviceMemoryError, match=r"out of memory on cpu: an array of 4,398,046,511,104 bytes") as info:
        make().wait_to_read()
    assert isinstance(info.value, MemoryError)
    assert info.value.ctx == "cpu" and info.value.nbytes == 4 * HUGE
    assert (mx.nd.ones((3,)) + 1).asnumpy().tolist() == [2.0, 2.0, 2.0]  # and the engine goes on


@pytest.mark.parametrize(
    "make",
    [
        lambda: mx.nd.zeros((1 << 63,)),
        lambda: mx.nd.ones((1 << 40, 1 << 40)),
        lambda: mx.nd.random.uniform(shape=(1 << 62, 4)),
        lambda: mx.nd.ones((2, 3)).tile(reps=(1 << 62, 1 << 62)),
    ],
    ids=["zeros 2**63", "ones 2**80", "uniform", "tile"],
)
def test_an_array_larger_than_an_address_is_a_device_memory_error(make):
    # NumPy's bare ValueError 'Maximum allowed dimension exceeded' before
    with pytest.raises(DeviceMemoryError, match=r"out of memory on cpu: an array of [\d,]+ bytes was asked for"):
        make().wait_to_read()
    assert (mx.nd.ones((3,)) + 1).asnumpy().tolist() == [2.0, 2.0, 2.0]
