"""``metric.create`` reads back what ``get_config`` gives, as a dict or as JSON, as MXNet's ``create`` does."""

from __future__ import annotations

import json

import numpy as np
import pytest

from lazynd import initializer, metric
from lazynd.errors import DataError


@pytest.mark.parametrize(
    "made",
    [
        lambda: metric.create("acc", axis=0),
        lambda: metric.create("perplexity", -1),
        lambda: metric.create("f1", average="micro"),
        lambda: metric.create(["acc", "mse"]),
    ],
)
def test_a_metric_is_recreated_from_its_json_config(made) -> None:
    original = made()
    again = metric.create(json.dumps(original.get_config()))
    assert type(again) is type(original)
    assert again.get_config() == original.get_config()


def test_a_config_dict_names_the_class_under_metric() -> None:
    m = metric.create({"metric": "Accuracy", "axis": 0, "name": "by_column"})
    m.update([np.array([0, 1])], [np.array([[0.9, 0.2], [0.1, 0.8]])])
    assert m.get() == ("by_column", 1.0)


def test_a_composite_config_recreates_its_children() -> None:
    config = metric.create(["acc", "f1"]).get_config()
    again = metric.create(config)
    assert [child.name for child in again.metrics] == ["accuracy", "f1"]


@pytest.mark.parametrize(
    "spec, message",
    [
        ('{"axis": 0}', "must name its class under 'metric'"),
        ("{not json", "is not valid JSON"),
        ('["acc", [1]]', "the arguments of 'acc' must be a JSON object"),
    ],
)
def test_a_malformed_metric_config_is_refused_by_name(spec, message) -> None:
    with pytest.raises(DataError, match="metric.create") as info:
        metric.create(spec)
    assert message in str(info.value)


def test_an_initializer_is_created_from_a_config_dict_too() -> None:
    made = initializer.create({"init": "uniform", "scale": 0.25})
    assert isinstance(made, initializer.Uniform) and made.scale == 0.25


def _counts_batch(true_pos: int, false_pos: int, false_neg: int, true_neg: int) -> tuple[np.ndarray, np.ndarray]:
    """Labels and (batch, 2) predictions with these counts of binary outcomes."""
    pairs = [(1, 1)] * true_pos + [(0, 1)] * false_pos + [(1, 0)] * false_neg + [(0, 0)] * true_neg
    labels = np.array([label for label, _ in pairs])
    preds = np.eye(2)[[predicted for _, predicted in pairs]]
    return labels, preds


@pytest.mark.parametrize("name", ["f1", "mcc"])
def test_micro_local_and_global_values_agree_exactly(name) -> None:
    # counts where score * examples / examples is an ulp off the score: MXNet's local and global
    # values both take that path and agree, so a program may compare them with ==
    labels, preds = _counts_batch(1, 2, 7, 2)
    m = metric.create(name, average="micro")
    m.update([labels], [preds])
    assert m.get() == m.get_global()
    expected = 2 / 11 if name == "f1" else (1 * 2 - 2 * 7) / (3 * 8 * 4 * 9) ** 0.5
    assert m.get()[1] == pytest.approx(expected, rel=1e-12)


def test_pcc_local_and_global_values_agree_exactly() -> None:
    rng = np.random.default_rng(0)
    for _ in range(20):  # score * n / n is an ulp off the score for some of these
        m = metric.create("pcc")
        for _ in range(3):
            m.update([rng.integers(0, 3, size=7)], [rng.uniform(size=(7, 3))])
        assert m.get() == m.get_global()


@pytest.mark.parametrize(
    "name, args, kwargs, wrong",
    [
        ("perplexity", (), {}, "missing a required argument: 'ignore_label'"),
        ("custom", (), {}, "missing a required argument: 'feval'"),
        ("pcc", ("a", "b", "c", "d", "e"), {}, "too many positional arguments"),  # MXNet takes 4
        ("acc", (1, "a", "b", "c", "d"), {}, "too many positional arguments"),
        ("ce", (1e-12,), {"eps": 1e-12}, "multiple values for argument 'eps'"),
    ],
)
def test_create_with_arguments_the_metric_cannot_take_names_the_metric(name, args, kwargs, wrong):
    with pytest.raises(DataError, match=f"metric.create: '{name}' .*{wrong}"):
        metric.create(name, *args, **kwargs)


def test_create_with_arguments_the_initializer_cannot_take_names_its_arguments():
    with pytest.raises(DataError, match=r"initializer.create: 'uniform' cannot take \['foo'\].*its arguments: \(scale"):
        initializer.create('["uniform", {"foo": 1}]')


@pytest.mark.parametrize("feval", [5, None, "acc"])
def test_np_refuses_what_is_not_a_function(feval):
    with pytest.raises(DataError, match="metric.np: numpy_feval must be a function"):
        metric.np(feval)


@pytest.mark.parametrize("register", [metric.register, initializer.register])
@pytest.mark.parametrize("alias", [5, None, 1.5])
def test_register_refuses_what_is_neither_a_class_nor_a_name(register, alias):
    with pytest.raises(DataError, match="register: expected a class or alias names"):
        register(alias)


@pytest.mark.parametrize(
    "make",
    [
        lambda: metric.Accuracy(ignore_label=0),
        lambda: metric.TopKAccuracy(top_k=2, axis=0),
        lambda: metric.F1(averge="micro"),
        lambda: metric.MCC(foo=1),
        lambda: metric.PCC(foo=1),
        lambda: metric.Perplexity(None, foo=1),
        lambda: metric.CrossEntropy(foo=1),
        lambda: metric.NegativeLogLikelihood(foo=1),
        lambda: metric.MAE(foo=1),
        lambda: metric.MSE(foo=1),
        lambda: metric.RMSE(foo=1),
        lambda: metric.PearsonCorrelation(foo=1),
        lambda: metric.Loss(foo=1),
        lambda: metric.Torch(foo=1),
        lambda: metric.Caffe(foo=1),
        lambda: metric.CustomMetric(lambda label, pred: 0.0, foo=1),
        lambda: metric.CompositeEvalMetric(foo=1),
    ],
)
def test_a_builtin_metric_refuses_a_keyword_it_does_not_have(make) -> None:
    # MXNet 1.9.1: TypeError "__init__() got an unexpected keyword argument" (a misspelt
    # ``averge="micro"`` must not give the macro average silently)
    with pytest.raises(TypeError, match="unexpected keyword argument"):
        make()


def test_a_user_metric_still_passes_its_own_keywords_to_eval_metric() -> None:
    class Scaled(metric.EvalMetric):
        def __init__(self, scale: float) -> None:
            super().__init__("scaled", scale=scale)

    assert Scaled(2.0).get_config()["scale"] == 2.0


def test_create_with_arguments_the_class_cannot_take_is_a_type_error_as_mxnet() -> None:
    # MXNet 1.9.1: TypeError from the constructor ("missing 1 required positional argument:
    # 'ignore_label'", "unexpected keyword argument 'foo'"); lazynd's names metric.create too
    with pytest.raises(TypeError, match=r"metric.create: 'perplexity' cannot take \[\]"):
        metric.create("perplexity")
    with pytest.raises(TypeError, match=r"metric.create: 'acc' cannot take \['foo'\]"):
        metric.create("acc", foo=1)
    with pytest.raises(DataError):
        metric.create("acc", foo=1)
