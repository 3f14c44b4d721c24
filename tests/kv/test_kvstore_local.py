"""The documented KVStore semantics on the in-process stores ('local', 'device')."""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx
import lazynd_kv
from lazynd.errors import LazyNDError, ShapeError

SHAPE = (4, 4)


@pytest.fixture(params=["local", "device"])
def kv(request: pytest.FixtureRequest) -> lazynd_kv.KVStore:
    return lazynd_kv.create(request.param)


def _pulled(kv: lazynd_kv.KVStore, key, shape=SHAPE) -> np.ndarray:
    out = mx.nd.zeros(shape)
    kv.pull(key, out=out)
    return out.asnumpy()


def test_create_unknown_type_lists_supported_types():
    with pytest.raises(LazyNDError, match=r"unknown KVStore type 'dist_async'.*device.*dist_sync.*local"):
        lazynd_kv.create("dist_async")


def test_mx_kv_create_gives_a_local_store_with_rank_and_workers():
    kv = mx.kv.create()
    assert (kv.type, kv.rank, kv.num_workers) == ("local", 0, 1)


def test_init_then_pull_gives_the_initial_value(kv):
    kv.init(3, mx.nd.ones(SHAPE) * 5)
    np.testing.assert_array_equal(_pulled(kv, 3), np.full(SHAPE, 5, np.float32))


def test_init_copies_the_value(kv):
    value = mx.nd.ones(SHAPE)
    kv.init(3, value)
    value[:] = 7
    np.testing.assert_array_equal(_pulled(kv, 3), np.ones(SHAPE, np.float32))


def test_push_without_updater_replaces_the_value(kv):
    kv.init(3, mx.nd.ones(SHAPE))
    kv.push(3, mx.nd.ones(SHAPE) * 8)
    np.testing.assert_array_equal(_pulled(kv, 3), np.full(SHAPE, 8, np.float32))


def test_push_of_a_list_of_four_values_sums_them(kv):
    kv.init(3, mx.nd.zeros(SHAPE))
    kv.push(3, [mx.nd.ones(SHAPE) * (i + 1) for i in range(4)])
    np.testing.assert_array_equal(_pulled(kv, 3), np.full(SHAPE, 10, np.float32))


def test_custom_updater_accumulates(kv):
    def update(key, recv, stored):
        stored += recv * 2

    kv.set_updater(update)
    kv.init(3, mx.nd.ones(SHAPE))
    kv.push(3, mx.nd.ones(SHAPE))
    kv.push(3, [mx.nd.ones(SHAPE)] * 4)
    np.testing.assert_array_equal(_pulled(kv, 3), np.full(SHAPE, 1 + 2 + 8, np.float32))


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
    assert _pulled(kv, 1)[0, 0] == 1 + 2 + 2 and _pulled(kv, 2)[0, 0] == 5


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


def test_int_and_str_keys_are_distinct(kv):
    kv.init(3, mx.nd.ones(SHAPE))
    kv.init("3", mx.nd.ones(SHAPE) * 2)
    assert _pulled(kv, 3)[0, 0] == 1 and _pulled(kv, "3")[0, 0] == 2


def test_pull_of_an_uninitialised_key_names_it(kv):
    with pytest.raises(lazynd_kv.KVKeyError, match="key 'nope' is not initialised"):
        kv.pull("nope", out=mx.nd.zeros(SHAPE))


def test_push_of_an_uninitialised_key_changes_nothing(kv):
    kv.init(1, mx.nd.ones(SHAPE))
    with pytest.raises(lazynd_kv.KVKeyError, match="key 2 is not initialised"):
        kv.push([1, 2], [mx.nd.ones(SHAPE) * 9, mx.nd.ones(SHAPE)])
    np.testing.assert_array_equal(_pulled(kv, 1), np.ones(SHAPE, np.float32))


def test_push_with_a_wrong_shape_names_key_and_shapes(kv):
    kv.init(3, mx.nd.ones(SHAPE))
    with pytest.raises(ShapeError, match=r"key 3 holds shape \(4, 4\), pushed value has shape \(2, 8\)"):
        kv.push(3, mx.nd.ones((2, 8)))
    np.testing.assert_array_equal(_pulled(kv, 3), np.ones(SHAPE, np.float32))


def test_push_with_a_wrong_dtype_names_key_and_dtypes(kv):
    kv.init(3, mx.nd.ones(SHAPE))
    with pytest.raises(ShapeError, match="key 3 holds dtype float32, pushed value has dtype float64"):
        kv.push(3, mx.nd.ones(SHAPE, dtype="float64"))
    np.testing.assert_array_equal(_pulled(kv, 3), np.ones(SHAPE, np.float32))


def test_pull_into_a_wrong_shape_names_the_key(kv):
    kv.init("w", mx.nd.ones(SHAPE))
    with pytest.raises(ShapeError, match="key 'w' holds shape"):
        kv.pull("w", out=mx.nd.zeros((3,)))


def test_second_init_of_a_key_fails_and_keeps_the_value(kv):
    kv.init(3, mx.nd.ones(SHAPE))
    with pytest.raises(lazynd_kv.KVKeyError, match="key 3 is already initialised"):
        kv.init([4, 3], [mx.nd.zeros(SHAPE), mx.nd.zeros(SHAPE)])
    np.testing.assert_array_equal(_pulled(kv, 3), np.ones(SHAPE, np.float32))
    with pytest.raises(lazynd_kv.KVKeyError, match="key 4 is not initialised"):
        kv.pull(4, out=mx.nd.zeros(SHAPE))


def test_a_key_given_twice_in_one_init_is_refused_and_nothing_is_stored(kv):
    with pytest.raises(lazynd_kv.KVKeyError, match="key 'w' is given twice in one call"):
        kv.init(["w", 3, "w"], [mx.nd.ones(SHAPE), mx.nd.ones(SHAPE), mx.nd.zeros(SHAPE)])
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
    np.testing.assert_array_equal(_pulled(kv, 0), np.full(SHAPE, 4, np.float32))


def test_save_optimizer_states_without_optimizer_is_an_error(kv, tmp_path):
    with pytest.raises(LazyNDError, match="no optimizer is set"):
        kv.save_optimizer_states(str(tmp_path / "x.states"))


def test_device_store_pushes_from_the_gpu(ctx):
    kv = lazynd_kv.create("device")
    kv.init(0, mx.nd.zeros(SHAPE, ctx=ctx))
    kv.push(0, [mx.nd.ones(SHAPE, ctx=ctx) * 2] * 3)
    outs = [mx.nd.zeros(SHAPE, ctx=ctx), mx.nd.zeros(SHAPE)]
    kv.pull(0, out=outs)
    for out in outs:
        np.testing.assert_array_equal(out.asnumpy(), np.full(SHAPE, 6, np.float32))


def _sgd_steps(kv, weight_key, grads):
    for g in grads:
        kv.push(weight_key, mx.nd.array(g))
    return _pulled(kv, weight_key, (3,))


def test_set_optimizer_applies_momentum_sgd():
    kv = lazynd_kv.create("local")
    kv.set_optimizer(mx.optimizer.create("sgd", learning_rate=0.1, momentum=0.9))
    kv.init(0, mx.nd.ones((3,)))
    grads = [np.array([1.0, 2.0, -1.0], np.float32)] * 2
    # mom1 = -0.1 g, w1 = 1 - 0.1 g; mom2 = 0.9 mom1 - 0.1 g, w2 = w1 + mom2 = 1 - 0.29 g
    np.testing.assert_allclose(_sgd_steps(kv, 0, grads), 1 - 0.29 * grads[0], rtol=1e-6)


def test_set_optimizer_takes_an_optimizer_name():
    kv = lazynd_kv.create("local")
    kv.set_optimizer("sgd")  # SGD's defaults: learning_rate 0.01, no momentum
    kv.init(0, mx.nd.ones((3,)))
    grads = [np.array([1.0, 2.0, -1.0], np.float32)] * 2
    np.testing.assert_allclose(_sgd_steps(kv, 0, grads), 1 - 0.02 * grads[0], rtol=1e-6)


@pytest.mark.parametrize(
    "bad, message",
    [
        ("sgdd", r"unknown optimizer 'sgdd' \(registered: .*sgd"),
        (lambda key, grad, weight: None, r"set_optimizer: expected an Optimizer .* got function; for a function"),
        (0.1, r"set_optimizer: expected an Optimizer .* got float"),
    ],
)
def test_set_optimizer_refuses_anything_else_at_once(bad, message):
    kv = lazynd_kv.create("local")
    with pytest.raises(LazyNDError, match=message):
        kv.set_optimizer(bad)
    assert kv._updater is None


def test_optimizer_states_survive_save_and_load(tmp_path):
    rng = np.random.default_rng(1)
    grads = [rng.standard_normal(3).astype(np.float32) for _ in range(4)]

    def fresh():
        kv = lazynd_kv.create("local")
        kv.set_optimizer(mx.optimizer.create("sgd", learning_rate=0.1, momentum=0.9))
        return kv

    straight = fresh()
    straight.init(0, mx.nd.ones((3,)))
    expect = _sgd_steps(straight, 0, grads)
    first = fresh()
    first.init(0, mx.nd.ones((3,)))
    halfway = _sgd_steps(first, 0, grads[:2])
    path = tmp_path / "opt.states"
    first.save_optimizer_states(str(path))
    assert [p.name for p in tmp_path.iterdir()] == ["opt.states"]  # no temp file left behind
    second = fresh()
    second.init(0, mx.nd.array(halfway))
    second.load_optimizer_states(str(path))
    np.testing.assert_allclose(_sgd_steps(second, 0, grads[2:]), expect, rtol=1e-6)


# -- pushpull ------------------------------------------------------------------------------------
def _twin_stores(name: str, updater=None):
    """Two stores of one type, initialised alike: one driven by pushpull, one by push then pull."""
    stores = [lazynd_kv.create(name) for _ in range(2)]
    for store in stores:
        if updater is not None:
            store.set_updater(updater)
        store.init([1, "b"], [mx.nd.ones(SHAPE), mx.nd.ones((3,)) * 2])
    return stores


@pytest.mark.parametrize("updater", [None, lambda key, recv, stored: stored.__iadd__(recv * 3)], ids=["assign", "add"])
@pytest.mark.parametrize("name", ["local", "device"])
def test_pushpull_gives_what_push_then_pull_gives(name, updater):
    by_pushpull, by_push_pull = _twin_stores(name, updater)
    for step in range(3):
        values = [[mx.nd.ones(SHAPE) * (step + 1), mx.nd.ones(SHAPE) * 5], mx.nd.arange(3) * step]
        outs = [[mx.nd.zeros(SHAPE) for _ in range(3)], mx.nd.zeros((3,))]
        expect = [[mx.nd.zeros(SHAPE) for _ in range(3)], mx.nd.zeros((3,))]
        by_pushpull.pushpull([1, "b"], values, out=outs)
        by_push_pull.push([1, "b"], values)
        by_push_pull.pull([1, "b"], out=expect)
        for got, want in zip([*outs[0], outs[1]], [*expect[0], expect[1]], strict=True):
            np.testing.assert_array_equal(got.asnumpy(), want.asnumpy())
    # the stored values agree too
    np.testing.assert_array_equal(_pulled(by_pushpull, 1), _pulled(by_push_pull, 1))


def test_pushpull_without_out_pulls_into_the_pushed_values(kv):
    kv.init(3, mx.nd.zeros(SHAPE))
    grads = [mx.nd.ones(SHAPE), mx.nd.ones(SHAPE) * 2]
    kv.pushpull(3, grads)
    for grad in grads:
        np.testing.assert_array_equal(grad.asnumpy(), np.full(SHAPE, 3, np.float32))
    np.testing.assert_array_equal(_pulled(kv, 3), np.full(SHAPE, 3, np.float32))


def test_store_keeps_the_pushpull_result_when_out_is_written_later(kv):
    kv.init(3, mx.nd.zeros(SHAPE))
    out = mx.nd.zeros(SHAPE)
    kv.pushpull(3, mx.nd.ones(SHAPE) * 4, out=out)
    out[:] = -1
    np.testing.assert_array_equal(_pulled(kv, 3), np.full(SHAPE, 4, np.float32))


def test_pushpull_of_an_uninitialised_key_changes_nothing(kv):
    kv.init(1, mx.nd.ones(SHAPE))
    out = mx.nd.zeros(SHAPE)
    with pytest.raises(lazynd_kv.KVKeyError, match=r"KVStore.pushpull: key 2 is not initialised"):
        kv.pushpull([1, 2], [mx.nd.ones(SHAPE) * 9, mx.nd.ones(SHAPE)], out=[out, mx.nd.zeros(SHAPE)])
    np.testing.assert_array_equal(_pulled(kv, 1), np.ones(SHAPE, np.float32))
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
    np.testing.assert_array_equal(_pulled(kv, 3), np.ones(SHAPE, np.float32))


def test_pushpull_with_a_wrong_dtype_names_key_and_dtypes(kv):
    kv.init(3, mx.nd.ones(SHAPE))
    with pytest.raises(ShapeError, match="KVStore.pushpull: key 3 holds dtype float32, pushed value has dtype float64"):
        kv.pushpull(3, mx.nd.ones(SHAPE, dtype="float64"), out=mx.nd.zeros(SHAPE))


def test_pushpull_with_mismatched_list_lengths_is_refused(kv):
    kv.init([1, 2], [mx.nd.ones(SHAPE)] * 2)
    with pytest.raises(LazyNDError, match="pushpull: 2 keys need a list of 2 values"):
        kv.pushpull([1, 2], [mx.nd.ones(SHAPE)], out=[mx.nd.zeros(SHAPE)] * 2)
    with pytest.raises(LazyNDError, match="pushpull: 2 keys need a list of 2 values .*, got 3"):
        kv.pushpull([1, 2], [mx.nd.ones(SHAPE)] * 2, out=[mx.nd.zeros(SHAPE)] * 3)
    with pytest.raises(LazyNDError, match="priority must be an int"):
        kv.pushpull(1, mx.nd.ones(SHAPE), priority=None)
    np.testing.assert_array_equal(_pulled(kv, 1), np.ones(SHAPE, np.float32))


@pytest.mark.parametrize(
    "name, store_class",
    [
        ("local_update_cpu", "LocalStore"),
        ("local_allreduce_cpu", "LocalStore"),
        ("local_allreduce_device", "DeviceStore"),
    ],
)
def test_mxnet_09_store_names_make_the_stores_that_do_that(name, store_class):
    kv = lazynd_kv.create(name)
    assert type(kv).__name__ == store_class and kv.type == name
    kv.init(3, mx.nd.ones((2, 2)))
    kv.push(3, [mx.nd.ones((2, 2)), mx.nd.ones((2, 2)) * 2])
    out = mx.nd.zeros((2, 2))
    kv.pull(3, out=out)
    np.testing.assert_array_equal(out.asnumpy(), np.full((2, 2), 3.0))


@pytest.mark.parametrize("name, updates_on_store", [("local_update_cpu", True), ("local_allreduce_cpu", False)])
def test_allreduce_stores_leave_the_update_to_each_device(name, updates_on_store):
    from lazynd_sym.model.kvstore_setup import create_kvstore

    _, update_on_kvstore = create_kvstore(name, 2, {"w": mx.nd.ones((2, 2))})
    assert update_on_kvstore is updates_on_store


@pytest.mark.parametrize("kvstore", ["local", "device", "object"])
def test_mxnet_update_on_kvstore_0_keeps_the_optimizer_on_the_devices(monkeypatch, kvstore) -> None:
    from lazynd_sym.model.kvstore_setup import create_kvstore

    store = mx.kv.create("local") if kvstore == "object" else kvstore
    params = {"w": mx.nd.ones((2, 2))}
    assert create_kvstore(store, 2, params)[1] is True
    monkeypatch.setenv("MXNET_UPDATE_ON_KVSTORE", "0")  # as MXNet reads it
    created, update_on_kvstore = create_kvstore(store, 2, params)
    assert created is not None and update_on_kvstore is False
    monkeypatch.setenv("MXNET_UPDATE_ON_KVSTORE", "yes")
    with pytest.raises(mx.LazyNDError, match="MXNET_UPDATE_ON_KVSTORE must be an integer"):
        create_kvstore(store, 2, params)


def test_row_sparse_pull_is_refused_by_name() -> None:
    kv = mx.kv.create("local")
    kv.init("w", mx.nd.ones((2,)))
    with pytest.raises(mx.LazyNDError, match="row_sparse_pull: row_sparse values are not supported"):
        kv.row_sparse_pull("w", out=mx.nd.zeros((2,)), row_ids=mx.nd.array([0]))
