"""``BaseModule``: the training and inference loops every module shares (MXNet 0.9's ``mx.mod.BaseModule``).

A module is used in stages: ``bind`` (executors for the input shapes), ``init_params``, ``init_optimizer``,
then ``forward``/``backward``/``update`` per batch.  The loops here (``fit``, ``score``, ``predict``,
``iter_predict``) use only those stages, so ``Module``, ``BucketingModule`` and ``SequentialModule`` share them.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

from lazynd import initializer as init_module
from lazynd import io as mx_io
from lazynd import metric as metric_module
from lazynd import ndarray as nd
from lazynd.base import _as_list as _as_list  # modules written by users import these three from here
from lazynd.callback import BatchEndParam
from lazynd.errors import DataError, LazyNDError, NotImplementedHookError
from lazynd.log import get_logger

from ..model import checkpoint
from ..model.inputs import array_batch, call_all, check_callbacks, check_iter, with_last
from ..model.sparse_grads import refuse_sparse_rows
from .inputs import _check_input_names as _check_input_names
from .inputs import _parse_data_desc as _parse_data_desc
from .params import check_set_params

__all__ = ["BaseModule"]


class BaseModule:
    """What every module offers; subclasses implement the stages (``bind``, ``forward``, ``update``...).

    Attributes
    ----------
    binded, for_training, inputs_need_grad, params_initialized, optimizer_initialized : bool
        Where the module stands (MXNet's spelling of ``binded`` is kept).
    """

    def __init__(self, logger: Any = None) -> None:
        self.logger = logger if logger is not None else get_logger("lazynd.sym.module")
        self.binded = False
        self.for_training = False
        self.inputs_need_grad = False
        self.params_initialized = False
        self.optimizer_initialized = False
        self._symbol: Any = None

    # -- checks ----------------------------------------------------------------------------------
    def _require(self, caller: str, *, binded: bool = True, params: bool = True, optimizer: bool = False) -> None:
        """Raise a clear error when a stage ``caller`` needs has not been done yet."""
        if binded and not self.binded:
            raise LazyNDError(f"{caller}: call bind() first")
        if params and not self.params_initialized:
            raise LazyNDError(f"{caller}: call init_params() first (or set_params / Module.load)")
        if optimizer and not self.optimizer_initialized:
            raise LazyNDError(f"{caller}: call init_optimizer() first")

    def _optimizer_kept(self, force_init: bool) -> bool:
        """Whether ``init_optimizer`` keeps the optimizer it already has (logged), as MXNet's does
        unless ``force_init``."""
        if self.optimizer_initialized and not force_init:
            self.logger.warning("%s.init_optimizer: optimizer already initialized, ignoring", type(self).__name__)
            return True
        return False

    # -- the loops -------------------------------------------------------------------------------
    def forward_backward(self, data_batch: mx_io.DataBatch) -> None:
        """``forward(data_batch, is_train=True)`` then ``backward()``."""
        self.forward(data_batch, is_train=True)
        self.backward()

    def score(
        self,
        eval_data: mx_io.DataIter,
        eval_metric: Any,
        num_batch: int | None = None,
        batch_end_callback: Any = None,
        score_end_callback: Any = None,
        reset: bool = True,
        epoch: int = 0,
        sparse_row_id_fn: Any = None,
    ) -> list[tuple[str, float]]:
        """Run ``eval_data`` forward and return the metric as ``[(name, value), ...]`` (``get_name_value()``).

        As in MXNet, padded examples of the last batch are scored too.  ``score_end_callback``
        is called once at the end with a ``BatchEndParam`` (the number of batches scored and the
        metric).

        Examples
        --------
        >>> mod.score(val_iter, "acc")  # doctest: +SKIP
        [('accuracy', 0.97)]
        """
        self._require("score")
        refuse_sparse_rows(sparse_row_id_fn, "score")
        check_iter(eval_data, "score")
        if reset:
            eval_data.reset()
        eval_metric = metric_module.create(eval_metric)
        eval_metric.reset()
        scored = 0
        for nbatch, eval_batch in enumerate(eval_data):
            if num_batch is not None and nbatch == num_batch:
                break
            self.forward(eval_batch, is_train=False)
            self.update_metric(eval_metric, eval_batch.label)
            call_all(batch_end_callback, BatchEndParam(epoch, nbatch, eval_metric, locals()))
            scored = nbatch + 1
        call_all(score_end_callback, BatchEndParam(epoch, scored, eval_metric, locals()))
        return eval_metric.get_name_value()

    def prepare(self, data_batch: mx_io.DataBatch, sparse_row_id_fn: Any = None) -> None:
        """Get ready to run ``data_batch``: nothing to do with dense parameters (MXNet pulls sparse rows here)."""
        refuse_sparse_rows(sparse_row_id_fn, "prepare")

    def iter_predict(
        self, eval_data: mx_io.DataIter, num_batch: int | None = None, reset: bool = True, sparse_row_id_fn: Any = None
    ) -> Iterator[tuple[list[Any], int, mx_io.DataBatch]]:
        """Yield ``(outputs, nbatch, batch)`` per batch, the padding cut from the outputs.

        The outputs are views of the executors' arrays: the next batch overwrites them.
        """
        self._require("iter_predict")
        refuse_sparse_rows(sparse_row_id_fn, "iter_predict")
        check_iter(eval_data, "iter_predict")
        if reset:
            eval_data.reset()
        for nbatch, eval_batch in enumerate(eval_data):
            if num_batch is not None and nbatch == num_batch:
                break
            self.forward(eval_batch, is_train=False)
            pad = eval_batch.pad or 0
            outputs = [out[0 : out.shape[0] - pad] for out in self.get_outputs()]
            yield outputs, nbatch, eval_batch

    def predict(
        self,
        eval_data: Any,
        num_batch: int | None = None,
        merge_batches: bool = True,
        reset: bool = True,
        always_output_list: bool = False,
        sparse_row_id_fn: Any = None,
    ) -> Any:
        """The outputs on ``eval_data`` (a DataIter, or one NDArray or NumPy array: then its first output) as NDArrays, padding removed.

        With ``merge_batches`` one array per output (the batches joined; a single
        output is returned bare unless ``always_output_list``), otherwise a list
        per batch of its outputs.
        """
        refuse_sparse_rows(sparse_row_id_fn, "predict")
        if (batch := array_batch(eval_data)) is not None:  # one array: the first output on it
            self._require("predict")
            self.forward(batch, is_train=False)
            return self.get_outputs()[0].copy()
        batches = [[out.copy() for out in outputs] for outputs, _, _ in self.iter_predict(eval_data, num_batch, reset)]
        if not batches:
            return []
        if not merge_batches:
            return batches
        merged = [nd.concatenate(list(outputs)) for outputs in zip(*batches, strict=True)]
        return merged[0] if len(merged) == 1 and not always_output_list else merged

    def fit(
        self,
        train_data: mx_io.DataIter,
        eval_data: mx_io.DataIter | None = None,
        eval_metric: Any = "acc",
        epoch_end_callback: Any = None,
        batch_end_callback: Any = None,
        kvstore: Any = "local",
        optimizer: Any = "sgd",
        optimizer_params: Any = (("learning_rate", 0.01),),
        eval_end_callback: Any = None,
        eval_batch_end_callback: Any = None,
        initializer: Any = None,
        arg_params: dict[str, Any] | None = None,
        aux_params: dict[str, Any] | None = None,
        allow_missing: bool = False,
        force_rebind: bool = False,
        force_init: bool = False,
        begin_epoch: int = 0,
        num_epoch: int | None = None,
        validation_metric: Any = None,
        monitor: Any = None,
        sparse_row_id_fn: Any = None,
    ) -> None:
        """Bind, initialize and train for epochs ``begin_epoch .. num_epoch - 1``, logging the metrics.

        ``initializer`` defaults to ``mx.init.Uniform(0.01)``; ``optimizer_params`` is a dict or ``(name,
        value)`` pairs (``rescale_grad`` defaults to one over the batch size).  After each epoch the aux
        states are made equal on the devices, ``epoch_end_callback(epoch, symbol, arg_params, aux_params)``
        is called and ``eval_data`` scored with ``validation_metric`` (default: ``eval_metric``).

        Examples
        --------
        >>> mod = mx.mod.Module(net)  # doctest: +SKIP
        >>> mod.fit(train_iter, eval_data=val_iter, num_epoch=2,
        ...         optimizer_params={"learning_rate": 0.1})  # doctest: +SKIP
        """
        refuse_sparse_rows(sparse_row_id_fn, "fit")
        num_epoch = checkpoint.epoch_number("fit", "num_epoch", num_epoch)
        begin_epoch = checkpoint.epoch_number("fit", "begin_epoch", begin_epoch)
        check_iter(train_data, "fit", needs=("reset", "provide_data", "provide_label"))
        if eval_data is not None:
            check_iter(eval_data, "fit (eval_data)")
        check_callbacks(
            "fit",
            epoch_end_callback=epoch_end_callback,
            batch_end_callback=batch_end_callback,
            eval_end_callback=eval_end_callback,
            eval_batch_end_callback=eval_batch_end_callback,
        )
        self.bind(
            data_shapes=train_data.provide_data,
            label_shapes=train_data.provide_label,
            for_training=True,
            force_rebind=force_rebind,
        )
        if monitor is not None:
            self.install_monitor(monitor)
        self.init_params(
            initializer=initializer if initializer is not None else init_module.Uniform(0.01),
            arg_params=arg_params,
            aux_params=aux_params,
            allow_missing=allow_missing,
            force_init=force_init,
        )
        self.init_optimizer(kvstore=kvstore, optimizer=optimizer, optimizer_params=optimizer_params)
        validation_metric = eval_metric if validation_metric is None else validation_metric
        eval_metric = metric_module.create(eval_metric)
        for epoch in range(begin_epoch, num_epoch):
            tic = time.perf_counter()
            eval_metric.reset()
            self._begin_epoch(epoch, train_data)
            epoch_values = None
            for nbatch, (data_batch, last) in enumerate(with_last(train_data)):
                if monitor is not None:
                    monitor.tic()
                self.forward_backward(data_batch)
                self.update()
                self.update_metric(eval_metric, data_batch.label)  # before the iterator gives the next batch
                if monitor is not None:
                    monitor.toc_print()
                if last():  # read before the callbacks, as MXNet reads it: a Speedometer may reset the metric
                    epoch_values = eval_metric.get_global_name_value()
                call_all(batch_end_callback, BatchEndParam(epoch, nbatch, eval_metric, locals()))
            for name, value in eval_metric.get_global_name_value() if epoch_values is None else epoch_values:
                self.logger.info("Epoch[%d] Train-%s=%f", epoch, name, value)
            self.logger.info("Epoch[%d] Time cost=%.3f", epoch, time.perf_counter() - tic)
            # BatchNorm statistics differ between devices: average them, then give every device the result
            arg_params_now, aux_params_now = self.get_params()
            self.set_params(arg_params_now, aux_params_now)
            call_all(epoch_end_callback, epoch, self.symbol, arg_params_now, aux_params_now)
            if eval_data is not None:
                for name, value in self.score(
                    eval_data,
                    validation_metric,
                    batch_end_callback=eval_batch_end_callback,
                    score_end_callback=eval_end_callback,
                    epoch=epoch,
                ):
                    self.logger.info("Epoch[%d] Validation-%s=%f", epoch, name, value)
            self._end_epoch(epoch, train_data)

    def _begin_epoch(self, epoch: int, train_data: mx_io.DataIter) -> None:
        """What ``fit`` does before training epoch ``epoch``: nothing here (SVRGModule takes its snapshot)."""

    def _end_epoch(self, epoch: int, train_data: mx_io.DataIter) -> None:
        """What ``fit`` does after epoch ``epoch``: reset ``train_data`` (a shuffling iterator draws its
        next order here, so where the resets fall decides which orders a seeded run sees)."""
        train_data.reset()

    # -- parameters on disk ----------------------------------------------------------------------
    def save_params(self, fname: str) -> None:
        """Write the parameters to ``fname`` as MXNet does (``nd.save`` with ``arg:``/``aux:`` keys)."""
        checkpoint.save_params(fname, *self.get_params())

    def load_params(self, fname: str) -> None:
        """Set the parameters from a file written by :meth:`save_params` (or MXNet's ``.params``)."""
        arg_params, aux_params = checkpoint.load_params(fname, strict=True)
        self.set_params(arg_params, aux_params)

    # -- the stages (subclasses) -----------------------------------------------------------------
    @property
    def symbol(self) -> Any:
        """The symbol this module runs."""
        return self._symbol

    def _abstract(self, what: str) -> NotImplementedHookError:
        return NotImplementedHookError(f"{type(self).__name__} does not implement {what}")

    @property
    def data_names(self) -> list[str]:
        raise self._abstract("data_names")

    @property
    def output_names(self) -> list[str]:
        raise self._abstract("output_names")

    @property
    def data_shapes(self) -> list[Any]:
        raise self._abstract("data_shapes")

    @property
    def label_shapes(self) -> list[Any] | None:
        raise self._abstract("label_shapes")

    @property
    def output_shapes(self) -> list[tuple[str, tuple[int, ...]]]:
        raise self._abstract("output_shapes")

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
        raise self._abstract("bind")

    def init_params(
        self,
        initializer: Any = None,
        arg_params: Any = None,
        aux_params: Any = None,
        allow_missing: bool = False,
        force_init: bool = False,
        allow_extra: bool = False,
    ) -> None:
        raise self._abstract("init_params")

    def init_optimizer(
        self,
        kvstore: Any = "local",
        optimizer: Any = "sgd",
        optimizer_params: Any = (("learning_rate", 0.01),),
        force_init: bool = False,
    ) -> None:
        raise self._abstract("init_optimizer")

    def get_params(self) -> tuple[dict[str, Any], dict[str, Any]]:
        raise self._abstract("get_params")

    def set_params(
        self,
        arg_params: dict[str, Any],
        aux_params: dict[str, Any],
        allow_missing: bool = False,
        force_init: bool = True,
        allow_extra: bool = False,
    ) -> None:
        """Copy ``arg_params``/``aux_params`` into the module: :meth:`init_params` with them.

        As in MXNet, a name the module does not have is a ``ParameterError`` (a ``ValueError``)
        when ``allow_missing`` is set and ``allow_extra`` is not; otherwise it is ignored.
        """
        allow_missing, force_init = check_set_params(
            self.symbol, arg_params, aux_params, allow_missing, force_init, allow_extra
        )
        self.init_params(None, arg_params, aux_params, allow_missing=allow_missing, force_init=force_init)

    def get_states(self, merge_multi_context: bool = True) -> list[Any]:
        """The state inputs; a module without any has none."""
        self._require("get_states")
        return []

    def set_states(self, states: Any = None, value: float | None = None) -> None:
        """Set the state inputs; a module without any takes neither ``states`` nor ``value``."""
        self._require("set_states")
        if states or value is not None:
            raise DataError(f"set_states: {type(self).__name__} has no state inputs")

    def forward(self, data_batch: mx_io.DataBatch, is_train: bool | None = None) -> None:
        raise self._abstract("forward")

    def backward(self, out_grads: Any = None) -> None:
        raise self._abstract("backward")

    def update(self) -> None:
        raise self._abstract("update")

    def update_metric(self, eval_metric: Any, labels: Any, pre_sliced: bool = False) -> None:
        raise self._abstract("update_metric")

    def get_outputs(self, merge_multi_context: bool = True) -> list[Any]:
        raise self._abstract("get_outputs")

    def get_input_grads(self, merge_multi_context: bool = True) -> list[Any]:
        raise self._abstract("get_input_grads")

    def install_monitor(self, mon: Any) -> None:
        raise self._abstract("install_monitor")
