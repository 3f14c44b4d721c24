"""Host-side helpers of the CUDA copies that need no GPU: finding the memory an array views."""

from __future__ import annotations

import numpy as np

from lazynd.backend.cuda.copies import buffer_owner


def test_the_owner_of_memory_numpy_allocated_is_none() -> None:
    array = np.ones((4, 4), np.float32)
    assert buffer_owner(array) is None
    assert buffer_owner(array[1:].T) is None


def test_the_owner_of_a_view_over_an_exported_buffer_is_the_exporter() -> None:
    # np.frombuffer keeps a memoryview as the base: the exporter (page-locked memory, in the
    # backend) is behind it, through any view or reshape of the array
    exporter = bytearray(64)
    flat = np.frombuffer(exporter, dtype=np.uint8, count=64)
    shaped = flat.view(np.float32).reshape(4, 4)[1:]
    assert buffer_owner(flat) is exporter
    assert buffer_owner(shaped) is exporter
