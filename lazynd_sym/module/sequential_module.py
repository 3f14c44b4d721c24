"""``SequentialModule``: modules chained, each one's outputs the next one's data (``mx.mod``).

``add(module, take_labels=False, auto_wiring=False)`` appends a module.  At
``bind`` each module is bound to the output shapes of the one before it (every
module after the first with ``inputs_need_grad``, so ``backward`` can hand the
gradient of its inputs back down the chain); a module added with
``take_labels=True`` also gets the labels (and is the one scored by
``update_metric``); ``auto_wiring=True`` renames the incoming outputs to the
module's own ``data_names``.
"""

from __future__ import annotations

import copy
from typing import Any

from lazynd import initializer as init_module
from lazynd import io as mx_io
from lazynd.errors import DataError, LazyNDError

from .base_module import BaseModule
from .params import init_flags

__all__ = ["SequentialModule"]

META_TAKE_LABELS = "take_labels"
META_AUTO_WIRING = "auto_wiring"


class SequentialModule(BaseModule):
    """A chain of modules trained as one.

    Examples
    --------
    >>> import lazynd as mx, lazynd_sym as sym
    >>> body = mx.mod.Module(sym.FullyConnected(sym.Variable("data"), num_hidden=4, name="fc1"), label_names=None)
    >>> head = mx.mod.Module(sym.SoftmaxOutput(sym.FullyConnected(sym.Variable("data"), num_hidden=2, name="fc2"),
    ...                                        name="softmax"))
    >>> seq = SequentialModule().add(body).add(head, take_labels=True, auto_wiring=True)
    >>> seq.bind(data_shapes=[("data", (8, 3))], label_shapes=[("softmax_label", (8,))])
    >>> seq.output_shapes
    [('softmax_output', (8, 2))]
    """

    # MXNet's names for the options of add(), read as SequentialModule.META_TAKE_LABELS
    META_TAKE_LABELS = META_TAKE_LABELS
    META_AUTO_WIRING = META_AUTO_WIRING

    def __init__(self, logger: Any = None) -> None:
        super().__init__(logger)
        self._modules: list[BaseModule] = []
        self._metas: list[dict[str, bool]] = []
        self._label_shapes: list[Any] | None = None

    def add(self, module: BaseModule, **kwargs: bool) -> SequentialModule:
        """Append ``module`` (options ``take_labels``, ``auto_wiring``); returns ``self`` to chain calls."""
        unknown = sorted(set(kwargs) - {META_TAKE_LABELS, META_AUTO_WIRING})
        if unknown:
            raise DataError(f"SequentialModule.add: unknown options {unknown}; expected take_labels, auto_wiring")
        if not isinstance(module, BaseModule):
            raise DataError(f"SequentialModule.add: expected a module, got {type(module).__name__}")
        self._modules.append(module)
        self._metas.append({key: bool(value) for key, value in kwargs.items()})
        # a new module changes the chain: it must be bound and initialized again
        self.binded = self.params_initialized = self.optimizer_initialized = False
        return self

    def _require_modules(self, caller: str) -> None:
        if not self._modules:
            raise LazyNDError(f"SequentialModule.{caller}: add() a module first")

    # -- names and shapes --------------------------------------------------------------------------
    @property
    def data_names(self) -> list[str]:
        self._require_modules("data_names")
        return self._modules[0].data_names

    @property
    def output_names(self) -> list[str]:
        self._require_modules("output_names")
        return self._modules[-1].output_names

    @property
    def data_shapes(self) -> list[mx_io.DataDesc]:
        self._require("data_shapes", params=False)
        return self._modules[0].data_shapes

    @property
    def label_shapes(self) -> list[Any] | None:
        self._require("label_shapes", params=False)
        return self._label_shapes

    @property
    def output_shapes(self) -> list[tuple[str, tuple[int, ...]]]:
        self._require("output_shapes", params=False)
        return self._modules[-1].output_shapes

    @property
    def symbol(self) -> Any:
        """None, as in MXNet 1.9.1: a chain has no one graph (each module's is its ``symbol``), so
        ``do_checkpoint`` writes only the parameters and ``set_params`` checks no names against
        the last module's graph alone."""
        return None

    # -- binding -----------------------------------------------------------------------------------
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
        """Bind each module to the output shapes of the one before it."""
        self._require_modules("bind")
        if self.binded and not force_rebind:
            self.logger.warning("SequentialModule.bind: already bound, ignoring bind()")
            return
        if shared_module is not None:
            raise LazyNDError("SequentialModule.bind: shared_module is not supported")
        if inputs_need_grad and not for_training:
            raise LazyNDError("SequentialModule.bind: inputs_need_grad=True needs for_training=True")
        takes_labels = False
        shapes = data_shapes
        for index, (module, meta) in enumerate(zip(self._modules, self._metas, strict=True)):
            labels = label_shapes if meta.get(META_TAKE_LABELS, False) else None
            takes_labels = takes_labels or labels is not None
            if meta.get(META_AUTO_WIRING, False):
                names = module.data_names
                if len(names) != len(shapes):
                    raise DataError(
                        f"SequentialModule.bind: module {index} takes {len(names)} inputs {names}, "
                        f"the module before it gives {len(shapes)}"
                    )
                shapes = [(name, tuple(shape)) for name, (_, shape) in zip(names, shapes, strict=True)]
            module.bind(
                data_shapes=shapes,
                label_shapes=labels,
                for_training=for_training,
                inputs_need_grad=bool(inputs_need_grad or (for_training and index > 0)),
                force_rebind=force_rebind,
                grad_req=grad_req,
            )
            shapes = module.output_shapes
        self._label_shapes = label_shapes if takes_labels else None
        self.for_training, self.inputs_need_grad, self.binded = bool(for_training), bool(inputs_need_grad), True

    # -- parameters and optimizer ------------------------------------------------------------------
    def init_params(
        self,
        initializer: Any = init_module.Uniform(0.01),
        arg_params: dict[str, Any] | None = None,
        aux_params: dict[str, Any] | None = None,
        allow_missing: bool = False,
        force_init: bool = False,
        allow_extra: bool = False,
    ) -> None:
        """Initialize every module (``arg_params``/``aux_params`` hold the parameters of all of them)."""
        allow_missing, force_init = init_flags("SequentialModule.init_params", allow_missing, force_init)
        if self.params_initialized and not force_init:
            return
        self._require("init_params", params=False)
        for module in self._modules:
            module.init_params(initializer, arg_params, aux_params, allow_missing=allow_missing, force_init=force_init)
        seen: dict[str, int] = {}
        for index, module in enumerate(self._modules):
            arg, aux = module.get_params()
            for name in list(arg) + list(aux):
                if name in seen:
                    raise DataError(
                        f"SequentialModule: parameter {name!r} is in module {seen[name]} and module {index}; "
                        "give the layers distinct names"
                    )
                seen[name] = index
        self.params_initialized = True

    def get_params(self) -> tuple[dict[str, Any], dict[str, Any]]:
        """The parameters of all the modules in one ``(arg_params, aux_params)`` pair."""
        self._require("get_params")
        arg_params: dict[str, Any] = {}
        aux_params: dict[str, Any] = {}
        for module in self._modules:
            arg, aux = module.get_params()
            arg_params.update(arg)
            aux_params.update(aux)
        return arg_params, aux_params

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
        for module in self._modules:
            module.init_optimizer(kvstore, optimizer, optimizer_params, force_init=force_init)
        self.optimizer_initialized = True

    # -- computing ---------------------------------------------------------------------------------
    def forward(self, data_batch: mx_io.DataBatch, is_train: bool | None = None) -> None:
        """Run the chain: each module's outputs become the next one's data."""
        self._require("forward")
        batch = copy.copy(data_batch)
        for index, module in enumerate(self._modules):
            module.forward(batch, is_train=is_train)
            if index + 1 == len(self._modules):
                break
            batch.data = module.get_outputs()
            names = [name for name, _ in module.output_shapes]
            batch.provide_data = [mx_io.DataDesc(n, out.shape) for n, out in zip(names, batch.data, strict=True)]

    def backward(self, out_grads: Any = None) -> None:
        """Backward through the chain, each module's input gradients the previous one's ``out_grads``."""
        self._require("backward")
        for index in range(len(self._modules) - 1, -1, -1):
            module = self._modules[index]
            module.backward(out_grads=out_grads)
            if index == 0:
                break
            out_grads = module.get_input_grads()

    def update(self) -> None:
        self._require("update", optimizer=True)
        for module in self._modules:
            module.update()

    def get_outputs(self, merge_multi_context: bool = True) -> list[Any]:
        self._require("get_outputs")
        return self._modules[-1].get_outputs(merge_multi_context)

    def get_input_grads(self, merge_multi_context: bool = True) -> list[Any]:
        self._require("get_input_grads")
        if not self.inputs_need_grad:
            raise LazyNDError("SequentialModule.get_input_grads: bind with inputs_need_grad=True")
        return self._modules[0].get_input_grads(merge_multi_context)

    def update_metric(self, eval_metric: Any, labels: Any, pre_sliced: bool = False) -> None:
        """Update ``eval_metric`` with the outputs of the modules added with ``take_labels``."""
        self._require("update_metric")
        for module, meta in zip(self._modules, self._metas, strict=True):
            if meta.get(META_TAKE_LABELS, False):
                module.update_metric(eval_metric, labels, pre_sliced)

    def install_monitor(self, mon: Any) -> None:
        self._require("install_monitor", params=False)
        for module in self._modules:
            module.install_monitor(mon)
