"""``FeedForward`` training and MXNet-compatible checkpoints (``mx.model``).

A checkpoint is ``prefix-symbol.json`` plus ``prefix-%04d.params``, an
``nd.save`` dict whose keys are ``arg:<name>`` and ``aux:<name>`` — the
layout MXNet writes, so checkpoints move between the two.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

import lazynd as mx
from lazynd import initializer as init_module
from lazynd import io as mx_io
from lazynd import metric as metric_module
from lazynd import ndarray as nd
from lazynd import optimizer as opt_module
from lazynd.callback import BatchEndParam, EpochProgress
from lazynd.context import Context
from lazynd.errors import ContextError, DataError, FormatError

from .json_format import load as load_symbol

__all__ = ["BatchEndParam", "FeedForward", "load_checkpoint", "save_checkpoint"]


def save_checkpoint(prefix: str, epoch: int, symbol: Any, arg_params: dict[str, Any], aux_params: dict[str, Any]) -> None:
    """Write ``prefix-symbol.json`` and ``prefix-%04d.params`` (``arg:``/``aux:`` keys), each atomically.

    Examples
    --------
    >>> import os, tempfile, lazynd as mx, lazynd_sym as sym
    >>> prefix = os.path.join(tempfile.mkdtemp(), "net")
    >>> net = sym.FullyConnected(sym.Variable("data"), num_hidden=2, name="fc")
    >>> save_checkpoint(prefix, 1, net, {"fc_weight": mx.nd.ones((2, 3))}, {})
    >>> sorted(load_checkpoint(prefix, 1)[1])
    ['fc_weight']
    """
    if symbol is not None:
        symbol.save(f"{prefix}-symbol.json")
    payload = {f"arg:{k}": v.as_in_context(mx.cpu()) for k, v in arg_params.items()}
    payload.update({f"aux:{k}": v.as_in_context(mx.cpu()) for k, v in (aux_params or {}).items()})
    path = f"{prefix}-{int(epoch):04d}.params"
    nd.save(path, payload)
    logging.info('Saved checkpoint to "%s"', path)


def load_params(path: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """Split a ``.params`` file into ``arg_params`` and ``aux_params``."""
    saved = nd.load(path)
    if not isinstance(saved, dict):
        raise FormatError(f"{path}: a checkpoint holds a dict of named arrays, found a list of {len(saved)}")
    arg_params, aux_params = {}, {}
    for key, value in saved.items():
        kind, _, name = key.partition(":")
        if kind == "arg":
            arg_params[name] = value
        elif kind == "aux":
            aux_params[name] = value
        else:
            raise FormatError(f"{path}: key {key!r} does not start with 'arg:' or 'aux:'")
    return arg_params, aux_params


def load_checkpoint(prefix: str, epoch: int) -> tuple[Any, dict[str, Any], dict[str, Any]]:
    """Read ``(symbol, arg_params, aux_params)`` written by ``save_checkpoint`` (ours or MXNet's)."""
    symbol = load_symbol(f"{prefix}-symbol.json")
    arg_params, aux_params = load_params(f"{prefix}-{int(epoch):04d}.params")
    return symbol, arg_params, aux_params


def _contexts(ctx: Any) -> list[Context]:
    if ctx is None:
        return [mx.current_context()]
    contexts = list(ctx) if isinstance(ctx, (list, tuple)) else [ctx]
    if not contexts or not all(isinstance(c, Context) for c in contexts):
        raise ContextError(f"FeedForward: ctx must be a Context or a list of them, got {ctx!r}")
    if len(contexts) > 1:
        raise ContextError(f"FeedForward: trains on one device; got {len(contexts)} ({contexts}). Use lazynd_kv for several")
    return contexts


def _call_all(callbacks: Any, *args: Any) -> None:
    if callbacks is None:
        return
    for callback in callbacks if isinstance(callbacks, (list, tuple)) else [callbacks]:
        callback(*args)


class FeedForward:
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
        self.symbol = symbol
        self.ctx = _contexts(ctx)
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

    # -- data ------------------------------------------------------------------------------------
    def _init_iter(self, X: Any, y: Any, is_train: bool) -> mx_io.DataIter:
        if isinstance(X, mx_io.DataIter):
            return X
        if X is None:
            raise DataError("FeedForward: X (the data) is None")
        if hasattr(X, "asnumpy") or isinstance(X, np.ndarray):
            count = int(X.shape[0])
            if y is None:
                if is_train:
                    raise DataError("FeedForward.fit: y is needed when X is an array")
                y = np.zeros(count, dtype=np.float32)
            label = y.asnumpy() if hasattr(y, "asnumpy") else np.asarray(y)
            if label.ndim > 1 and label.shape[1] == 1:
                label = label.reshape(-1)
            if len(label) != count:
                raise DataError(f"FeedForward: X has {count} examples but y has {len(label)}")
            batch_size = min(count, self.numpy_batch_size)
            return mx_io.NDArrayIter(X, label, batch_size, shuffle=is_train, last_batch_handle="roll_over" if is_train else "pad")
        raise DataError(f"FeedForward: X must be a DataIter, NumPy array or NDArray, got {type(X).__name__}")

    def _init_eval_iter(self, eval_data: Any) -> mx_io.DataIter | None:
        if eval_data is None or isinstance(eval_data, mx_io.DataIter):
            return eval_data
        if isinstance(eval_data, (list, tuple)) and len(eval_data) == 2:
            return self._init_iter(eval_data[0], eval_data[1], is_train=False)
        raise DataError("FeedForward: eval_data must be a DataIter or an (X, y) pair")

    # -- parameters ------------------------------------------------------------------------------
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
        shapes = dict(zip(arg_names, arg_shapes))
        arg_params, aux_params = {}, {}
        for table, names, source, out in (
            (shapes, param_names, given_args, arg_params),
            (dict(zip(aux_names, aux_shapes)), aux_names, given_aux, aux_params),
        ):
            for name in names:
                arr = nd.zeros(table[name])
                if name in source:
                    if tuple(source[name].shape) != tuple(table[name]):
                        raise DataError(f"FeedForward: {name!r} has shape {tuple(source[name].shape)}, the symbol needs {table[name]}")
                    source[name].copyto(arr)
                else:
                    self.initializer(init_module.InitDesc(name, attrs.get(name, {})), arr)
                out[name] = arr
        self.arg_params, self.aux_params = arg_params, aux_params
        return param_names, aux_names

    def _bind(self, input_shapes: dict[str, tuple], for_training: bool) -> Any:
        inputs = list(input_shapes)
        grad_req = {n: ("null" if n in inputs or not for_training else "write") for n in self.symbol.list_arguments()}
        executor = self.symbol.simple_bind(self.ctx[0], grad_req=grad_req, **input_shapes)
        executor.copy_params_from(self.arg_params or {}, self.aux_params or {}, allow_extra_params=True)
        return executor

    def _sync_params_from(self, executor: Any) -> None:
        for name, arr in (self.arg_params or {}).items():
            executor.arg_dict[name].copyto(arr)
        for name, arr in (self.aux_params or {}).items():
            executor.aux_dict[name].copyto(arr)

    def _create_optimizer(self, batch_size: int, param_names: list[str]) -> Any:
        if isinstance(self.optimizer, str):
            kwargs = dict(self.kwargs)
            kwargs.setdefault("rescale_grad", 1.0 / batch_size)
            return opt_module.create(self.optimizer, sym=self.symbol, param_idx2name=dict(enumerate(param_names)), **kwargs)
        return self.optimizer
