"""Regression metrics: mean squared, absolute and root mean squared errors, and Pearson's correlation."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy

from ..errors import DataError
from .base import EvalMetric, _batch_floats, _check_average, _host, _label_pred_lists, register


class _Regression(EvalMetric):
    def _errors(self, labels: Sequence[Any], preds: Sequence[Any]) -> Any:
        labels, preds = _label_pred_lists(labels, preds)
        for label, pred in zip(labels, preds, strict=False):
            label_np, pred_np = _batch_floats(label), _batch_floats(pred)
            if label_np.size == 0 and pred_np.size == 0:
                continue  # an empty batch has no error to average (its mean, NaN, made the epoch's NaN)
            # as MXNet: a 1-D label or prediction is a column, broadcast against the other
            # (labels (N,) against predictions (N, C) compare each row's label with its C values)
            if label_np.ndim == 1:
                label_np = label_np[:, None]
            if pred_np.ndim == 1:
                pred_np = pred_np[:, None]
            try:
                if 0 in numpy.broadcast_shapes(label_np.shape, pred_np.shape):
                    raise ValueError("labels or predictions without values")
            except ValueError:
                raise DataError(
                    f"{type(self).__name__}: label shape {_host(label).shape} does not match prediction shape "
                    f"{_host(pred).shape} (nor broadcast against it)"
                ) from None
            yield label_np - pred_np


@register()
class MSE(_Regression):
    """Mean squared error, averaged over batches."""

    def __init__(
        self,
        name: str = "mse",
        output_names: list[str] | None = None,
        label_names: list[str] | None = None,
    ) -> None:
        super().__init__(name, output_names=output_names, label_names=label_names)

    def update(self, labels: Sequence[Any], preds: Sequence[Any]) -> None:
        for diff in self._errors(labels, preds):
            self.sum_metric += float((diff**2).mean())
            self.num_inst += 1


@register()
class MAE(_Regression):
    """Mean absolute error, averaged over batches."""

    def __init__(
        self,
        name: str = "mae",
        output_names: list[str] | None = None,
        label_names: list[str] | None = None,
    ) -> None:
        super().__init__(name, output_names=output_names, label_names=label_names)

    def update(self, labels: Sequence[Any], preds: Sequence[Any]) -> None:
        for diff in self._errors(labels, preds):
            self.sum_metric += float(numpy.abs(diff).mean())
            self.num_inst += 1


@register()
class RMSE(_Regression):
    """Root mean squared error, averaged over batches."""

    def __init__(
        self,
        name: str = "rmse",
        output_names: list[str] | None = None,
        label_names: list[str] | None = None,
    ) -> None:
        super().__init__(name, output_names=output_names, label_names=label_names)

    def update(self, labels: Sequence[Any], preds: Sequence[Any]) -> None:
        for diff in self._errors(labels, preds):
            self.sum_metric += float(numpy.sqrt((diff**2).mean()))
            self.num_inst += 1


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

    def __init__(
        self,
        name: str = "pearsonr",
        output_names: list[str] | None = None,
        label_names: list[str] | None = None,
        average: str = "macro",
    ) -> None:
        _check_average("PearsonCorrelation", average)
        self.average = average
        super().__init__(name, average=average, output_names=output_names, label_names=label_names)

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
            if label_np.size == 0:
                continue  # an empty batch has no correlation (NumPy's NaN made the macro average NaN)
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
