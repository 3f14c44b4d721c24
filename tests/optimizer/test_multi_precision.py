"""multi_precision: float16 weights trained through float32 master copies, as MXNet keeps them."""

from __future__ import annotations

import numpy as np
import pytest
from optimizer_reference import run

import lazynd as mx
from lazynd import optimizer


def _float32_sgd_momentum(w0: np.ndarray, grads: list[np.ndarray], lr: float, momentum: float) -> np.ndarray:
    master, mom = w0.astype(np.float32), np.zeros(w0.shape, np.float32)
    for g in grads:
        mom = momentum * mom - lr * g.astype(np.float32)
        master = master + mom
    return master


def test_multi_precision_updates_float16_weights_through_a_float32_master_copy():
    # steps of 1e-4 on weights near 1 are below float16's resolution: only a float32 copy keeps them
    w0 = np.full(4, 1.0, np.float16)
    grads = [np.full(4, -1e-4, np.float16)] * 10
    opt = optimizer.create("sgd", learning_rate=1.0, momentum=0.5, multi_precision=True)
    updater = optimizer.get_updater(opt)
    weight = mx.nd.array(w0, dtype="float16")
    for g in grads:
        updater(0, mx.nd.array(g, dtype="float16"), weight)
    master = _float32_sgd_momentum(w0, grads, lr=1.0, momentum=0.5)
    assert weight.dtype == np.float16
    np.testing.assert_array_equal(weight.asnumpy(), master.astype(np.float16))
    mom_state, master_state = updater.states[0]
    assert master_state.dtype == np.float32 and mom_state.dtype == np.float32
    np.testing.assert_allclose(master_state.asnumpy(), master, rtol=1e-6)
    assert weight.asnumpy()[0] > 1.0  # plain float16 updates would have left it at 1.0


def test_multi_precision_through_lists_and_saved_states_matches_one_call_each():
    w0, grads = np.linspace(-1, 1, 6).astype(np.float16), [np.full(6, 0.3, np.float16)] * 3

    def make():
        return optimizer.get_updater(optimizer.create("sgd", learning_rate=0.1, momentum=0.9, multi_precision=True))

    single, listed = make(), make()
    a, b = mx.nd.array(w0, dtype="float16"), mx.nd.array(w0, dtype="float16")
    for g in grads[:2]:
        single(0, mx.nd.array(g, dtype="float16"), a)
        listed([0], [mx.nd.array(g, dtype="float16")], [b])
    restored = make()
    restored.set_states(listed.get_states())
    restored(0, mx.nd.array(grads[2], dtype="float16"), b)
    single(0, mx.nd.array(grads[2], dtype="float16"), a)
    np.testing.assert_array_equal(a.asnumpy(), b.asnumpy())


def test_multi_precision_leaves_float32_weights_as_they_are(problem):
    w0, grads = problem
    plain = run(optimizer.create("sgd", learning_rate=0.1, momentum=0.9), w0, grads)
    mixed = run(optimizer.create("sgd", learning_rate=0.1, momentum=0.9, multi_precision=True), w0, grads)
    np.testing.assert_array_equal(plain, mixed)


@pytest.mark.parametrize("name", ["adam", "rmsprop", "adagrad", "signum", "dcasgd"])
def test_a_float16_weights_state_holds_the_master_copy_first_as_mxnets_base_class(name):
    w = mx.nd.array([0.5, -1.25, 2.0], dtype="float16")
    opt = optimizer.create(name, multi_precision=True)
    master, inner = opt.create_state_multi_precision(0, w)
    assert master.dtype == np.float32 and master.shape == w.shape
    np.testing.assert_array_equal(master.asnumpy(), w.asnumpy().astype(np.float32))
    assert repr(type(inner)) == repr(type(opt.create_state(0, master)))


@pytest.mark.parametrize("name", ["sgd", "nag"])
def test_sgd_and_nag_keep_a_float16_weights_state_before_the_master_copy_as_mxnet(name):
    w = mx.nd.array([0.5, -1.25, 2.0], dtype="float16")
    mom, master = optimizer.create(name, momentum=0.9, multi_precision=True).create_state_multi_precision(0, w)
    assert mom.dtype == np.float32 and master.dtype == np.float32
    np.testing.assert_array_equal(master.asnumpy(), w.asnumpy().astype(np.float32))
    np.testing.assert_array_equal(mom.asnumpy(), np.zeros(3, np.float32))


def test_an_mxnet_style_optimizer_unpacking_the_master_copy_first_trains_float16_weights():
    class ScaledSGD(optimizer.Optimizer):
        """Written as for MXNet: the base class's mixed-precision state, unpacked by hand."""

        def update(self, index, weight, grad, state):
            weight[:] = weight - 0.5 * grad

        def update_multi_precision(self, index, weight, grad, state):
            if self.multi_precision and weight.dtype == np.float16:
                master, original_state = state[0], state[1]
                self.update(index, master, grad.astype(np.float32), original_state)
                master.astype(weight.dtype).copyto(weight)
            else:
                self.update(index, weight, grad, state)

    updater = optimizer.get_updater(ScaledSGD(multi_precision=True))
    w = mx.nd.array([1.0, 2.0], dtype="float16")
    updater(0, mx.nd.array([1.0, 1.0], dtype="float16"), w)
    np.testing.assert_array_equal(w.asnumpy(), np.array([0.5, 1.5], np.float16))
