"""Regression and correlation metrics against NumPy and MXNet 1.9.1: MSE, MAE, RMSE, Pearson, PCC, and the
float precision a batch of a loss or error metric is scored in."""

from __future__ import annotations

import math

import numpy as np
import pytest

import lazynd as mx
from lazynd import metric
from lazynd.errors import DataError


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


def test_pcc_reads_predictions_of_the_labels_shape_as_classes() -> None:
    # (N, 1) class predictions against (N, 1) labels, as a model emitting class ids gives them:
    # their argmax over one column was class 0 for every example, and the score NaN
    m = mx.metric.PCC()
    m.update([mx.nd.array([[0], [1], [2], [1]])], [mx.nd.array([[0], [1], [1], [1]])])
    assert m.get() == ("pcc", pytest.approx(0.6454972243679028))  # MXNet 1.9.1
    m.update([mx.nd.array([[2], [0]])], [mx.nd.array([[2.0], [0.0]])])
    assert m.get_global() == ("pcc", pytest.approx(0.7833494518006403))


def test_pcc_of_mxnets_docstring_example() -> None:
    preds = [mx.nd.array([[0.3, 0.7]] * 1000 + [[0.7, 0.3]] * 2 + [[0.3, 0.7]] * 10000)]
    labels = [mx.nd.array([0] * 1001 + [1] * 10001)]
    pcc = mx.metric.create("pcc")
    pcc.update(labels, preds)
    assert pcc.get()[1] == pytest.approx(0.01917751877733392)  # MXNet 1.9.1


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("ce", 0.6067196528116862),
        ("perplexity", 1.834404036143276),
        ("mse", 0.2174999862909317),
        ("mae", 0.4166666567325592),
        ("rmse", 0.4663689434528351),
    ],
)
def test_float32_outputs_are_scored_in_float32_as_mxnet_scores_them(name, expected) -> None:
    # MXNet 1.9.1's values to the last bit: a batch's score is computed in the outputs' float32 (the
    # epoch's sum in float64); lazynd computed it in float64, so logged values differed in the 6th digit
    m = metric.create(name) if name != "perplexity" else metric.Perplexity(None)
    if name in ("mse", "mae", "rmse"):
        m.update([mx.nd.array([0.3, 0.2, 0.7])], [mx.nd.array([[0.1], [0.9], [0.35]])])
    else:
        m.update([mx.nd.array([1, 0, 0])], [mx.nd.array([[0.1, 0.9], [0.3, 0.7], [0.6, 0.4]])])
    assert m.get()[1] == expected
