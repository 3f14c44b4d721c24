"""A label or prediction that is not an array of numbers is refused by name by every built-in metric.

Before, ``None`` among the predictions of ``mse`` gave the value NaN silently, a string or a dict
gave NumPy's or ``int()``'s ValueError/TypeError from deep inside the metric.
"""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx
from lazynd.errors import DataError

_METRICS = ["acc", "top_k_accuracy", "f1", "mcc", "ce", "nll_loss", "perplexity", "mse", "mae", "rmse", "pearsonr"]
_NOT_ARRAYS = [None, "abc", {"k": 1}, [[1, 2], [3]], [object()]]


def _metric(name: str) -> mx.metric.EvalMetric:
    kwargs = {"top_k_accuracy": {"top_k": 2}, "perplexity": {"ignore_label": None}}.get(name, {})
    return mx.metric.create(name, **kwargs)


@pytest.mark.parametrize("bad", _NOT_ARRAYS, ids=["None", "str", "dict", "ragged list", "objects"])
@pytest.mark.parametrize("name", _METRICS)
@pytest.mark.parametrize("role", ["label", "prediction"])
def test_a_label_or_prediction_that_is_not_numbers_is_a_data_error(name, bad, role):
    labels, preds = [mx.nd.array([0, 1])], [mx.nd.array([[0.3, 0.7], [0.6, 0.4]])]
    (labels if role == "label" else preds)[0] = bad
    metric = _metric(name)
    with pytest.raises(DataError, match=r"metric: expected an array of numbers \(an NDArray or a NumPy array\)"):
        metric.update(labels, preds)


@pytest.mark.parametrize("name", _METRICS)
def test_numpy_arrays_and_lists_of_numbers_are_still_taken(name):
    metric = _metric(name)
    preds = [[0.3, 0.8]] if name == "pearsonr" else [[[0.3, 0.7], [0.6, 0.4]]]  # one value per label
    metric.update([np.array([0, 1])], preds)
    assert isinstance(metric.get()[1], float)


def test_a_numpy_metric_is_refused_a_prediction_that_is_not_numbers():
    metric = mx.metric.np(lambda label, pred: 1.0)
    with pytest.raises(DataError, match="expected an array of numbers"):
        metric.update([mx.nd.ones((2,))], [None])
