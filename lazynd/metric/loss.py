"""Metrics of a loss: cross-entropy (also as negative log-likelihood), perplexity, and ``Loss``, the mean of
outputs that are losses themselves (also under MXNet's names ``Torch`` and ``Caffe``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy

from ..errors import DataError
from .base import (
    EvalMetric,
    _as_array_list,
    _batch_floats,
    _check_axis,
    _check_number,
    _classes,
    _host,
    _label_pred_lists,
    register,
)


@register("ce")
class CrossEntropy(EvalMetric):
    """Mean of ``-log(p[label] + eps)`` over examples, for probability outputs."""

    def __init__(
        self,
        eps: float = 1e-12,
        name: str = "cross-entropy",
        output_names: list[str] | None = None,
        label_names: list[str] | None = None,
    ) -> None:
        _check_number(type(self).__name__, "eps", eps)
        super().__init__(name, eps=eps, output_names=output_names, label_names=label_names)
        self.eps = eps

    def update(self, labels: Sequence[Any], preds: Sequence[Any]) -> None:
        labels, preds = _label_pred_lists(labels, preds)
        owner = type(self).__name__  # NegativeLogLikelihood's errors name it, not CrossEntropy
        for label, pred in zip(labels, preds, strict=False):
            label_np, pred_np = _classes(owner, "label", _host(label)), _batch_floats(pred)
            if pred_np.ndim != 2 or pred_np.shape[0] != label_np.size:
                raise DataError(f"{owner}: predictions must be ({label_np.size}, classes), got {pred_np.shape}")
            if label_np.size and (label_np.min() < 0 or label_np.max() >= pred_np.shape[1]):
                raise DataError(
                    f"{owner}: labels must be in [0, {pred_np.shape[1]}), got {label_np.min()}..{label_np.max()}"
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

    def __init__(
        self,
        eps: float = 1e-12,
        name: str = "nll-loss",
        output_names: list[str] | None = None,
        label_names: list[str] | None = None,
    ) -> None:
        super().__init__(eps, name, output_names=output_names, label_names=label_names)


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

    def __init__(
        self,
        ignore_label: int | None,
        axis: int = -1,
        name: str = "perplexity",
        output_names: list[str] | None = None,
        label_names: list[str] | None = None,
    ) -> None:
        # a label that is no number would silently ignore nothing
        _check_number("Perplexity", "ignore_label", ignore_label, none_allowed=True)
        super().__init__(name, ignore_label=ignore_label, axis=axis, output_names=output_names, label_names=label_names)
        self.ignore_label = ignore_label
        self.axis = axis

    def update(self, labels: Sequence[Any], preds: Sequence[Any]) -> None:
        labels, preds = _label_pred_lists(labels, preds)
        for label, pred in zip(labels, preds, strict=False):
            pred_np = _batch_floats(pred)
            _check_axis("Perplexity", self.axis, pred_np)
            classes = pred_np.shape[self.axis]
            label_np = _classes("Perplexity", "label", _host(label))
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

    def __init__(
        self,
        name: str = "loss",
        output_names: list[str] | None = None,
        label_names: list[str] | None = None,
    ) -> None:
        super().__init__(name, output_names=output_names, label_names=label_names)

    def update(self, labels: Sequence[Any] | None, preds: Sequence[Any]) -> None:
        for pred in _as_array_list(preds):
            values = _host(pred)
            self.sum_metric += float(values.sum())
            self.num_inst += int(values.size)


@register()
class Torch(Loss):
    """:class:`Loss` under MXNet's name for the losses of torch criterions (``'torch'``)."""

    def __init__(
        self,
        name: str = "torch",
        output_names: list[str] | None = None,
        label_names: list[str] | None = None,
    ) -> None:
        super().__init__(name, output_names=output_names, label_names=label_names)


@register()
class Caffe(Loss):
    """:class:`Loss` under MXNet's name for the losses of caffe layers (``'caffe'``)."""

    def __init__(
        self,
        name: str = "caffe",
        output_names: list[str] | None = None,
        label_names: list[str] | None = None,
    ) -> None:
        super().__init__(name, output_names=output_names, label_names=label_names)
