"""Module.fit: learning, logged metrics, callbacks, and the optimizer it is given by name or as an object."""

from __future__ import annotations

import logging

import numpy as np
import pytest
from blob_problem import two_class_blobs, two_class_net
from module_by_hand import host_values, start_params

import lazynd as mx


def test_fit_learns_and_logs_train_and_validation_metrics(caplog) -> None:
    mx.random.seed(0)
    data, label = two_class_blobs()
    train = mx.io.NDArrayIter(data, label, batch_size=40, shuffle=True)
    val = mx.io.NDArrayIter(*two_class_blobs(200, seed=1), batch_size=50)
    mod = mx.mod.Module(two_class_net())
    with caplog.at_level(logging.INFO):
        mod.fit(
            train,
            eval_data=val,
            num_epoch=4,
            initializer=mx.init.Xavier(),
            optimizer_params={"learning_rate": 0.1, "momentum": 0.9},
        )
    messages = [r.getMessage() for r in caplog.records]
    assert any(m.startswith("Epoch[3] Train-accuracy=") for m in messages)
    assert any(m.startswith("Epoch[3] Validation-accuracy=") for m in messages)
    assert mod.score(val, "acc")[0][1] > 0.95


def test_fit_calls_callbacks_from_begin_epoch() -> None:
    data, label = two_class_blobs(80)
    seen_batches, seen_epochs = [], []
    mx.mod.Module(two_class_net()).fit(
        mx.io.NDArrayIter(data, label, batch_size=40),
        begin_epoch=2,
        num_epoch=4,
        batch_end_callback=lambda p: seen_batches.append((p.epoch, p.nbatch)),
        epoch_end_callback=lambda epoch, s, arg, aux: seen_epochs.append((epoch, sorted(arg), s.list_outputs())),
    )
    assert seen_batches == [(2, 0), (2, 1), (3, 0), (3, 1)]
    assert seen_epochs[-1] == (3, ["fc1_bias", "fc1_weight", "fc2_bias", "fc2_weight"], ["softmax_output"])


def test_an_optimizer_by_name_numbers_the_updater_as_feedforward_does() -> None:
    # Module and FeedForward make an optimizer named by a string with one function
    # (kvstore_setup.create_optimizer): copy k of parameter i is index i * copies + k
    from lazynd_sym.model.kvstore_setup import create_optimizer

    made = create_optimizer("sgd", {"learning_rate": 0.1}, None, ["w", "b"], copies=2, batch_size=4)
    assert made.idx2name == {0: "w", 1: "w", 2: "b", 3: "b"}
    assert made.rescale_grad == 0.25
    mod = mx.mod.Module(two_class_net(), context=[mx.cpu(0), mx.cpu(1)])
    mod.bind(data_shapes=[("data", (8, 4))], label_shapes=[("softmax_label", (8,))])
    mod.init_params()
    mod.init_optimizer(kvstore="local_allreduce_cpu", optimizer="sgd", optimizer_params={"learning_rate": 0.1})
    names = mod._exec_group.param_names
    assert mod._optimizer.idx2name == {i * 2 + k: n for i, n in enumerate(names) for k in range(2)}
    assert mod._optimizer.rescale_grad == 1.0 / 8


def test_an_optimizer_object_gets_the_parameter_names_so_its_multipliers_apply() -> None:
    # MXNet 1.9.1 gives an Optimizer made outside the Module the index -> name map it builds, so
    # set_lr_mult({'fc1_weight': 0}) freezes fc1_weight; lazynd ignored the names
    data, label = two_class_blobs(count=8)
    for contexts in ([mx.cpu()], [mx.cpu(0), mx.cpu(1)]):
        mod = mx.mod.Module(two_class_net(), context=contexts)
        mod.bind(data_shapes=[("data", (8, 5))], label_shapes=[("softmax_label", (8,))])
        start = start_params()
        mod.init_params(arg_params=start)
        opt = mx.optimizer.SGD(learning_rate=0.5, rescale_grad=1 / 8)
        opt.set_lr_mult({"fc1_weight": 0.0})
        mod.init_optimizer(kvstore="local", optimizer=opt)
        mod.forward(mx.io.DataBatch([mx.nd.array(data)], [mx.nd.array(label)]), is_train=True)
        mod.backward()
        mod.update()
        params = host_values(mod.get_params()[0])
        np.testing.assert_array_equal(params["fc1_weight"], start["fc1_weight"].asnumpy())
        assert not np.allclose(params["fc2_weight"], start["fc2_weight"].asnumpy())


def test_an_optimizer_object_whose_rescale_grad_is_not_one_over_the_batch_is_warned_about() -> None:
    mod = mx.mod.Module(two_class_net())
    mod.bind(data_shapes=[("data", (8, 5))], label_shapes=[("softmax_label", (8,))])
    mod.init_params()
    with pytest.warns(UserWarning, match=r"rescale_grad is 1.0, not 1/batch_size = 0.125"):
        mod.init_optimizer(optimizer=mx.optimizer.SGD())


def test_fit_updates_the_metric_before_asking_the_iterator_for_the_next_batch() -> None:
    """An iterator may reuse its batch's arrays: as MXNet's, fit is done with a batch (metric
    included) before it reads the next one."""
    events = []

    class _Iter(mx.io.NDArrayIter):
        def next(self):
            batch = super().next()
            events.append("next")
            return batch

    class _Metric(mx.metric.Accuracy):
        def update(self, labels, preds):
            events.append("metric")
            super().update(labels, preds)

    data, label = two_class_blobs(40)
    mod = mx.mod.Module(two_class_net())
    mod.fit(_Iter(data, label, batch_size=10), eval_metric=_Metric(), num_epoch=1)
    assert events == ["next", "metric"] * 4


def test_an_sgd_subclass_overriding_update_has_it_called_on_one_device_and_on_two() -> None:
    """MXNet's DSD example prunes in its SGD subclass's ``update`` and trains it by name through
    ``fit``: on one device the Module hands its updater lists, which went to SGD's fused update
    and skipped the subclass (two devices, through the kvstore, called it)."""
    updated = []

    @mx.optimizer.register
    class PruneSmallSGD(mx.optimizer.SGD):
        def update(self, index, weight, grad, state):
            updated.append(index)
            mask = mx.nd.abs(weight) >= 0.2
            weight[:] = weight * mask
            grad[:] = grad * mask
            super().update(index, weight, grad, state)

    data, label = two_class_blobs(count=16)
    start = start_params()
    small = np.abs(start["fc1_weight"].asnumpy()) < 0.2
    for contexts in ([mx.cpu()], [mx.cpu(0), mx.cpu(1)]):
        updated.clear()
        mod = mx.mod.Module(two_class_net(), context=contexts)
        mod.fit(
            mx.io.NDArrayIter(data, label, batch_size=8),
            num_epoch=1,
            arg_params={name: value.copy() for name, value in start.items()},
            optimizer="prunesmallsgd",
            optimizer_params={"learning_rate": 0.1, "momentum": 0.9},
        )
        assert len(updated) == 2 * 4, contexts  # two batches, four parameters
        weights = host_values(mod.get_params()[0])["fc1_weight"]
        assert small.any() and np.all(weights[small] == 0), contexts
