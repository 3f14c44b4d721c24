"""Class labels and indices given as floats are checked as given, before any conversion to integers,
by every operator and metric that takes them (lazynd/ops/label_classes.py).

Converting NaN, an infinity or 2**63 to an integer is undefined in C and CUDA (x86 gives -2**63,
aarch64 0: class 0, silently).  One table: for each operator or metric, what each of NaN, inf, -1,
the number of classes (3) and 2**63 does -- refused by name (the operator, the argument and the
value; on a GPU at the next wait), or, where MXNet's rule clips, wraps or ignores indices, the rule
applied to the number as given (2**63 clips to the last position, it does not overflow).  MXNet
1.9.1 gives garbage for these (NaN picks a position; take's clip of 2**63 gives the first).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import lazynd as mx
from lazynd.errors import DataError, EngineError, OperatorError

VALUES = {"nan": math.nan, "inf": math.inf, "-1": -1.0, "classes": 3.0, "2**63": 2.0**63}
SHOWN = {"nan": "nan", "inf": "inf", "-1": "-1", "classes": "3", "2**63": "9223372036854775808"}
SCORES = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
REFUSED = "refused"


def _array(ctx: mx.Context, values: Any, dtype: str = "float32") -> mx.nd.NDArray:
    return mx.nd.array(values, ctx=ctx, dtype=dtype)


def _backward(op: Callable, ctx: mx.Context, v: float) -> np.ndarray:
    x = _array(ctx, SCORES)
    x.attach_grad()
    with mx.autograd.record():
        y = op(x, _array(ctx, [v, 0.0]))
    y.backward()
    return x.grad.asnumpy()


def _metric(metric: Any, v: float, preds: np.ndarray) -> float:
    metric.update([mx.nd.array([v, 0.0])], [mx.nd.array(preds)])
    return metric.get()[1]


TWO_CLASSES = np.array([[0.3, 0.7], [0.6, 0.4]])
PROBABILITIES = SCORES / SCORES.sum(axis=1, keepdims=True)

# name -> (call(ctx, value), the argument an error names, {value: REFUSED or the expected result})
OPERATORS: dict[str, tuple[Callable, str, dict]] = {
    "SVMOutput": (lambda ctx, v: _backward(mx.nd.SVMOutput, ctx, v), "label", dict.fromkeys(VALUES, REFUSED)),
    "SoftmaxOutput": (lambda ctx, v: _backward(mx.nd.SoftmaxOutput, ctx, v), "label", dict.fromkeys(VALUES, REFUSED)),
    "softmax_cross_entropy": (
        lambda ctx, v: mx.nd.softmax_cross_entropy(_array(ctx, SCORES), _array(ctx, [v, 0.0])).asnumpy(),
        "label",
        dict.fromkeys(VALUES, REFUSED),
    ),
    "take": (
        lambda ctx, v: mx.nd.take(_array(ctx, [10, 20, 30]), _array(ctx, [v]), mode="raise").asnumpy(),
        "index",
        dict.fromkeys(VALUES, REFUSED),
    ),
    "take clip": (
        lambda ctx, v: mx.nd.take(_array(ctx, [10, 20, 30]), _array(ctx, [v]), mode="clip").asnumpy(),
        "index",
        {"nan": REFUSED, "inf": [30], "-1": [10], "classes": [30], "2**63": [30]},
    ),
    "take wrap": (
        lambda ctx, v: mx.nd.take(_array(ctx, [10, 20, 30]), _array(ctx, [v]), mode="wrap").asnumpy(),
        "index",
        {"nan": REFUSED, "inf": REFUSED, "-1": [30], "classes": [10], "2**63": [30]},  # 2**63 % 3 == 2
    ),
    "pick clip": (
        lambda ctx, v: mx.nd.pick(_array(ctx, SCORES), _array(ctx, [v, 0.0]), mode="clip").asnumpy(),
        "index",
        {"nan": REFUSED, "inf": [3, 4], "-1": [1, 4], "classes": [3, 4], "2**63": [3, 4]},
    ),
    "pick wrap": (
        lambda ctx, v: mx.nd.pick(_array(ctx, SCORES), _array(ctx, [v, 0.0]), mode="wrap").asnumpy(),
        "index",
        {"nan": REFUSED, "inf": REFUSED, "-1": [3, 4], "classes": [1, 4], "2**63": [3, 4]},
    ),
    "batch_take": (
        lambda ctx, v: mx.nd.batch_take(_array(ctx, SCORES), _array(ctx, [v, 0.0])).asnumpy(),
        "indices",
        {"nan": REFUSED, "inf": [3, 4], "-1": [1, 4], "classes": [3, 4], "2**63": [3, 4]},
    ),
    "Embedding": (
        lambda ctx, v: mx.nd.Embedding(
            _array(ctx, [v]), _array(ctx, [[1], [2], [3]]), input_dim=3, output_dim=1
        ).asnumpy(),
        "data",
        {"nan": REFUSED, "inf": [[3]], "-1": [[1]], "classes": [[3]], "2**63": [[3]]},
    ),
    "one_hot": (
        lambda ctx, v: mx.nd.one_hot(_array(ctx, [v, 1.0]), 3).asnumpy(),
        "indices",
        {"nan": REFUSED, **{k: [[0, 0, 0], [0, 1, 0]] for k in ("inf", "-1", "classes", "2**63")}},
    ),
    "gather_nd": (
        lambda ctx, v: mx.nd.gather_nd(_array(ctx, [10, 20, 30]), _array(ctx, [[v]])).asnumpy(),
        "index",
        {"nan": REFUSED, "inf": REFUSED, "-1": [30], "classes": REFUSED, "2**63": REFUSED},
    ),
}

METRICS: dict[str, tuple[Callable, dict]] = {
    # MXNet's Accuracy counts a label of no class as wrong; a value that is no integer is refused
    "Accuracy": (
        lambda v: _metric(mx.metric.Accuracy(), v, SCORES),
        {"nan": REFUSED, "inf": REFUSED, "-1": 0.0, "classes": 0.0, "2**63": REFUSED},
    ),
    "TopKAccuracy": (
        lambda v: _metric(mx.metric.TopKAccuracy(top_k=2), v, SCORES),
        {"nan": REFUSED, "inf": REFUSED, "-1": 0.0, "classes": 0.0, "2**63": REFUSED},
    ),
    "F1": (lambda v: _metric(mx.metric.F1(), v, TWO_CLASSES), dict.fromkeys(VALUES, REFUSED)),
    "MCC": (lambda v: _metric(mx.metric.MCC(), v, TWO_CLASSES), dict.fromkeys(VALUES, REFUSED)),
    "CrossEntropy": (lambda v: _metric(mx.metric.CrossEntropy(), v, PROBABILITIES), dict.fromkeys(VALUES, REFUSED)),
    "NegativeLogLikelihood": (
        lambda v: _metric(mx.metric.NegativeLogLikelihood(), v, PROBABILITIES),
        dict.fromkeys(VALUES, REFUSED),
    ),
    "Perplexity": (lambda v: _metric(mx.metric.Perplexity(None), v, PROBABILITIES), dict.fromkeys(VALUES, REFUSED)),
}


def _exactly(shown: str) -> str:
    """A regex of ``shown`` as a whole number (not the 3 of 30, nor the 1 of -1)."""
    return rf"(?<![\w.-]){re.escape(shown)}(?![\w.])"


def _op_name(name: str) -> str:
    return name.split()[0]


@pytest.mark.parametrize("value", list(VALUES))
@pytest.mark.parametrize("name", list(OPERATORS))
def test_operator_label_as_given(name: str, value: str, ctx: mx.Context) -> None:
    call, argument, expected = OPERATORS[name]
    outcome = expected[value]
    if outcome == REFUSED:
        # the host's words and the device check's both name the operator, the argument and the value
        pattern = rf"{_op_name(name)}: {argument}\b.*{_exactly(SHOWN[value])}"
        with pytest.raises((OperatorError, EngineError), match=pattern):
            call(ctx, VALUES[value])
        mx.nd.waitall()
    else:
        np.testing.assert_array_equal(call(ctx, VALUES[value]), np.array(outcome, dtype=np.float32))


@pytest.mark.parametrize("value", list(VALUES))
@pytest.mark.parametrize("name", list(METRICS))
def test_metric_label_as_given(name: str, value: str) -> None:
    call, expected = METRICS[name]
    outcome = expected[value]
    if outcome == REFUSED:
        with pytest.raises(DataError, match=rf"^{name}: label.*{re.escape(SHOWN[value])}"):
            call(VALUES[value])
    else:
        assert call(VALUES[value]) == outcome


def test_accuracy_refuses_a_predicted_class_that_is_not_a_number() -> None:
    metric = mx.metric.Accuracy()
    with pytest.raises(DataError, match=r"^Accuracy: predicted class nan is not a class"):
        metric.update([mx.nd.array([1.0, 0.0])], [mx.nd.array([math.nan, 0.0])])


@pytest.mark.parametrize(
    "value, shown", [("nan", "nan"), ("inf", "inf"), ("2**63", r"(9\.22337e\+18|9223372036854775808)")]
)
def test_ctc_loss_refuses_a_label_that_is_not_a_class(value: str, shown: str, ctx: mx.Context) -> None:
    # CTCLoss compared its labels as given already (ctc_loss.py): pinned here with the others
    data = _array(ctx, np.zeros((4, 1, 3)))
    label = _array(ctx, [[1.0, VALUES[value]]])
    with pytest.raises((OperatorError, EngineError), match=rf"CTCLoss: .*label.*(?<![\w.-]){shown}(?![\w.])"):
        mx.nd.CTCLoss(data, label).asnumpy()
    mx.nd.waitall()
