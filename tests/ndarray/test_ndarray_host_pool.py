"""Host memory for NDArrays: the pool reuses only free buffers, page-aligned, warm ones first."""

from __future__ import annotations

import numpy as np

import lazynd as mx


def test_host_pool_reuses_only_free_buffers() -> None:
    from lazynd.backend.pool import HostPool

    pool = HostPool()
    a = pool.empty((100_000,), np.float32)
    address = a.__array_interface__["data"][0]
    b = pool.empty((100_000,), np.float32)
    assert b.__array_interface__["data"][0] != address  # a is alive: never handed out twice
    del a
    c = pool.empty((99_000,), np.float32)
    assert c.__array_interface__["data"][0] == address and pool.hits == 1


def test_host_buffers_start_on_a_page() -> None:
    # OpenBLAS's dot runs 1.5x slower on malloc's 16-byte alignment of large blocks, and a kernel
    # writing 64-128 bytes past its input modulo 4096 meets 4K aliasing
    from lazynd.backend.pool import ALIGN, HostPool

    assert ALIGN == 4096

    pool = HostPool()
    first = pool.empty((100_000,), np.float32)
    view = first[10:]  # a view keeps the buffer in use, as the array itself does
    del first
    second = pool.empty((100_000,), np.float32)
    assert not np.shares_memory(view, second)
    del view
    reused = pool.empty((100_000,), np.float32)
    assert pool.hits == 1
    for array in (second, reused, mx.nd.ones((300, 300)).data_array, mx.nd.zeros((300, 300)).data_array):
        assert array.__array_interface__["data"][0] % ALIGN == 0
    assert mx.nd.zeros((300, 300)).asnumpy().sum() == 0
    held = pool.held_bytes()
    del second
    assert pool.release_free() == held // 2 and pool.held_bytes() == held // 2  # only the free one goes
    again = pool.empty((100_000,), np.float32)  # the kept buffer is still handed out aligned
    assert np.shares_memory(again, reused) is False and again.__array_interface__["data"][0] % ALIGN == 0


def test_large_operator_outputs_start_on_a_page_and_zero_filled_ones_are_zero() -> None:
    from lazynd.backend.pool import ALIGN

    x = mx.nd.array(np.linspace(-1, 1, 300 * 300, dtype=np.float32).reshape(300, 300))
    labels = mx.nd.array(np.arange(300) % 7, dtype="float32")
    outputs = [mx.nd.tanh(x), x + 1, mx.nd.one_hot(labels, depth=300), mx.nd.sum(x, axis=0)]
    for out in outputs[:3]:  # the fresh large ones: pooled, or zero-filled (one_hot)
        assert out.data_array.__array_interface__["data"][0] % ALIGN == 0
    hot = outputs[2].asnumpy()
    assert hot.sum() == 300 and (hot.argmax(axis=1) == np.arange(300) % 7).all()
    np.testing.assert_array_equal(outputs[3].asnumpy(), x.asnumpy().sum(axis=0))  # a small output


def test_host_pool_hands_a_loop_the_buffers_it_released_last() -> None:
    # a loop that keeps its previous result alive should alternate between two (cache-warm)
    # buffers, not cycle through every free buffer of the size class
    from lazynd.backend.pool import HostPool

    pool = HostPool()
    held = [pool.empty((100_000,), np.float32) for _ in range(6)]
    del held
    addresses = set()
    previous = None
    for _ in range(12):
        current = pool.empty((100_000,), np.float32)
        addresses.add(current.__array_interface__["data"][0])
        previous = current  # noqa: F841 - alive until the next allocation, like a loop's last result
    assert len(addresses) == 2
