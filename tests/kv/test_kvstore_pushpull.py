"""pushpull on the in-process stores: what push then pull gives, into the pushed values or given outputs, and its errors."""

from __future__ import annotations

import numpy as np
import pytest
from kv_local_values import SHAPE, pulled

import lazynd as mx
import lazynd_kv
from lazynd.errors import LazyNDError, ShapeError


def _twin_stores(name: str, updater=None):
    """Two stores of one type, initialised alike: one driven by pushpull, one by push then pull."""
    stores = [lazynd_kv.create(name) for _ in range(2)]
    for store in stores:
        if updater is not None:
            store.set_updater(updater)
        store.init([1, 2], [mx.nd.ones(SHAPE), mx.nd.ones((3,)) * 2])
    return stores


@pytest.mark.parametrize("updater", [None, lambda key, recv, stored: stored.__iadd__(recv * 3)], ids=["assign", "add"])
@pytest.mark.parametrize("name", ["local", "device"])
def test_pushpull_gives_what_push_then_pull_gives(name, updater):
    by_pushpull, by_push_pull = _twin_stores(name, updater)
    for step in range(3):
        values = [[mx.nd.ones(SHAPE) * (step + 1), mx.nd.ones(SHAPE) * 5], mx.nd.arange(3) * step]
        outs = [[mx.nd.zeros(SHAPE) for _ in range(3)], mx.nd.zeros((3,))]
        expect = [[mx.nd.zeros(SHAPE) for _ in range(3)], mx.nd.zeros((3,))]
        by_pushpull.pushpull([1, 2], values, out=outs)
        by_push_pull.push([1, 2], values)
        by_push_pull.pull([1, 2], out=expect)
        for got, want in zip([*outs[0], outs[1]], [*expect[0], expect[1]], strict=True):
            np.testing.assert_array_equal(got.asnumpy(), want.asnumpy())
    # the stored values agree too
    np.testing.assert_array_equal(pulled(by_pushpull, 1), pulled(by_push_pull, 1))


def test_pushpull_without_out_pulls_into_the_pushed_values(kv):
    kv.init(3, mx.nd.zeros(SHAPE))
    grads = [mx.nd.ones(SHAPE), mx.nd.ones(SHAPE) * 2]
    kv.pushpull(3, grads)
    for grad in grads:
        np.testing.assert_array_equal(grad.asnumpy(), np.full(SHAPE, 3, np.float32))
    np.testing.assert_array_equal(pulled(kv, 3), np.full(SHAPE, 3, np.float32))


def test_store_keeps_the_pushpull_result_when_out_is_written_later(kv):
    kv.init(3, mx.nd.zeros(SHAPE))
    out = mx.nd.zeros(SHAPE)
    kv.pushpull(3, mx.nd.ones(SHAPE) * 4, out=out)
    out[:] = -1
    np.testing.assert_array_equal(pulled(kv, 3), np.full(SHAPE, 4, np.float32))


def test_pushpull_of_an_uninitialised_key_changes_nothing(kv):
    kv.init(1, mx.nd.ones(SHAPE))
    out = mx.nd.zeros(SHAPE)
    with pytest.raises(lazynd_kv.KVKeyError, match=r"KVStore.pushpull: key 2 is not initialised"):
        kv.pushpull([1, 2], [mx.nd.ones(SHAPE) * 9, mx.nd.ones(SHAPE)], out=[out, mx.nd.zeros(SHAPE)])
    np.testing.assert_array_equal(pulled(kv, 1), np.ones(SHAPE, np.float32))
    np.testing.assert_array_equal(out.asnumpy(), np.zeros(SHAPE, np.float32))


@pytest.mark.parametrize(
    ("value", "out", "message"),
    [
        ((2, 8), SHAPE, r"KVStore.pushpull: key 3 holds shape \(4, 4\), pushed value has shape \(2, 8\)"),
        (SHAPE, (3,), r"KVStore.pushpull: key 3 holds shape \(4, 4\), output has shape \(3,\)"),
    ],
)
def test_pushpull_with_a_wrong_shape_names_key_and_shapes(kv, value, out, message):
    kv.init(3, mx.nd.ones(SHAPE))
    with pytest.raises(ShapeError, match=message):
        kv.pushpull(3, mx.nd.ones(value) * 9, out=mx.nd.zeros(out))
    np.testing.assert_array_equal(pulled(kv, 3), np.ones(SHAPE, np.float32))


def test_pushpull_of_another_dtype_converts_and_pulls_back_into_the_values(kv):
    kv.init(3, mx.nd.ones(SHAPE))
    grads = [mx.nd.ones(SHAPE, dtype="float16"), mx.nd.ones(SHAPE, dtype="float16") * 2]
    kv.pushpull(3, grads)  # out=None: each value receives the sum, in its own dtype
    assert all(g.dtype == np.float16 and (g.asnumpy() == 3).all() for g in grads)
    out = mx.nd.zeros(SHAPE)
    kv.pushpull(3, mx.nd.ones(SHAPE, dtype="float64"), out=out)
    np.testing.assert_array_equal(out.asnumpy(), np.ones(SHAPE, np.float32))


def test_pushpull_with_mismatched_list_lengths_is_refused(kv):
    kv.init([1, 2], [mx.nd.ones(SHAPE)] * 2)
    with pytest.raises(LazyNDError, match="pushpull: 2 keys need a list of 2 values"):
        kv.pushpull([1, 2], [mx.nd.ones(SHAPE)], out=[mx.nd.zeros(SHAPE)] * 2)
    with pytest.raises(LazyNDError, match="pushpull: 2 keys need a list of 2 values .*, got 3"):
        kv.pushpull([1, 2], [mx.nd.ones(SHAPE)] * 2, out=[mx.nd.zeros(SHAPE)] * 3)
    with pytest.raises(LazyNDError, match="priority must be an int"):
        kv.pushpull(1, mx.nd.ones(SHAPE), priority=None)
    np.testing.assert_array_equal(pulled(kv, 1), np.ones(SHAPE, np.float32))
