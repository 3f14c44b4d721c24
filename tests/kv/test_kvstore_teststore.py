"""MXNet 1.x's ``'teststore'``, the store written in Python that MXNet ships (its custom-store tests,
test_kvstore_custom.py, run against it): broadcast, pushpull summing over contexts, no optimizer."""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx
from lazynd.errors import ArgumentTypeError, ParameterError

SHAPE = (2, 3)


def test_create_gives_a_one_worker_store_that_cannot_run_the_optimizer():
    kv = mx.kv.create("teststore")
    assert isinstance(kv, mx.kv.KVStoreBase)
    assert (kv.type, kv.rank, kv.num_workers) == ("teststore", 0, 1)
    assert type(kv).is_capable("optimizer") is False
    with pytest.raises(NotImplementedError):
        kv.set_optimizer(mx.optimizer.create("sgd"))


def test_is_capable_names_an_unknown_capability():
    with pytest.raises(ParameterError, match="unknown capability 'sparse'"):
        mx.kv.create("teststore").is_capable("sparse")


def test_broadcast_copies_the_value_into_one_output_or_each_of_a_list():
    kv = mx.kv.create("teststore")
    out = mx.nd.zeros(SHAPE)
    kv.broadcast(3, mx.nd.ones(SHAPE) * 2, out=out)
    assert out.asnumpy().tolist() == np.full(SHAPE, 2.0).tolist()
    outs = [mx.nd.zeros(SHAPE, ctx=mx.cpu(i)) for i in range(3)]
    kv.broadcast("a", mx.nd.ones(SHAPE), out=outs)
    for o in outs:
        assert o.asnumpy().tolist() == np.ones(SHAPE).tolist()


def test_pushpull_sums_the_values_of_every_context_into_the_outputs():
    kv = mx.kv.create("teststore")
    values = [mx.nd.ones(SHAPE, ctx=mx.cpu(i)) * (i + 1) for i in range(4)]
    outs = [mx.nd.zeros(SHAPE, ctx=mx.cpu(i)) for i in range(4)]
    kv.pushpull(3, values, out=outs)
    for o in outs:
        assert o.asnumpy().tolist() == np.full(SHAPE, 10.0).tolist()
    assert values[0].asnumpy().tolist() == np.ones(SHAPE).tolist()  # the values are left alone


def test_pushpull_without_out_writes_the_sum_into_the_values():
    kv = mx.kv.create("teststore")
    values = [mx.nd.ones(SHAPE, ctx=mx.cpu(i)) for i in range(3)]
    kv.pushpull("a", values)
    kv.pushpull("a", values)
    for v in values:
        assert v.asnumpy().tolist() == np.full(SHAPE, 9.0).tolist()


def test_pushpull_refuses_what_is_not_ndarrays_by_name():
    kv = mx.kv.create("teststore")
    with pytest.raises(ArgumentTypeError, match="TestStore.pushpull: value must be an NDArray"):
        kv.pushpull(3, [np.ones(SHAPE)])
    with pytest.raises(ArgumentTypeError, match="TestStore.pushpull: out must be an NDArray"):
        kv.pushpull(3, [mx.nd.ones(SHAPE)], out=[np.zeros(SHAPE)])
