"""FeedForward.fit's validation data as MXNet's: its labels fed (the nce-loss example needs it), an (X, y) pair's iterator."""

from __future__ import annotations

import numpy as np

import lazynd as mx
import lazynd_sym as sym
from lazynd_sym.model import FeedForward

BATCH, FEATURES, VOCAB, CANDIDATES = 8, 6, 20, 3


def _nce_net() -> sym.Symbol:
    # the label is read by an Embedding, not only by the loss: forward needs it
    hidden = sym.FullyConnected(sym.Variable("data"), num_hidden=4, name="fc")
    label_embed = sym.Embedding(sym.Variable("label"), input_dim=VOCAB, output_dim=4, name="label_embed")
    score = sym.sum(sym.broadcast_mul(sym.Reshape(hidden, shape=(-1, 1, 4)), label_embed), axis=2)
    return sym.LogisticRegressionOutput(score, sym.Variable("label_weight"), name="nce")


def _iterator(seed: int) -> mx.io.NDArrayIter:
    rng = np.random.default_rng(seed)
    data = rng.normal(size=(2 * BATCH, FEATURES)).astype(np.float32)
    label = rng.integers(0, VOCAB, (2 * BATCH, CANDIDATES)).astype(np.float32)
    weight = np.zeros((2 * BATCH, CANDIDATES), np.float32)
    weight[:, 0] = 1
    return mx.io.NDArrayIter({"data": data}, {"label": label, "label_weight": weight}, batch_size=BATCH)


class _FirstCandidateAccuracy(mx.metric.EvalMetric):
    """The nce-loss example's metric: the labels are (candidates, their weights)."""

    def __init__(self) -> None:
        super().__init__("nce-accuracy")

    def update(self, labels: list, preds: list) -> None:
        weights, scores = labels[1].asnumpy(), preds[0].asnumpy()
        self.sum_metric += int((weights.argmax(axis=1) == scores.argmax(axis=1)).sum())
        self.num_inst += len(scores)


def test_fit_validation_feeds_labels_that_the_forward_pass_reads() -> None:
    scored: list = []
    model = FeedForward(_nce_net(), num_epoch=1, learning_rate=0.1, initializer=mx.init.Xavier(), progress_bar=False)
    model.fit(
        _iterator(0),
        eval_data=_iterator(1),
        eval_metric=_FirstCandidateAccuracy(),
        eval_end_callback=lambda param: scored.append(param.eval_metric.get()),
    )
    assert len(scored) == 1 and scored[0][0] == "nce-accuracy" and 0.0 <= scored[0][1] <= 1.0


def test_predict_still_binds_the_data_alone() -> None:
    net = sym.SoftmaxOutput(sym.FullyConnected(sym.Variable("data"), num_hidden=2, name="fc"), name="softmax")
    data = np.random.default_rng(2).normal(size=(2 * BATCH, FEATURES)).astype(np.float32)
    label = (data[:, 0] > 0).astype(np.float32)
    model = FeedForward(net, num_epoch=1, numpy_batch_size=BATCH, progress_bar=False)
    model.fit(data, label, eval_data=(data, label))
    assert model.predict(data).shape == (2 * BATCH, 2)


def test_an_output_whose_rows_are_not_the_batch_is_scored_whole() -> None:
    """An unrolled RNN's time-major output has steps x batch rows (bi-lstm-sort's): the metric
    sees all of them, as in MXNet, where only the padding of batch rows is left out."""
    steps, batch = 3, 4
    pieces = sym.SliceChannel(sym.Variable("data"), num_outputs=steps, axis=1, squeeze_axis=True)
    rows = sym.Concat(*[sym.FullyConnected(pieces[t], num_hidden=2, name=f"fc{t}") for t in range(steps)], dim=0)
    label = sym.Reshape(sym.transpose(sym.Variable("softmax_label")), shape=(-1,))
    net = sym.SoftmaxOutput(rows, label, name="softmax")
    data = mx.io.NDArrayIter(np.ones((batch, steps, 5)), np.zeros((batch, steps)), batch_size=batch)
    seen = []
    metric = mx.metric.np(lambda label, pred: seen.append((label.shape, pred.shape)) or 0.0)
    model = FeedForward(net, num_epoch=1, learning_rate=0.1, progress_bar=False)
    model.fit(data, eval_data=data, eval_metric=metric)
    assert seen == [((batch, steps), (steps * batch, 2))] * 2  # the training batch, then the validation one


def test_eval_pair_is_shuffled_as_mxnet_makes_it_so_seeded_training_batches_keep_mxnets_order() -> None:
    # MXNet 1.9.1's FeedForward makes an (X, y) eval_data pair shuffled and rolled over, between the
    # training iterator and its first reset: after np.random.seed the training batches come in that order
    rng = np.random.RandomState(0)
    data, label = rng.randn(30, 4).astype(np.float32), np.arange(30, dtype=np.float32) % 2
    eval_data, eval_label = data[:20], label[:20]
    seen: list[list[float]] = []
    net = sym.SoftmaxOutput(sym.FullyConnected(sym.Variable("data"), num_hidden=30), name="softmax")
    model = mx.model.FeedForward(net, num_epoch=1, numpy_batch_size=10, learning_rate=0.1)
    np.random.seed(7)
    model.fit(
        data,
        np.arange(30, dtype=np.float32),
        eval_data=(eval_data, eval_label),
        batch_end_callback=lambda param: seen.append(param.locals["batch"].label[0].asnumpy().tolist()),
    )
    np.random.seed(7)
    train = mx.io.NDArrayIter(data, np.arange(30, dtype=np.float32), 10, shuffle=True, last_batch_handle="roll_over")
    mx.io.NDArrayIter(eval_data, eval_label, 10, shuffle=True, last_batch_handle="roll_over")
    train.reset()
    assert seen == [batch.label[0].asnumpy().tolist() for batch in train]
