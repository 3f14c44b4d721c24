"""``FeedForward``: train a symbol on one or several devices, MXNet 0.9 style (``mx.model``).

``fit`` splits each batch across the devices, sums the gradients through a
kvstore and runs the optimizer on the store or on every device; ``predict``
and ``score`` come from :mod:`lazynd_sym.model.predict`.  Checkpoints
(``save_checkpoint``, ``load_checkpoint``) live in :mod:`lazynd_sym.model.checkpoint`.
"""

from __future__ import annotations

import copy
import logging
import time
from collections.abc import Callable, Sequence
from typing import Any

from lazynd import initializer as init_module
from lazynd import io as mx_io
from lazynd import metric as metric_module
from lazynd import ndarray as nd
from lazynd import optimizer as opt_module
from lazynd.callback import BatchEndParam, EpochProgress
from lazynd.errors import DataError, LazyNDError
from lazynd.log import get_logger

from ..executor_group import DataParallelExecutorGroup
from ..symbol import Symbol
from .buckets import BucketGroups, default_symbol
from .checkpoint import epoch_number, load_checkpoint, save_checkpoint
from .inputs import (
    call_all,
    callback_list,
    check_callbacks,
    context_list,
    init_eval_iter,
    init_iter,
    metric_padding,
    num_batches,
)
from .kvstore_setup import (
    calls_per_key,
    create_kvstore,
    create_optimizer,
    initialize_kvstore,
    is_dist_sync,
    name_indices,
    push_pull,
)
from .predict import InferenceMixin
from .sparse_grads import warn_dense_row_sparse

__all__ = ["FeedForward"]


class FeedForward(InferenceMixin):
    """Train and run a symbol, MXNet-0.9 style.

    Parameters
    ----------
    symbol : Symbol
        The network, ending in a loss such as ``SoftmaxOutput``.
    ctx : Context, optional
    num_epoch : int
    optimizer : str or Optimizer
        A name is created with ``**kwargs`` and ``rescale_grad=1/batch_size``.
    initializer : Initializer
    numpy_batch_size : int
        Batch size when ``fit``/``predict`` are given arrays instead of iterators.
    arg_params, aux_params : dict, optional
        Starting parameters (e.g. from ``load_checkpoint``); the rest are initialized.
    begin_epoch : int
    progress_bar : bool
        A tqdm bar per epoch (only shown on a terminal).
    """

    def __init__(
        self,
        symbol: Any,
        ctx: Any = None,
        num_epoch: int | None = None,
        epoch_size: int | None = None,
        optimizer: Any = "sgd",
        initializer: init_module.Initializer | None = None,
        numpy_batch_size: int = 128,
        arg_params: dict[str, Any] | None = None,
        aux_params: dict[str, Any] | None = None,
        allow_extra_params: bool = False,
        begin_epoch: int = 0,
        progress_bar: bool = True,
        **kwargs: Any,
    ) -> None:
        # a sym_gen (a function of the bucket key, as MXNet's bucketing examples pass) gives the
        # symbol at fit or predict, from the iterator's default_bucket_key (see .buckets)
        self.sym_gen: Callable[[Any], Any] | None = None
        if not isinstance(symbol, Symbol):
            if not callable(symbol):
                raise LazyNDError(
                    f"FeedForward: symbol must be a Symbol or a function of a bucket key, got {type(symbol).__name__}"
                )
            self.sym_gen, symbol = symbol, None
        self.symbol: Any = symbol
        self.ctx = context_list(ctx)
        self.num_epoch = num_epoch
        self.epoch_size = epoch_size
        self.optimizer = optimizer
        self.initializer = initializer if initializer is not None else init_module.Uniform(0.01)
        self.numpy_batch_size = numpy_batch_size
        self.arg_params = dict(arg_params) if arg_params else None
        self.aux_params = dict(aux_params) if aux_params else None
        self.allow_extra_params = allow_extra_params
        self.begin_epoch = begin_epoch
        self.progress_bar = progress_bar
        self.kwargs = kwargs
        self._pred_exec: Any = None

    # -- parameters ------------------------------------------------------------------------------

    def __getstate__(self) -> dict[str, Any]:
        """What pickles: everything but the prediction executor (rebuilt on the next predict)."""
        state = dict(self.__dict__)
        state["_pred_exec"] = None
        return state

    def _param_names(self, input_names: Sequence[str]) -> list[str]:
        return [n for n in self.symbol.list_arguments() if n not in input_names]

    def _init_params(self, input_shapes: dict[str, tuple]) -> tuple[list[str], list[str]]:
        arg_shapes, _, aux_shapes = self.symbol.infer_shape(**input_shapes)
        if arg_shapes is None:
            raise DataError(f"FeedForward: cannot infer parameter shapes from inputs {input_shapes}")
        arg_names, aux_names = self.symbol.list_arguments(), self.symbol.list_auxiliary_states()
        param_names = self._param_names(list(input_shapes))
        attrs = self.symbol.attr_dict()
        given_args, given_aux = self.arg_params or {}, self.aux_params or {}
        if not self.allow_extra_params:
            extra = sorted(set(given_args) - set(param_names)) + sorted(set(given_aux) - set(aux_names))
            if extra:
                raise DataError(f"FeedForward: parameters {extra} are not in the symbol (pass allow_extra_params=True)")
        shapes = dict(zip(arg_names, arg_shapes, strict=False))
        arg_params: dict[str, Any] = {}
        aux_params: dict[str, Any] = {}
        for table, names, source, out in (
            (shapes, param_names, given_args, arg_params),
            (dict(zip(aux_names, aux_shapes, strict=False)), aux_names, given_aux, aux_params),
        ):
            for name in names:
                arr = nd.zeros(table[name])
                if name in source:
                    if tuple(source[name].shape) != tuple(table[name]):
                        raise DataError(
                            f"FeedForward: {name!r} has shape {tuple(source[name].shape)}, the symbol needs {table[name]}"
                        )
                    source[name].copyto(arr)
                else:
                    self.initializer(init_module.InitDesc(name, attrs.get(name, {})), arr)
                out[name] = arr
        self.arg_params, self.aux_params = arg_params, aux_params
        return param_names, aux_names

    def _create_optimizer(self, batch_size: int, param_names: list[str], copies: int) -> Any:
        """The optimizer; ``copies`` updater indices per parameter (one per device when each updates its own)."""
        if isinstance(self.optimizer, str):
            optimizer = create_optimizer(self.optimizer, self.kwargs, self.symbol, param_names, copies, batch_size)
        elif isinstance(self.optimizer, opt_module.Optimizer):
            optimizer = name_indices(self.optimizer, param_names, copies)
        else:
            return self.optimizer
        warn_dense_row_sparse(self.symbol, optimizer, "FeedForward.fit")
        return optimizer

    # -- training --------------------------------------------------------------------------------
    def fit(
        self,
        X: Any,
        y: Any = None,
        eval_data: Any = None,
        eval_metric: Any = "acc",
        epoch_end_callback: Any = None,
        batch_end_callback: Any = None,
        kvstore: Any = "local",
        logger: logging.Logger | None = None,
        work_load_list: Sequence[float] | None = None,
        monitor: Any = None,
        eval_end_callback: Any = None,
        eval_batch_end_callback: Any = None,
    ) -> FeedForward:
        """Train for ``num_epoch`` epochs, logging the training (and validation) metric each epoch.

        After each validation ``eval_end_callback`` is called with a ``BatchEndParam`` (the
        epoch, the number of batches scored and the metric), as MXNet 1.x calls it.

        With several contexts each batch is split across them along its batch
        axis (in proportion to ``work_load_list``), one executor per device,
        and the gradients are summed through ``kvstore`` (a store or its name:
        ``'local'``, ``'device'``, ``'dist_sync'``...).  One device needs no
        store unless it is distributed; with ``kvstore=None`` several devices
        each train their own copy and ``arg_params`` gets the copies' mean, as
        in MXNet.  Whether the optimizer runs on the store or on every device
        follows MXNet (see :func:`.kvstore_setup.create_kvstore`); with a store,
        either way the parameters stay identical on every device (and, with
        ``dist_sync``, on every worker).  ``monitor`` (a :class:`lazynd.monitor.Monitor`)
        is installed on the training executors and printed every ``interval`` batches.
        """
        logger = logger or get_logger("lazynd.sym.model")
        self.num_epoch = epoch_number("FeedForward.fit", "num_epoch", self.num_epoch)
        self.begin_epoch = epoch_number("FeedForward.fit", "begin_epoch", self.begin_epoch)
        check_callbacks(
            "FeedForward.fit",
            epoch_end_callback=epoch_end_callback,
            batch_end_callback=batch_end_callback,
            eval_end_callback=eval_end_callback,
            eval_batch_end_callback=eval_batch_end_callback,
        )
        data = init_iter(X, y, self.numpy_batch_size, is_train=True)
        if self.epoch_size is not None:
            data = mx_io.ResizeIter(data, self.epoch_size, reset_internal=False)
        eval_iter = init_eval_iter(eval_data, self.numpy_batch_size)
        eval_metric = metric_module.create(eval_metric)
        if self.sym_gen is not None:
            self.symbol = default_symbol(self.sym_gen, data, "FeedForward.fit")
        input_descs = list(data.provide_data) + list(data.provide_label)
        input_shapes = {desc[0]: tuple(desc[1]) for desc in input_descs}
        param_names, _ = self._init_params(input_shapes)
        arg_params, aux_params = self.arg_params or {}, self.aux_params or {}
        group = DataParallelExecutorGroup(
            self.symbol, self.ctx, work_load_list, input_descs, param_names, arg_params, aux_params, True
        )
        if monitor is not None:
            group.install_monitor(monitor)
        buckets = BucketGroups(
            self.sym_gen,
            getattr(data, "default_bucket_key", None),
            group,
            lambda symbol, descs, shared, key: DataParallelExecutorGroup(
                symbol, self.ctx, work_load_list, descs, param_names, {}, {}, True, shared_group=shared, bucket_key=key
            ),
            ([d[0] for d in data.provide_data], [d[0] for d in data.provide_label]),
            on_new=None if monitor is None else (lambda new: new.install_monitor(monitor)),
        )
        # Without a store (kvstore=None) several devices each update their own copy from their slice of
        # the batch and arg_params gets the copies' mean, as in MXNet 1.9.1 and lazynd's Module.
        store, update_on_kvstore = create_kvstore(kvstore, len(self.ctx), arg_params)
        batch_size = data.batch_size
        if is_dist_sync(store):
            batch_size *= int(getattr(store, "num_workers", 1))  # the gradients are summed over the workers
        num_device = len(self.ctx)
        optimizer = self._create_optimizer(batch_size, param_names, 1 if update_on_kvstore else num_device)
        updater: Callable[[Any, Any, Any], None] | None = None
        if update_on_kvstore:
            store.set_optimizer(optimizer)
        else:
            updater = opt_module.get_updater(optimizer)
        keys = list(range(len(param_names)))
        if store is not None:
            initialize_kvstore(store, group.param_arrays, [arg_params[name] for name in param_names], update_on_kvstore)
            if not update_on_kvstore and not calls_per_key(store):
                # every device (and every worker: a dist store broadcasts rank 0's values) starts from the store's
                store.pull(keys, group.param_arrays)
        data_names = [d[0] for d in data.provide_data]
        label_names = [d[0] for d in data.provide_label]
        # what the updater is given for each device: the same indices and arrays every batch
        device_updates = [
            (
                [index * num_device + k for index in range(len(param_names))],
                [grads[k] for grads in group.grad_arrays],
                [weights[k] for weights in group.param_arrays],
            )
            for k in range(num_device)
        ]
        total = num_batches(data)
        logger.info("Start training with %s", str(self.ctx))  # MXNet 1.x's lines, with MXNet 0.9's Train- ones
        # reset here and at the end of each epoch, as MXNet does: fit leaves the iterator ready to
        # read again (another fit, a score, a Module on the same data)
        data.reset()
        for epoch in range(self.begin_epoch, self.num_epoch):
            tic = time.perf_counter()
            eval_metric.reset()
            progress = EpochProgress(epoch, total, data.batch_size, enabled=self.progress_bar)
            nbatch = 0
            epoch_values: list[tuple[str, float]] = []
            batches = iter(data)
            batch = next(batches, None)
            while batch is not None:
                group = buckets.group_for(batch)
                group.load_batch(data_names, batch.data)
                group.load_batch(label_names, batch.label or [])
                if monitor is not None:
                    monitor.tic()
                group.forward(is_train=True)
                group.backward()
                if update_on_kvstore:
                    push_pull(store, keys, group.grad_arrays, group.param_arrays)
                else:
                    if store is not None:  # the summed gradients come back in place
                        push_pull(store, keys, group.grad_arrays, group.grad_arrays)
                    assert updater is not None
                    # one call per device with every parameter: SGD makes it one multi_sgd_update
                    for indices, grads, weights in device_updates:
                        updater(indices, grads, weights)
                if monitor is not None:
                    monitor.toc_print()
                # scored before the next batch is asked for, as in MXNet 0.9: an iterator may
                # write every batch into the same arrays (asking first gained no time here)
                group.update_metric(eval_metric, label_names, batch.label or [], metric_padding(data, batch))
                progress.update(eval_metric)
                nbatch += 1  # MXNet's FeedForward counts the batches done: the first callback sees 1
                # the next batch is asked for after the scoring (see above) and before the callbacks,
                # so the epoch's values are read before the last batch's callbacks can reset them (the
                # global values: a Speedometer(auto_reset=True) resets only the local period of a
                # metric that keeps both, and all of one that keeps local sums only)
                following = next(batches, None)
                if following is None:
                    epoch_values = eval_metric.get_global_name_value()
                if batch_end_callback is not None:
                    call_all(batch_end_callback, BatchEndParam(epoch, nbatch, eval_metric, locals()))
                batch = following
            progress.close()
            for name, value in epoch_values:
                logger.info("Epoch[%d] Train-%s=%f", epoch, name, value)
            logger.info("Epoch[%d] Resetting Data Iterator", epoch)
            data.reset()
            logger.info("Epoch[%d] Time cost=%.3f", epoch, time.perf_counter() - tic)
            buckets.default.copy_params_to(arg_params, aux_params)
            call_all(epoch_end_callback, epoch, self.symbol, self.arg_params, self.aux_params)
            if eval_iter is not None:
                score_metric = copy.deepcopy(eval_metric)
                score_metric.reset()
                scored: list[int] = []
                counting = [lambda param: scored.append(param.nbatch), *callback_list(eval_batch_end_callback)]
                self._run(eval_iter, score_metric, None, counting, epoch, with_labels=True)
                for name, value in score_metric.get_name_value():
                    logger.info("Epoch[%d] Validation-%s=%f", epoch, name, value)
                call_all(eval_end_callback, BatchEndParam(epoch, len(scored), score_metric, locals()))
                eval_iter.reset()
        self._pred_exec = None
        return self

    # -- persistence -----------------------------------------------------------------------------
    def save(self, prefix: str, epoch: int | None = None, remove_amp_cast: bool = True) -> None:
        """Checkpoint the model as ``prefix-symbol.json`` and ``prefix-%04d.params`` (default: ``num_epoch``).

        ``remove_amp_cast`` saves the symbol without its AMP casts, as ``Symbol.tojson``.
        """
        epoch = self.num_epoch if epoch is None else epoch
        if epoch is None or self.arg_params is None:
            raise DataError("FeedForward.save: needs an epoch number and parameters (fit first)")
        save_checkpoint(prefix, epoch, self.symbol, self.arg_params, self.aux_params or {}, remove_amp_cast)

    @staticmethod
    def load(prefix: str, epoch: int, ctx: Any = None, **kwargs: Any) -> FeedForward:
        """A model from a checkpoint, ready to ``predict`` or to continue training from ``epoch``."""
        symbol, arg_params, aux_params = load_checkpoint(prefix, epoch)
        return FeedForward(symbol, ctx=ctx, arg_params=arg_params, aux_params=aux_params, begin_epoch=epoch, **kwargs)

    @staticmethod
    def create(
        symbol: Any,
        X: Any,
        y: Any = None,
        ctx: Any = None,
        num_epoch: int | None = None,
        epoch_size: int | None = None,
        optimizer: Any = "sgd",
        initializer: init_module.Initializer | None = None,
        eval_data: Any = None,
        eval_metric: Any = "acc",
        epoch_end_callback: Callable | None = None,
        batch_end_callback: Callable | None = None,
        kvstore: Any = "local",
        logger: logging.Logger | None = None,
        work_load_list: Sequence[float] | None = None,
        eval_end_callback: Any = None,
        eval_batch_end_callback: Any = None,
        **kwargs: Any,
    ) -> FeedForward:
        """Build a model and ``fit`` it in one call."""
        model = FeedForward(
            symbol,
            ctx=ctx,
            num_epoch=num_epoch,
            epoch_size=epoch_size,
            optimizer=optimizer,
            initializer=initializer,
            **kwargs,
        )
        model.fit(
            X,
            y,
            eval_data=eval_data,
            eval_metric=eval_metric,
            epoch_end_callback=epoch_end_callback,
            batch_end_callback=batch_end_callback,
            kvstore=kvstore,
            logger=logger,
            work_load_list=work_load_list,
            eval_end_callback=eval_end_callback,
            eval_batch_end_callback=eval_batch_end_callback,
        )
        return model
