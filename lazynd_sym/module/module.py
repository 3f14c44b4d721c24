"""``Module``: one symbol trained on one or several devices (MXNet 0.9's ``mx.mod.Module``).

The stages of :class:`~lazynd_sym.module.base_module.BaseModule` for a single symbol: ``bind`` builds a
:class:`~lazynd_sym.module.executor_group.ModuleExecutorGroup` (the batch split over ``context`` in proportion
to ``work_load_list``), one per set of input shapes (:mod:`~lazynd_sym.module.shape_groups`, which also checks
the module a bind shares arrays with); the parameters live on the host in ``arg_params``/``aux_params`` and on every device in
the executors; ``update`` runs the optimizer on the KVStore or on each device (:mod:`~lazynd_sym.module.updates`,
which also sets them up); the roles of the symbol's arguments, the shapes of a bind and the data and labels of a
batch are sorted, checked and made in :mod:`~lazynd_sym.module.inputs`.  Checkpoints are MXNet's files:
``prefix-symbol.json``, ``prefix-%04d.params`` and, with the optimizer states, ``prefix-%04d.states``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from lazynd import initializer as init_module
from lazynd import io as mx_io
from lazynd.arguments import flag
from lazynd.errors import LazyNDError
from lazynd.log import warn_from_user_code

from ..model.checkpoint import load_checkpoint, save_checkpoint, states_file
from .base_module import BaseModule
from .devices import check_devices
from .executor_group import ModuleExecutorGroup
from .inputs import bind_flags, check_inputs, join_device_batches, shapes_of_batch, sort_arguments
from .params import check_param_dicts, fill_params, init_flags, zeros_like_first
from .shape_groups import MAX_SHAPE_SETS as MAX_SHAPE_SETS  # defined here before: still importable from here
from .shape_groups import ShapeGroups, lent_group
from .updates import (
    create_updates,
    load_optimizer_states,
    save_optimizer_states,
    update_params,
    update_params_on_kvstore,
)

__all__ = ["Module"]


class Module(BaseModule):
    """A symbol with its parameters, bound to input shapes on one or several contexts.

    Parameters
    ----------
    symbol : Symbol
    data_names, label_names : sequence of str
        The symbol's inputs fed from ``DataBatch.data`` and ``DataBatch.label``
        (``label_names=None`` for a module without labels).
    logger : logging.Logger, optional
    context : Context or list of Context
        Default ``mx.cpu()``; several contexts train data parallel.
    work_load_list : list of float, optional
        The share of each batch each context gets.
    fixed_param_names : list of str, optional
        Parameters that are not learned (no gradient, never updated).
    state_names : list of str, optional
        State inputs: arguments that are neither data nor parameters and that no
        iterator feeds (an RNN's carried state).  They start at zero, keep their
        value between batches, get no gradient, and are read and written with
        :meth:`get_states` and :meth:`set_states`.
    group2ctxs : dict or list of dict, optional
        Model parallelism (MXNet 1.x): where each ``ctx_group`` attribute runs, one context for
        every device or a list of one per device, or a list of ``group2ctx`` dicts, one per device.
    compression_params : None
        MXNet's gradient compression, which lazynd's KVStore does not have (refused).

    Examples
    --------
    >>> import lazynd as mx, lazynd_sym as sym
    >>> net = sym.SoftmaxOutput(sym.FullyConnected(sym.Variable("data"), num_hidden=2, name="fc"), name="softmax")
    >>> mod = Module(net, context=mx.cpu())
    >>> mod.bind(data_shapes=[("data", (4, 3))], label_shapes=[("softmax_label", (4,))])
    >>> mod.init_params()
    >>> sorted((name, a.shape) for name, a in mod.get_params()[0].items())
    [('fc_bias', (2,)), ('fc_weight', (2, 3))]
    >>> mod.output_shapes
    [('softmax_output', (4, 2))]
    """

    def __init__(
        self,
        symbol: Any,
        data_names: Sequence[str] = ("data",),
        label_names: Sequence[str] | None = ("softmax_label",),
        logger: Any = None,
        context: Any = None,
        work_load_list: Sequence[float] | None = None,
        fixed_param_names: Sequence[str] | None = None,
        state_names: Sequence[str] | None = None,
        group2ctxs: Any = None,
        compression_params: dict | None = None,
    ) -> None:
        super().__init__(logger)
        self._symbol = symbol
        self._context = check_devices(context, work_load_list, group2ctxs, compression_params)
        self._group2ctxs = group2ctxs  # (checked now, used at bind)
        self._work_load_list = list(work_load_list) if work_load_list is not None else None
        roles = sort_arguments(symbol, data_names, label_names, state_names, fixed_param_names, self.logger)
        self._data_names, self._label_names, self._state_names = roles.data, roles.labels, roles.states
        self._param_names, self._fixed_param_names = roles.params, roles.fixed_params
        self._aux_names = symbol.list_auxiliary_states()
        self._output_names = symbol.list_outputs()
        self._arg_params: dict[str, Any] | None = None
        self._aux_params: dict[str, Any] | None = None
        self._params_dirty = False
        self._optimizer: Any = None
        self._kvstore: Any = None
        self._update_on_kvstore = False
        self._updater: Any = None
        self._preload_opt_states: str | None = None
        self._exec_group: ModuleExecutorGroup | None = None
        self._groups = ShapeGroups()  # the executors of each set of input shapes
        self._grad_req: Any = "write"
        self._monitor: Any = None
        self._data_shapes: list[mx_io.DataDesc] | None = None
        self._label_shapes: list[mx_io.DataDesc] | None = None

    def _bound_group(self, caller: str, **stages: bool) -> ModuleExecutorGroup:
        """The executors of the current shapes, once the stages ``caller`` needs are done (see ``_require``)."""
        self._require(caller, **stages)
        assert self._exec_group is not None
        return self._exec_group

    # -- checkpoints -----------------------------------------------------------------------------
    @staticmethod
    def load(prefix: str, epoch: int, load_optimizer_states: bool = False, **kwargs: Any) -> Module:
        """A module from ``prefix-symbol.json`` and ``prefix-%04d.params`` (and, when asked, the
        optimizer states of ``prefix-%04d.states``, applied by ``init_optimizer``); ``kwargs`` go to ``Module``."""
        symbol, arg_params, aux_params = load_checkpoint(prefix, epoch)
        module = Module(symbol=symbol, **kwargs)
        module._arg_params, module._aux_params = arg_params, aux_params
        module.params_initialized = True
        if load_optimizer_states:
            module._preload_opt_states = states_file(prefix, epoch)
        return module

    def save_checkpoint(
        self, prefix: str, epoch: int, save_optimizer_states: bool = False, remove_amp_cast: bool = True
    ) -> None:
        """Write ``prefix-symbol.json``, ``prefix-%04d.params`` and, when asked, ``prefix-%04d.states``
        (``remove_amp_cast``: the symbol without its AMP casts, as ``Symbol.tojson``)."""
        arg_params, aux_params = self.get_params()
        save_checkpoint(prefix, epoch, self._symbol, arg_params, aux_params, remove_amp_cast)
        if save_optimizer_states:
            state_name = states_file(prefix, epoch)
            self.save_optimizer_states(state_name)
            self.logger.info('Saved optimizer state to "%s"', state_name)

    def save_optimizer_states(self, fname: str) -> None:
        """Write the optimizer states (of the KVStore's optimizer, or of the devices' updater) to ``fname``."""
        self._require("save_optimizer_states", optimizer=True)
        store = self._kvstore if self._update_on_kvstore else None
        save_optimizer_states(fname, store, self._updater, self._bound_group("save_optimizer_states").param_names)

    def load_optimizer_states(self, fname: str) -> None:
        """Restore optimizer states written by :meth:`save_optimizer_states`."""
        self._bound_group("load_optimizer_states", optimizer=True)
        store = self._kvstore if self._update_on_kvstore else None
        load_optimizer_states(fname, store, self._updater)

    # -- names and shapes ------------------------------------------------------------------------
    @property
    def data_names(self) -> list[str]:
        return self._data_names

    @property
    def label_names(self) -> list[str]:
        return self._label_names

    @property
    def output_names(self) -> list[str]:
        return self._output_names

    @property
    def data_shapes(self) -> list[mx_io.DataDesc]:
        self._require("data_shapes", params=False)
        return list(self._data_shapes or [])

    @property
    def label_shapes(self) -> list[mx_io.DataDesc] | None:
        self._require("label_shapes", params=False)
        return self._label_shapes

    @property
    def output_shapes(self) -> list[tuple[str, tuple[int, ...]]]:
        return self._bound_group("output_shapes", params=False).output_shapes

    # -- binding ---------------------------------------------------------------------------------
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
        """Build the executors for ``data_shapes`` and ``label_shapes`` (``(name, shape)`` pairs or ``DataDesc``).

        ``shared_module`` (bound, with parameters) lends its parameter arrays: both
        modules then train the same weights, as the buckets of a ``BucketingModule`` do;
        and, as in MXNet, its optimizer if it has one (``update`` works on either module).
        """
        if not flag("Module.bind", "force_rebind", force_rebind) and self.binded:
            self.logger.warning("Module.bind: already bound, ignoring bind() (pass force_rebind=True to rebind)")
            return
        # the arguments are checked before a force_rebind drops the executors: a refused bind leaves the module as it was
        for_training, inputs_need_grad = bind_flags(for_training, inputs_need_grad)
        shared_group = lent_group(shared_module, Module, self._param_names + self._aux_names)
        if self._params_dirty:  # the new executors start from the trained values (MXNet's lose the last updates)
            self.get_params()
        self._exec_group, self._groups, self.binded = None, ShapeGroups(), False
        self.for_training, self.inputs_need_grad, self._grad_req = for_training, inputs_need_grad, grad_req
        self._switch_group(data_shapes, label_shapes, shared_group)
        self.binded = True
        if shared_module is not None:
            self.params_initialized = True
            self._arg_params, self._aux_params = shared_module._arg_params, shared_module._aux_params
            if shared_module.optimizer_initialized:  # as MXNet, the lender's optimizer is shared too
                self.borrow_optimizer(shared_module)
        elif self.params_initialized and self._exec_group is not None:  # parameters given before binding (Module.load)
            self._exec_group.set_params(self._arg_params or {}, self._aux_params or {})

    def reshape(self, data_shapes: Any, label_shapes: Any = None) -> None:
        """Run on inputs of new shapes (another batch size) with the same parameters; ``forward`` calls it when a
        batch's shapes differ.  The executors of the last :data:`MAX_SHAPE_SETS` sets of shapes are kept for reuse."""
        self._require("reshape", params=False)
        self._switch_group(data_shapes, label_shapes, self._exec_group)

    def _switch_group(self, data_shapes: Any, label_shapes: Any, shared_group: ModuleExecutorGroup | None) -> None:
        """Make the executors of these shapes current, binding them (sharing ``shared_group``'s arrays) if new."""
        data, labels = check_inputs(
            data_shapes, label_shapes, self._data_names, self._label_names, self._symbol.list_arguments()
        )
        self._exec_group = self._groups.switch(data, labels, lambda: self._bind_group(data, labels, shared_group))
        self._data_shapes, self._label_shapes = data, (labels or None)

    def _bind_group(self, data: list, labels: list, shared_group: ModuleExecutorGroup | None) -> ModuleExecutorGroup:
        """The executors of new shapes, sharing ``shared_group``'s arrays, watched by the module's monitor."""
        group = ModuleExecutorGroup(
            self._symbol,
            self._context,
            self._work_load_list,
            data,
            labels,
            self._param_names,
            self.for_training,
            self.inputs_need_grad,
            shared_group=shared_group,
            fixed_param_names=self._fixed_param_names,
            grad_req=self._grad_req,
            state_names=self._state_names,
            group2ctxs=self._group2ctxs,
        )
        if self._monitor is not None:
            group.install_monitor(self._monitor)
        return group

    # -- parameters ------------------------------------------------------------------------------
    def init_params(
        self,
        initializer: Any = init_module.Uniform(0.01),
        arg_params: dict[str, Any] | None = None,
        aux_params: dict[str, Any] | None = None,
        allow_missing: bool = False,
        force_init: bool = False,
        allow_extra: bool = False,
    ) -> None:
        """Give every parameter a value: from ``arg_params``/``aux_params`` where named, else ``initializer``.

        A name missing from a given dict is an error unless ``allow_missing``; names the module does not have
        are ignored (``allow_extra``: MXNet's signature).  Already initialized parameters are kept unless
        ``force_init``, with a warning as in MXNet."""
        allow_missing, force_init = init_flags("Module.init_params", allow_missing, force_init)
        if self.params_initialized and not force_init:
            warn_from_user_code("Module.init_params: already initialized and force_init=False; ignored")
            return
        check_param_dicts("init_params", arg_params, aux_params)
        group = self._bound_group("init_params", params=False)
        if self._arg_params is None:
            self._arg_params = zeros_like_first(group.param_names, group.param_arrays)
        if self._aux_params is None:
            self._aux_params = zeros_like_first(group.aux_names, group.aux_arrays)
        attrs = self._symbol.attr_dict()
        fill_params(self._arg_params, arg_params, initializer, allow_missing, attrs)
        fill_params(self._aux_params, aux_params, initializer, allow_missing, attrs)
        self.params_initialized, self._params_dirty = True, False
        group.set_params(self._arg_params, self._aux_params)

    def get_params(self) -> tuple[dict[str, Any], dict[str, Any]]:
        """``(arg_params, aux_params)`` on the host, up to date from the devices (unbound after ``Module.load``)."""
        self._require("get_params", binded=False)
        assert self._arg_params is not None and self._aux_params is not None
        if self._params_dirty and self._exec_group is not None:
            self._sync_params_from_devices()
        return self._arg_params, self._aux_params

    def _sync_params_from_devices(self) -> None:
        """Copy the devices' parameters (averaged) into ``arg_params``/``aux_params``: MXNet 1.x's private
        method, which programs call after ``update`` (its parallel_actor_critic example does)."""
        self._bound_group("_sync_params_from_devices").copy_params_to(self._arg_params or {}, self._aux_params or {})
        self._params_dirty = False

    # -- optimizer -------------------------------------------------------------------------------
    def init_optimizer(
        self,
        kvstore: Any = "local",
        optimizer: Any = "sgd",
        optimizer_params: Any = (("learning_rate", 0.01),),
        force_init: bool = False,
    ) -> None:
        """Create the optimizer (a name with ``optimizer_params``, or an ``Optimizer``) and the KVStore."""
        group = self._bound_group("init_optimizer")
        if self._optimizer_kept(force_init):
            return
        # the devices' trained values, not the host's older copy: a store running the optimizer starts from them
        arg_params, _ = self.get_params()
        self._optimizer, self._kvstore, self._update_on_kvstore, self._updater = create_updates(
            kvstore, optimizer, optimizer_params, self._symbol, group, arg_params
        )
        self.optimizer_initialized = True
        if self._preload_opt_states is not None:
            self.load_optimizer_states(self._preload_opt_states)
            self._preload_opt_states = None

    def borrow_optimizer(self, shared_module: Module) -> None:
        """Use ``shared_module``'s optimizer, KVStore and updater (the buckets of one model share them)."""
        if not shared_module.optimizer_initialized:
            raise LazyNDError("Module.borrow_optimizer: the shared module has no optimizer yet")
        self._optimizer, self._kvstore = shared_module._optimizer, shared_module._kvstore
        self._update_on_kvstore, self._updater = shared_module._update_on_kvstore, shared_module._updater
        self.optimizer_initialized = True

    # -- computing -------------------------------------------------------------------------------
    def forward(self, data_batch: mx_io.DataBatch | list[mx_io.DataBatch], is_train: bool | None = None) -> None:
        """Run ``data_batch`` (or a list of one batch per device) forward (``is_train``: ``for_training``)."""
        self._require("forward")
        is_train = self.for_training if is_train is None else bool(is_train)
        if is_train and not self.for_training:
            raise LazyNDError("Module.forward: is_train=True on a module bound with for_training=False")
        if isinstance(data_batch, list):  # one batch per device, as MXNet 1.x takes them
            data_batch = join_device_batches(data_batch, self._data_shapes or [], self._work_load_list, self._context)
        data, labels = shapes_of_batch(data_batch, self._data_shapes or [], self._label_shapes)
        if data != self._data_shapes or labels != self._label_shapes:
            self.reshape(data, labels)
        self._bound_group("forward").forward_batch(data_batch, is_train)

    def backward(self, out_grads: Any = None) -> None:
        """Backward from the loss outputs, or from ``out_grads`` (one per output, full batch)."""
        self._bound_group("backward").backward_with(out_grads)

    def update(self) -> None:
        """Apply the optimizer to the gradients of the last backward."""
        group = self._bound_group("update", optimizer=True)
        if not self.for_training:  # no gradients to apply: refused, as backward is, rather than a silent no-op
            raise LazyNDError("Module.update: the module was bound with for_training=False; bind it for training")
        self._params_dirty = True
        if self._update_on_kvstore:
            update_params_on_kvstore(group.param_arrays, group.grad_arrays, self._kvstore)
        else:
            update_params(group.param_arrays, group.grad_arrays, self._updater, len(self._context), self._kvstore)

    def get_outputs(self, merge_multi_context: bool = True) -> list[Any]:
        return self._bound_group("get_outputs").get_outputs(merge_multi_context)

    def get_input_grads(self, merge_multi_context: bool = True) -> list[Any]:
        return self._bound_group("get_input_grads").get_input_grads(merge_multi_context)

    def get_states(self, merge_multi_context: bool = True) -> list[Any]:
        """The state inputs (``state_names``): one array per state, or per state one array per device.

        MXNet 0.9's executor group refuses ``merge_multi_context=True`` for states;
        here a state that follows the batch is joined over the devices like the outputs.
        """
        return self._bound_group("get_states").get_states(merge_multi_context)

    def set_states(self, states: Any = None, value: float | None = None) -> None:
        """Set the state inputs: ``states`` (per state, a list with one array per device, or one array)
        or the scalar ``value`` everywhere; exactly one of the two."""
        self._bound_group("set_states").set_states(states, value)

    def update_metric(self, eval_metric: Any, labels: Any, pre_sliced: bool = False) -> None:
        """Update ``eval_metric`` with the outputs of the last forward against ``labels``, named in the
        order bound (a batch's; ``label_names``' if bound without labels).  ``pre_sliced``: one list of
        labels per device (its rows of the batch, in the order of the contexts), as MXNet's loops pass them.
        """
        group = self._bound_group("update_metric")
        group.update_metric_with(eval_metric, labels, pre_sliced, group.label_names or self._label_names)

    def install_monitor(self, mon: Any) -> None:
        """Have ``mon`` (an ``mx.mon.Monitor``) watch every executor."""
        self._require("install_monitor", params=False)
        for group in self._groups.values():  # (each checks ``mon`` before the module keeps it for new shapes)
            group.install_monitor(mon)
        self._monitor = mon
