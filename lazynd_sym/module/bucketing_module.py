"""``BucketingModule``: one model over inputs of varying shape, a bound Module per bucket key (``mx.mod``).

``sym_gen(bucket_key)`` builds the symbol of a bucket (e.g. an RNN unrolled to that sequence length) and
returns ``(symbol, data_names, label_names)``.  The module of ``default_bucket_key`` is bound first and owns
the parameters and the optimizer; each other bucket is bound on first use with the default module as its
``shared_module``, so every bucket reads and trains the same weight arrays.  A batch picks its bucket
through ``DataBatch.bucket_key`` (with its ``provide_data``/``provide_label`` shapes).  ``sym_gen`` runs
under a fresh ``NameManager``, so automatic names (``fullyconnected0``) are the same in every bucket.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from lazynd import initializer as init_module
from lazynd import io as mx_io
from lazynd import ndarray as nd
from lazynd.errors import DataError, DataValueError, LazyNDError

from ..model.checkpoint import load_bucket_symbols, load_params, save_checkpoint, states_file
from ..name import NameManager
from .base_module import BaseModule
from .module import Module
from .params import init_flags

__all__ = ["BucketingModule"]


class BucketingModule(BaseModule):
    """A :class:`Module` per bucket key, all sharing the parameters of the default bucket.

    Parameters
    ----------
    sym_gen : callable
        ``sym_gen(bucket_key) -> (symbol, data_names, label_names)``.
    default_bucket_key
        The bucket bound by ``bind`` (take the largest: its arrays are the ones shared).
    logger, context, work_load_list, fixed_param_names, state_names, group2ctxs, compression_params
        As for :class:`Module`.

    Examples
    --------
    >>> import lazynd as mx, lazynd_sym as sym
    >>> def sym_gen(length):
    ...     data = sym.Variable("data")
    ...     net = sym.FullyConnected(sym.sum(data, axis=1, keepdims=True), num_hidden=2, name="fc")
    ...     return sym.SoftmaxOutput(net, name="softmax"), ("data",), ("softmax_label",)
    >>> mod = BucketingModule(sym_gen, default_bucket_key=5)
    >>> mod.bind(data_shapes=[("data", (4, 5))], label_shapes=[("softmax_label", (4,))])
    >>> mod.init_params()
    >>> mod.switch_bucket(3, [("data", (4, 3))], [("softmax_label", (4,))])
    >>> sorted(mod._buckets)
    [3, 5]
    """

    def __init__(
        self,
        sym_gen: Callable[[Any], Any],
        default_bucket_key: Any = None,
        logger: Any = None,
        context: Any = None,
        work_load_list: Sequence[float] | None = None,
        fixed_param_names: Sequence[str] | None = None,
        state_names: Sequence[str] | None = None,
        group2ctxs: Any = None,
        compression_params: dict | None = None,
    ) -> None:
        super().__init__(logger)
        if default_bucket_key is None:
            raise DataError("BucketingModule: default_bucket_key is required")
        if not callable(sym_gen):
            raise DataError(f"BucketingModule: sym_gen must be callable, got {type(sym_gen).__name__}")
        self._sym_gen = sym_gen
        self._default_bucket_key = default_bucket_key
        self._module_kwargs = {
            "logger": logger,
            "context": context,
            "work_load_list": work_load_list,
            "fixed_param_names": fixed_param_names,
            "state_names": state_names,
            "group2ctxs": group2ctxs,
            "compression_params": compression_params,
        }
        self._buckets: dict[Any, Module] = {}
        self._curr_module: Module | None = None
        self._curr_bucket_key: Any = None
        self._monitor: Any = None
        self._grad_req: Any = "write"
        self._loaded_params: tuple[dict[str, Any], dict[str, Any]] | None = None
        self._symbol, data_names, label_names = self._generate(default_bucket_key)
        self._data_names, self._label_names = list(data_names), list(label_names or [])
        self._output_names = self._symbol.list_outputs()

    def _generate(self, bucket_key: Any) -> tuple[Any, Sequence[str], Sequence[str] | None]:
        # A fresh name manager per call, as MXNet's: an unnamed layer is ``fullyconnected0`` in
        # every bucket, so its parameters are the ones the default bucket owns and shares.
        with NameManager():
            result = self._sym_gen(bucket_key)
        if not (isinstance(result, tuple) and len(result) == 3):  # (a ValueError, as MXNet's unpacking raises)
            raise DataValueError(
                f"BucketingModule: sym_gen({bucket_key!r}) must return (symbol, data_names, label_names), "
                f"got {type(result).__name__}"
            )
        return result

    def _module_for(self, bucket_key: Any) -> Module:
        symbol, data_names, label_names = self._generate(bucket_key)
        return Module(symbol, data_names, label_names, **self._module_kwargs)

    def _current(self, caller: str) -> Module:
        if self._curr_module is None:
            raise LazyNDError(f"BucketingModule.{caller}: call bind() first")
        return self._curr_module

    # -- names and shapes (those of the current bucket) --------------------------------------------
    @property
    def data_names(self) -> list[str]:
        return self._current("data_names").data_names if self.binded else self._data_names

    @property
    def output_names(self) -> list[str]:
        return self._current("output_names").output_names if self.binded else self._output_names

    @property
    def data_shapes(self) -> list[mx_io.DataDesc]:
        return self._current("data_shapes").data_shapes

    @property
    def label_shapes(self) -> list[mx_io.DataDesc] | None:
        return self._current("label_shapes").label_shapes

    @property
    def output_shapes(self) -> list[tuple[str, tuple[int, ...]]]:
        return self._current("output_shapes").output_shapes

    @property
    def symbol(self) -> Any:
        return self._current("symbol").symbol if self.binded else self._symbol

    # -- binding and buckets -------------------------------------------------------------------
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
        """Bind the default bucket's module for these shapes (other buckets bind on first use)."""
        if force_rebind and self.binded:  # as MXNet's, the parameters carry over to the new executors
            self._loaded_params = self.get_params() if self.params_initialized else None
            self._buckets, self._curr_module, self.binded, self.optimizer_initialized = {}, None, False, False
        if self.binded:
            self.logger.warning("BucketingModule.bind: already bound, ignoring bind()")
            return
        if shared_module is not None:
            raise LazyNDError(
                "BucketingModule.bind: shared_module is not supported (the buckets share among themselves)"
            )
        module = self._module_for(self._default_bucket_key)
        module.bind(data_shapes, label_shapes, for_training, inputs_need_grad, grad_req=grad_req)
        self._buckets = {self._default_bucket_key: module}
        self._curr_module, self._curr_bucket_key = module, self._default_bucket_key
        self.for_training, self.inputs_need_grad, self.binded = bool(for_training), bool(inputs_need_grad), True
        self._grad_req = grad_req
        if self._loaded_params is not None:  # from BucketingModule.load
            module.set_params(*self._loaded_params)
            self._loaded_params = None

    def switch_bucket(self, bucket_key: Any, data_shapes: Any, label_shapes: Any = None) -> None:
        """Make ``bucket_key`` current, binding its module (sharing the default's parameters) on first use."""
        self._current("switch_bucket")
        default = self._buckets[self._default_bucket_key]
        if bucket_key not in self._buckets:
            if not self.params_initialized:
                raise LazyNDError("BucketingModule.switch_bucket: call init_params() before using other buckets")
            module = self._module_for(bucket_key)
            module.bind(
                data_shapes,
                label_shapes,
                self.for_training,
                self.inputs_need_grad,
                shared_module=default,
                grad_req=self._grad_req,
            )
            if self.optimizer_initialized:
                module.borrow_optimizer(default)
            if self._monitor is not None:
                module.install_monitor(self._monitor)
            self._buckets[bucket_key] = module
        self._curr_module, self._curr_bucket_key = self._buckets[bucket_key], bucket_key

    # -- parameters and optimizer (the default bucket's, shared by all) -----------------------------
    def init_params(
        self,
        initializer: Any = init_module.Uniform(0.01),
        arg_params: dict[str, Any] | None = None,
        aux_params: dict[str, Any] | None = None,
        allow_missing: bool = False,
        force_init: bool = False,
        allow_extra: bool = False,
    ) -> None:
        allow_missing, force_init = init_flags("BucketingModule.init_params", allow_missing, force_init)
        if self.params_initialized and not force_init:
            return
        self._current("init_params")
        self._buckets[self._default_bucket_key].init_params(
            initializer, arg_params, aux_params, allow_missing=allow_missing, force_init=force_init
        )
        self.params_initialized = True

    def set_params(
        self,
        arg_params: dict[str, Any],
        aux_params: dict[str, Any],
        allow_missing: bool = False,
        force_init: bool = True,
        allow_extra: bool = False,
    ) -> None:
        self._current("set_params")
        self._buckets[self._default_bucket_key].set_params(
            arg_params, aux_params, allow_missing, force_init, allow_extra
        )
        self.params_initialized = True

    def get_params(self) -> tuple[dict[str, Any], dict[str, Any]]:
        self._require("get_params")
        default = self._buckets[self._default_bucket_key]
        # every bucket updates the shared arrays: after an update through any of them the host copy is stale
        if any(module._params_dirty for module in self._buckets.values()):
            for module in self._buckets.values():
                module._params_dirty = False
            default._params_dirty = True
        return default.get_params()

    def init_optimizer(
        self,
        kvstore: Any = "local",
        optimizer: Any = "sgd",
        optimizer_params: Any = (("learning_rate", 0.01),),
        force_init: bool = False,
    ) -> None:
        self._require("init_optimizer")
        if self._optimizer_kept(force_init):
            return
        default = self._buckets[self._default_bucket_key]
        default.init_optimizer(kvstore, optimizer, optimizer_params, force_init=force_init)
        for module in self._buckets.values():
            if module is not default:
                module.borrow_optimizer(default)
        self.optimizer_initialized = True

    @staticmethod
    def load(
        prefix: str,
        epoch: int,
        sym_gen: Callable[[Any], Any] | None = None,
        default_bucket_key: Any = None,
        **kwargs: Any,
    ) -> BucketingModule:
        """A bucketing module with the parameters of ``prefix-%04d.params`` (as MXNet 1.x's), given to
        the buckets when :meth:`bind` is called; ``kwargs`` go to ``BucketingModule``.

        As MXNet's, the buckets listed in ``prefix.buckets`` run their saved symbols
        (``prefix-<key>-symbol.json``, see :meth:`load_dict`); other buckets come from ``sym_gen``,
        all of them when there is no ``prefix.buckets`` (which MXNet requires).

        Examples
        --------
        >>> import os, tempfile, lazynd as mx, lazynd_sym as sym
        >>> def sym_gen(length):
        ...     net = sym.FullyConnected(sym.Variable("data"), num_hidden=2, name="fc")
        ...     return sym.SoftmaxOutput(net, name="softmax"), ("data",), ("softmax_label",)
        >>> mod = BucketingModule(sym_gen, default_bucket_key=5)
        >>> mod.bind([("data", (4, 5))], [("softmax_label", (4,))])
        >>> mod.init_params(mx.init.Constant(0.5))
        >>> prefix = os.path.join(tempfile.mkdtemp(), "bucketed")
        >>> mod.save_checkpoint(prefix, 1)
        >>> back = BucketingModule.load(prefix, 1, sym_gen, default_bucket_key=5)
        >>> back.bind([("data", (4, 5))], [("softmax_label", (4,))])
        >>> float(back.get_params()[0]["fc_weight"].asnumpy()[0, 0])
        0.5
        """
        if sym_gen is None or default_bucket_key is None:
            raise DataError("BucketingModule.load: sym_gen and default_bucket_key are required")
        arg_params, aux_params = load_params(prefix, epoch)
        symbols = load_bucket_symbols(prefix)
        return BucketingModule.load_dict(symbols or {}, sym_gen, default_bucket_key, arg_params, aux_params, **kwargs)

    @staticmethod
    def load_dict(
        sym_dict: dict[Any, Any] | None = None,
        sym_gen: Callable[[Any], Any] | None = None,
        default_bucket_key: Any = None,
        arg_params: dict[str, Any] | None = None,
        aux_params: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> BucketingModule:
        """A bucketing module whose buckets in ``sym_dict`` (bucket key -> symbol) run those symbols,
        with the data and label names ``sym_gen`` gives, and take ``arg_params``/``aux_params`` when
        :meth:`bind` is called (MXNet 1.x's ``load_dict``); other keys come from ``sym_gen``."""
        required = {
            "sym_dict": sym_dict, "sym_gen": sym_gen, "default_bucket_key": default_bucket_key,
            "arg_params": arg_params, "aux_params": aux_params,
        }  # fmt: skip
        missing = [name for name, value in required.items() if value is None]
        if missing:
            raise DataError(f"BucketingModule.load_dict: {', '.join(missing)} must be given")
        assert sym_dict is not None and sym_gen is not None and arg_params is not None and aux_params is not None
        symbols, generate = dict(sym_dict), sym_gen

        def sym_gen_with_loaded_symbols(bucket_key: Any) -> Any:
            result = generate(bucket_key)
            if bucket_key in symbols and isinstance(result, tuple) and len(result) == 3:
                return (symbols[bucket_key], result[1], result[2])
            return result

        module = BucketingModule(sym_gen_with_loaded_symbols, default_bucket_key, **kwargs)
        module._loaded_params = (dict(arg_params), dict(aux_params))
        module.params_initialized = True
        return module

    def save_checkpoint(
        self, prefix: str, epoch: int, remove_amp_cast: bool = False, save_optimizer_states: bool = False
    ) -> None:
        """Checkpoint the default bucket's symbol with the shared parameters (and optimizer states).

        The parameters are in the order of MXNet's ``BucketingModule.save_checkpoint(prefix, epoch,
        remove_amp_cast=False)`` (``Module``'s puts ``save_optimizer_states`` third), so a third
        positional argument means the same in both; ``save_optimizer_states`` is lazynd's.
        ``remove_amp_cast`` saves the symbols without their AMP casts, as ``Symbol.tojson``.

        Besides ``prefix-symbol.json`` (the default bucket's, which ``Module.load`` reads), each
        bucket's symbol goes to ``prefix-<key>-symbol.json`` and, for integer keys, the keys to
        ``prefix.buckets``: the files MXNet's ``BucketingModule.load`` reads.
        """
        arg_params, aux_params = self.get_params()
        default_symbol = self._buckets[self._default_bucket_key].symbol
        save_checkpoint(prefix, epoch, default_symbol, arg_params, aux_params, remove_amp_cast)
        for key, module in self._buckets.items():
            module.symbol.save(f"{prefix}-{key}-symbol.json", remove_amp_cast=remove_amp_cast)
        keys = list(self._buckets)
        if all(isinstance(key, (int, np.integer)) and not isinstance(key, bool) for key in keys):
            nd.save(f"{prefix}.buckets", nd.array(keys, dtype=np.int32))
        if save_optimizer_states:
            self._buckets[self._default_bucket_key].save_optimizer_states(states_file(prefix, epoch))

    # -- computing (on the current bucket) --------------------------------------------------------
    def forward(self, data_batch: mx_io.DataBatch, is_train: bool | None = None) -> None:
        """Switch to the batch's bucket (``bucket_key``, default: the default key) and run it forward."""
        self._require("forward")
        key = getattr(data_batch, "bucket_key", None)  # a batch holding data alone: the default bucket
        key = self._default_bucket_key if key is None else key
        provide_data = getattr(data_batch, "provide_data", None)
        if key not in self._buckets and provide_data is None:
            raise DataError(f"BucketingModule.forward: a batch of the new bucket {key!r} must carry provide_data")
        self.switch_bucket(key, provide_data, getattr(data_batch, "provide_label", None))
        self._current("forward").forward(data_batch, is_train=is_train)

    def backward(self, out_grads: Any = None) -> None:
        self._require("backward")
        self._current("backward").backward(out_grads)

    def update(self) -> None:
        self._require("update", optimizer=True)
        self._current("update").update()

    def get_outputs(self, merge_multi_context: bool = True) -> list[Any]:
        self._require("get_outputs")
        return self._current("get_outputs").get_outputs(merge_multi_context)

    def get_input_grads(self, merge_multi_context: bool = True) -> list[Any]:
        self._require("get_input_grads")
        return self._current("get_input_grads").get_input_grads(merge_multi_context)

    def get_states(self, merge_multi_context: bool = True) -> list[Any]:
        """The current bucket's state inputs (a state of one shape is one array in every bucket)."""
        self._require("get_states")
        return self._current("get_states").get_states(merge_multi_context)

    def set_states(self, states: Any = None, value: float | None = None) -> None:
        """Set the current bucket's state inputs (see :meth:`Module.set_states`)."""
        self._require("set_states")
        self._current("set_states").set_states(states, value)

    def update_metric(self, eval_metric: Any, labels: Any, pre_sliced: bool = False) -> None:
        self._require("update_metric")
        self._current("update_metric").update_metric(eval_metric, labels, pre_sliced)

    def install_monitor(self, mon: Any) -> None:
        """Have ``mon`` watch the executors of every bucket bound so far."""
        self._require("install_monitor", params=False)
        for module in self._buckets.values():  # (each checks ``mon`` before it is kept for new buckets)
            module.install_monitor(mon)
        self._monitor = mon
