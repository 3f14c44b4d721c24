"""Module.fit's ``eval_end_callback``, ``score(score_end_callback=)``, ``prepare`` and ``sparse_row_id_fn``.

The callback sequences are MXNet 1.9.1's for the same calls.
"""

from __future__ import annotations

import logging

import numpy as np
import pytest

import lazynd as mx


def _module_and_iter() -> tuple[mx.mod.Module, mx.io.NDArrayIter]:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((50, 3)).astype(np.float32)
    it = mx.io.NDArrayIter(x, (x.sum(1) > 0).astype(np.float32), batch_size=20)
    fc = mx.sym.FullyConnected(mx.sym.var("data"), num_hidden=2, name="fc")
    return mx.mod.Module(mx.sym.SoftmaxOutput(fc, name="softmax"), context=mx.cpu()), it


def test_fit_calls_eval_end_callback_after_each_validation() -> None:
    mod, it = _module_and_iter()
    seen: list = []
    mod.fit(
        it,
        eval_data=it,
        num_epoch=2,
        eval_end_callback=lambda p: seen.append((p.epoch, p.nbatch, p.eval_metric.get()[0])),
        eval_batch_end_callback=lambda p: seen.append(("b", p.nbatch)),
    )
    epoch = [("b", 0), ("b", 1), ("b", 2)]
    assert seen == [*epoch, (0, 3, "accuracy"), *epoch, (1, 3, "accuracy")]


def test_score_end_callbacks_get_the_number_of_batches_scored() -> None:
    mod, it = _module_and_iter()
    mod.bind(it.provide_data, it.provide_label)
    mod.init_params()
    ends: list = []
    mod.score(it, "acc", num_batch=2, score_end_callback=[lambda p: ends.append((p.epoch, p.nbatch)), ends.append])
    assert ends[0] == (0, 2) and len(ends) == 2


def test_prepare_accepts_a_batch_and_sparse_row_ids_are_refused() -> None:
    mod, it = _module_and_iter()
    mod.bind(it.provide_data, it.provide_label)
    mod.init_params()
    mod.prepare(next(iter(it)))
    with pytest.raises(mx.LazyNDError, match="prepare: sparse_row_id_fn"):
        mod.prepare(next(iter(it)), sparse_row_id_fn=lambda batch: {})
    with pytest.raises(mx.LazyNDError, match="fit: sparse_row_id_fn"):
        mod.fit(it, num_epoch=1, sparse_row_id_fn=lambda batch: {})


def test_mxnets_extra_keywords_are_accepted() -> None:
    mod, it = _module_and_iter()
    mod.bind(it.provide_data, it.provide_label)
    weights = {"fc_weight": mx.nd.ones((2, 3)), "fc_bias": mx.nd.zeros((2,)), "other_weight": mx.nd.ones((1,))}
    # MXNet 1.9.1: init_params/set_params with an extra name pass, with or without allow_extra
    mod.init_params(arg_params=weights, allow_extra=True)
    mod.set_params(weights, {}, allow_missing=False, force_init=True, allow_extra=False)
    np.testing.assert_array_equal(mod.get_params()[0]["fc_weight"].asnumpy(), np.ones((2, 3)))
    assert mod.predict(it, sparse_row_id_fn=None).shape == (50, 2)
    with pytest.raises(mx.LazyNDError, match="predict: sparse_row_id_fn"):
        mod.predict(it, sparse_row_id_fn=lambda batch: {})


def test_checkpoints_take_remove_amp_cast(tmp_path) -> None:
    mod, it = _module_and_iter()
    mod.bind(it.provide_data, it.provide_label)
    mod.init_params()
    prefix = str(tmp_path / "net")
    mod.save_checkpoint(prefix, 1, remove_amp_cast=True)
    symbol, arg_params, _ = mx.model.load_checkpoint(prefix, 1)
    assert sorted(arg_params) == ["fc_bias", "fc_weight"]
    assert symbol.tojson(remove_amp_cast=False) == symbol.tojson()
    symbol.save(str(tmp_path / "s.json"), remove_amp_cast=True)
    mx.model.save_checkpoint(prefix, 2, symbol, arg_params, {}, remove_amp_cast=True)


def test_update_metric_takes_labels_pre_sliced_per_device() -> None:
    fc = mx.sym.FullyConnected(mx.sym.var("data"), num_hidden=2, name="fc")
    mod = mx.mod.Module(mx.sym.SoftmaxOutput(fc, name="softmax"), context=[mx.cpu(0), mx.cpu(1)])
    mod.bind([("data", (4, 3))], [("softmax_label", (4,))])
    mod.init_params()
    mod.set_params({"fc_weight": mx.nd.array([[1, 0, 0], [0, 1, 0]]), "fc_bias": mx.nd.zeros((2,))}, {})
    data = mx.nd.array([[1, 0, 0], [0, 1, 0], [1, 0, 0], [0, 1, 0]])  # predicts classes 0, 1, 0, 1
    mod.forward(mx.io.DataBatch([data], [mx.nd.zeros((4,))]), is_train=False)
    whole, sliced = mx.metric.create("acc"), mx.metric.create("acc")
    mod.update_metric(whole, [mx.nd.array([0, 1, 1, 1])])
    mod.update_metric(sliced, [[mx.nd.array([0, 1])], [mx.nd.array([1, 1])]], pre_sliced=True)
    assert whole.get() == sliced.get() == ("accuracy", 0.75)
    with pytest.raises(mx.LazyNDError, match="one list of labels per device"):
        mod.update_metric(sliced, [mx.nd.array([0, 1, 1, 1])], pre_sliced=True)


@pytest.mark.parametrize("trainer", ["module", "feedforward"])
def test_the_epochs_train_metric_survives_a_speedometer_that_resets(trainer, caplog) -> None:
    # MXNet 1.9.1: Speedometer(auto_reset=True) resets the metric's local period only, and fit logs
    # the whole epoch (get_global_name_value); lazynd logged Train-accuracy=nan
    mod, it = _module_and_iter()
    speedometer = mx.callback.Speedometer(batch_size=20, frequent=1)
    with caplog.at_level(logging.INFO):
        if trainer == "module":
            mod.fit(it, num_epoch=1, batch_end_callback=speedometer, initializer=mx.init.One())
        else:
            ff = mx.model.FeedForward(mod.symbol, num_epoch=1, initializer=mx.init.One(), progress_bar=False)
            ff.fit(it, batch_end_callback=speedometer)
    lines = [r.getMessage() for r in caplog.records if "Train-accuracy" in r.getMessage()]
    assert len(lines) == 1 and "nan" not in lines[0]
    assert 0.0 <= float(lines[0].rsplit("=", 1)[1]) <= 1.0


def test_speedometer_resets_only_the_local_period_of_the_metric() -> None:
    acc = mx.metric.Accuracy()
    acc.update([mx.nd.array([1.0, 0.0])], [mx.nd.array([[0.0, 1.0], [0.0, 1.0]])])
    meter = mx.callback.Speedometer(batch_size=2, frequent=1)
    for nbatch in range(2):
        meter(mx.callback.BatchEndParam(epoch=0, nbatch=nbatch, eval_metric=acc, locals=None))
    assert acc.num_inst == 0 and acc.get_global() == ("accuracy", 0.5)


class _TwoValues(mx.metric.EvalMetric):
    """MXNet-SSD's MultiBoxMetric pattern: two values kept in lists, its own reset, no global statistics."""

    def __init__(self) -> None:
        super().__init__("two")
        self.num = 2
        self.name = ["examples", "batches"]
        self.reset()

    def reset(self) -> None:
        if getattr(self, "num", None) is None:  # the base constructor calls reset before num is set
            self.num_inst, self.sum_metric = 0, 0.0
        else:
            self.num_inst, self.sum_metric = [0, 0], [0.0, 0.0]

    def reset_local(self) -> None:
        self.reset()

    def update(self, labels, preds) -> None:
        self.sum_metric[0] += labels[0].shape[0]
        self.sum_metric[1] += 1.0
        self.num_inst = [self.num_inst[0] + 1, 1]

    def get(self):
        return self.name, [s / n if n else float("nan") for s, n in zip(self.sum_metric, self.num_inst, strict=True)]


def test_fit_reads_the_epochs_values_of_a_users_metric_before_the_last_batchs_callbacks(caplog) -> None:
    # MXNet 1.9.1 takes the Train- values before the batch-end callbacks of the epoch's last batch,
    # so a Speedometer that resets a metric without global statistics leaves them intact
    mod, it = _module_and_iter()
    with caplog.at_level(logging.INFO):
        mod.fit(it, num_epoch=1, eval_metric=_TwoValues(), batch_end_callback=mx.callback.Speedometer(20, frequent=1))
    lines = [r.getMessage() for r in caplog.records if "Train-" in r.getMessage()]
    assert lines == ["Epoch[0] Train-examples=20.000000", "Epoch[0] Train-batches=1.000000"]
