"""``PythonModule`` and ``PythonLossModule``: modules whose computation is Python code (``mx.mod``).

A :class:`PythonModule` has no parameters and no executors: it holds the names and
shapes of its inputs and outputs, and a subclass writes ``forward``/``backward``
(and how its output shapes follow from its inputs).  :class:`PythonLossModule` is
the one MXNet ships: its output is its input (the scores), and its backward is a
Python function of the scores and the labels, so a loss written in NumPy or ``nd``
ends a :class:`~lazynd_sym.module.SequentialModule`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from lazynd import initializer as init_module
from lazynd import ndarray as nd
from lazynd.errors import DataError, DataValueError, LazyNDError, NotImplementedHookError

from .base_module import BaseModule
from .inputs import as_descs

__all__ = ["PythonLossModule", "PythonModule"]


class PythonModule(BaseModule):
    """A module without parameters whose ``forward``/``backward`` a subclass writes in Python.

    Subclasses implement :meth:`forward`, :meth:`backward`, :meth:`get_outputs`,
    :meth:`get_input_grads` and :meth:`_compute_output_shapes`; binding, the (empty)
    parameters, the (absent) optimizer and the metric update are here.

    Parameters
    ----------
    data_names, label_names, output_names : sequence of str
        The module's inputs (``label_names`` may be None) and outputs.
    logger
        Where messages go (``logging`` or a logger).
    """

    def __init__(
        self,
        data_names: Sequence[str],
        label_names: Sequence[str] | None,
        output_names: Sequence[str],
        logger: Any = None,
    ) -> None:
        super().__init__(logger)
        self._data_names = list(data_names)
        self._label_names = list(label_names) if label_names is not None else None
        self._output_names = list(output_names)
        self._data_shapes: list[Any] | None = None
        self._label_shapes: list[Any] | None = None
        self._output_shapes: list[tuple[str, tuple[int, ...]]] | None = None

    # -- names and shapes ------------------------------------------------------------------------
    @property
    def data_names(self) -> list[str]:
        return self._data_names

    @property
    def output_names(self) -> list[str]:
        return self._output_names

    @property
    def data_shapes(self) -> list[Any]:
        self._require("data_shapes", params=False)
        return list(self._data_shapes or [])

    @property
    def label_shapes(self) -> list[Any] | None:
        self._require("label_shapes", params=False)
        return self._label_shapes

    @property
    def output_shapes(self) -> list[tuple[str, tuple[int, ...]]]:
        self._require("output_shapes", params=False)
        return list(self._output_shapes or [])

    def _compute_output_shapes(self) -> list[tuple[str, tuple[int, ...]]]:
        """The ``(name, shape)`` of each output, from ``self._data_shapes`` and ``self._label_shapes``."""
        raise self._abstract("_compute_output_shapes")

    # -- binding -------------------------------------------------------------------------------
    def bind(
        self,
        data_shapes: Any,
        label_shapes: Any = None,
        for_training: bool = True,
        inputs_need_grad: bool = False,
        force_rebind: bool = False,
        shared_module: Any = None,
        grad_req: Any = "write",
    ) -> None:
        """Take the input shapes (in the order of the module's names) and work out the output shapes."""
        if self.binded and not force_rebind:
            self.logger.warning("%s.bind: already bound, ignoring bind()", type(self).__name__)
            return
        if grad_req != "write":
            raise LazyNDError(f"{type(self).__name__}.bind: grad_req must be 'write', got {grad_req!r}")
        data = as_descs(data_shapes, "data_shapes")
        if [d.name for d in data] != self._data_names:
            raise DataValueError(
                f"{type(self).__name__}.bind: data_shapes name {[d.name for d in data]}, "
                f"the module's data_names are {self._data_names}"
            )
        labels = as_descs(label_shapes, "label_shapes") if label_shapes is not None else None
        if labels is not None and [d.name for d in labels] != (self._label_names or []):
            raise DataValueError(
                f"{type(self).__name__}.bind: label_shapes name {[d.name for d in labels]}, "
                f"the module's label_names are {self._label_names}"
            )
        self._data_shapes, self._label_shapes = data, labels
        self.for_training, self.inputs_need_grad = bool(for_training), bool(inputs_need_grad)
        self._output_shapes = self._compute_output_shapes()
        self.binded = True

    # -- parameters and optimizer: there are none ------------------------------------------------
    def init_params(
        self,
        initializer: Any = init_module.Uniform(0.01),
        arg_params: dict[str, Any] | None = None,
        aux_params: dict[str, Any] | None = None,
        allow_missing: bool = False,
        force_init: bool = False,
        allow_extra: bool = False,
    ) -> None:
        """Nothing to initialize; the module counts as initialized."""
        self.params_initialized = True

    def get_params(self) -> tuple[dict[str, Any], dict[str, Any]]:
        """``({}, {})``: a Python module has no parameters."""
        return {}, {}

    def set_params(
        self,
        arg_params: dict[str, Any],
        aux_params: dict[str, Any],
        allow_missing: bool = False,
        force_init: bool = True,
        allow_extra: bool = False,
    ) -> None:
        """Nothing to set (the values are meant for other modules of a chain)."""
        self.params_initialized = True

    def init_optimizer(
        self,
        kvstore: Any = "local",
        optimizer: Any = "sgd",
        optimizer_params: Any = (("learning_rate", 0.01),),
        force_init: bool = False,
    ) -> None:
        """Nothing to optimize; the module counts as having an optimizer."""
        self.optimizer_initialized = True

    def update(self) -> None:
        """Nothing to update."""

    def update_metric(self, eval_metric: Any, labels: Any, pre_sliced: bool = False) -> None:
        """Update ``eval_metric`` with the outputs against ``labels`` (nothing when bound without labels)."""
        if self._label_shapes is None:
            return
        if pre_sliced:
            raise LazyNDError(f"{type(self).__name__}.update_metric: labels sliced per device are not supported")
        eval_metric.update(labels, self.get_outputs())

    def install_monitor(self, mon: Any) -> None:
        """Nothing to watch: a Python module runs no executors."""


class PythonLossModule(PythonModule):
    """A loss written in Python: the output is the input (the scores); the gradient is ``grad_func``'s.

    Parameters
    ----------
    name : str
        The output is named ``<name>_output``.
    data_names, label_names : sequence of str
        One data input (the scores) and one label input.
    logger
        Where messages go.
    grad_func : callable
        ``grad_func(scores, labels)`` gives the gradient of the loss with respect to the scores
        (an NDArray, or anything ``nd.array`` takes), of the scores' shape.

    Examples
    --------
    >>> import lazynd as mx
    >>> loss = PythonLossModule(grad_func=lambda scores, labels: scores - labels.reshape((-1, 1)))
    >>> loss.bind([("data", (2, 1))], [("softmax_label", (2,))])
    >>> batch = mx.io.DataBatch([mx.nd.array([[0.5], [2.0]])], [mx.nd.array([1.0, 1.0])])
    >>> loss.forward(batch, is_train=True)
    >>> loss.backward()
    >>> loss.get_input_grads()[0].asnumpy().ravel().tolist()
    [-0.5, 1.0]
    """

    def __init__(
        self,
        name: str = "pyloss",
        data_names: Sequence[str] = ("data",),
        label_names: Sequence[str] = ("softmax_label",),
        logger: Any = None,
        grad_func: Callable[[Any, Any], Any] | None = None,
    ) -> None:
        super().__init__(data_names, label_names, [f"{name}_output"], logger=logger)
        if len(self._data_names) != 1 or len(self._label_names or []) != 1:
            raise DataError(
                f"PythonLossModule: takes one data and one label name, got {self._data_names} and {self._label_names}"
            )
        if grad_func is not None and not callable(grad_func):
            raise DataError(f"PythonLossModule: grad_func must be callable, got {type(grad_func).__name__}")
        self._name = name
        self._grad_func = grad_func
        self._scores: Any = None
        self._labels: Any = None
        self._scores_grad: Any = None

    def _compute_output_shapes(self) -> list[tuple[str, tuple[int, ...]]]:
        assert self._data_shapes is not None
        return [(f"{self._name}_output", tuple(self._data_shapes[0].shape))]

    def forward(self, data_batch: Any, is_train: bool | None = None) -> None:
        """Keep the scores (the batch's data) and, when training, its labels."""
        self._require("forward", params=False)
        self._scores = data_batch.data[0]
        if self.for_training if is_train is None else is_train:
            if not data_batch.label:
                raise DataError("PythonLossModule.forward: a training batch needs its labels")
            self._labels = data_batch.label[0]

    def get_outputs(self, merge_multi_context: bool = True) -> list[Any]:
        """The scores of the last forward."""
        self._require("get_outputs", params=False)
        self._one_context("get_outputs", merge_multi_context)
        return [self._scores]

    def backward(self, out_grads: Any = None) -> None:
        """The gradient of the scores, ``grad_func(scores, labels)``."""
        self._require("backward", params=False)
        if out_grads is not None:
            raise LazyNDError("PythonLossModule.backward: a loss module takes no out_grads")
        if not self.for_training:
            raise LazyNDError("PythonLossModule.backward: the module was bound with for_training=False")
        if self._grad_func is None:
            raise NotImplementedHookError("PythonLossModule.backward: give grad_func (or subclass and write backward)")
        grad = self._grad_func(self._scores, self._labels)
        if not isinstance(grad, nd.NDArray):
            grad = nd.array(np.asarray(grad), ctx=self._scores.context)
        if tuple(grad.shape) != tuple(self._scores.shape):
            raise LazyNDError(
                f"PythonLossModule.backward: grad_func gave shape {tuple(grad.shape)}, "
                f"the scores have {tuple(self._scores.shape)}"
            )
        self._scores_grad = grad

    def get_input_grads(self, merge_multi_context: bool = True) -> list[Any]:
        """The gradient of the scores from the last backward."""
        self._require("get_input_grads", params=False)
        self._one_context("get_input_grads", merge_multi_context)
        return [self._scores_grad]

    @staticmethod
    def _one_context(caller: str, merge_multi_context: bool) -> None:
        if not merge_multi_context:
            raise LazyNDError(f"PythonLossModule.{caller}: runs on one context; merge_multi_context must be True")
