"""The metric base class and its helpers: ``EvalMetric``, the registry that ``create`` reads, and the
checks every metric applies to its labels and predictions.

Labels and predictions arrive as lists of NDArrays (or NumPy arrays); the
scores are computed on the host and summed over an epoch in float64 so that the
sums do not drift.  A batch's own cross-entropy, perplexity and regression errors
are computed in the arrays' float precision (:func:`_batch_floats`), as MXNet's
are, so that a float32 model's logged values are MXNet's to the last digit.
"""

from __future__ import annotations

import dis
import numbers
from collections.abc import Mapping, Sequence
from types import CodeType
from typing import Any, ClassVar

import numpy

from ..arguments import is_choice
from ..class_registry import make_register
from ..errors import DataError, LabelShapeError
from ..ops.label_classes import shown

_REGISTRY: dict[str, type[EvalMetric]] = {}


register = make_register(_REGISTRY)
"""Register a metric class under its lower-case class name and aliases for ``create``:
``@register``, ``@register("alias")`` or MXNet's ``register(klass, name=None)``."""


def _batch_floats(value: Any) -> numpy.ndarray:
    """A label or prediction on the host in its own float precision, in which MXNet 1.9.1 computes a
    batch's cross-entropy, perplexity and regression errors (float32 for float32 outputs; float16 is widened to
    float32, which loses no value and keeps a batch's sum finite, and integers to float64)."""
    array = _host(value)
    if array.dtype.kind != "f":
        return array.astype(numpy.float64)
    return array.astype(numpy.float32) if array.dtype == numpy.float16 else array


def _classes(owner: str, what: str, values: numpy.ndarray) -> numpy.ndarray:
    """Host ``values`` (labels, or predicted classes read back) as flat int64 classes.

    Float values are checked as given, before the conversion: converting NaN, an infinity or a float
    beyond int64 is undefined (x86 gives -2**63, aarch64 0, i.e. class 0, counted right or wrong by
    the machine).  Their minimum and maximum are compared with int64's range, which NaN fails (it
    propagates through both): two reductions, no pass of its own.  MXNet takes such a value as
    garbage; lazynd refuses it by name.
    """
    flat = values.reshape(-1)
    if flat.dtype.kind == "f" and flat.size:
        if not (numpy.minimum.reduce(flat) >= -(2.0**63) and numpy.maximum.reduce(flat) < 2.0**63):
            bad = flat[~((flat >= -(2.0**63)) & (flat < 2.0**63))][0]
            raise DataError(f"{owner}: {what} {shown(bad)} is not a class (expected a whole number in int64's range)")
    return flat.astype(numpy.int64, copy=False)


def _host(value: Any) -> numpy.ndarray:
    """A label or prediction as a NumPy array: an NDArray's data, or NumPy's reading of anything else,
    which must be numbers (``None``, a string or a dict among the predictions gave a NaN or an error
    from deep inside a metric)."""
    if hasattr(value, "asnumpy"):
        return value.asnumpy()
    try:
        array = numpy.asarray(value)
    except ValueError:  # a ragged list
        array = None
    if array is None or array.dtype.kind not in "biuf":
        raise DataError(f"metric: expected an array of numbers (an NDArray or a NumPy array), got {value!r:.80}")
    return array


def _as_array_list(values: Any) -> list[Any]:
    """``values`` as a list of arrays: a single NDArray or NumPy array is a list of one, as MXNet takes it."""
    if _is_array(values):
        return [values]
    if values is None or isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
        raise DataError(f"metric: expected an array or a list of arrays, got {type(values).__name__}")
    return list(values)


def _is_int(value: object) -> bool:
    """Whether ``value`` is an int (Python's or NumPy's, not a bool)."""
    # a class check first: isinstance against the ABC costs 0.3 us, on every update of a metric
    return value.__class__ is int or (isinstance(value, numbers.Integral) and not isinstance(value, bool))


def _check_number(metric: str, name: str, value: object, none_allowed: bool = False) -> None:
    """Refuse, by name, an argument that is not a real number (or None where ``none_allowed``)."""
    if (value is None and none_allowed) or (isinstance(value, numbers.Real) and not isinstance(value, bool)):
        return
    expected = "a number or None" if none_allowed else "a number"
    raise DataError(f"{metric}: {name} must be {expected}, got {value!r}")


def _check_axis(metric: str, axis: int, array: numpy.ndarray) -> None:
    """Refuse, by name, a class ``axis`` that is no int, that the predictions do not have, or along
    which they have no classes to choose from (NumPy's argmax of nothing raised from inside)."""
    if not _is_int(axis):
        raise DataError(f"{metric}: axis must be an int, got {axis!r}")
    if not -array.ndim <= axis < array.ndim:
        raise DataError(f"{metric}: axis {axis} is out of range for predictions of shape {array.shape}")
    if array.shape[axis] == 0:
        raise DataError(f"{metric}: predictions of shape {array.shape} have no classes along axis {axis}")


def _is_array(value: Any) -> bool:
    return hasattr(value, "asnumpy") or isinstance(value, numpy.ndarray)


def check_label_shapes(labels: Any, preds: Any, wrap: bool = False, shape: bool = False) -> tuple[Any, Any]:
    """Check that ``labels`` and ``preds`` agree, as MXNet's helper of the same name (for custom metrics).

    Without ``shape`` their lengths must agree (lists of arrays: as many labels as predictions;
    arrays: as many rows); with ``shape`` their shapes must (two arrays).  With ``wrap`` an array
    (NDArray or NumPy) comes back as a list of one, so that ``for label, pred in zip(labels, preds)``
    walks arrays either way; without it both come back as given.  A disagreement raises
    ``LabelShapeError`` (a ``ValueError``, as MXNet's); anything else, ``DataError``.

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
            raise LabelShapeError(f"metric: label shape {label_shape} differs from prediction shape {pred_shape}")
    elif len(labels) != len(preds):
        raise LabelShapeError(f"metric: {len(labels)} labels but {len(preds)} predictions")
    if wrap:
        labels = [labels] if _is_array(labels) else labels
        preds = [preds] if _is_array(preds) else preds
    return labels, preds


def _label_pred_lists(labels: Any, preds: Any) -> tuple[list[Any], list[Any]]:
    """``labels`` and ``preds`` as lists of arrays (a single array is a list of one), as many of each."""
    labels, preds = _as_array_list(labels), _as_array_list(preds)
    if len(labels) != len(preds):
        raise LabelShapeError(f"metric: {len(labels)} label arrays but {len(preds)} prediction arrays")
    return labels, preds


class EvalMetric:
    """Base class: ``update`` adds a batch, ``get`` gives ``(name, value)``.

    Subclasses add to ``sum_metric`` and ``num_inst``; the value is their
    ratio (NaN before any update).  As in MXNet 1.x, ``reset_local`` starts a
    new local period (what ``get`` reports) while ``get_global`` goes on
    reporting everything since the last ``reset`` -- for a metric with global
    statistics: lazynd's metrics and their subclasses have them, and a class a
    user derives from ``EvalMetric`` itself has them only when it passes
    ``has_global_stats=True`` (MXNet 1.9.1's rule; otherwise its global value
    is its local one, which is what a training loop logs as the epoch's value).

    A subclass written for MXNet 1.x that keeps ``global_sum_metric`` and ``global_num_inst``
    itself (``self.global_sum_metric += ...`` in its ``update``, as MXNet's own metrics do) sets
    them as plain values: :meth:`reset` zeroes them, :meth:`reset_local` leaves them, and its
    global value is their ratio (when it has global statistics).
    """

    #: Whether the class's own methods assign ``global_sum_metric``/``global_num_inst`` (found in
    #: their bytecode when the class is made): then :meth:`reset` zeroes the values they set
    _keeps_own_global_sums: ClassVar[bool] = False

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if any(_assigns_global_sums(getattr(value, "__code__", None)) for value in vars(cls).values()):
            cls._keeps_own_global_sums = True

    def __init__(
        self, name: str, output_names: list[str] | None = None, label_names: list[str] | None = None, **kwargs: Any
    ) -> None:
        self.name = str(name)
        self.output_names = output_names
        self.label_names = label_names
        self._has_global_stats = bool(kwargs.pop("has_global_stats", _derives_from_a_builtin(type(self))))
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
        for key in _GIVEN_GLOBAL_SUMS:
            self.__dict__.pop(key, None)
        if self._keeps_own_global_sums:
            self.global_sum_metric = 0.0
            self.global_num_inst = 0

    def _keeps_global_sums(self) -> bool:
        """Whether :meth:`reset` set up the sums of earlier local periods.

        A subclass written for MXNet may override ``reset`` without calling this class's; it keeps
        only local sums (perhaps lists, one per task), and, as in MXNet, its global value is its
        local one.
        """
        return getattr(self, "_has_global_stats", False) and hasattr(self, "_earlier_sum_metric")

    def reset_local(self) -> None:
        """Start a new local period; the global value keeps what was seen since :meth:`reset`."""
        if self._keeps_global_sums():
            self._earlier_sum_metric += self.sum_metric
            self._earlier_num_inst += self.num_inst
        self.num_inst = 0
        self.sum_metric = 0.0

    def _reports_global_sums(self) -> bool:
        """Whether :meth:`get_global` reports global sums rather than :meth:`get`'s local value: the
        sums a subclass sets itself where it has global statistics, else those kept by :meth:`reset`."""
        if any(key in self.__dict__ for key in _GIVEN_GLOBAL_SUMS):
            return bool(getattr(self, "_has_global_stats", False))
        return self._keeps_global_sums()

    @property
    def global_sum_metric(self) -> Any:
        """The sum over every update since :meth:`reset` (the value set, for a subclass that sets it)."""
        if "_given_global_sum_metric" in self.__dict__:
            return self.__dict__["_given_global_sum_metric"]
        return self._earlier_sum_metric + self.sum_metric if self._keeps_global_sums() else self.sum_metric

    @global_sum_metric.setter
    def global_sum_metric(self, value: Any) -> None:
        self.__dict__["_given_global_sum_metric"] = value

    @property
    def global_num_inst(self) -> Any:
        """The instances counted since :meth:`reset` (the value set, for a subclass that sets it)."""
        if "_given_global_num_inst" in self.__dict__:
            return self.__dict__["_given_global_num_inst"]
        return self._earlier_num_inst + self.num_inst if self._keeps_global_sums() else self.num_inst

    @global_num_inst.setter
    def global_num_inst(self, value: Any) -> None:
        self.__dict__["_given_global_num_inst"] = value

    def _value(self, total: float, count: int) -> float:
        """The metric's value from a sum and a count (NaN without any instance)."""
        return float("nan") if count == 0 else total / count

    def get(self) -> tuple[Any, Any]:
        return self.name, self._value(self.sum_metric, self.num_inst)

    def get_global(self) -> tuple[Any, Any]:
        """``(name, value)`` over every update since the last :meth:`reset` (:meth:`get` for a
        subclass that keeps only local sums)."""
        if not self._reports_global_sums():
            return self.get()
        return self.name, self._value(self.global_sum_metric, self.global_num_inst)

    def get_name_value(self) -> list[tuple[str, float]]:
        return _pairs(*self.get())

    def get_global_name_value(self) -> list[tuple[str, float]]:
        """:meth:`get_global` as a list of ``(name, value)`` pairs (:meth:`get_name_value` for a
        subclass that keeps only local sums, so that its own ``get_name_value`` is used)."""
        if not self._reports_global_sums():
            return self.get_name_value()
        return _pairs(*self.get_global())


_GIVEN_GLOBAL_SUMS = ("_given_global_sum_metric", "_given_global_num_inst")


def _assigns_global_sums(code: CodeType | None) -> bool:
    """Whether ``code`` (or a function or comprehension inside it) assigns ``global_sum_metric`` or
    ``global_num_inst`` to an attribute."""
    if code is None:
        return False
    for instruction in dis.get_instructions(code):
        if instruction.opname == "STORE_ATTR" and instruction.argval in ("global_sum_metric", "global_num_inst"):
            return True
    return any(isinstance(const, CodeType) and _assigns_global_sums(const) for const in code.co_consts)


def _derives_from_a_builtin(cls: type) -> bool:
    """Whether ``cls`` is one of lazynd's metrics or derives from one (other than :class:`EvalMetric`):
    MXNet's own metrics ask for global statistics, and so their subclasses have them."""
    return any(
        klass is not EvalMetric and klass.__module__.startswith("lazynd.metric")
        for klass in cls.__mro__
        if issubclass(klass, EvalMetric)
    )


def _pick(arrays: dict[str, Any], names: list[str] | None, which: str, metric: str) -> list[Any]:
    """The arrays of ``names`` in ``arrays`` (all of them, in order, when ``names`` is None)."""
    if not isinstance(arrays, Mapping):
        what = "labels" if which == "label_names" else "predictions"
        raise DataError(f"metric {metric!r}: update_dict takes the {what} as a dict name -> array, got {arrays!r:.60}")
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


def _check_average(metric: str, average: str) -> None:
    if not is_choice(average, ("macro", "micro")):
        raise DataError(f"{metric}: average must be 'macro' or 'micro', got {average!r}")
