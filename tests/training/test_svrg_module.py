"""SVRGModule (``mx.contrib.svrg_optimization.svrg_module``): full gradients at a snapshot, the
variance-reduced batch gradients, training through ``fit``, and its errors."""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx
from lazynd.contrib.svrg_optimization.svrg_module import SVRGModule
from lazynd.errors import LazyNDError

X = np.arange(8, dtype=np.float32).reshape(4, 2)
Y = np.ones(4, dtype=np.float32)


def _regression() -> object:
    net = mx.sym.FullyConnected(mx.sym.var("data"), num_hidden=1, name="fc")
    return mx.sym.LinearRegressionOutput(net, name="lro")


def _bound(update_freq: int = 1) -> tuple[SVRGModule, mx.io.NDArrayIter]:
    it = mx.io.NDArrayIter(X, Y, batch_size=2, label_name="lro_label")
    mod = SVRGModule(_regression(), label_names=["lro_label"], update_freq=update_freq)
    mod.bind(it.provide_data, it.provide_label)
    mod.init_params()
    mod.set_params({"fc_weight": mx.nd.ones((1, 2)), "fc_bias": mx.nd.zeros((1,))}, {})
    mod.init_optimizer(optimizer="sgd", optimizer_params={"learning_rate": 0.01})
    return mod, it


def _first_batch_after_a_snapshot() -> SVRGModule:
    """A module that took its snapshot at the initial weights, then moved to w = (0.5, -0.5),
    b = 0.25 (as fit's set_params at an epoch's end does) and ran the first batch's forward_backward."""
    mod, it = _bound()
    mod.update_full_grads(it)
    it.reset()
    mod.set_params({"fc_weight": mx.nd.array([[0.5, -0.5]]), "fc_bias": mx.nd.array([0.25])}, {})
    mod.forward_backward(next(iter(it)))
    return mod


def _mean_batch_gradient(weight: np.ndarray, bias: float) -> tuple[np.ndarray, float]:
    # LinearRegressionOutput's gradient of one batch: sum over its rows of (prediction - label) * input
    grads = [((X[i : i + 2] @ weight.T + bias - Y[i : i + 2, None]) * X[i : i + 2]).sum(0) for i in (0, 2)]
    biases = [(X[i : i + 2] @ weight.T + bias - Y[i : i + 2, None]).sum() for i in (0, 2)]
    return np.mean(grads, axis=0), float(np.mean(biases))


def _first_batch_gradient(weight: np.ndarray, bias: float) -> np.ndarray:
    # the weight gradient of the first batch (rows 0 and 1) at ``weight`` (1, 2) and ``bias``
    rows = X[:2]
    return ((rows @ np.asarray(weight).T + bias - Y[:2, None]) * rows).sum(0)


def _weight_gradient(mod: SVRGModule) -> np.ndarray:
    group = mod._exec_group
    return group.grad_arrays[group.param_names.index("fc_weight")][0].asnumpy()[0]


def test_full_gradient_is_the_mean_batch_gradient_at_the_snapshot_taken_afresh_each_time() -> None:
    mod, it = _bound()
    expected_weight, expected_bias = _mean_batch_gradient(np.ones((1, 2), np.float32), 0.0)
    for _ in range(2):  # MXNet 1.9.1 adds the previous snapshot's full gradient into the next
        mod.set_params({"fc_weight": mx.nd.ones((1, 2)), "fc_bias": mx.nd.zeros((1,))}, {})
        mod.update_full_grads(it)
        it.reset()  # update_full_grads leaves the iterator at its end, as MXNet's
        mod.forward_backward(next(iter(it)))
        mod.update()  # the correction is made in the gradient arrays, as in MXNet
        grads = dict(zip(mod._exec_group.param_names, mod._exec_group.grad_arrays, strict=True))
        # at the snapshot's own weights g(w) - g(w_snapshot) vanishes: the full gradient remains
        np.testing.assert_allclose(grads["fc_weight"][0].asnumpy()[0], expected_weight, rtol=1e-6)
        np.testing.assert_allclose(grads["fc_bias"][0].asnumpy(), [expected_bias], rtol=1e-6)


def test_batch_gradient_is_current_minus_snapshot_plus_full() -> None:
    mod, it = _bound()
    mod.update_full_grads(it)
    it.reset()
    batch = next(iter(it))
    mod.forward_backward(batch)
    mod.update()  # the weights leave the snapshot
    arg_params, _ = mod.get_params()
    weight, bias = arg_params["fc_weight"].asnumpy(), float(arg_params["fc_bias"].asnumpy()[0])
    mod.forward_backward(batch)
    mod.update()
    current = _first_batch_gradient(weight, bias)
    snapshot = _first_batch_gradient(np.ones((1, 2)), 0.0)
    full, _ = _mean_batch_gradient(np.ones((1, 2), np.float32), 0.0)
    np.testing.assert_allclose(_weight_gradient(mod), current - snapshot + full, rtol=1e-5)


def test_set_params_leaves_the_snapshot_where_update_full_grads_took_it() -> None:
    # fit calls set_params at every epoch's end; the snapshot must stay until the next update_full_grads
    mod = _first_batch_after_a_snapshot()
    mod.update()
    current = _first_batch_gradient(np.array([[0.5, -0.5]]), 0.25)
    snapshot = _first_batch_gradient(np.ones((1, 2)), 0.0)
    full, _ = _mean_batch_gradient(np.ones((1, 2), np.float32), 0.0)
    np.testing.assert_allclose(_weight_gradient(mod), current - snapshot + full, rtol=1e-5)


def test_fit_takes_a_snapshot_every_update_freq_epochs_and_trains() -> None:
    rng = np.random.RandomState(0)
    features = rng.randn(200, 5).astype(np.float32)
    labels = (features @ rng.randn(5) + 0.5).astype(np.float32)
    it = mx.io.NDArrayIter(features, labels, batch_size=20, label_name="lro_label")
    mod = SVRGModule(_regression(), label_names=["lro_label"], update_freq=2)
    snapshots = []
    original = mod.update_full_grads
    mod.update_full_grads = lambda data: (snapshots.append(1), original(data))  # type: ignore[method-assign]
    mod.fit(it, num_epoch=5, optimizer_params={"learning_rate": 0.1}, initializer=mx.init.Zero())
    assert len(snapshots) == 3  # epochs 0, 2 and 4
    metric = mx.metric.MSE()
    mod.score(it, metric)
    assert metric.get()[1] < 0.01 * float(np.mean(labels**2))


def test_backward_leaves_the_batch_gradient_for_update_to_correct() -> None:
    # MXNet corrects the gradients in update(): code reading them after backward sees g(w)
    mod = _first_batch_after_a_snapshot()
    current = _first_batch_gradient(np.array([[0.5, -0.5]]), 0.25)
    np.testing.assert_allclose(_weight_gradient(mod), current, rtol=1e-6)


def test_bad_update_freq_and_update_before_a_snapshot_are_clear_errors() -> None:
    with pytest.raises(LazyNDError, match="update_freq must be a positive int.*got 0"):
        SVRGModule(_regression(), label_names=["lro_label"], update_freq=0)
    mod, it = _bound()
    mod.forward_backward(next(iter(it)))
    with pytest.raises(LazyNDError, match="SVRGModule.update: .*call update_full_grads"):
        mod.update()


class _CountingIter(mx.io.NDArrayIter):
    resets = 0

    def reset(self) -> None:
        self.resets += 1
        super().reset()


def test_fit_resets_the_data_at_each_epoch_start_and_each_snapshot_as_mxnet() -> None:
    # a shuffling iterator draws a new order at each reset: MXNet's SVRGModule.fit resets once per
    # snapshot and once at each epoch's start, never at an epoch's end, so seeded runs see its orders
    it = _CountingIter(X, Y, batch_size=2, label_name="lro_label")
    it.resets = 0  # NDArrayIter resets itself when made
    mod = SVRGModule(_regression(), label_names=["lro_label"], update_freq=2)
    mod.fit(it, num_epoch=3, optimizer_params={"learning_rate": 0.01}, initializer=mx.init.Zero())
    assert it.resets == 2 + 1 + 2  # epoch 0 and 2: snapshot and start; epoch 1: start
