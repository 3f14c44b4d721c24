"""MXNet 1.x's ``KVStoreBase``: a user's own store, registered by class name, created by
``mx.kv.create`` and trained through by ``Module.fit`` and ``FeedForward.fit`` as MXNet 1.9.1 does."""

from __future__ import annotations

import warnings
from collections.abc import Iterator

import numpy as np
import pytest

import lazynd as mx
from lazynd.errors import ArgumentTypeError, DataError, ParameterError
from lazynd_kv import registry

KVStoreBase = mx.kv.KVStoreBase


class SumStore(KVStoreBase):
    """A store written as a user writes one: sums each key's values; runs the optimizer when ``capable``."""

    capable = True

    def __init__(self) -> None:
        self.calls: list[tuple[str, object, int]] = []
        self.updater = None
        self.stored: dict[object, mx.nd.NDArray] = {}

    def broadcast(self, key, value, out, priority=0):
        self.calls.append(("broadcast", key, priority))
        self.stored[key] = value.copy()
        for o in out if isinstance(out, list) else [out]:
            o[:] = value

    def init(self, key, value):
        self.calls.append(("init", key, 0))

    def pushpull(self, key, value, out=None, priority=0):
        self.calls.append(("pushpull", key, priority))
        values = value if isinstance(value, list) else [value]
        total = values[0].copy()
        for v in values[1:]:
            total += v.as_in_context(total.context)
        if self.updater is not None:
            self.updater(key, total, self.stored[key])
            total = self.stored[key]
        for o in values if out is None else (out if isinstance(out, list) else [out]):
            o[:] = total

    def is_capable(self, capability):
        if capability.lower() != KVStoreBase.OPTIMIZER:
            raise ValueError(f"Unknown capability: {capability}")
        return self.capable

    def set_optimizer(self, optimizer):
        self.updater = mx.optimizer.get_updater(optimizer)

    @property
    def type(self):
        return "sumstore"

    @property
    def rank(self):
        return 0

    @property
    def num_workers(self):
        return 1


@pytest.fixture
def clean_registry() -> Iterator[None]:
    before = dict(registry._STORES)
    yield
    registry._STORES.clear()
    registry._STORES.update(before)


def test_register_keys_the_class_by_its_lower_cased_name_and_create_finds_it_in_any_case(clean_registry):
    assert KVStoreBase.register(SumStore) is SumStore
    assert "sumstore" in mx.kv.supported_types()
    store = mx.kv.create("SumStore")
    assert type(store) is SumStore and store.type == "sumstore"
    assert type(mx.kvstore.create("SUMSTORE")) is SumStore


def test_registering_a_second_class_under_a_name_warns_as_mxnet_does_and_replaces_it(clean_registry):
    KVStoreBase.register(SumStore)
    other = type("SUMSTORE", (SumStore,), {})
    with pytest.warns(
        UserWarning, match=r"WARNING: New kvstore .*\.SUMSTORE is overriding existing kvstore .*\.SumStore"
    ):
        KVStoreBase.register(other)
    assert type(mx.kv.create("sumstore")) is other


def test_register_refuses_what_is_not_a_class():
    with pytest.raises(ArgumentTypeError, match="KVStoreBase.register: expected a class, got function"):
        KVStoreBase.register(lambda: None)


def test_the_base_class_methods_are_left_to_subclasses():
    base = KVStoreBase()
    for call in (lambda: base.type, lambda: base.rank, lambda: base.num_workers, lambda: base.is_capable("optimizer")):
        with pytest.raises(NotImplementedError):
            call()
    with pytest.raises(NotImplementedError):
        base.pushpull(0, mx.nd.ones((1,)))


def test_lazynd_stores_are_kvstorebase_stores_that_run_the_optimizer():
    kv = mx.kv.create("LOCAL")
    assert isinstance(kv, KVStoreBase) and kv.type == "local"
    assert kv.is_capable(KVStoreBase.OPTIMIZER) and kv.is_capable("OPTIMIZER")
    with pytest.raises(ParameterError, match="unknown capability 'foo'"):
        kv.is_capable("foo")


def test_create_refuses_a_name_that_is_not_a_string():
    with pytest.raises(ArgumentTypeError, match="name must be a string such as 'local', got int"):
        mx.kv.create(3)


def _net():
    data = mx.sym.Variable("data")
    fc = mx.sym.FullyConnected(data, num_hidden=2, name="fc")
    return mx.sym.SoftmaxOutput(fc, name="softmax")


def _data():
    rng = np.random.default_rng(0)
    return rng.random((8, 3), dtype=np.float32), (np.arange(8) % 2).astype(np.float32)


def _module_fit(kvstore):
    x, y = _data()
    mod = mx.mod.Module(_net(), context=[mx.cpu(0), mx.cpu(1)])
    mx.random.seed(1)
    mod.fit(
        mx.io.NDArrayIter(x, y, batch_size=4),
        num_epoch=2,
        kvstore=kvstore,
        optimizer="sgd",
        optimizer_params={"learning_rate": 0.5},
        initializer=mx.init.Uniform(0.5),
    )
    return {k: v.asnumpy() for k, v in mod.get_params()[0].items()}


@pytest.mark.parametrize("capable", [True, False])
def test_module_fit_trains_through_a_custom_store_as_through_a_local_one(capable):
    store = SumStore()
    store.capable = capable
    trained = _module_fit(store)
    expected = _module_fit("local")
    for name, value in expected.items():
        np.testing.assert_allclose(trained[name], value, rtol=1e-5, atol=1e-6)
    first = "broadcast" if capable else "init"
    assert store.calls[:2] == [(first, 0, 0), (first, 1, 0)]
    # one pushpull per key and batch, priority minus the key: 2 epochs x 2 batches x 2 keys
    assert store.calls[2:6] == [("pushpull", 0, 0), ("pushpull", 1, -1)] * 2
    assert len(store.calls) == 2 + 8


def test_feedforward_fit_trains_through_a_custom_store():
    x, y = _data()
    store = SumStore()
    model = mx.model.FeedForward(_net(), ctx=[mx.cpu(0), mx.cpu(1)], num_epoch=1, learning_rate=0.5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.fit(X=mx.io.NDArrayIter(x, y, batch_size=4), kvstore=store)
    assert [c[0] for c in store.calls] == ["broadcast"] * 2 + ["pushpull"] * 4
    assert store.updater is not None


def test_a_store_that_cannot_run_the_optimizer_and_has_no_init_is_refused_by_name():
    class NoInit(SumStore):
        capable = False
        init = None  # type: ignore[assignment]

    with pytest.raises(DataError, match=r"kvstore NoInit: .*needs init\(key, value\)"):
        _module_fit(NoInit())


@pytest.mark.parametrize("capable", [True, False])
def test_module_fit_trains_through_a_registered_store_named_by_its_class_name(clean_registry, capable):
    # MXNet 1.9.1 asks a store created by name too whether it runs the optimizer
    class NamedSumStore(SumStore):
        instances: list[SumStore] = []

        def __init__(self) -> None:
            super().__init__()
            NamedSumStore.instances.append(self)

    NamedSumStore.capable = capable
    KVStoreBase.register(NamedSumStore)
    trained = _module_fit("namedsumstore")
    for name, value in _module_fit("local").items():
        np.testing.assert_allclose(trained[name], value, rtol=1e-5, atol=1e-6)
    first = "broadcast" if capable else "init"
    assert NamedSumStore.instances[-1].calls[:2] == [(first, 0, 0), (first, 1, 0)]


def test_module_fit_refuses_the_teststore_by_name_for_it_has_no_init():
    # MXNet 1.9.1 fails here with an AttributeError ('TestStore' object has no attribute 'init')
    with pytest.raises(DataError, match=r"kvstore TestStore: .*needs init\(key, value\)"):
        _module_fit("teststore")
