"""MXNet 1.x's KVStore calls beyond 0.9's: pull's ignore_sparse, broadcast, is_capable and
gradient compression (refused by name), on the in-process stores."""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx
import lazynd_kv
from lazynd.errors import LazyNDError, ShapeError

SHAPE = (2, 3)


@pytest.fixture(params=["local", "device"])
def kv(request: pytest.FixtureRequest) -> lazynd_kv.KVStore:
    return lazynd_kv.create(request.param)


@pytest.mark.parametrize("ignore_sparse", [True, False])
def test_pull_takes_ignore_sparse_and_pulls_dense_values_either_way(kv, ignore_sparse):
    kv.init(3, mx.nd.ones(SHAPE) * 2)
    out = mx.nd.zeros(SHAPE)
    kv.pull(3, out=out, ignore_sparse=ignore_sparse)
    np.testing.assert_array_equal(out.asnumpy(), np.full(SHAPE, 2, np.float32))


def test_pull_refuses_an_ignore_sparse_that_is_not_a_bool(kv):
    kv.init(3, mx.nd.ones(SHAPE))
    with pytest.raises(LazyNDError, match="ignore_sparse must be True or False, got 'no'"):
        kv.pull(3, out=mx.nd.zeros(SHAPE), ignore_sparse="no")


def test_broadcast_initialises_the_key_and_fills_every_output(kv):
    outs = [mx.nd.zeros(SHAPE, ctx=mx.cpu(i)) for i in range(3)]
    kv.broadcast("w", mx.nd.ones(SHAPE) * 4, out=outs)
    for out in outs:
        np.testing.assert_array_equal(out.asnumpy(), np.full(SHAPE, 4, np.float32))
    kv.push("w", mx.nd.ones(SHAPE))  # the key is initialised: it takes pushes
    np.testing.assert_array_equal(_pulled(kv, "w"), np.ones(SHAPE, np.float32))


def test_broadcast_of_several_keys(kv):
    outs = [[mx.nd.zeros(SHAPE)], [mx.nd.zeros((4,)), mx.nd.zeros((4,))]]
    kv.broadcast([5, 7], [mx.nd.ones(SHAPE), mx.nd.ones((4,)) * 3], out=outs)
    assert [o.asnumpy().tolist() for o in outs[1]] == [[3.0] * 4] * 2
    np.testing.assert_array_equal(outs[0][0].asnumpy(), np.ones(SHAPE, np.float32))


def test_broadcast_to_an_initialised_key_is_refused(kv):
    kv.init("w", mx.nd.ones(SHAPE))
    with pytest.raises(lazynd_kv.KVKeyError, match="key 'w' is already initialised"):
        kv.broadcast("w", mx.nd.ones(SHAPE), out=mx.nd.zeros(SHAPE))


def test_broadcast_checks_the_outputs_before_initialising(kv):
    with pytest.raises(
        ShapeError, match=r"broadcast: key 'w' is given a value of shape \(2, 3\), output has shape \(4,\)"
    ):
        kv.broadcast("w", mx.nd.ones(SHAPE), out=mx.nd.zeros((4,)))
    kv.init("w", mx.nd.ones(SHAPE))  # nothing was initialised by the refused call


def test_broadcast_without_out_is_refused(kv):
    with pytest.raises(LazyNDError, match="broadcast: out= is required"):
        kv.broadcast("w", mx.nd.ones(SHAPE), out=None)


def test_stores_are_capable_of_running_an_optimizer(kv):
    assert kv.OPTIMIZER == "optimizer"
    assert kv.is_capable(kv.OPTIMIZER) is True
    assert kv.is_capable("OPTIMIZER") is True


def test_is_capable_names_an_unknown_capability(kv):
    with pytest.raises(LazyNDError, match="unknown capability 'sparse'"):
        kv.is_capable("sparse")


@pytest.mark.parametrize("params", [{"type": "2bit", "threshold": 0.5}, {"type": "1bit"}])
def test_gradient_compression_is_refused_by_name(kv, params):
    with pytest.raises(LazyNDError, match=f"set_gradient_compression: .* not supported by lazynd's '{kv.type}' store"):
        kv.set_gradient_compression(params)


def _pulled(kv: lazynd_kv.KVStore, key, shape=SHAPE) -> np.ndarray:
    out = mx.nd.zeros(shape)
    kv.pull(key, out=out)
    return out.asnumpy()
