"""How FeedForward.fit walks its iterators: callbacks, scoring each batch as it ran, iterators with only __iter__."""

from __future__ import annotations

import numpy as np
from blob_problem import two_class_blobs, two_class_net

import lazynd as mx
from lazynd_sym.model import FeedForward


def test_batch_and_epoch_callbacks_are_called() -> None:
    seen_batches, seen_epochs = [], []
    data, label = two_class_blobs(80)
    ff = FeedForward(two_class_net(), num_epoch=2, numpy_batch_size=40, progress_bar=False)
    ff.fit(
        data,
        label,
        batch_end_callback=lambda p: seen_batches.append((p.epoch, p.nbatch)),
        epoch_end_callback=lambda epoch, s, arg, aux: seen_epochs.append((epoch, sorted(arg))),
    )
    assert seen_batches == [(0, 1), (0, 2), (1, 1), (1, 2)]  # MXNet's count of batches done
    assert seen_epochs[1] == (1, ["fc1_bias", "fc1_weight", "fc2_bias", "fc2_weight"])


class _LoggedIter(mx.io.NDArrayIter):
    """An NDArrayIter that writes each batch it hands out into ``log``."""

    def __init__(self, log: list, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.log = log

    def next(self) -> mx.io.DataBatch:
        batch = super().next()
        self.log.append(("next", int(batch.label[0].asnumpy()[0])))
        return batch


class _LoggedAccuracy(mx.metric.Accuracy):
    """Accuracy that writes the first label of each batch it scores into ``log``."""

    def __init__(self, log: list) -> None:
        super().__init__()
        self.log = log

    def update(self, labels, preds) -> None:
        self.log.append(("metric", int(np.asarray(labels[0])[0])))
        super().update(labels, preds)


def test_fit_scores_each_batch_before_asking_for_the_next() -> None:
    # MXNet 0.9's order: a batch's metric comes before the next batch is made, so an iterator
    # that rewrites the same label array for every batch is scored on the labels of the batch
    # that ran (a batch-end callback sees its own batch scored)
    data, _ = two_class_blobs(120)
    log: list = []
    scored: list = []
    ff = FeedForward(two_class_net(3), num_epoch=1, numpy_batch_size=40, progress_bar=False)
    ff.fit(
        _LoggedIter(log, data, np.array([0.0] * 40 + [1.0] * 40 + [2.0] * 40), batch_size=40),
        eval_metric=_LoggedAccuracy(log),
        batch_end_callback=lambda p: scored.append(p.eval_metric.num_inst),
    )
    assert log == [("next", 0), ("metric", 0), ("next", 1), ("metric", 1), ("next", 2), ("metric", 2)]
    assert scored == [40, 80, 120]


class _ReusedBufferIter(mx.io.DataIter):
    """A user iterator that writes every batch into the same data and label arrays."""

    def __init__(self, data: np.ndarray, label: np.ndarray, batch_size: int) -> None:
        super().__init__(batch_size)
        self.all_data, self.all_label, self.start = data, label, 0
        self.data_buf = mx.nd.zeros((batch_size, data.shape[1]))
        self.label_buf = mx.nd.zeros((batch_size,))
        self.provide_data = [mx.io.DataDesc("data", self.data_buf.shape)]
        self.provide_label = [mx.io.DataDesc("softmax_label", self.label_buf.shape)]

    def reset(self) -> None:
        self.start = 0

    def next(self) -> mx.io.DataBatch:
        if self.start >= len(self.all_data):
            raise StopIteration
        stop = self.start + self.batch_size
        self.data_buf[:] = self.all_data[self.start : stop]
        self.label_buf[:] = self.all_label[self.start : stop]
        self.start = stop
        return mx.io.DataBatch([self.data_buf], [self.label_buf], pad=0)


def test_fit_scores_an_iterator_that_reuses_its_arrays_on_the_batch_that_ran() -> None:
    data, _ = two_class_blobs(80)
    label = np.array([0.0] * 40 + [1.0] * 40)  # each batch one class: scoring on the wrong one shows
    seen: list = []

    class _Labels(mx.metric.EvalMetric):
        def __init__(self) -> None:
            super().__init__("labels")

        def update(self, labels, preds) -> None:
            first = labels[0].asnumpy() if isinstance(labels[0], mx.nd.NDArray) else np.asarray(labels[0])
            seen.append(float(first[0]))

    ff = FeedForward(two_class_net(), num_epoch=1, progress_bar=False)
    ff.fit(_ReusedBufferIter(data, label, 40), eval_metric=_Labels())
    assert seen == [0.0, 1.0]


class _GeneratorIter(mx.io.DataIter):
    """A DataIter that gives its batches from ``__iter__`` alone, as some user iterators do."""

    def __init__(self, data: np.ndarray, label: np.ndarray, batch_size: int) -> None:
        super().__init__(batch_size)
        self.data, self.label = data, label
        self.provide_data = [mx.io.DataDesc("data", (batch_size, data.shape[1]))]
        self.provide_label = [mx.io.DataDesc("softmax_label", (batch_size,))]

    def __iter__(self):
        for start in range(0, len(self.data), self.batch_size):
            stop = start + self.batch_size
            yield mx.io.DataBatch([mx.nd.array(self.data[start:stop])], [mx.nd.array(self.label[start:stop])])


def test_fit_takes_an_iterator_that_only_defines_iter() -> None:
    data, label = two_class_blobs(80)
    seen: list = []
    ff = FeedForward(two_class_net(), num_epoch=1, progress_bar=False)
    ff.fit(_GeneratorIter(data, label, 40), batch_end_callback=lambda p: seen.append(p.nbatch))
    assert seen == [1, 2]


def test_fit_and_create_take_mxnet_1x_eval_end_callback(tmp_path) -> None:
    # MXNet 1.9.1's fit(..., monitor, eval_end_callback, eval_batch_end_callback) and create(...) pass them on
    data, label = two_class_blobs(40)
    seen: list = []
    model = FeedForward.create(
        two_class_net(),
        mx.io.NDArrayIter(data, label, batch_size=20),
        num_epoch=2,
        eval_data=mx.io.NDArrayIter(data[:30], label[:30], batch_size=20),
        eval_end_callback=lambda p: seen.append((p.epoch, p.nbatch, p.eval_metric.get()[0])),
        eval_batch_end_callback=[lambda p: seen.append(("b", p.nbatch))],
        progress_bar=False,
    )
    assert seen == [("b", 0), ("b", 1), (0, 2, "accuracy"), ("b", 0), ("b", 1), (1, 2, "accuracy")]
    model.save(str(tmp_path / "ff"), 2, remove_amp_cast=True)
    assert (tmp_path / "ff-0002.params").exists()


class _PlainBatch:
    """A user's own batch class with only ``data`` and ``label`` (no ``pad``, no ``index``)."""

    def __init__(self, data: list, label: list) -> None:
        self.data, self.label = data, label


class _PlainBatchIter(mx.io.NDArrayIter):
    """An iterator that hands out :class:`_PlainBatch` objects, as users' recommender examples do."""

    def next(self) -> _PlainBatch:
        batch = super().next()
        return _PlainBatch(batch.data, batch.label)


def test_fit_and_predict_take_a_users_batch_without_pad() -> None:
    data, label = two_class_blobs(80)
    ff = FeedForward(two_class_net(), num_epoch=2, progress_bar=False, learning_rate=0.1)
    ff.fit(_PlainBatchIter(data, label, batch_size=20))
    assert ff.predict(_PlainBatchIter(data, label, batch_size=20)).shape == (80, 2)


class _LocalOnlyAccuracy(mx.metric.EvalMetric):
    """A user's metric with its own ``reset`` (MXNet-SSD's MultiBoxMetric is one): it keeps local
    sums only, so a resetting Speedometer at the last batch leaves it nothing to report."""

    def __init__(self) -> None:
        super().__init__("local-accuracy")

    def reset(self) -> None:
        self.sum_metric, self.num_inst = 0.0, 0

    def update(self, labels, preds) -> None:
        for label, pred in zip(labels, preds, strict=True):
            self.sum_metric += float((pred.asnumpy().argmax(axis=1) == label.asnumpy()).sum())
            self.num_inst += len(label.asnumpy())


def test_the_epoch_value_is_read_before_the_last_batchs_callbacks_reset_it(caplog) -> None:
    data, label = two_class_blobs(80)
    ff = FeedForward(two_class_net(), num_epoch=1, numpy_batch_size=20, progress_bar=False)
    with caplog.at_level("INFO"):
        ff.fit(data, label, eval_metric=_LocalOnlyAccuracy(), batch_end_callback=mx.callback.Speedometer(20, 2))
    lines = [r.getMessage() for r in caplog.records if "Train-local-accuracy" in r.getMessage()]
    assert len(lines) == 1 and "nan" not in lines[0], lines
    value = float(lines[0].rsplit("=", 1)[1])
    assert 0.0 <= value <= 1.0


def test_the_metric_scores_every_example_of_a_rolled_over_batch() -> None:
    # fit's arrays roll over: epoch 1 starts with the 2 examples left from epoch 0 and 2 new ones,
    # a batch whose ``pad`` is 2 though all 4 are real; MXNet 1.9.1 scores all 4 (lazynd scored 2)
    data, label = two_class_blobs(10)
    seen = []
    ff = FeedForward(two_class_net(), num_epoch=2, numpy_batch_size=4, progress_bar=False)
    ff.fit(data, label, batch_end_callback=lambda p: seen.append((p.epoch, p.eval_metric.num_inst)))
    assert seen == [(0, 4), (0, 8), (1, 4), (1, 8), (1, 12)]
