"""Making, combining and feeding metrics: create, composites, custom metrics, periods, label checks, update_dict."""

from __future__ import annotations

import math

import numpy as np
import pytest
from metric_samples import F1_BATCHES, LABELS, PROBS

import lazynd as mx
from lazynd import metric
from lazynd.errors import DataError


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


def test_custom_metric_takes_a_one_element_array_as_its_number() -> None:
    # MXNet's NCF example sums per-row losses of (n, 1) predictions: its feval returns array([x]),
    # which MXNet 1.9.1 accepts; lazynd refused it (NumPy 2 turns no 1-D array into a float)
    def cross_entropy(label, pred):
        return sum(-(y * np.log(p) + (1 - y) * np.log(1 - p)) for y, p in zip(label, pred, strict=True))

    m = metric.create(cross_entropy)
    m.update(mx.nd.array([1.0, 0.0]), mx.nd.array([[0.5], [0.5]]))
    m.update([np.array([1.0])], [np.array([[0.5]])])
    name, value = m.get()
    assert name == "cross_entropy" and isinstance(value, float)
    assert value == pytest.approx(3 * math.log(2) / 2, rel=1e-6)
    counted = metric.CustomMetric(lambda label, pred: (np.array([2.0]), np.array([4])), name="pair")
    counted.update([np.zeros(1)], [np.zeros(1)])
    assert counted.get() == ("pair", 0.5)


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


def test_loss_metric_averages_the_outputs() -> None:
    m = mx.metric.create("loss")
    m.update(None, [mx.nd.array([1, 2, 3])])
    assert m.get() == ("loss", 2.0) and m.num_inst == 3


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


def test_label_and_prediction_disagreements_are_value_errors_as_in_mxnet() -> None:
    # custom metrics written for MXNet catch ValueError around check_label_shapes
    labels, preds = mx.nd.array([1, 0, 1]), mx.nd.array([[0.1, 0.9], [0.8, 0.2], [0.7, 0.3]])
    with pytest.raises(ValueError, match="3 labels but 4 predictions"):
        metric.check_label_shapes(labels, mx.nd.zeros((4,)))
    with pytest.raises(ValueError, match=r"label shape \(3,\) differs"):
        metric.check_label_shapes(labels, preds, shape=True)
    with pytest.raises(ValueError, match="1 label arrays but 2 prediction arrays"):
        mx.metric.Accuracy().update([labels], [preds, preds])
    with pytest.raises(ValueError, match="Accuracy: 2 labels but 3 predicted classes"):
        mx.metric.Accuracy().update([mx.nd.array([1, 0])], [preds])


@pytest.mark.parametrize("given", [None, 1.5, [mx.nd.ones((2,))]], ids=["None", "float", "list"])
@pytest.mark.parametrize("which", ["labels", "predictions"])
def test_update_dict_refuses_what_is_no_dict_by_name(which, given):
    # AttributeError "'NoneType' object has no attribute 'values'" before
    label, pred = {"softmax_label": mx.nd.array([0, 1])}, {"softmax_output": mx.nd.array([[0.3, 0.7], [0.6, 0.4]])}
    args = (given, pred) if which == "labels" else (label, given)
    with pytest.raises(DataError, match=f"update_dict takes the {which} as a dict name -> array"):
        metric.create("acc").update_dict(*args)


@pytest.mark.parametrize("index", [None, "0", 0.5, [0]], ids=repr)
def test_a_composite_metric_refuses_an_index_that_is_no_int_by_name(index):
    # a comparison's TypeError before
    with pytest.raises(DataError, match="CompositeEvalMetric: index .* out of range for 1 metrics"):
        metric.CompositeEvalMetric(["acc"]).get_metric(index)
