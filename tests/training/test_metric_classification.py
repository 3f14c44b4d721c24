"""Classification metrics against NumPy and MXNet 1.9.1: accuracy, top-k, cross-entropy, F1, perplexity, MCC."""

from __future__ import annotations

import math

import numpy as np
import pytest
from metric_samples import F1_BATCHES, LABELS, PROBS

import lazynd as mx
from lazynd import metric
from lazynd.errors import DataError


def test_accuracy_counts_argmax_matches_over_batches() -> None:
    m = metric.Accuracy()
    m.update([mx.nd.array(LABELS)], [mx.nd.array(PROBS)])
    m.update([mx.nd.array([1.0])], [mx.nd.array([[0.0, 1.0, 0.0]])])
    assert m.get() == ("accuracy", 3 / 5)


def test_accuracy_accepts_class_predictions_of_label_shape() -> None:
    m = metric.Accuracy()
    m.update([np.array([1, 2])], [np.array([1, 0])])
    assert m.get()[1] == 0.5


def test_get_before_update_is_nan_and_reset_clears() -> None:
    m = metric.Accuracy()
    assert math.isnan(m.get()[1])
    m.update([LABELS], [PROBS])
    m.reset()
    assert m.num_inst == 0 and math.isnan(m.get()[1])


def test_top_k_accuracy_counts_label_among_k_best() -> None:
    m = metric.TopKAccuracy(top_k=2)
    m.update([LABELS], [PROBS])
    # top-2 sets: {1,2}, {0,1}, {2,1}, {1,2}
    assert m.get() == ("top_k_accuracy_2", 2 / 4)


def test_cross_entropy_is_mean_negative_log_probability() -> None:
    m = metric.CrossEntropy()
    m.update([LABELS], [PROBS])
    expected = -np.log(PROBS[np.arange(4), LABELS.astype(int)].astype(np.float64) + 1e-12).mean()
    assert m.get()[0] == "cross-entropy"
    assert m.get()[1] == pytest.approx(expected)


def test_cross_entropy_label_out_of_range_raises() -> None:
    with pytest.raises(DataError, match="labels must be in"):
        metric.CrossEntropy().update([np.array([5])], [PROBS[:1]])


@pytest.mark.parametrize(
    "make, name",
    [(metric.CrossEntropy, "CrossEntropy"), (metric.NegativeLogLikelihood, "NegativeLogLikelihood")],
)
def test_cross_entropy_errors_name_the_metric_the_user_made(make, name) -> None:
    with pytest.raises(DataError, match=rf"^{name}: labels must be in \[0, 3\), got -1\.\.0"):
        make().update([np.array([-1, 0])], [PROBS[:2]])
    with pytest.raises(DataError, match=rf"^{name}: predictions must be \(2, classes\), got \(2,\)"):
        make().update([np.array([0, 1])], [np.array([0.5, 0.5])])


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda: metric.Accuracy(axis="1"), r"Accuracy: axis must be an int, got '1'"),
        (lambda: metric.Perplexity(ignore_label=None, axis=1.0), r"Perplexity: axis must be an int, got 1\.0"),
        (lambda: metric.Perplexity(ignore_label="0"), r"Perplexity: ignore_label must be a number or None, got '0'"),
        (lambda: metric.CrossEntropy(eps="1e-12"), r"CrossEntropy: eps must be a number, got '1e-12'"),
        (lambda: metric.NegativeLogLikelihood(eps=None), r"NegativeLogLikelihood: eps must be a number, got None"),
    ],
)
def test_metric_arguments_of_the_wrong_type_are_refused_by_name(make, message) -> None:
    # they failed inside NumPy at the first update (TypeError, UFuncTypeError), or, for a
    # Perplexity ignore_label that is no number, ignored nothing without a word
    with pytest.raises(DataError, match=message):
        make().update([np.array([0, 1])], [np.array([[0.4, 0.6], [0.3, 0.7]])])


def test_a_class_axis_may_be_any_int_but_a_bool() -> None:
    # ints answer by their class, NumPy's by the Integral ABC; a bool is refused as before
    probs, labels = [np.array([[0.2, 0.8], [0.9, 0.1]])], [np.array([1, 1])]
    for axis in (1, np.int64(1), -1):
        acc = metric.Accuracy(axis=axis)
        acc.update(labels, probs)
        assert acc.get() == ("accuracy", 0.5)
    with pytest.raises(DataError, match=r"Accuracy: axis must be an int, got True"):
        metric.Accuracy(axis=True).update(labels, probs)


def test_f1_of_binary_predictions() -> None:
    m = metric.F1()
    pred = np.array([[0.2, 0.8], [0.9, 0.1], [0.3, 0.7], [0.6, 0.4]])
    m.update([np.array([1, 1, 0, 0])], [pred])
    # tp=1, fp=1, fn=1 -> precision=recall=0.5
    assert m.get() == ("f1", pytest.approx(0.5))


def test_f1_macro_scores_each_update_call_over_all_its_arrays() -> None:
    m = metric.F1()
    m.update([label for label, _ in F1_BATCHES], [pred for _, pred in F1_BATCHES])
    # one score from the call's counts (tp 2, fp 2, fn 1), as MXNet 1.9.1 gives: 4/7
    assert m.get() == ("f1", pytest.approx(4 / 7))


def test_f1_micro_scores_the_counts_of_every_update() -> None:
    m = metric.F1(average="micro")
    for label, pred in F1_BATCHES:
        m.update([label], [pred])
    # MXNet 1.9.1: 4/7 (macro would average 2/3 and 1/2)
    assert m.get() == ("f1", pytest.approx(4 / 7))
    m.reset()
    m.update([F1_BATCHES[1][0]], [F1_BATCHES[1][1]])
    assert m.get() == ("f1", pytest.approx(0.5))


def test_f1_rejects_an_unknown_average() -> None:
    with pytest.raises(DataError, match="average"):
        metric.F1(average="weighted")


def test_f1_rejects_non_binary_labels() -> None:
    with pytest.raises(DataError, match="0 or 1"):
        metric.F1().update([np.array([2, 0])], [np.zeros((2, 2))])


def test_perplexity_matches_mxnet() -> None:
    # the values MXNet 1.9.1 gives for these arrays
    probs = mx.nd.array([[0.3, 0.7], [0.6, 0.4], [0.5, 0.5]])
    labels = mx.nd.array([1, 0, 1])
    m = mx.metric.create("perplexity", ignore_label=None)
    m.update([labels], [probs])
    assert m.get() == ("perplexity", pytest.approx(1.6823908532870806))
    m = mx.metric.Perplexity(ignore_label=1)
    m.update([labels], [probs])
    assert m.get()[1] == pytest.approx(1.666666584386752, rel=1e-6) and m.num_inst == 1
    m = mx.metric.Perplexity(ignore_label=None, axis=0)
    m.update([mx.nd.array([1, 0])], [mx.nd.array([[0.3, 0.6], [0.7, 0.4]])])
    assert m.get()[1] == pytest.approx(1.5430334810193704, rel=1e-6)


def test_perplexity_rejects_labels_out_of_range() -> None:
    m = mx.metric.Perplexity(ignore_label=None)
    with pytest.raises(mx.DataError, match="labels must be in"):
        m.update([mx.nd.array([5])], [mx.nd.array([[0.5, 0.5]])])


# (labels, predicted classes) per batch
MCC_BATCHES = [([1, 0, 1, 1, 0], [1, 0, 0, 1, 1]), ([0, 0, 1], [0, 1, 1]), ([1, 1, 1, 0], [1, 1, 0, 0])]


@pytest.mark.parametrize("average, expected", [("macro", 0.41467231195209747), ("micro", 0.3142857142857143)])
def test_mcc_matches_mxnet(average, expected) -> None:
    m = metric.MCC(average=average)
    for label, predicted in MCC_BATCHES:
        classes = np.array(predicted, np.float32)
        m.update([np.array(label, np.float32)], [np.stack([1 - classes, classes], axis=1)])
    assert m.get() == ("mcc", pytest.approx(expected))


def test_negative_log_likelihood_is_cross_entropy_under_mxnets_name() -> None:
    nll, ce = mx.metric.create("nll_loss"), metric.CrossEntropy()
    nll.update([LABELS], [PROBS])
    ce.update([LABELS], [PROBS])
    assert nll.get() == ("nll-loss", pytest.approx(ce.get()[1]))


@pytest.mark.parametrize("top_k", ["2", 2.5, True, 0])
def test_top_k_must_be_a_positive_int(top_k) -> None:
    with pytest.raises(DataError, match="top_k must be an int >= 1"):
        metric.TopKAccuracy(top_k=top_k)


@pytest.mark.parametrize(
    "metric, labels, preds, message",
    [
        (lambda: mx.metric.TopKAccuracy(top_k=2), [0, 1, 2], np.full((2, 4), 0.25), "3 labels for 2 predictions"),
        (lambda: mx.metric.PCC(), [0, 1, 1], np.full((2, 2), 0.5), "3 labels for 2 predictions"),
        (lambda: mx.metric.PCC(), [0, 1], np.full((2, 2, 2), 0.5), r"predictions must be \(batch, classes\)"),
    ],
)
def test_mismatched_labels_and_predictions_are_named(metric, labels, preds, message):
    with pytest.raises(DataError, match=message):
        metric().update([mx.nd.array(labels)], [mx.nd.array(preds)])
