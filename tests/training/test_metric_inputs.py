"""What the training loops hand a metric: NDArrays, as MXNet does, so metrics written for MXNet run.

A user's ``EvalMetric.update`` often calls ``label.asnumpy()`` or an ``mx.nd`` function on what it
is given (MXNet's multi-task example calls ``mx.nd.argmax_channel(pred)``); these tests record the
types that reach ``update`` from ``Module.update_metric``, ``FeedForward.fit`` and ``FeedForward.score``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import lazynd as mx
import lazynd_sym as sym
from lazynd_sym.model import FeedForward


class _RecordingAccuracy(mx.metric.EvalMetric):
    """Accuracy computed the way MXNet users write it: through NDArray methods and ``mx.nd``."""

    def __init__(self) -> None:
        super().__init__("recording-accuracy")
        self.seen: list[tuple[type, type]] = []

    def update(self, labels: list[Any], preds: list[Any]) -> None:
        for label, pred in zip(labels, preds, strict=True):
            self.seen.append((type(label), type(pred)))
            classes = mx.nd.argmax_channel(pred).asnumpy().astype("int32")
            self.sum_metric += float((classes == label.asnumpy().astype("int32")).sum())
            self.num_inst += len(classes)


def _net() -> sym.Symbol:
    net = sym.FullyConnected(sym.Variable("data"), num_hidden=3, name="fc")
    return sym.SoftmaxOutput(net, name="softmax")


def _iter(count: int = 20, batch_size: int = 8) -> mx.io.NDArrayIter:
    rng = np.random.default_rng(0)
    data = rng.normal(size=(count, 4)).astype(np.float32)
    label = rng.integers(0, 3, count).astype(np.float32)
    return mx.io.NDArrayIter(data, label, batch_size)  # 20 rows in batches of 8: the last one padded


def _only_ndarrays(metric: _RecordingAccuracy) -> bool:
    return bool(metric.seen) and all(kinds == (mx.nd.NDArray, mx.nd.NDArray) for kinds in metric.seen)


def test_module_update_metric_hands_the_metric_ndarrays() -> None:
    data = _iter()
    mod = mx.mod.Module(_net())
    mod.bind(data_shapes=data.provide_data, label_shapes=data.provide_label)
    mod.init_params()
    metric = _RecordingAccuracy()
    for batch in data:
        mod.forward(batch, is_train=False)
        mod.update_metric(metric, batch.label)
    assert _only_ndarrays(metric)


def test_feedforward_fit_and_score_hand_the_metric_ndarrays() -> None:
    model = FeedForward(_net(), num_epoch=1, learning_rate=0.1)
    fit_metric = _RecordingAccuracy()
    model.fit(X=_iter(), eval_metric=fit_metric)
    assert _only_ndarrays(fit_metric)
    score_metric = _RecordingAccuracy()
    model.score(_iter(), eval_metric=score_metric)
    assert _only_ndarrays(score_metric)
    assert score_metric.num_inst == 20
