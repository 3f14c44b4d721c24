"""Classification metrics: accuracy, top-k accuracy, and the scores of a confusion matrix (F1, MCC, PCC)."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy

from ..errors import DataError, LabelShapeError
from .base import EvalMetric, _check_average, _check_axis, _classes, _host, _is_int, _label_pred_lists, register


@register("acc")
class Accuracy(EvalMetric):
    """Fraction of predictions (argmax over ``axis``) equal to the label.

    Examples
    --------
    >>> import numpy as np
    >>> m = Accuracy()
    >>> m.update([np.array([0, 1, 1])], [np.array([[0.3, 0.7], [0, 1.0], [0.4, 0.6]])])
    >>> m.get()
    ('accuracy', 0.6666666666666666)
    """

    def __init__(
        self,
        axis: int = 1,
        name: str = "accuracy",
        output_names: list[str] | None = None,
        label_names: list[str] | None = None,
    ) -> None:
        super().__init__(name, axis=axis, output_names=output_names, label_names=label_names)
        self.axis = axis

    def update(self, labels: Sequence[Any], preds: Sequence[Any]) -> None:
        labels, preds = _label_pred_lists(labels, preds)
        for label, pred in zip(labels, preds, strict=False):
            pred_np, label_np = _host(pred), _host(label)
            if pred_np.shape != label_np.shape:
                _check_axis("Accuracy", self.axis, pred_np)
                pred_np = pred_np.argmax(axis=self.axis)
            pred_np = _classes("Accuracy", "predicted class", pred_np)  # argmax's classes are int64 already
            label_np = _classes("Accuracy", "label", label_np)
            if pred_np.shape != label_np.shape:
                raise LabelShapeError(f"Accuracy: {label_np.size} labels but {pred_np.size} predicted classes")
            self.sum_metric += float((pred_np == label_np).sum())
            self.num_inst += len(pred_np)


@register("top_k_accuracy", "top_k_acc")
class TopKAccuracy(EvalMetric):
    """Fraction of labels among the ``top_k`` highest-scored classes."""

    def __init__(
        self,
        top_k: int = 1,
        name: str = "top_k_accuracy",
        output_names: list[str] | None = None,
        label_names: list[str] | None = None,
    ) -> None:
        if not _is_int(top_k) or top_k < 1:
            raise DataError(f"TopKAccuracy: top_k must be an int >= 1, got {top_k!r}")
        super().__init__(f"{name}_{top_k}", top_k=top_k, output_names=output_names, label_names=label_names)
        self.top_k = top_k

    def update(self, labels: Sequence[Any], preds: Sequence[Any]) -> None:
        labels, preds = _label_pred_lists(labels, preds)
        for label, pred in zip(labels, preds, strict=False):
            pred_np, label_np = _host(pred), _classes("TopKAccuracy", "label", _host(label))
            if pred_np.ndim != 2:
                raise DataError(f"TopKAccuracy: predictions must be (batch, classes), got shape {pred_np.shape}")
            _check_axis("TopKAccuracy", 1, pred_np)
            if pred_np.shape[0] != label_np.size:
                raise DataError(f"TopKAccuracy: {label_np.size} labels for {pred_np.shape[0]} predictions")
            top = numpy.argsort(pred_np, axis=1, kind="stable")[:, ::-1][:, : self.top_k]
            self.sum_metric += float((top == label_np[:, None]).any(axis=1).sum())
            self.num_inst += len(label_np)


def _binary_counts(metric: str, labels: Sequence[Any], preds: Sequence[Any]) -> numpy.ndarray:
    """True positives, false positives, false negatives and true negatives of (batch, 2) predictions."""
    labels, preds = _label_pred_lists(labels, preds)
    counts = numpy.zeros(4)
    for label, pred in zip(labels, preds, strict=False):
        pred_np, label_np = _host(pred), _classes(metric, "label", _host(label))
        if pred_np.ndim != 2 or pred_np.shape[1] != 2:
            raise DataError(f"{metric}: predictions must be (batch, 2), got shape {pred_np.shape}")
        if pred_np.shape[0] != label_np.size:
            raise DataError(f"{metric}: {label_np.size} labels for {pred_np.shape[0]} predictions")
        if numpy.setdiff1d(numpy.unique(label_np), [0, 1]).size:
            raise DataError(f"{metric}: labels must be 0 or 1, got {numpy.unique(label_np).tolist()}")
        predicted = pred_np.argmax(axis=1)
        counts += (
            ((predicted == 1) & (label_np == 1)).sum(),
            ((predicted == 1) & (label_np == 0)).sum(),
            ((predicted == 0) & (label_np == 1)).sum(),
            ((predicted == 0) & (label_np == 0)).sum(),
        )
    return counts


def _f1_score(true_pos: float, false_pos: float, false_neg: float, _true_neg: float = 0.0) -> float:
    """The harmonic mean of precision and recall; 0 where either is undefined or both are 0."""
    precision = true_pos / (true_pos + false_pos) if true_pos + false_pos > 0 else 0.0
    recall = true_pos / (true_pos + false_neg) if true_pos + false_neg > 0 else 0.0
    return float(2 * precision * recall / (precision + recall)) if precision + recall > 0 else 0.0


def _mcc_score(true_pos: float, false_pos: float, false_neg: float, true_neg: float) -> float:
    """Matthews' correlation coefficient; the sums that are 0 are left out of the denominator (MXNet's rule)."""
    if true_pos + false_pos + false_neg + true_neg == 0:
        return 0.0
    sums = (true_pos + false_pos, true_pos + false_neg, true_neg + false_pos, true_neg + false_neg)
    denominator = math.prod(t for t in sums if t != 0)
    return float((true_pos * true_neg - false_pos * false_neg) / math.sqrt(denominator))


class _BinaryScore(EvalMetric):
    """A score of the counts of binary predictions (F1, MCC): ``score(tp, fp, fn, tn)``.

    ``average='macro'`` averages the score of each ``update`` call (MXNet's default);
    ``'micro'`` takes it from the counts of every update since the last ``reset``.
    """

    score: Callable[..., float]

    def __init__(self, name: str, average: str = "macro", **kwargs: Any) -> None:
        _check_average(type(self).__name__, average)
        self.average = average
        super().__init__(name, average=average, **kwargs)

    def reset(self) -> None:
        super().reset()
        # true positives, false positives, false negatives and true negatives of the local
        # period and since the last reset (micro average)
        self._totals = numpy.zeros(4)
        self._global_totals = numpy.zeros(4)

    def reset_local(self) -> None:
        super().reset_local()
        self._totals = numpy.zeros(4)

    def get(self) -> tuple[Any, Any]:
        if self.average == "macro":
            return super().get()
        return self._micro(self._totals)

    def get_global(self) -> tuple[Any, Any]:
        if self.average == "macro":
            return super().get_global()
        return self._micro(self._global_totals)

    def _micro(self, totals: numpy.ndarray) -> tuple[str, float]:
        """The score of ``totals``: the same arithmetic for the local period and since the reset, so the
        two agree exactly when they saw the same updates (``sum_metric / num_inst`` could differ by an ulp)."""
        return self.name, self.score(*totals) if totals.sum() else float("nan")

    def update(self, labels: Sequence[Any], preds: Sequence[Any]) -> None:
        counts = _binary_counts(type(self).__name__, labels, preds)
        if self.average == "macro":
            if not counts.sum():
                return  # an update of empty batches has no score (a 0 would pull the average down)
            # one score per update call, averaged over the calls, as MXNet does
            self.sum_metric += self.score(*counts)
            self.num_inst += 1
        else:
            self._totals += counts
            self._global_totals += counts
            examples = int(self._totals.sum())
            self.sum_metric = self.score(*self._totals) * examples
            self.num_inst = examples


@register()
class F1(_BinaryScore):
    """F1 score of the positive class for binary classification (2 output columns).

    ``average='macro'`` (the default) averages the score of each ``update`` call;
    ``'micro'`` scores the true/false positives and false negatives counted over
    every update since the last ``reset``.

    Examples
    --------
    >>> m = F1(average="micro")
    >>> m.update([numpy.array([1, 0])], [numpy.array([[0.2, 0.8], [0.3, 0.7]])])
    >>> m.update([numpy.array([1])], [numpy.array([[0.9, 0.1]])])
    >>> m.get()
    ('f1', 0.5)
    """

    score = staticmethod(_f1_score)

    def __init__(
        self,
        name: str = "f1",
        output_names: list[str] | None = None,
        label_names: list[str] | None = None,
        average: str = "macro",
    ) -> None:
        super().__init__(name, average, output_names=output_names, label_names=label_names)


@register()
class MCC(_BinaryScore):
    """Matthews' correlation coefficient of binary predictions (2 output columns).

    ``average`` as for :class:`F1`: ``'macro'`` averages the coefficient of each ``update``
    call, ``'micro'`` takes it from the counts of every update since the last ``reset``.

    Examples
    --------
    >>> m = MCC()
    >>> m.update([numpy.array([1, 0, 1, 0])], [numpy.array([[0.2, 0.8], [0.9, 0.1], [0.7, 0.3], [0.6, 0.4]])])
    >>> round(m.get()[1], 6)
    0.57735
    """

    score = staticmethod(_mcc_score)

    def __init__(
        self,
        name: str = "mcc",
        output_names: list[str] | None = None,
        label_names: list[str] | None = None,
        average: str = "macro",
    ) -> None:
        super().__init__(name, average, output_names=output_names, label_names=label_names)


def _pcc_score(confusion: numpy.ndarray) -> float:
    """Gorodkin's R_K (MCC for K classes) of a confusion matrix (rows predictions, columns labels)."""
    total = confusion.sum()
    predicted, actual = confusion.sum(axis=1), confusion.sum(axis=0)
    cov_pp = numpy.sum(predicted * (total - predicted))
    cov_aa = numpy.sum(actual * (total - actual))
    if cov_pp == 0 or cov_aa == 0:
        return float("nan")
    cov_pa = numpy.sum(confusion.diagonal() * total - predicted * actual)
    return float(cov_pa / (cov_pp * cov_aa) ** 0.5)


@register()
class PCC(EvalMetric):
    """The multiclass Matthews correlation (Pearson's correlation of a K x K confusion matrix).

    Predictions are class scores (their argmax is taken) or classes (predictions of the labels'
    shape, ``(N, 1)`` ones too, as MXNet reads them); the matrix grows with the largest class
    seen.  ``get`` reports the local period, ``get_global`` everything since ``reset``.

    Examples
    --------
    >>> m = PCC()
    >>> m.update([numpy.array([1, 0, 1, 0])], [numpy.array([[0.2, 0.8], [0.9, 0.1], [0.7, 0.3], [0.6, 0.4]])])
    >>> round(m.get()[1], 6)
    0.57735
    """

    def __init__(
        self,
        name: str = "pcc",
        output_names: list[str] | None = None,
        label_names: list[str] | None = None,
        has_global_stats: bool = True,
    ) -> None:
        self._classes = 2
        super().__init__(name, output_names=output_names, label_names=label_names, has_global_stats=has_global_stats)

    def reset(self) -> None:
        super().reset()
        self._global = numpy.zeros((self._classes, self._classes))
        self._local = numpy.zeros((self._classes, self._classes))

    def reset_local(self) -> None:
        super().reset_local()
        self._local = numpy.zeros((self._classes, self._classes))

    def _grow(self, classes: int) -> None:
        extra = classes - self._classes
        self._local = numpy.pad(self._local, ((0, extra), (0, extra)))
        self._global = numpy.pad(self._global, ((0, extra), (0, extra)))
        self._classes = classes

    def update(self, labels: Sequence[Any], preds: Sequence[Any]) -> None:
        labels, preds = _label_pred_lists(labels, preds)
        for label, pred in zip(labels, preds, strict=False):
            label_host, pred_np = _host(label), _host(pred)
            label_np = _classes("PCC", "label", label_host)
            # as MXNet (and Accuracy): predictions of the labels' shape are classes, (N, 1) ones too;
            # only scores of another shape are reduced by argmax
            if pred_np.shape == label_host.shape or pred_np.ndim == 1:
                pred_np = _classes("PCC", "predicted class", pred_np)
            elif pred_np.ndim == 2:
                _check_axis("PCC", 1, pred_np)
                pred_np = pred_np.argmax(axis=1)
            else:
                raise DataError(f"PCC: predictions must be (batch, classes) or (batch,), got shape {pred_np.shape}")
            if pred_np.size != label_np.size:
                raise DataError(f"PCC: {label_np.size} labels for {pred_np.size} predictions")
            if label_np.size and min(label_np.min(), pred_np.min()) < 0:
                raise DataError(f"PCC: classes must be >= 0, got labels {label_np} and predictions {pred_np}")
            largest = int(max(pred_np.max(initial=0), label_np.max(initial=0)))
            if largest >= self._classes:
                self._grow(largest + 1)
            counts = numpy.zeros((self._classes, self._classes))
            numpy.add.at(counts, (pred_np, label_np), 1)
            self._local += counts
            self._global += counts
        self.num_inst += 1
        self.sum_metric = _pcc_score(self._local) * self.num_inst

    def get(self) -> tuple[Any, Any]:
        # the local matrix's score, as get_global scores the global one (not sum_metric / num_inst, an
        # ulp off): the two agree exactly on the same updates
        return self.name, _pcc_score(self._local) if self.num_inst else float("nan")

    def get_global(self) -> tuple[Any, Any]:
        return self.name, _pcc_score(self._global) if self.global_num_inst else float("nan")
