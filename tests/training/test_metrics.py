"""Evaluation metrics against NumPy formulas."""

from __future__ import annotations

import math

import numpy as np
import pytest

import lazynd as mx
from lazynd import metric
from lazynd.errors import DataError

PROBS = np.array([[0.1, 0.7, 0.2], [0.6, 0.3, 0.1], [0.2, 0.3, 0.5], [0.25, 0.45, 0.3]], dtype=np.float32)
LABELS = np.array([1, 2, 2, 0], dtype=np.float32)


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
    "name, formula",
    [
        ("mse", lambda d: (d**2).mean()),
        ("mae", lambda d: np.abs(d).mean()),
        ("rmse", lambda d: np.sqrt((d**2).mean())),
    ],
)
def test_regression_metrics_match_numpy(name, formula) -> None:
    label, pred = np.array([1.0, 2.0, 3.0]), np.array([1.5, 1.0, 3.0])
    m = metric.create(name)
    m.update([label], [pred])
    assert m.get() == (name, pytest.approx(formula(label - pred)))


def test_regression_accepts_column_predictions() -> None:
    m = metric.MSE()
    m.update([np.array([1.0, 2.0])], [np.array([[1.0], [4.0]])])
    assert m.get()[1] == pytest.approx(2.0)


@pytest.mark.parametrize("name, expected", [("mse", 10 / 6), ("mae", 4 / 6), ("rmse", math.sqrt(10 / 6))])
def test_regression_broadcasts_a_label_column_against_several_predictions(name, expected) -> None:
    # MXNet 1.9.1: labels (N,) against predictions (N, C) compare each label with its row
    # (mse 1.6666666, mae 0.6666667, rmse 1.2909944)
    m = metric.create(name)
    m.update([mx.nd.array([1, 2, 3])], [mx.nd.array([[1, 2], [2, 2], [0, 3]])])
    assert m.get() == (name, pytest.approx(expected))


def test_regression_refuses_shapes_that_do_not_broadcast() -> None:
    with pytest.raises(DataError, match=r"MSE: label shape \(3,\) does not match prediction shape \(2, 2\)"):
        metric.MSE().update([np.ones(3)], [np.ones((2, 2))])


def test_f1_of_binary_predictions() -> None:
    m = metric.F1()
    pred = np.array([[0.2, 0.8], [0.9, 0.1], [0.3, 0.7], [0.6, 0.4]])
    m.update([np.array([1, 1, 0, 0])], [pred])
    # tp=1, fp=1, fn=1 -> precision=recall=0.5
    assert m.get() == ("f1", pytest.approx(0.5))


# predictions [1, 1] for labels [1, 0] (tp 1, fp 1), then [1, 0, 1] for [1, 1, 0] (tp 1, fp 1, fn 1)
F1_BATCHES = [
    (np.array([1, 0]), np.array([[0.2, 0.8], [0.3, 0.7]])),
    (np.array([1, 1, 0]), np.array([[0.2, 0.8], [0.6, 0.4], [0.3, 0.7]])),
]


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


def test_composite_reports_every_metric() -> None:
    m = metric.create(["acc", "ce"])
    m.update([LABELS], [PROBS])
    names, values = m.get()
    assert names == ["accuracy", "cross-entropy"]
    assert values[0] == 0.5
    assert dict(m.get_name_value())["accuracy"] == 0.5


def test_custom_metric_with_sum_and_count() -> None:
    m = metric.CustomMetric(lambda label, pred: ((label == pred.argmax(1)).sum(), len(label)), name="mine")
    m.update([LABELS], [PROBS])
    assert m.get() == ("mine", 0.5)


def test_np_wraps_a_numpy_function_and_takes_its_name() -> None:
    def wrongness(label, pred):
        return float((label != pred.argmax(1)).mean())

    m = metric.np(wrongness)
    m.update([LABELS], [PROBS])
    assert m.get() == ("wrongness", 0.5)


def test_create_accepts_callables_and_instances() -> None:
    acc = metric.Accuracy()
    assert metric.create(acc) is acc
    assert isinstance(metric.create(lambda label, pred: 0.0), metric.CustomMetric)


def test_create_unknown_name_lists_known_ones() -> None:
    with pytest.raises(DataError, match="unknown metric 'nope'.*acc"):
        metric.create("nope")


def test_mismatched_number_of_arrays_raises() -> None:
    with pytest.raises(DataError, match="1 label arrays but 2 prediction arrays"):
        metric.Accuracy().update([LABELS], [PROBS, PROBS])


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


def test_loss_metric_averages_the_outputs() -> None:
    m = mx.metric.create("loss")
    m.update(None, [mx.nd.array([1, 2, 3])])
    assert m.get() == ("loss", 2.0) and m.num_inst == 3


PEARSON_BATCHES = [
    (np.array([0.5, -1.0, 2.0, 0.0, 1.5]), np.array([0.4, -0.2, 1.0, 0.3, 2.0])),
    (np.array([1.0, 3.0, -2.0]), np.array([0.0, 1.0, -1.0])),
]


@pytest.mark.parametrize("average, expected", [("macro", 0.9067973461427838), ("micro", 0.7983578425570879)])
def test_pearson_correlation_matches_mxnet(average, expected) -> None:
    m = mx.metric.create("pearsonr", average=average)
    for label, pred in PEARSON_BATCHES:
        m.update([mx.nd.array(label)], [mx.nd.array(pred)])
    # MXNet 1.9.1's values; micro is the correlation of all eight pairs at once
    assert m.get() == ("pearsonr", pytest.approx(expected))
    labels, preds = (np.concatenate(part) for part in zip(*PEARSON_BATCHES, strict=True))
    if average == "micro":
        assert m.get()[1] == pytest.approx(np.corrcoef(preds, labels)[0, 1])


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


def test_single_arrays_count_as_a_list_of_one_as_in_mxnet() -> None:
    label, pred = mx.nd.array([1.0, 1.0, 1.0]), mx.nd.array([0.7, 0.1, 0.8])
    rmse = metric.RMSE()
    rmse.update(label, pred)
    # MXNet 1.9.1: the RMSE of the one batch, not a mean of per-element errors
    assert rmse.get() == ("rmse", pytest.approx(0.5597618818283081))
    acc = metric.Accuracy()
    acc.update(mx.nd.array(LABELS), mx.nd.array(PROBS))
    acc_of_list = metric.Accuracy()
    acc_of_list.update([LABELS], [PROBS])
    assert acc.get() == acc_of_list.get()
    loss = metric.Loss()
    loss.update(None, np.array([1.0, 2.0]))
    assert loss.get() == ("loss", 1.5)


def test_reset_local_starts_a_local_period_and_get_global_keeps_counting() -> None:
    m = metric.Accuracy()
    m.update([np.array([0, 1])], [np.array([[0.9, 0.1], [0.8, 0.2]])])  # 1 of 2
    m.reset_local()
    assert math.isnan(m.get()[1]) and m.get_global() == ("accuracy", 0.5)
    m.update([np.array([1, 1])], [np.array([[0.1, 0.9], [0.2, 0.8]])])  # 2 of 2
    assert m.get() == ("accuracy", 1.0)
    assert m.get_global_name_value() == [("accuracy", 0.75)]
    m.reset()
    assert math.isnan(m.get_global()[1])


def test_global_values_of_perplexity_and_micro_averages() -> None:
    perplexity = metric.Perplexity(ignore_label=None)
    perplexity.update([np.array([0])], [np.array([[0.5, 0.5]])])
    perplexity.reset_local()
    perplexity.update([np.array([0])], [np.array([[0.25, 0.75]])])
    assert perplexity.get() == ("perplexity", pytest.approx(4.0))
    assert perplexity.get_global() == ("perplexity", pytest.approx(math.sqrt(8.0)))
    f1 = metric.F1(average="micro")
    for i, (label, pred) in enumerate(F1_BATCHES):
        if i:
            f1.reset_local()
        f1.update([label], [pred])
    # local: the second batch alone; global: both (MXNet 1.9.1 gives the same)
    assert f1.get() == ("f1", pytest.approx(0.5)) and f1.get_global() == ("f1", pytest.approx(4 / 7))
    composite = metric.create(["acc", "mse"])
    composite.update([np.array([1.0])], [np.array([1.0])])
    composite.reset_local()
    assert composite.get_global() == (["accuracy", "mse"], [1.0, 0.0])


def test_pcc_matches_mxnet_across_updates_and_periods() -> None:
    m = mx.metric.PCC()
    scores = [[0.9, 0.05, 0.05], [0.1, 0.2, 0.7], [0.1, 0.1, 0.8], [0.3, 0.6, 0.1]]
    m.update([mx.nd.array([0, 1, 2, 2])], [mx.nd.array(scores)])
    assert m.get() == ("pcc", pytest.approx(0.2))  # MXNet 1.9.1
    m.update([mx.nd.array([3, 1])], [mx.nd.array([3, 1])])  # class predictions; a fourth class grows the matrix
    assert m.get()[1] == pytest.approx(0.5384615384615384)
    m.reset_local()
    m.update([mx.nd.array([0, 1])], [mx.nd.array([[0.2, 0.8], [0.9, 0.1]])])
    assert m.get()[1] == pytest.approx(-1.0)
    assert m.get_global()[1] == pytest.approx(0.30434782608695654)


def test_pcc_of_mxnets_docstring_example() -> None:
    preds = [mx.nd.array([[0.3, 0.7]] * 1000 + [[0.7, 0.3]] * 2 + [[0.3, 0.7]] * 10000)]
    labels = [mx.nd.array([0] * 1001 + [1] * 10001)]
    pcc = mx.metric.create("pcc")
    pcc.update(labels, preds)
    assert pcc.get()[1] == pytest.approx(0.01917751877733392)  # MXNet 1.9.1


def test_torch_and_caffe_are_losses_under_their_names() -> None:
    torch_metric = mx.metric.Torch()
    torch_metric.update(None, [mx.nd.array([1, 2, 3])])
    caffe_metric = mx.metric.create("caffe")
    caffe_metric.update(None, [mx.nd.array([2, 4])])
    assert torch_metric.get() == ("torch", 2.0) and caffe_metric.get() == ("caffe", 3.0)  # MXNet 1.9.1


def test_composite_config_lists_the_config_of_each_metric() -> None:
    config = metric.CompositeEvalMetric([metric.Accuracy(axis=1), metric.CrossEntropy(eps=1e-6)]).get_config()
    assert config["metric"] == "CompositeEvalMetric"
    assert [(c["metric"], c["name"]) for c in config["metrics"]] == [
        ("Accuracy", "accuracy"),
        ("CrossEntropy", "cross-entropy"),
    ]
    assert config["metrics"][1]["eps"] == 1e-6


class _WrappingAccuracy(metric.EvalMetric):
    """A custom metric written as MXNet 1.x's own: ``check_label_shapes(labels, preds, True)`` wraps."""

    def __init__(self) -> None:
        super().__init__("wrapping-accuracy")

    def update(self, labels, preds) -> None:
        labels, preds = metric.check_label_shapes(labels, preds, True)
        for label, pred in zip(labels, preds, strict=True):
            self.sum_metric += float((pred.asnumpy().argmax(axis=1) == label.asnumpy()).sum())
            self.num_inst += label.shape[0]


@pytest.mark.parametrize("as_lists", [True, False])
def test_check_label_shapes_third_argument_wraps_arrays_as_mxnets(as_lists) -> None:
    labels, preds = mx.nd.array([1, 0, 1]), mx.nd.array([[0.1, 0.9], [0.8, 0.2], [0.7, 0.3]])
    m = _WrappingAccuracy()
    m.update([labels] if as_lists else labels, [preds] if as_lists else preds)
    assert m.get() == ("wrapping-accuracy", pytest.approx(2 / 3))


def test_check_label_shapes_compares_lengths_or_shapes_and_returns_arrays_unwrapped() -> None:
    labels, preds = mx.nd.array([1, 0, 1]), mx.nd.array([[0.1, 0.9], [0.8, 0.2], [0.7, 0.3]])
    assert metric.check_label_shapes(labels, preds) == (labels, preds)
    assert metric.check_label_shapes(labels, labels, False, True) == (labels, labels)
    with pytest.raises(DataError, match=r"label shape \(3,\) differs from prediction shape \(3, 2\)"):
        metric.check_label_shapes(labels, preds, False, True)
    with pytest.raises(DataError, match="3 labels but 4 predictions"):
        metric.check_label_shapes(labels, mx.nd.zeros((4,)))
    with pytest.raises(DataError, match="1 labels but 2 predictions"):
        metric.check_label_shapes([labels], [preds, preds], wrap=True)
    with pytest.raises(DataError, match="compares two arrays"):
        metric.check_label_shapes([labels], [preds], shape=True)


@pytest.mark.parametrize(
    "make, labels, preds, message",
    [
        (lambda: metric.Accuracy(axis=3), [LABELS], [PROBS], "Accuracy: axis 3 is out of range"),
        (lambda: metric.Perplexity(ignore_label=None, axis=5), [LABELS], [PROBS], "Perplexity: axis 5 is out of range"),
        (lambda: metric.Accuracy(), None, [PROBS], "expected an array or a list of arrays, got NoneType"),
        (lambda: metric.MSE(), [LABELS], 3.0, "expected an array or a list of arrays, got float"),
        (lambda: metric.Loss(), None, None, "expected an array or a list of arrays, got NoneType"),
        (
            lambda: metric.CustomMetric(lambda label, pred: "high", name="odd"),
            [LABELS],
            [PROBS],
            r"CustomMetric 'odd': feval returned 'high'; expected a number or a \(sum, count\) pair",
        ),
    ],
)
def test_bad_updates_are_refused_by_name(make, labels, preds, message) -> None:
    with pytest.raises(DataError, match=message):
        make().update(labels, preds)


@pytest.mark.parametrize("top_k", ["2", 2.5, True, 0])
def test_top_k_must_be_a_positive_int(top_k) -> None:
    with pytest.raises(DataError, match="top_k must be an int >= 1"):
        metric.TopKAccuracy(top_k=top_k)


def test_update_dict_names_the_outputs_or_labels_it_cannot_find() -> None:
    m = metric.Accuracy(output_names=["softmax_output"], label_names=["softmax_label"])
    with pytest.raises(
        DataError, match=r"output_names \['softmax_output'\] not among the arrays given, \['fc_output'\]"
    ):
        m.update_dict({"softmax_label": mx.nd.array(LABELS)}, {"fc_output": mx.nd.array(PROBS)})
    with pytest.raises(DataError, match=r"label_names \['softmax_label'\] not among"):
        m.update_dict({"label": mx.nd.array(LABELS)}, {"softmax_output": mx.nd.array(PROBS)})
    m.update_dict({"softmax_label": mx.nd.array(LABELS)}, {"softmax_output": mx.nd.array(PROBS)})
    assert m.get()[1] == 0.5


def test_composite_update_dict_lets_each_metric_pick_its_outputs() -> None:
    # MXNet 1.9.1: the composite keeps the arrays it names, then each metric picks its own
    preds = {"a": np.array([1.0, 2.0]), "b": np.array([10.0]), "c": np.array([100.0])}
    composite = metric.CompositeEvalMetric(
        [metric.Loss(output_names=["b"]), metric.Loss(name="all")], output_names=["a", "b"]
    )
    composite.update_dict({}, preds)
    assert composite.get() == (["loss", "all"], [10.0, 13.0 / 3])
