"""Metrics made of other metrics or of a function (``CompositeEvalMetric``, ``CustomMetric``, ``np``), and
``create``, which makes any metric from a name, a function, an ``EvalMetric`` or a list of those."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ..class_registry import check_arguments, is_config, parse_config
from ..errors import DataError
from .base import _REGISTRY, EvalMetric, _as_array_list, _host, _is_int, _label_pred_lists, _pairs, register


@register("composite")
class CompositeEvalMetric(EvalMetric):
    """Several metrics updated together; ``get`` returns lists of names and values.

    Examples
    --------
    >>> import numpy as np
    >>> from lazynd.metric import Accuracy, CrossEntropy
    >>> m = CompositeEvalMetric([Accuracy(), CrossEntropy()])
    >>> m.update([np.array([1, 0])], [np.array([[0.2, 0.8], [0.6, 0.4]])])
    >>> m.get()[0]
    ['accuracy', 'cross-entropy']
    """

    def __init__(
        self,
        metrics: list[Any] | None = None,
        name: str = "composite",
        output_names: list[str] | None = None,
        label_names: list[str] | None = None,
    ) -> None:
        super().__init__(name, output_names=output_names, label_names=label_names)
        self.metrics = [create(m) for m in (metrics or [])]

    def add(self, metric: Any) -> None:
        self.metrics.append(create(metric))

    def get_config(self) -> dict[str, Any]:
        """The base config plus ``metrics``: each metric's own config, as MXNet's."""
        config = super().get_config()
        config["metrics"] = [metric.get_config() for metric in self.metrics]
        return config

    def get_metric(self, index: int) -> EvalMetric:
        if not _is_int(index) or not 0 <= index < len(self.metrics):
            raise DataError(f"CompositeEvalMetric: index {index} out of range for {len(self.metrics)} metrics")
        return self.metrics[index]

    def update(self, labels: Sequence[Any], preds: Sequence[Any]) -> None:
        for metric in self.metrics:
            metric.update(labels, preds)

    def update_dict(self, labels: dict[str, Any], preds: dict[str, Any]) -> None:
        """Keep the arrays this metric's ``label_names``/``output_names`` name (all when None), then
        let each metric pick its own from them, as MXNet does (whose parameters here are ``labels``
        and ``preds``, where the base class's are ``label`` and ``pred``)."""
        if self.label_names is not None:
            labels = {name: array for name, array in labels.items() if name in self.label_names}
        if self.output_names is not None:
            preds = {name: array for name, array in preds.items() if name in self.output_names}
        for metric in self.metrics:
            metric.update_dict(labels, preds)

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

    def get_global_name_value(self) -> list[tuple[str, float]]:
        """Each member's value since the last :meth:`reset`: the members keep the global sums, not
        the composite (the base class would take it for a metric with local sums only)."""
        return _pairs(*self.get_global())

    @staticmethod
    def _joined(results: list[tuple[Any, Any]]) -> tuple[list[str], list[float]]:
        names: list[str] = []
        values: list[float] = []
        for name, value in results:
            names.extend(name if isinstance(name, list) else [name])
            values.extend(value if isinstance(value, list) else [value])
        return names, values


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
        self,
        feval: Callable[..., Any],
        name: str | None = None,
        allow_extra_outputs: bool = False,
        output_names: list[str] | None = None,
        label_names: list[str] | None = None,
    ) -> None:
        if not callable(feval):
            raise DataError(f"CustomMetric: feval must be callable, got {type(feval).__name__}")
        if name is None:
            name = getattr(feval, "__name__", "custom")
            if "<" in name:
                name = f"custom({name})"
        super().__init__(name, output_names=output_names, label_names=label_names)
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
                total, count = float(_one_number(total)), int(_one_number(count))
            except (TypeError, ValueError):
                raise DataError(
                    f"CustomMetric {self.name!r}: feval returned {result!r}; expected a number or a (sum, count) pair"
                ) from None
            self.sum_metric += total
            self.num_inst += count


def _one_number(value: Any) -> Any:
    """A one-element array as its number: fevals that sum over NumPy rows return ``array([x])``,
    which MXNet accepts (its value then prints as an array) and NumPy 2 no longer turns into a float."""
    if getattr(value, "size", None) == 1 and callable(getattr(value, "item", None)):
        return value.item()
    return value


def np(numpy_feval: Callable[..., Any], name: str | None = None, allow_extra_outputs: bool = False) -> CustomMetric:  # noqa: A001
    """Wrap a NumPy function ``feval(label, pred)`` as a ``CustomMetric`` (MXNet's ``mx.metric.np``)."""

    if not callable(numpy_feval):
        raise DataError(f"metric.np: numpy_feval must be a function of (label, pred), got {type(numpy_feval).__name__}")

    def feval(label: Any, pred: Any) -> Any:
        return numpy_feval(label, pred)

    feval.__name__ = numpy_feval.__name__
    return CustomMetric(feval, name, allow_extra_outputs)


def create(metric: Any, *args: Any, **kwargs: Any) -> EvalMetric:
    """A metric from a name (``'acc'``, ``'ce'``, ...), a function, an ``EvalMetric``, a list of those, or
    a config: what ``get_config()`` returns, as a dict or a JSON string, as MXNet's ``create`` takes.

    Examples
    --------
    >>> create("acc").name, create(["mse", "mae"]).get()[0]
    ('accuracy', ['mse', 'mae'])
    >>> create('{"metric": "Accuracy", "axis": 0, "name": "acc0"}').name
    'acc0'
    """
    if isinstance(metric, EvalMetric):
        return metric
    if is_config(metric):
        name, config = parse_config(metric, "metric", "metric.create")
        return create(name, *args, **{**config, **kwargs})
    if callable(metric) and not isinstance(metric, type):
        return CustomMetric(metric, *args, **kwargs)
    if isinstance(metric, (list, tuple)):
        return CompositeEvalMetric([create(m, *args, **kwargs) for m in metric])
    if isinstance(metric, str):
        cls = _REGISTRY.get(metric.lower())
        if cls is None:
            raise DataError(f"metric.create: unknown metric {metric!r}; known: {sorted(_REGISTRY)}")
        check_arguments("metric.create", metric, cls, args, kwargs)
        return cls(*args, **kwargs)
    raise DataError(f"metric.create: expected a name, function, EvalMetric or list, got {type(metric).__name__}")
