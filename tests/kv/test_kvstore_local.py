"""The documented KVStore semantics on the in-process stores ('local', 'device'): init, push, pull, updaters, keys, errors."""

from __future__ import annotations

import numpy as np
import pytest
from kv_local_values import SHAPE, pulled

import lazynd as mx
import lazynd_kv
from lazynd.errors import LazyNDError, ShapeError


def test_create_unknown_type_lists_supported_types():
    with pytest.raises(LazyNDError, match=r"unknown KVStore type 'sync'.*device.*dist_sync.*local"):
        lazynd_kv.create("sync")


def test_an_mxnet_store_type_lazynd_lacks_is_named_as_such():
    with pytest.raises(LazyNDError, match=r"'dist_async' is MXNet's asynchronous parameter-server store.*dist_sync"):
        lazynd_kv.create("dist_async")


def test_mx_kv_create_gives_a_local_store_with_rank_and_workers():
    kv = mx.kv.create()
    assert (kv.type, kv.rank, kv.num_workers) == ("local", 0, 1)


def test_init_then_pull_gives_the_initial_value(kv):
    kv.init(3, mx.nd.ones(SHAPE) * 5)
    np.testing.assert_array_equal(pulled(kv, 3), np.full(SHAPE, 5, np.float32))


def test_init_copies_the_value(kv):
    value = mx.nd.ones(SHAPE)
    kv.init(3, value)
    value[:] = 7
    np.testing.assert_array_equal(pulled(kv, 3), np.ones(SHAPE, np.float32))


def test_push_without_updater_replaces_the_value(kv):
    kv.init(3, mx.nd.ones(SHAPE))
    kv.push(3, mx.nd.ones(SHAPE) * 8)
    np.testing.assert_array_equal(pulled(kv, 3), np.full(SHAPE, 8, np.float32))


def test_push_of_a_list_of_four_values_sums_them(kv):
    kv.init(3, mx.nd.zeros(SHAPE))
    kv.push(3, [mx.nd.ones(SHAPE) * (i + 1) for i in range(4)])
    np.testing.assert_array_equal(pulled(kv, 3), np.full(SHAPE, 10, np.float32))


def test_custom_updater_accumulates(kv):
    def update(key, recv, stored):
        stored += recv * 2

    kv.set_updater(update)
    kv.init(3, mx.nd.ones(SHAPE))
    kv.push(3, mx.nd.ones(SHAPE))
    kv.push(3, [mx.nd.ones(SHAPE)] * 4)
    np.testing.assert_array_equal(pulled(kv, 3), np.full(SHAPE, 1 + 2 + 8, np.float32))


def test_private_set_updater_receives_the_key(kv):
    seen = []
    kv._set_updater(lambda key, recv, stored: seen.append(key))
    kv.init("w", mx.nd.ones(SHAPE))
    kv.push("w", mx.nd.ones(SHAPE))
    assert seen == ["w"]


def test_lists_of_keys_init_push_and_pull(kv):
    keys = [5, 7, 9]
    kv.init(keys, [mx.nd.ones(SHAPE)] * 3)
    kv.push(keys, [[mx.nd.ones(SHAPE) * k] * 2 for k in keys])
    outs = [mx.nd.zeros(SHAPE) for _ in keys]
    kv.pull(keys, out=outs)
    for k, out in zip(keys, outs, strict=True):
        np.testing.assert_array_equal(out.asnumpy(), np.full(SHAPE, 2 * k, np.float32))


def test_a_key_given_twice_in_one_push_sums_all_its_values(kv):
    kv.init([1, 2], [mx.nd.zeros(SHAPE)] * 2)
    # numpy integer keys are the same keys as Python ints
    kv.push([1, 2, np.int64(1)], [mx.nd.ones(SHAPE), mx.nd.ones(SHAPE) * 5, [mx.nd.ones(SHAPE) * 2] * 2])
    assert pulled(kv, 1)[0, 0] == 1 + 2 + 2 and pulled(kv, 2)[0, 0] == 5


def test_many_small_keys_push_and_pull_in_one_call(kv):
    keys = list(range(40))
    kv.init(keys, [mx.nd.zeros((3,))] * len(keys))
    kv.push(keys, [mx.nd.ones((3,)) * k for k in keys])
    outs = [mx.nd.zeros((3,)) for _ in keys]
    kv.pull(keys, out=outs)
    np.testing.assert_array_equal(np.stack([o.asnumpy() for o in outs]), np.repeat(np.arange(40.0)[:, None], 3, 1))


def test_pull_into_several_outputs(kv):
    kv.init("w", mx.nd.ones(SHAPE) * 3)
    outs = [mx.nd.zeros(SHAPE) for _ in range(4)]
    kv.pull("w", out=outs)
    for out in outs:
        np.testing.assert_array_equal(out.asnumpy(), np.full(SHAPE, 3, np.float32))


def test_a_store_keeps_to_the_kind_of_key_it_was_initialised_with(kv):
    # as MXNet 1.9.1 ("Mixed key types are not allowed", an MXNetError): init, push and pull alike
    kv.init(3, mx.nd.ones(SHAPE))
    for call in (
        lambda: kv.init("3", mx.nd.ones(SHAPE)),
        lambda: kv.push("3", mx.nd.ones(SHAPE)),
        lambda: kv.pull("3", out=mx.nd.zeros(SHAPE)),
        lambda: kv.pushpull("3", mx.nd.ones(SHAPE)),
    ):
        with pytest.raises(
            lazynd_kv.MixedKeyTypesError, match="key '3' is of type str, but this store's keys are of type int"
        ):
            call()
    assert pulled(kv, 3)[0, 0] == 1


def test_a_store_of_str_keys_refuses_an_int_key_as_a_runtime_error(kv):
    kv.init("w", mx.nd.ones(SHAPE))
    with pytest.raises(RuntimeError, match="key 4 is of type int, but this store's keys are of type str"):
        kv.init(4, mx.nd.ones(SHAPE))


def test_one_call_mixing_int_and_str_keys_is_refused_before_anything(kv):
    # as MXNet 1.9.1 (an AssertionError, "inconsistent types of keys"), and the store stays open to either kind
    with pytest.raises(AssertionError, match=r"init: the keys \[3, 'a'\] mix int and str keys"):
        kv.init([3, "a"], [mx.nd.ones(SHAPE)] * 2)
    kv.init("a", mx.nd.ones(SHAPE) * 2)
    with pytest.raises(lazynd_kv.MixedKeyTypesError, match="push: the keys"):
        kv.push(["a", 3], [mx.nd.ones(SHAPE)] * 2)
    assert pulled(kv, "a")[0, 0] == 2


def test_pull_of_an_uninitialised_key_names_it(kv):
    with pytest.raises(lazynd_kv.KVKeyError, match="key 'nope' is not initialised"):
        kv.pull("nope", out=mx.nd.zeros(SHAPE))


def test_push_of_an_uninitialised_key_changes_nothing(kv):
    kv.init(1, mx.nd.ones(SHAPE))
    with pytest.raises(lazynd_kv.KVKeyError, match="key 2 is not initialised"):
        kv.push([1, 2], [mx.nd.ones(SHAPE) * 9, mx.nd.ones(SHAPE)])
    np.testing.assert_array_equal(pulled(kv, 1), np.ones(SHAPE, np.float32))


def test_push_with_a_wrong_shape_names_key_and_shapes(kv):
    kv.init(3, mx.nd.ones(SHAPE))
    with pytest.raises(ShapeError, match=r"key 3 holds shape \(4, 4\), pushed value has shape \(2, 8\)"):
        kv.push(3, mx.nd.ones((2, 8)))
    np.testing.assert_array_equal(pulled(kv, 3), np.ones(SHAPE, np.float32))


def test_values_of_another_dtype_are_converted_to_the_keys_as_in_mxnet(kv):
    # MXNet 1.9.1 sums a float16 gradient pushed to a float32 key, and pulls into any float dtype
    kv.init(3, mx.nd.ones(SHAPE))
    kv.push(3, [mx.nd.ones(SHAPE, dtype="float16") * 3, mx.nd.ones(SHAPE, dtype="float64")])
    np.testing.assert_array_equal(pulled(kv, 3), np.full(SHAPE, 4, np.float32))
    half = mx.nd.zeros(SHAPE, dtype="float16")
    kv.pull(3, out=half)
    assert half.dtype == np.float16 and (half.asnumpy() == 4).all()
    kv.set_optimizer(mx.optimizer.SGD(learning_rate=0.5))
    kv.push(3, mx.nd.ones(SHAPE, dtype="float16"))
    np.testing.assert_array_equal(pulled(kv, 3), np.full(SHAPE, 3.5, np.float32))


def test_pull_into_a_wrong_shape_names_the_key(kv):
    kv.init("w", mx.nd.ones(SHAPE))
    with pytest.raises(ShapeError, match="key 'w' holds shape"):
        kv.pull("w", out=mx.nd.zeros((3,)))


def test_second_init_of_a_key_fails_and_keeps_the_value(kv):
    kv.init(3, mx.nd.ones(SHAPE))
    with pytest.raises(lazynd_kv.KVKeyError, match="key 3 is already initialised"):
        kv.init([4, 3], [mx.nd.zeros(SHAPE), mx.nd.zeros(SHAPE)])
    np.testing.assert_array_equal(pulled(kv, 3), np.ones(SHAPE, np.float32))
    with pytest.raises(lazynd_kv.KVKeyError, match="key 4 is not initialised"):
        kv.pull(4, out=mx.nd.zeros(SHAPE))


def test_a_key_given_twice_in_one_init_is_refused_and_nothing_is_stored(kv):
    with pytest.raises(lazynd_kv.KVKeyError, match="key 'w' is given twice in one call"):
        kv.init(["w", "v", "w"], [mx.nd.ones(SHAPE), mx.nd.ones(SHAPE), mx.nd.zeros(SHAPE)])
    with pytest.raises(lazynd_kv.KVKeyError, match="key 'w' is not initialised"):
        kv.pull("w", out=mx.nd.zeros(SHAPE))


def test_bad_keys_priority_and_updater_are_refused(kv):
    with pytest.raises(LazyNDError, match="keys are int or str"):
        kv.init(1.5, mx.nd.ones(SHAPE))
    kv.init(1, mx.nd.ones(SHAPE))
    with pytest.raises(LazyNDError, match="priority must be an int"):
        kv.push(1, mx.nd.ones(SHAPE), priority="high")
    with pytest.raises(LazyNDError, match="expected a callable"):
        kv.set_updater(42)
    with pytest.raises(LazyNDError, match="out= is required"):
        kv.pull(1)


def test_priority_is_accepted(kv):
    kv.init(1, mx.nd.ones(SHAPE))
    kv.push(1, mx.nd.ones(SHAPE) * 2, priority=-3)
    out = mx.nd.zeros(SHAPE)
    kv.pull(1, out=out, priority=5)
    assert out.asnumpy()[0, 0] == 2


def test_semantics_hold_under_both_engines(engine_name):
    kv = lazynd_kv.create("local")
    kv.set_updater(lambda key, recv, stored: stored.__isub__(recv * 0.5))
    kv.init(0, mx.nd.ones(SHAPE) * 10)
    for _ in range(6):
        kv.push(0, [mx.nd.ones(SHAPE)] * 2)
    np.testing.assert_array_equal(pulled(kv, 0), np.full(SHAPE, 4, np.float32))


def test_device_store_pushes_from_the_gpu(ctx):
    kv = lazynd_kv.create("device")
    kv.init(0, mx.nd.zeros(SHAPE, ctx=ctx))
    kv.push(0, [mx.nd.ones(SHAPE, ctx=ctx) * 2] * 3)
    outs = [mx.nd.zeros(SHAPE, ctx=ctx), mx.nd.zeros(SHAPE)]
    kv.pull(0, out=outs)
    for out in outs:
        np.testing.assert_array_equal(out.asnumpy(), np.full(SHAPE, 6, np.float32))


def test_row_sparse_pull_is_refused_by_name() -> None:
    kv = mx.kv.create("local")
    kv.init("w", mx.nd.ones((2,)))
    with pytest.raises(mx.LazyNDError, match="row_sparse_pull: row_sparse values are not supported"):
        kv.row_sparse_pull("w", out=mx.nd.zeros((2,)), row_ids=mx.nd.array([0]))
