"""MXNet's ``'test'`` optimizer: ``weight += rescale_grad * grad``, the sum MXNet's KVStore tests
(tests/nightly/test_kvstore.py) check a store's updates against."""

from __future__ import annotations

import numpy as np

import lazynd as mx
import lazynd_kv


def test_it_is_created_by_name_and_adds_the_rescaled_gradient_only():
    # learning rate, weight decay and clipping play no part, as in MXNet 1.9.1
    opt = mx.optimizer.create("test", rescale_grad=0.5, learning_rate=7.0, wd=0.3, clip_gradient=0.1)
    assert isinstance(opt, mx.optimizer.Test)
    weight, grad = mx.nd.array([1.0, -2.0]), mx.nd.array([4.0, 6.0])
    state = opt.create_state(0, weight)
    assert state.shape == (2,) and state.dtype == np.float32 and state.asnumpy().tolist() == [0.0, 0.0]
    opt.update(0, weight, grad, state)
    assert weight.asnumpy().tolist() == [3.0, 1.0]
    assert state.asnumpy().tolist() == [3.0, 1.0]  # the state follows the weight


def test_a_local_store_running_it_holds_the_rescaled_sum_of_every_push():
    lr, shape, devices = 0.1, (3, 4), 4
    rng = np.random.default_rng(0)
    kv = lazynd_kv.create("local")
    kv.set_optimizer(mx.optimizer.create("test", rescale_grad=lr))
    kv.init(3, mx.nd.zeros(shape))
    expected = np.zeros(shape)
    for _ in range(3):
        grads = [rng.uniform(-1, 1, shape) for _ in range(devices)]
        kv.push(3, [mx.nd.array(g, ctx=mx.cpu(i)) for i, g in enumerate(grads)])
        expected += lr * sum(grads)
    outs = [mx.nd.zeros(shape, ctx=mx.cpu(i)) for i in range(devices)]
    kv.pull(3, out=outs)
    for out in outs:
        np.testing.assert_allclose(out.asnumpy(), expected, rtol=1e-5, atol=1e-6)
