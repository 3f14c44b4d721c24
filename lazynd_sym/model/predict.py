"""``FeedForward``'s inference: a cached prediction executor, ``predict`` and ``score``.

:class:`InferenceMixin` is the half of ``FeedForward`` that runs a trained
network forward: it binds one executor for the input shapes (rebound only when
they change, its parameters refreshed on every use), runs batches through it,
and either gathers the outputs without padding or updates a metric.
"""

from __future__ import annotations

from collections.abc import Iterable
from itertools import chain
from typing import Any

import numpy as np

from lazynd import io as mx_io
from lazynd import metric as metric_module
from lazynd.callback import BatchEndParam
from lazynd.context import Context
from lazynd.errors import DataError

from .buckets import default_symbol
from .inputs import call_all, init_iter, metric_padding

__all__ = ["InferenceMixin"]


class InferenceMixin:
    """``predict`` and ``score`` for ``FeedForward``, which sets the attributes declared here."""

    symbol: Any
    sym_gen: Any
    ctx: list[Context]
    numpy_batch_size: int
    arg_params: dict[str, Any] | None
    aux_params: dict[str, Any] | None
    _pred_exec: Any

    def _bind(self, input_shapes: dict[str, tuple], for_training: bool) -> Any:
        inputs = list(input_shapes)
        grad_req = {n: ("null" if n in inputs or not for_training else "write") for n in self.symbol.list_arguments()}
        executor = self.symbol.simple_bind(self.ctx[0], grad_req=grad_req, **input_shapes)
        executor.copy_params_from(self.arg_params or {}, self.aux_params or {}, allow_extra_params=True)
        return executor

    @staticmethod
    def _update_metric(
        eval_metric: metric_module.EvalMetric, batch: mx_io.DataBatch, outputs: list[Any], pad: int
    ) -> None:
        rows = batch.data[0].shape[0]
        keep = rows - pad
        # the padding is left out of arrays whose first axis is the batch; an output laid out
        # otherwise (time-major rows of an unrolled RNN: steps x batch) is scored whole, as MXNet does.
        # NDArrays, as MXNet hands them to a metric (custom metrics call ``asnumpy`` on them)
        labels = [label[:keep] if label.shape[0] == rows else label for label in batch.label or []]
        preds = [out[:keep] if out.shape[0] == rows else out for out in outputs[: len(labels)]]
        eval_metric.update(labels, preds)

    def _input_names(self, data: mx_io.DataIter, with_labels: bool) -> list[str]:
        """The names ``data`` feeds: its data, and with ``with_labels`` those of its labels the
        symbol takes (fit's validation feeds them, as MXNet's does: a label may be read by more
        than the loss, e.g. by the Embedding of an NCE loss)."""
        names = [desc[0] for desc in data.provide_data]
        if with_labels:
            arguments = set(self.symbol.list_arguments())
            names += [desc[0] for desc in data.provide_label or [] if desc[0] in arguments]
        return names

    def _pred_executor(self, data: mx_io.DataIter, with_labels: bool = False) -> Any:
        names = self._input_names(data, with_labels)
        descs = list(data.provide_data) + list(data.provide_label or [])
        input_shapes = {desc[0]: tuple(desc[1]) for desc in descs if desc[0] in names}
        if self.arg_params is None:
            raise DataError("FeedForward: the model has no parameters yet; fit it or pass arg_params")
        cached = self._pred_exec
        if cached is not None and all(tuple(cached.arg_dict[n].shape) == s for n, s in input_shapes.items()):
            # parameters may have changed since (training, or the user assigning arg_params)
            cached.copy_params_from(self.arg_params, self.aux_params or {}, allow_extra_params=True)
            return cached
        self._pred_exec = self._bind(input_shapes, for_training=False)
        return self._pred_exec

    def _run(
        self,
        data: mx_io.DataIter,
        eval_metric: Any,
        num_batch: int | None,
        batch_end_callback: Any,
        epoch: int = 0,
        reset: bool = True,
        inputs: list | None = None,
        with_labels: bool = False,
    ) -> list[list[np.ndarray]]:
        if reset:
            data.reset()
        if self.symbol is None and self.sym_gen is not None:  # a sym_gen model not fitted yet
            self.symbol = default_symbol(self.sym_gen, data, "FeedForward")
        executor = self._pred_executor(data, with_labels)
        names = set(self._input_names(data, with_labels))
        outputs: list[list[np.ndarray]] = []
        for nbatch, batch in enumerate(data):
            if num_batch is not None and nbatch == num_batch:
                break
            given: Iterable[tuple[str, Any]] = zip([d[0] for d in data.provide_data], batch.data, strict=False)
            if with_labels:
                given = chain(given, zip([d[0] for d in data.provide_label or []], batch.label or [], strict=False))
            executor.forward(is_train=False, **{name: array for name, array in given if name in names})
            if eval_metric is not None:
                self._update_metric(eval_metric, batch, executor.outputs, metric_padding(data, batch))
                call_all(batch_end_callback, BatchEndParam(epoch, nbatch, eval_metric, locals()))
            else:
                keep = batch.data[0].shape[0] - (getattr(batch, "pad", None) or 0)
                outputs.append([out.asnumpy()[:keep] for out in executor.outputs])
                if inputs is not None:
                    inputs.append(
                        (
                            [d.asnumpy()[:keep] for d in batch.data],
                            [lab.asnumpy()[:keep] for lab in (batch.label or [])],
                        )
                    )
        return outputs

    def predict(self, X: Any, num_batch: int | None = None, return_data: bool = False, reset: bool = True) -> Any:
        """Outputs of the network on ``X`` (NumPy), one array per output, padding removed.

        With ``return_data=True`` (as MXNet's): ``(outputs, data, label)``, the inputs and labels
        of the batches that were run, in the same order and with the same padding removed.

        Examples
        --------
        >>> model = FeedForward.load("mnist_mlp", 3)  # doctest: +SKIP
        >>> model.predict(images).shape  # doctest: +SKIP
        (10000, 10)
        """
        data = init_iter(X, None, self.numpy_batch_size, is_train=False)
        inputs: list | None = [] if return_data else None
        batches = self._run(data, None, num_batch, None, reset=reset, inputs=inputs)
        if not batches:
            raise DataError("FeedForward.predict: the data gave no batches")

        def merge(parts: list[list[np.ndarray]]) -> np.ndarray | list[np.ndarray]:
            merged = [np.concatenate([p[k] for p in parts]) for k in range(len(parts[0]))] if parts[0] else []
            return merged[0] if len(merged) == 1 else merged

        outputs = merge(batches)
        if inputs is None:
            return outputs
        return outputs, merge([d for d, _ in inputs]), merge([lab for _, lab in inputs])

    def score(
        self,
        X: Any,
        eval_metric: Any = "acc",
        num_batch: int | None = None,
        batch_end_callback: Any = None,
        reset: bool = True,
    ) -> float:
        """The metric of the network's predictions on ``X`` (an iterator with labels)."""
        data = init_iter(X, None, self.numpy_batch_size, is_train=False)
        if not data.provide_label:
            raise DataError("FeedForward.score: the data has no labels")
        eval_metric = metric_module.create(eval_metric)
        eval_metric.reset()
        self._run(data, eval_metric, num_batch, batch_end_callback, reset=reset)
        return eval_metric.get()[1]
