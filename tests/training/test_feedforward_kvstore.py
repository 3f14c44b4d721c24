"""FeedForward.fit with a kvstore: gradients through a given store, pushpull, and what is not a store."""

from __future__ import annotations

import pytest
from blob_problem import two_class_blobs, two_class_net

import lazynd as mx
from lazynd.errors import DataError
from lazynd_sym.model import FeedForward


class _RecordingStore:
    """A minimal store without an optimizer: keeps the last pushed gradient per key and hands it back on pull.

    Keys and values come as lists (one value list per key, one array per device), as MXNet's stores take them.
    """

    def __init__(self) -> None:
        self.values: dict = {}
        self.pushes = 0

    def init(self, keys, values) -> None:
        for key, value in zip(keys, values, strict=True):
            self.values[key] = value.copy()

    def push(self, keys, values) -> None:
        for key, per_device in zip(keys, values, strict=True):
            self.pushes += 1
            self.values[key] = per_device[0].copy()

    def pull(self, keys, outs) -> None:
        for key, per_device in zip(keys, outs, strict=True):
            for out in per_device:
                self.values[key].copyto(out)


def test_fit_pushes_and_pulls_every_gradient_through_a_given_store() -> None:
    mx.random.seed(0)
    store = _RecordingStore()
    data, label = two_class_blobs()
    ff = FeedForward(
        two_class_net(),
        num_epoch=3,
        numpy_batch_size=40,
        learning_rate=0.1,
        momentum=0.9,
        initializer=mx.init.Xavier(),
        progress_bar=False,
    )
    ff.fit(data, label, kvstore=store)
    assert store.pushes == 3 * 10 * 4  # epochs x batches x parameters
    assert ff.score(mx.io.NDArrayIter(data, label, batch_size=50)) > 0.95


class _PushPullStore(_RecordingStore):
    """The recording store with MXNet 1.x's ``pushpull``, which ``fit`` must use instead of push then pull."""

    def __init__(self) -> None:
        super().__init__()
        self.pushpulls = 0

    def pushpull(self, keys, values, out=None) -> None:
        self.pushpulls += 1
        self.push(keys, values)
        self.pull(keys, values if out is None else out)


def test_fit_sums_gradients_through_pushpull_when_the_store_has_it() -> None:
    mx.random.seed(0)
    store = _PushPullStore()
    data, label = two_class_blobs()
    ff = FeedForward(
        two_class_net(), num_epoch=3, numpy_batch_size=40, learning_rate=0.1, momentum=0.9, progress_bar=False
    )
    ff.fit(data, label, kvstore=store)
    assert (store.pushpulls, store.pushes) == (3 * 10, 3 * 10 * 4)  # one call per batch, every parameter
    assert ff.score(mx.io.NDArrayIter(data, label, batch_size=50)) > 0.95


def test_fit_rejects_a_kvstore_that_is_not_a_store() -> None:
    data, label = two_class_blobs(40)
    with pytest.raises(DataError, match="kvstore must be a store name or have init/push/pull, got int"):
        FeedForward(two_class_net(), num_epoch=1, numpy_batch_size=40, progress_bar=False).fit(data, label, kvstore=3)


def test_fit_accepts_a_lazynd_kv_local_store_object() -> None:
    import lazynd_kv

    data, label = two_class_blobs(80)
    ff = FeedForward(two_class_net(), num_epoch=1, numpy_batch_size=40, progress_bar=False)
    ff.fit(data, label, kvstore=lazynd_kv.create("local"))
    assert sorted(ff.arg_params) == ["fc1_bias", "fc1_weight", "fc2_bias", "fc2_weight"]
