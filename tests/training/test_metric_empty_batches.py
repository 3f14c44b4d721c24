"""Batches with no examples and predictions with no classes.

An empty batch has nothing to score: it leaves every built-in metric as it was.  Before, the
per-batch means (MSE, MAE, RMSE, Pearson's macro average) took NumPy's NaN of an empty mean, and
the epoch's value stayed NaN whatever came after; F1 and MCC's macro averages counted the empty
update as a score of 0.  Predictions with examples but no classes to choose from are refused by
name (NumPy's 'attempt to get argmax of an empty sequence' or a reshape error came from inside).
MXNet 1.9.1 fails on both in its shape inference, which takes a 0 for an unknown size.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import lazynd as mx
from lazynd.errors import DataError

_LABELS = [mx.nd.array([0, 1, 1])]
_SCORES = [mx.nd.array([[0.3, 0.7], [0.6, 0.4], [0.1, 0.9]])]
_VALUES = [mx.nd.array([0.2, 0.5, 0.9])]
_CASES = {
    "acc": ({}, _SCORES),
    "top_k_accuracy": ({"top_k": 2}, _SCORES),
    "f1": ({}, _SCORES),
    "mcc": ({}, _SCORES),
    "pcc": ({}, _SCORES),
    "ce": ({}, _SCORES),
    "perplexity": ({"ignore_label": None}, _SCORES),
    "mse": ({}, _SCORES),
    "mae": ({}, _SCORES),
    "rmse": ({}, _SCORES),
    "pearsonr": ({}, _VALUES),
}


@pytest.mark.parametrize("name", sorted(_CASES))
def test_an_empty_batch_leaves_the_metric_as_it_was(name):
    kwargs, preds = _CASES[name]
    empty_preds = [mx.nd.zeros((0, *preds[0].shape[1:]))]
    with_empty, without = mx.metric.create(name, **kwargs), mx.metric.create(name, **kwargs)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no 'Mean of empty slice' either
        with_empty.update([mx.nd.zeros((0,))], empty_preds)
        with_empty.update(_LABELS, preds)
    without.update(_LABELS, preds)
    assert with_empty.get() == without.get()
    assert with_empty.get_global() == without.get_global()


def test_a_regression_batch_broadcast_to_no_values_is_refused():
    with pytest.raises(DataError, match=r"MSE: label shape \(3,\) does not match prediction shape \(3, 0\)"):
        mx.metric.MSE().update(_LABELS, [mx.nd.zeros((3, 0))])


@pytest.mark.parametrize(
    "metric, preds, message",
    [
        (lambda: mx.metric.Accuracy(), (3, 0), r"Accuracy: predictions of shape \(3, 0\) have no classes along axis 1"),
        (lambda: mx.metric.Accuracy(axis=0), (0, 3), r"Accuracy: .* no classes along axis 0"),
        (lambda: mx.metric.TopKAccuracy(top_k=2), (3, 0), r"TopKAccuracy: .* no classes along axis 1"),
        (lambda: mx.metric.PCC(), (3, 0), r"PCC: predictions of shape \(3, 0\) have no classes along axis 1"),
        (lambda: mx.metric.Perplexity(None), (3, 0), r"Perplexity: .* no classes along axis -1"),
        (lambda: mx.metric.Perplexity(None, axis=0), (0, 3), r"Perplexity: .* no classes along axis 0"),
    ],
)
def test_predictions_without_classes_are_refused_by_name(metric, preds, message):
    labels = np.zeros(preds[0] if preds[0] else preds[1], np.float32)
    with pytest.raises(DataError, match=message):
        metric().update([mx.nd.array(labels)], [mx.nd.zeros(preds)])
