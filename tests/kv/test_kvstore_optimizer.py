"""Optimizers on the in-process stores: set_optimizer, its states saved and loaded, and where MXNet's store names and
MXNET_UPDATE_ON_KVSTORE put the update.
"""

from __future__ import annotations

import numpy as np
import pytest
from kv_local_values import pulled

import lazynd as mx
import lazynd_kv
from lazynd.errors import LazyNDError


def test_save_optimizer_states_without_optimizer_is_an_error(kv, tmp_path):
    with pytest.raises(LazyNDError, match="no optimizer is set"):
        kv.save_optimizer_states(str(tmp_path / "x.states"))


def _sgd_steps(kv, weight_key, grads):
    for g in grads:
        kv.push(weight_key, mx.nd.array(g))
    return pulled(kv, weight_key, (3,))


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


def test_mxnet_nccl_store_name_makes_the_device_store_that_updates_on_the_store():
    # image-classification's fit.py takes --kv-store nccl; lazynd's device store sums GPUs with NCCL
    from lazynd_sym.model.kvstore_setup import create_kvstore

    kv = lazynd_kv.create("nccl")
    assert type(kv).__name__ == "DeviceStore" and kv.type == "nccl"
    kv.init("w", mx.nd.ones((2, 2)))
    kv.push("w", [mx.nd.ones((2, 2)), mx.nd.ones((2, 2)) * 2])
    out = mx.nd.zeros((2, 2))
    kv.pull("w", out=out)
    np.testing.assert_array_equal(out.asnumpy(), np.full((2, 2), 3.0))
    store, update_on_kvstore = create_kvstore("nccl", 2, {"w": mx.nd.ones((2, 2))})
    assert store is not None and store.type == "nccl" and update_on_kvstore is True


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


def _adam_store_after_one_push(tmp_path, dump_optimizer):
    kv = lazynd_kv.create("local")
    kv.set_optimizer(mx.optimizer.create("adam", learning_rate=0.1))
    kv.init(0, mx.nd.array([1.0, 2.0]))
    kv.push(0, mx.nd.array([1.0, 2.0]))
    path = str(tmp_path / "adam.states")
    kv.save_optimizer_states(path, dump_optimizer=dump_optimizer)
    return path


def test_states_of_another_optimizer_loaded_from_a_file_are_refused_by_parameter(tmp_path):
    # the states file is read by the restricted unpickler: the layout check must run for it as for any pickle
    path = _adam_store_after_one_push(tmp_path, dump_optimizer=False)
    kv = lazynd_kv.create("local")
    kv.set_optimizer(mx.optimizer.create("sgd", learning_rate=0.5, momentum=0.9))
    kv.init(0, mx.nd.array([1.0, 2.0]))
    kv.load_optimizer_states(path)
    with pytest.raises(LazyNDError, match=r"loaded state of parameter 0 is \('array\(2,\)', 'array\(2,\)'\), but SGD"):
        kv.push(0, mx.nd.array([1.0, 2.0]))


def test_states_saved_with_dump_optimizer_bring_the_optimizer_back(tmp_path):
    # MXNet 1.9.1: the Adam (learning rate 0.1, one update made) saved with the states replaces the
    # store's SGD on load, so the next push takes Adam's second step: [0.8999994, 1.8999994]
    path = _adam_store_after_one_push(tmp_path, dump_optimizer=True)
    kv = lazynd_kv.create("local")
    kv.set_optimizer(mx.optimizer.create("sgd", learning_rate=0.5))
    kv.init(0, mx.nd.array([1.0, 2.0]))
    kv.load_optimizer_states(path)
    kv.push(0, mx.nd.array([1.0, 2.0]))
    np.testing.assert_allclose(pulled(kv, 0, (2,)), [0.8999994, 1.8999994], rtol=1e-5)


@pytest.mark.parametrize(
    "device",
    [
        "cpu1",
        pytest.param(
            "gpu0",
            marks=[pytest.mark.gpu, pytest.mark.skipif(mx.num_gpus() < 1, reason="needs an NVIDIA GPU with CuPy")],
        ),
    ],
)
def test_loaded_states_follow_a_key_that_lives_on_another_device(tmp_path, device):
    # a 'device' store keeps a key where its value is (cpu(1), gpu(0)); states load onto cpu(0) and
    # must move to the key's device at its next update, as MXNet's updater syncs their context
    ctx = mx.cpu(1) if device == "cpu1" else mx.gpu(0)

    def trained(steps, save_after=None):
        kv = lazynd_kv.create("device")
        kv.set_optimizer(mx.optimizer.create("sgd", learning_rate=0.1, momentum=0.9))
        kv.init(3, mx.nd.ones((2,), ctx=ctx))
        for step in range(steps):
            kv.push(3, mx.nd.array([1.0, -2.0], ctx=ctx))
            if step == save_after:
                path = str(tmp_path / "device.states")
                kv.save_optimizer_states(path)
                kv.load_optimizer_states(path)
        return pulled(kv, 3, (2,))

    np.testing.assert_allclose(trained(3, save_after=0), trained(3), rtol=1e-6)
