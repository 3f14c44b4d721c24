"""An optimizer stepping the same arrays batch after batch: what is prepared once stays right.

The Updater checks a list update's arrays at their first update only, and SGD keeps its
``multi_sgd_update`` prepared for the arrays it steps (:class:`lazynd.ndarray.prepared.PreparedCall`);
each test changes one thing between steps and checks that the update sees it.
"""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import lazynd as mx
from lazynd.errors import LazyNDError, ShapeError
from lazynd.optimizer import updater as updater_module


def _arrays(n: int = 3) -> tuple[list, list]:
    weights = [mx.nd.ones((2, k + 1)) for k in range(n)]
    grads = [mx.nd.ones((2, k + 1)) * (k + 1) for k in range(n)]
    return weights, grads


def _plain_sgd(weights: list, grads: list, lrs: list[float], momentum: float = 0.0) -> list[np.ndarray]:
    w = [x.asnumpy().astype(np.float64) for x in weights]
    g = [x.asnumpy().astype(np.float64) for x in grads]
    m = [np.zeros_like(x) for x in w]
    for lr in lrs:
        for k in range(len(w)):
            m[k] = momentum * m[k] - lr * g[k]
            w[k] = w[k] + m[k]
    return w


def test_repeated_list_updates_check_their_arrays_once(monkeypatch: pytest.MonkeyPatch) -> None:
    checks = []
    real = updater_module._check_arrays
    monkeypatch.setattr(updater_module, "_check_arrays", lambda *a: checks.append(a[0]) or real(*a))
    upd = mx.optimizer.get_updater(mx.optimizer.create("sgd", learning_rate=0.1))
    weights, grads = _arrays()
    for _ in range(3):
        upd([0, 1, 2], grads, weights)
    assert checks == [0, 1, 2]
    other_weights, other_grads = _arrays()
    upd([0, 1, 2], other_grads, other_weights)  # other arrays: checked
    assert checks == [0, 1, 2] * 2


@pytest.mark.parametrize("momentum", [0.0, 0.9])
def test_a_schedule_moving_the_rate_between_steps_reaches_the_update(momentum: float) -> None:
    schedule = mx.lr_scheduler.FactorScheduler(step=2, factor=0.5, base_lr=0.1)
    upd = mx.optimizer.get_updater(mx.optimizer.create("sgd", lr_scheduler=schedule, momentum=momentum))
    weights, grads = _arrays()
    expected = _plain_sgd(weights, grads, [0.1, 0.1, 0.05, 0.05, 0.025], momentum)
    for _ in range(5):
        upd([0, 1, 2], grads, weights)
    for got, want in zip(weights, expected, strict=True):
        np.testing.assert_allclose(got.asnumpy(), want, rtol=1e-5)


def test_lr_mult_set_between_steps_reaches_the_update() -> None:
    opt = mx.optimizer.create("sgd", learning_rate=0.1, param_idx2name={0: "a", 1: "b", 2: "c"})
    upd = mx.optimizer.get_updater(opt)
    weights, grads = _arrays()
    upd([0, 1, 2], grads, weights)
    opt.set_lr_mult({"b": 0.0})
    upd([0, 1, 2], grads, weights)
    np.testing.assert_allclose(weights[1].asnumpy(), 1.0 - 0.1 * 2, rtol=1e-6)  # the first step only
    np.testing.assert_allclose(weights[0].asnumpy(), 1.0 - 2 * 0.1, rtol=1e-6)


def test_states_taken_out_or_restored_between_steps_are_made_or_checked_again() -> None:
    upd = mx.optimizer.get_updater(mx.optimizer.create("sgd", learning_rate=0.1, momentum=0.9))
    weights, grads = _arrays()
    upd([0, 1, 2], grads, weights)
    del upd.states[1]  # made again, from zeros
    upd([0, 1, 2], grads, weights)
    assert set(upd.states) == {0, 1, 2}
    saved = upd.get_states()
    upd.set_states(saved)
    upd([0, 1, 2], grads, weights)  # the restored states are checked against the weights
    upd.restore_states({0: mx.nd.zeros((5,)), 1: upd.states[1], 2: upd.states[2]})
    with pytest.raises(LazyNDError, match="the loaded state of parameter 0 is array"):
        upd([0, 1, 2], grads, weights)


def test_a_wrong_gradient_among_new_arrays_is_refused_after_good_steps() -> None:
    upd = mx.optimizer.get_updater(mx.optimizer.create("sgd", learning_rate=0.1))
    weights, grads = _arrays()
    upd([0, 1, 2], grads, weights)
    with pytest.raises(ShapeError, match="gradient of parameter 1 has shape"):
        upd([0, 1, 2], [grads[0], grads[0], grads[2]], weights)


def test_a_pickled_optimizer_leaves_its_prepared_calls_behind() -> None:
    opt = mx.optimizer.create("sgd", learning_rate=0.1)
    upd = mx.optimizer.get_updater(opt)
    weights, grads = _arrays()
    upd([0, 1, 2], grads, weights)
    assert opt.__dict__.get("_prepared_calls")
    copy = pickle.loads(pickle.dumps(opt))
    assert "_prepared_calls" not in copy.__dict__
    upd2 = mx.optimizer.get_updater(copy)
    upd2([0, 1, 2], grads, weights)
    np.testing.assert_allclose(weights[2].asnumpy(), 1.0 - 2 * 0.1 * 3, rtol=1e-6)
