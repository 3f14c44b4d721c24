"""Evaluation metrics (``mx.metric``): accumulate a score over batches.

Labels and predictions arrive as lists of NDArrays (or NumPy arrays); the
scores are computed on the host in float64 so that sums over an epoch do not
drift.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Sequence
from typing import Any

import numpy

from .class_registry import make_register
from .errors import DataError

_REGISTRY: dict[str, type[EvalMetric]] = {}


register = make_register(_REGISTRY)
"""Register a metric class under its lower-case class name and aliases for ``create``:
``@register``, ``@register("alias")`` or MXNet's ``register(klass, name=None)``."""


def _host(value: Any) -> numpy.ndarray:
    return value.asnumpy() if hasattr(value, "asnumpy") else numpy.asarray(value)


def _as_array_list(values: Any) -> list[Any]:
    """``values`` as a list of arrays: a single NDArray or NumPy array is a list of one, as MXNet takes it."""
    if _is_array(values):
        return [values]
    if values is None or isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
        raise DataError(f"metric: expected an array or a list of arrays, got {type(values).__name__}")
    return list(values)


def _is_int(value: object) -> bool:
    """Whether ``value`` is an int (Python's or NumPy's, not a bool)."""
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def _check_axis(metric: str, axis: int, array: numpy.ndarray) -> None:
    """Refuse, by name, a class ``axis`` that the predictions do not have."""
    if not -array.ndim <= axis < array.ndim:
        raise DataError(f"{metric}: axis {axis} is out of range for predictions of shape {array.shape}")


def _is_array(value: Any) -> bool:
    return hasattr(value, "asnumpy") or isinstance(value, numpy.ndarray)


def check_label_shapes(labels: Any, preds: Any, wrap: bool = False, shape: bool = False) -> tuple[Any, Any]:
    """Check that ``labels`` and ``preds`` agree, as MXNet's helper of the same name (for custom metrics).

    Without ``shape`` their lengths must agree (lists of arrays: as many labels as predictions;
    arrays: as many rows); with ``shape`` their shapes must (two arrays).  With ``wrap`` an array
    (NDArray or NumPy) comes back as a list of one, so that ``for label, pred in zip(labels, preds)``
    walks arrays either way; without it both come back as given.  Raises ``DataError`` otherwise.

    Examples
    --------
    >>> import lazynd as mx
    >>> labels, preds = check_label_shapes(mx.nd.array([1, 0]), mx.nd.array([[0.2, 0.8], [0.6, 0.4]]), True)
    >>> len(labels), len(preds)
    (1, 1)
    """
    if shape:
        if not (_is_array(labels) and _is_array(preds)):
            raise DataError(
                f"check_label_shapes(shape=True) compares two arrays, got {type(labels).__name__} "
                f"and {type(preds).__name__}"
            )
        label_shape, pred_shape = tuple(labels.shape), tuple(preds.shape)
        if label_shape != pred_shape:
            raise DataError(f"metric: label shape {label_shape} differs from prediction shape {pred_shape}")
    elif len(labels) != len(preds):
        raise DataError(f"metric: {len(labels)} labels but {len(preds)} predictions")
    if wrap:
        labels = [labels] if _is_array(labels) else labels
        preds = [preds] if _is_array(preds) else preds
    return labels, preds


def _label_pred_lists(labels: Any, preds: Any) -> tuple[list[Any], list[Any]]:
    """``labels`` and ``preds`` as lists of arrays (a single array is a list of one), as many of each."""
    labels, preds = _as_array_list(labels), _as_array_list(preds)
    if len(labels) != len(preds):
        raise DataError(f"metric: {len(labels)} label arrays but {len(preds)} prediction arrays")
    return labels, preds


class EvalMetric:
    """Base class: ``update`` adds a batch, ``get`` gives ``(name, value)``.

    Subclasses add to ``sum_metric`` and ``num_inst``; the value is their
    ratio (NaN before any update).  As in MXNet 1.x, ``reset_local`` starts a
    new local period (what ``get`` reports) while ``get_global`` goes on
    reporting everything since the last ``reset``.
    """

    def __init__(
        self, name: str, output_names: list[str] | None = None, label_names: list[str] | None = None, **kwargs: Any
    ) -> None:
        self.name = str(name)
        self.output_names = output_names
        self.label_names = label_names
        self._kwargs = kwargs
        self.reset()

    def __str__(self) -> str:
        return f"EvalMetric: {dict(self.get_name_value())}"

    def get_config(self) -> dict[str, Any]:
        config = dict(self._kwargs)
        config.update(
            metric=type(self).__name__, name=self.name, output_names=self.output_names, label_names=self.label_names
        )
        return config

    def update_dict(self, label: dict[str, Any], pred: dict[str, Any]) -> None:
        """Update from dicts name -> array, picking ``label_names``/``output_names`` when set."""
        preds = _pick(pred, self.output_names, "output_names", self.name)
        labels = _pick(label, self.label_names, "label_names", self.name)
        self.update(labels, preds)

    def update(self, labels: Sequence[Any], preds: Sequence[Any]) -> None:
        raise NotImplementedError(f"{type(self).__name__} does not implement update")

    def reset(self) -> None:
        """Forget every update (local and global)."""
        self.num_inst = 0
        self.sum_metric = 0.0
        # the sums of the local periods before the current one
        self._earlier_sum_metric = 0.0
        self._earlier_num_inst = 0

    def reset_local(self) -> None:
        """Start a new local period; the global value keeps what was seen since :meth:`reset`."""
        self._earlier_sum_metric += self.sum_metric
        self._earlier_num_inst += self.num_inst
        self.num_inst = 0
        self.sum_metric = 0.0

    @property
    def global_sum_metric(self) -> float:
        return self._earlier_sum_metric + self.sum_metric

    @property
    def global_num_inst(self) -> int:
        return self._earlier_num_inst + self.num_inst

    def _value(self, total: float, count: int) -> float:
        """The metric's value from a sum and a count (NaN without any instance)."""
        return float("nan") if count == 0 else total / count

    def get(self) -> tuple[Any, Any]:
        return self.name, self._value(self.sum_metric, self.num_inst)

    def get_global(self) -> tuple[Any, Any]:
        """``(name, value)`` over every update since the last :meth:`reset`."""
        return self.name, self._value(self.global_sum_metric, self.global_num_inst)

    def get_name_value(self) -> list[tuple[str, float]]:
        return _pairs(*self.get())

    def get_global_name_value(self) -> list[tuple[str, float]]:
        """:meth:`get_global` as a list of ``(name, value)`` pairs."""
        return _pairs(*self.get_global())


def _pick(arrays: dict[str, Any], names: list[str] | None, which: str, metric: str) -> list[Any]:
    """The arrays of ``names`` in ``arrays`` (all of them, in order, when ``names`` is None)."""
    if names is None:
        return list(arrays.values())
    missing = [n for n in names if n not in arrays]
    if missing:
        raise DataError(f"metric {metric!r}: {which} {missing} not among the arrays given, {sorted(arrays)}")
    return [arrays[n] for n in names]


def _pairs(name: Any, value: Any) -> list[tuple[str, float]]:
    if not isinstance(name, list):
        name, value = [name], [value]
    return list(zip(name, value, strict=False))


@register("composite")
class CompositeEvalMetric(EvalMetric):
    """Several metrics updated together; ``get`` returns lists of names and values.

    Examples
    --------
    >>> import numpy as np
    >>> m = CompositeEvalMetric([Accuracy(), CrossEntropy()])
    >>> m.update([np.array([1, 0])], [np.array([[0.2, 0.8], [0.6, 0.4]])])
    >>> m.get()[0]
    ['accuracy', 'cross-entropy']
    """

    def __init__(self, metrics: list[Any] | None = None, name: str = "composite", **kwargs: Any) -> None:
        super().__init__(name, **kwargs)
        self.metrics = [create(m) for m in (metrics or [])]

    def add(self, metric: Any) -> None:
        self.metrics.append(create(metric))

    def get_config(self) -> dict[str, Any]:
        """The base config plus ``metrics``: each metric's own config, as MXNet's."""
        config = super().get_config()
        config["metrics"] = [metric.get_config() for metric in self.metrics]
        return config

    def get_metric(self, index: int) -> EvalMetric:
        if not 0 <= index < len(self.metrics):
            raise DataError(f"CompositeEvalMetric: index {index} out of range for {len(self.metrics)} metrics")
        return self.metrics[index]

    def update(self, labels: Sequence[Any], preds: Sequence[Any]) -> None:
        for metric in self.metrics:
            metric.update(labels, preds)

    def reset(self) -> None:
        for metric in getattr(self, "metrics", []):
            metric.reset()

    def reset_local(self) -> None:
        for metric in self.metrics:
            metric.reset_local()

    def get(self) -> tuple[list[str], list[float]]:
        return self._joined([metric.get() for metric in self.metrics])

    def get_global(self) -> tuple[list[str], list[float]]:
        return self._joined([metric.get_global() for metric in self.metrics])

    @staticmethod
    def _joined(results: list[tuple[Any, Any]]) -> tuple[list[str], list[float]]:
        names: list[str] = []
        values: list[float] = []
        for name, value in results:
            names.extend(name if isinstance(name, list) else [name])
            values.extend(value if isinstance(value, list) else [value])
        return names, values


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

    def __init__(self, axis: int = 1, name: str = "accuracy", **kwargs: Any) -> None:
        super().__init__(name, axis=axis, **kwargs)
        self.axis = axis

    def update(self, labels: Sequence[Any], preds: Sequence[Any]) -> None:
        labels, preds = _label_pred_lists(labels, preds)
        for label, pred in zip(labels, preds, strict=False):
            pred_np, label_np = _host(pred), _host(label)
            if pred_np.shape != label_np.shape:
                _check_axis("Accuracy", self.axis, pred_np)
                pred_np = pred_np.argmax(axis=self.axis)
            pred_np = pred_np.astype(numpy.int64, copy=False).ravel()  # argmax's classes are int64 already
            label_np = label_np.astype(numpy.int64, copy=False).ravel()
            if pred_np.shape != label_np.shape:
                raise DataError(f"Accuracy: {label_np.size} labels but {pred_np.size} predicted classes")
            self.sum_metric += float((pred_np == label_np).sum())
            self.num_inst += len(pred_np)


@register("top_k_accuracy", "top_k_acc")
class TopKAccuracy(EvalMetric):
    """Fraction of labels among the ``top_k`` highest-scored classes."""

    def __init__(self, top_k: int = 1, name: str = "top_k_accuracy", **kwargs: Any) -> None:
        if not _is_int(top_k) or top_k < 1:
            raise DataError(f"TopKAccuracy: top_k must be an int >= 1, got {top_k!r}")
        super().__init__(f"{name}_{top_k}", top_k=top_k, **kwargs)
        self.top_k = top_k

    def update(self, labels: Sequence[Any], preds: Sequence[Any]) -> None:
        labels, preds = _label_pred_lists(labels, preds)
        for label, pred in zip(labels, preds, strict=False):
            pred_np, label_np = _host(pred), _host(label).astype(numpy.int64).ravel()
            if pred_np.ndim != 2:
                raise DataError(f"TopKAccuracy: predictions must be (batch, classes), got shape {pred_np.shape}")
            top = numpy.argsort(pred_np, axis=1, kind="stable")[:, ::-1][:, : self.top_k]
            self.sum_metric += float((top == label_np[:, None]).any(axis=1).sum())
            self.num_inst += len(label_np)


def _binary_counts(metric: str, labels: Sequence[Any], preds: Sequence[Any]) -> numpy.ndarray:
    """True positives, false positives, false negatives and true negatives of (batch, 2) predictions."""
    labels, preds = _label_pred_lists(labels, preds)
    counts = numpy.zeros(4)
    for label, pred in zip(labels, preds, strict=False):
        pred_np, label_np = _host(pred), _host(label).astype(numpy.int64).ravel()
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


def _check_average(metric: str, average: str) -> None:
    if average not in ("macro", "micro"):
        raise DataError(f"{metric}: average must be 'macro' or 'micro', got {average!r}")


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

    def get_global(self) -> tuple[Any, Any]:
        if self.average == "macro":
            return super().get_global()
        totals = self._global_totals
        return self.name, self.score(*totals) if totals.sum() else float("nan")

    def update(self, labels: Sequence[Any], preds: Sequence[Any]) -> None:
        counts = _binary_counts(type(self).__name__, labels, preds)
        if self.average == "macro":
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

    def __init__(self, name: str = "f1", average: str = "macro", **kwargs: Any) -> None:
        super().__init__(name, average, **kwargs)


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

    def __init__(self, name: str = "mcc", average: str = "macro", **kwargs: Any) -> None:
        super().__init__(name, average, **kwargs)


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

    Predictions are class scores (their argmax is taken) or classes; the matrix grows with the
    largest class seen.  ``get`` reports the local period, ``get_global`` everything since ``reset``.

    Examples
    --------
    >>> m = PCC()
    >>> m.update([numpy.array([1, 0, 1, 0])], [numpy.array([[0.2, 0.8], [0.9, 0.1], [0.7, 0.3], [0.6, 0.4]])])
    >>> round(m.get()[1], 6)
    0.57735
    """

    def __init__(self, name: str = "pcc", **kwargs: Any) -> None:
        self._classes = 2
        super().__init__(name, **kwargs)

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
            label_np = _host(label).astype(numpy.int64).reshape(-1)
            pred_np = _host(pred)
            pred_np = pred_np.argmax(axis=1) if pred_np.ndim > 1 else pred_np.astype(numpy.int64)
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

    def get_global(self) -> tuple[Any, Any]:
        return self.name, _pcc_score(self._global) if self.global_num_inst else float("nan")


class _Regression(EvalMetric):
    def _errors(self, labels: Sequence[Any], preds: Sequence[Any]) -> Any:
        labels, preds = _label_pred_lists(labels, preds)
        for label, pred in zip(labels, preds, strict=False):
            label_np, pred_np = _host(label).astype(numpy.float64), _host(pred).astype(numpy.float64)
            # as MXNet: a 1-D label or prediction is a column, broadcast against the other
            # (labels (N,) against predictions (N, C) compare each row's label with its C values)
            if label_np.ndim == 1:
                label_np = label_np[:, None]
            if pred_np.ndim == 1:
                pred_np = pred_np[:, None]
            try:
                numpy.broadcast_shapes(label_np.shape, pred_np.shape)
            except ValueError:
                raise DataError(
                    f"{type(self).__name__}: label shape {_host(label).shape} does not match prediction shape "
                    f"{_host(pred).shape} (nor broadcast against it)"
                ) from None
            yield label_np - pred_np


@register()
class MSE(_Regression):
    """Mean squared error, averaged over batches."""

    def __init__(self, name: str = "mse", **kwargs: Any) -> None:
        super().__init__(name, **kwargs)

    def update(self, labels: Sequence[Any], preds: Sequence[Any]) -> None:
        for diff in self._errors(labels, preds):
            self.sum_metric += float((diff**2).mean())
            self.num_inst += 1


@register()
class MAE(_Regression):
    """Mean absolute error, averaged over batches."""

    def __init__(self, name: str = "mae", **kwargs: Any) -> None:
        super().__init__(name, **kwargs)

    def update(self, labels: Sequence[Any], preds: Sequence[Any]) -> None:
        for diff in self._errors(labels, preds):
            self.sum_metric += float(numpy.abs(diff).mean())
            self.num_inst += 1


@register()
class RMSE(_Regression):
    """Root mean squared error, averaged over batches."""

    def __init__(self, name: str = "rmse", **kwargs: Any) -> None:
        super().__init__(name, **kwargs)

    def update(self, labels: Sequence[Any], preds: Sequence[Any]) -> None:
        for diff in self._errors(labels, preds):
            self.sum_metric += float(numpy.sqrt((diff**2).mean()))
            self.num_inst += 1


@register("ce")
class CrossEntropy(EvalMetric):
    """Mean of ``-log(p[label] + eps)`` over examples, for probability outputs."""

    def __init__(self, eps: float = 1e-12, name: str = "cross-entropy", **kwargs: Any) -> None:
        super().__init__(name, eps=eps, **kwargs)
        self.eps = eps

    def update(self, labels: Sequence[Any], preds: Sequence[Any]) -> None:
        labels, preds = _label_pred_lists(labels, preds)
        for label, pred in zip(labels, preds, strict=False):
            label_np, pred_np = _host(label).astype(numpy.int64).ravel(), _host(pred).astype(numpy.float64)
            if pred_np.ndim != 2 or pred_np.shape[0] != label_np.size:
                raise DataError(f"CrossEntropy: predictions must be ({label_np.size}, classes), got {pred_np.shape}")
            if label_np.size and (label_np.min() < 0 or label_np.max() >= pred_np.shape[1]):
                raise DataError(
                    f"CrossEntropy: labels must be in [0, {pred_np.shape[1]}), got {label_np.min()}..{label_np.max()}"
                )
            prob = pred_np[numpy.arange(label_np.size), label_np]
            self.sum_metric += float((-numpy.log(prob + self.eps)).sum())
            self.num_inst += label_np.size


@register("nll_loss")
class NegativeLogLikelihood(CrossEntropy):
    """Mean of ``-log(p[label] + eps)`` over examples: :class:`CrossEntropy` under MXNet's other name.

    Examples
    --------
    >>> m = NegativeLogLikelihood()
    >>> m.update([numpy.array([1])], [numpy.array([[0.5, 0.5]])])
    >>> m.get()[0], round(m.get()[1], 6)
    ('nll-loss', 0.693147)
    """

    def __init__(self, eps: float = 1e-12, name: str = "nll-loss", **kwargs: Any) -> None:
        super().__init__(eps, name, **kwargs)


@register("pearsonr")
class PearsonCorrelation(EvalMetric):
    """Pearson's correlation of predictions and labels, both flattened.

    ``average='macro'`` (the default) averages the correlation of each label/prediction
    pair; ``'micro'`` gives the correlation of every value seen since the last ``reset``.

    Examples
    --------
    >>> m = PearsonCorrelation()
    >>> m.update([numpy.array([1.0, 2.0, 3.0])], [numpy.array([2.0, 4.0, 7.0])])
    >>> round(m.get()[1], 6)
    0.993399
    """

    def __init__(self, name: str = "pearsonr", average: str = "macro", **kwargs: Any) -> None:
        _check_average("PearsonCorrelation", average)
        self.average = average
        super().__init__(name, average=average, **kwargs)

    def reset(self) -> None:
        super().reset()
        # micro: the moments of the local period and since the last reset
        self._local, self._global = _CoMoments(), _CoMoments()

    def reset_local(self) -> None:
        super().reset_local()
        self._local = _CoMoments()

    def update(self, labels: Sequence[Any], preds: Sequence[Any]) -> None:
        labels, preds = _label_pred_lists(labels, preds)
        for label, pred in zip(labels, preds, strict=False):
            label_np, pred_np = _host(label).astype(numpy.float64), _host(pred).astype(numpy.float64)
            if label_np.size != pred_np.size:
                raise DataError(
                    f"PearsonCorrelation: label shape {label_np.shape} and prediction shape {pred_np.shape} "
                    "hold different numbers of values"
                )
            values = numpy.stack([pred_np.ravel(), label_np.ravel()])
            if self.average == "macro":
                self.sum_metric += float(numpy.atleast_2d(numpy.corrcoef(values))[0, 1])
            else:
                self._local.add(values)
                self._global.add(values)
            self.num_inst += 1

    def get(self) -> tuple[Any, Any]:
        if self.num_inst == 0 or self.average == "macro":
            return super().get()
        return self.name, self._local.correlation()

    def get_global(self) -> tuple[Any, Any]:
        if self.global_num_inst == 0 or self.average == "macro":
            return super().get_global()
        return self.name, self._global.correlation()


class _CoMoments:
    """Running count, means and centred second moments of (prediction, label) pairs."""

    def __init__(self) -> None:
        self.count = 0
        self.means = numpy.zeros(2)
        self.moments = numpy.zeros((2, 2))

    def add(self, values: numpy.ndarray) -> None:
        """Merge the (2, n) ``values``' means and centred moments into the running ones (Chan et al.)."""
        count = values.shape[1]
        if count == 0:
            return
        means = values.mean(axis=1)
        centred = values - means[:, None]
        total = self.count + count
        delta = means - self.means
        self.moments += centred @ centred.T + numpy.outer(delta, delta) * (self.count * count / total)
        self.means += delta * (count / total)
        self.count = total

    def correlation(self) -> float:
        (pred_var, covariance), (_, label_var) = self.moments
        return float(covariance / math.sqrt(pred_var * label_var))


@register()
class Perplexity(EvalMetric):
    """``exp`` of the mean negative log-probability of the labels; ``ignore_label`` examples are left out.

    ``axis`` is the class axis of the predictions.

    Examples
    --------
    >>> m = Perplexity(ignore_label=None)
    >>> m.update([numpy.array([1, 0])], [numpy.array([[0.5, 0.5], [0.5, 0.5]])])
    >>> m.get()
    ('perplexity', 2.0)
    """

    def __init__(self, ignore_label: int | None, axis: int = -1, name: str = "perplexity", **kwargs: Any) -> None:
        super().__init__(name, ignore_label=ignore_label, axis=axis, **kwargs)
        self.ignore_label = ignore_label
        self.axis = axis

    def update(self, labels: Sequence[Any], preds: Sequence[Any]) -> None:
        labels, preds = _label_pred_lists(labels, preds)
        for label, pred in zip(labels, preds, strict=False):
            pred_np = _host(pred).astype(numpy.float64)
            _check_axis("Perplexity", self.axis, pred_np)
            classes = pred_np.shape[self.axis]
            label_np = _host(label).astype(numpy.int64).ravel()
            moved = numpy.moveaxis(pred_np, self.axis, -1).reshape(-1, classes)
            if moved.shape[0] != label_np.size:
                raise DataError(
                    f"Perplexity: {label_np.size} labels for {moved.shape[0]} predictions of {classes} classes"
                )
            keep = label_np != self.ignore_label if self.ignore_label is not None else numpy.ones(label_np.size, bool)
            if label_np[keep].size and (label_np[keep].min() < 0 or label_np[keep].max() >= classes):
                raise DataError(f"Perplexity: labels must be in [0, {classes}), got {label_np.min()}..{label_np.max()}")
            prob = moved[numpy.arange(label_np.size)[keep], label_np[keep]]
            self.sum_metric += float(-numpy.log(numpy.maximum(prob, 1e-10)).sum())
            self.num_inst += int(keep.sum())

    def _value(self, total: float, count: int) -> float:
        return float("nan") if count == 0 else float(numpy.exp(total / count))


@register()
class Loss(EvalMetric):
    """The mean of the outputs themselves (a network whose outputs are its losses); labels are unused.

    Examples
    --------
    >>> m = Loss()
    >>> m.update(None, [numpy.array([1.0, 2.0, 3.0])])
    >>> m.get()
    ('loss', 2.0)
    """

    def __init__(self, name: str = "loss", **kwargs: Any) -> None:
        super().__init__(name, **kwargs)

    def update(self, labels: Sequence[Any] | None, preds: Sequence[Any]) -> None:
        for pred in _as_array_list(preds):
            values = _host(pred)
            self.sum_metric += float(values.sum())
            self.num_inst += int(values.size)


@register()
class Torch(Loss):
    """:class:`Loss` under MXNet's name for the losses of torch criterions (``'torch'``)."""

    def __init__(self, name: str = "torch", **kwargs: Any) -> None:
        super().__init__(name, **kwargs)


@register()
class Caffe(Loss):
    """:class:`Loss` under MXNet's name for the losses of caffe layers (``'caffe'``)."""

    def __init__(self, name: str = "caffe", **kwargs: Any) -> None:
        super().__init__(name, **kwargs)


@register("custom")
class CustomMetric(EvalMetric):
    """A metric from a function ``feval(label, pred) -> value or (sum, count)`` on NumPy arrays.

    Examples
    --------
    >>> import numpy as np
    >>> m = CustomMetric(lambda label, pred: float(np.abs(label - pred).max()), name="maxerr")
    >>> m.update([np.array([1.0, 2.0])], [np.array([1.5, 2.0])])
    >>> m.get()
    ('maxerr', 0.5)
    """

    def __init__(
        self, feval: Callable[..., Any], name: str | None = None, allow_extra_outputs: bool = False, **kwargs: Any
    ) -> None:
        if not callable(feval):
            raise DataError(f"CustomMetric: feval must be callable, got {type(feval).__name__}")
        if name is None:
            name = getattr(feval, "__name__", "custom")
            if "<" in name:
                name = f"custom({name})"
        super().__init__(name, **kwargs)
        self._feval = feval
        self._allow_extra_outputs = allow_extra_outputs

    def update(self, labels: Sequence[Any], preds: Sequence[Any]) -> None:
        if self._allow_extra_outputs:
            labels, preds = _as_array_list(labels), _as_array_list(preds)
        else:
            labels, preds = _label_pred_lists(labels, preds)
        for label, pred in zip(labels, preds, strict=False):
            result = self._feval(_host(label), _host(pred))
            total, count = result if isinstance(result, tuple) and len(result) == 2 else (result, 1)
            try:
                total, count = float(total), int(count)
            except (TypeError, ValueError):
                raise DataError(
                    f"CustomMetric {self.name!r}: feval returned {result!r}; expected a number or a (sum, count) pair"
                ) from None
            self.sum_metric += total
            self.num_inst += count


def np(numpy_feval: Callable[..., Any], name: str | None = None, allow_extra_outputs: bool = False) -> CustomMetric:  # noqa: A001
    """Wrap a NumPy function ``feval(label, pred)`` as a ``CustomMetric`` (MXNet's ``mx.metric.np``)."""

    def feval(label: Any, pred: Any) -> Any:
        return numpy_feval(label, pred)

    feval.__name__ = numpy_feval.__name__
    return CustomMetric(feval, name, allow_extra_outputs)


def create(metric: Any, *args: Any, **kwargs: Any) -> EvalMetric:
    """A metric from a name (``'acc'``, ``'ce'``, ...), a function, an ``EvalMetric`` or a list of those.

    Examples
    --------
    >>> create("acc").name, create(["mse", "mae"]).get()[0]
    ('accuracy', ['mse', 'mae'])
    """
    if isinstance(metric, EvalMetric):
        return metric
    if callable(metric) and not isinstance(metric, type):
        return CustomMetric(metric, *args, **kwargs)
    if isinstance(metric, (list, tuple)):
        return CompositeEvalMetric([create(m, *args, **kwargs) for m in metric])
    if isinstance(metric, str):
        cls = _REGISTRY.get(metric.lower())
        if cls is None:
            raise DataError(f"metric.create: unknown metric {metric!r}; known: {sorted(_REGISTRY)}")
        return cls(*args, **kwargs)
    raise DataError(f"metric.create: expected a name, function, EvalMetric or list, got {type(metric).__name__}")
