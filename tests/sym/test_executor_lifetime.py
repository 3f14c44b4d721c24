"""An executor is freed when its last reference goes, without waiting for Python's cyclic garbage
collector: its buffers go back at once (MXNet frees its executors the same way).  Executors that
share storage (``reshape``) hold each other weakly."""

from __future__ import annotations

import gc
import weakref

import numpy as np
import pytest

import lazynd as mx


@pytest.fixture
def no_cyclic_collector():
    enabled = gc.isenabled()
    gc.disable()
    yield
    if enabled:
        gc.enable()


def _net():
    data = mx.sym.Variable("data")
    return mx.sym.SoftmaxOutput(mx.sym.FullyConnected(data, num_hidden=8, name="fc"), name="softmax")


def test_an_executor_is_freed_with_its_last_reference(no_cyclic_collector):
    ex = _net().simple_bind(mx.cpu(), data=(4, 16))
    ex.forward(is_train=True)
    ex.backward()
    mx.nd.waitall()
    ref = weakref.ref(ex)
    del ex
    assert ref() is None


def test_executors_sharing_storage_are_freed_and_still_share_it(no_cyclic_collector):
    net = _net()
    first = net.simple_bind(mx.cpu(), data=(8, 16))
    second = first.reshape(data=(4, 16), softmax_label=(4,))
    smaller = first.reshape(data=(2, 16), softmax_label=(2,))
    assert second._memory_group is first._memory_group is smaller._memory_group
    assert second._internal is first._internal is smaller._internal
    x = np.random.default_rng(0).standard_normal((4, 16)).astype(np.float32)
    out = second.forward(data=mx.nd.array(x))[0].asnumpy()
    w, b = second.arg_dict["fc_weight"].asnumpy(), second.arg_dict["fc_bias"].asnumpy()
    z = x @ w.T + b
    expected = np.exp(z - z.max(axis=1, keepdims=True))
    np.testing.assert_allclose(out, expected / expected.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-6)
    refs = [weakref.ref(e) for e in (first, second, smaller)]
    del first, smaller
    assert refs[0]() is None and refs[2]() is None and refs[1]() is second
    assert second._memory_group.members() == [second]
    del second
    assert refs[1]() is None


def test_a_module_and_its_executors_are_freed_after_fit(no_cyclic_collector):
    x = np.random.default_rng(1).random((32, 16)).astype(np.float32)
    y = np.random.default_rng(2).integers(0, 8, 32).astype(np.float32)
    mod = mx.mod.Module(_net())
    mod.fit(mx.io.NDArrayIter(x, y, batch_size=8), num_epoch=1)
    executors = [weakref.ref(e) for e in mod._exec_group.execs]
    del mod
    mx.nd.waitall()
    assert all(ref() is None for ref in executors)


def test_a_monitored_executor_is_freed_too(no_cyclic_collector):
    ex = _net().simple_bind(mx.cpu(), data=(4, 16))
    monitor = mx.mon.Monitor(1)
    monitor.install(ex)
    monitor.tic()
    ex.forward(is_train=True)
    assert monitor.toc() and monitor.exes == [ex]
    ref = weakref.ref(ex)
    del ex
    assert ref() is None and monitor.exes == []
    monitor.tic()
    assert monitor.toc() == []  # nothing left to report
