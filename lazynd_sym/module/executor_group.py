"""The executors of one :class:`~lazynd_sym.module.Module`: FeedForward's data-parallel group, bound Module's way.

:class:`ModuleExecutorGroup` is a
:class:`~lazynd_sym.executor_group.DataParallelExecutorGroup` (the batch split
over the devices, loading, forward, backward, metrics, parameter copies and
monitors are that class's) whose executors are bound as a Module asks:

- the labels are optional (a module that only predicts, or the first module of
  a ``SequentialModule``, has none);
- fixed parameters get no gradient; the data inputs get one when
  ``inputs_need_grad`` (the next module in a chain sends its input gradients back);
- with ``shared_group`` (the bucket of another ``BucketingModule`` key) every
  parameter, gradient and auxiliary state of the same name *is* that group's
  array, so all the buckets train one set of weights; a state input of the same
  name and shape is shared too, so its value carries over;
- the other inputs (data, labels, states, and arguments that are not parameters) live in
  ``shared_data_arrays`` (one dict per device, MXNet's shared buffer; the same dicts as
  ``shared_group``'s when there is one), and an array of the same name, shape and dtype
  there is reused;
- state inputs (``state_names``: inputs that are neither data nor parameters,
  such as an RNN's carried hidden state) start at zero, get no gradient, and are
  read and written with :meth:`ModuleExecutorGroup.get_states` and
  :meth:`ModuleExecutorGroup.set_states`.

It adds what a Module reads back: outputs and input gradients merged over the
devices, the full-batch output shapes, and backward with gradients of the outputs.
A Module's device arguments are checked by :mod:`lazynd_sym.module.devices`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from lazynd import ndarray as nd
from lazynd.context import Context
from lazynd.errors import ArgumentTypeError, DataError, DataValueError, LazyNDError, ShapeError
from lazynd.io import DataBatch, DataDesc

from .. import executor_group as base
from ..executor.placed import PlacedExecutor
from ..executor_group import batch_axis_of, batch_sizes, device_shape, split_input_slice, take_part
from ..inference import shapes_to_bind
from .devices import check_work_load, group2ctx_per_device
from .inputs import _join_device_labels

__all__ = [
    "DataParallelExecutorGroup",
    "ModuleExecutorGroup",
    "join_device_parts",
]


def join_device_parts(per_device: list[list[Any]], axes: Sequence[int]) -> list[Any]:
    """One array per output: the devices' parts joined along the output's batch axis (on the first device).

    ``per_device[i][k]`` is output ``i`` on device ``k``; with one device its arrays are returned as they are.
    Parts that are None (the gradient of an input bound with grad_req 'null') give None, as in MXNet.
    """
    merged: list[Any] = []
    for parts, axis in zip(per_device, axes, strict=True):
        if any(p is None for p in parts):
            merged.append(None)
            continue
        if len(parts) == 1 or axis < 0:  # one device, or no batch axis: every device holds the whole (MXNet's rule)
            merged.append(parts[0])
            continue
        home = parts[0].context
        merged.append(nd.concatenate([p.as_in_context(home) for p in parts], axis=axis))
    return merged


def _split_axis(whole: tuple[int, ...], parts: list[tuple[int, ...]]) -> int | None:
    """The axis along which a state of shape ``whole`` is split into the devices' ``parts``; None: not split."""
    for shape in parts:
        for axis, (w, p) in enumerate(zip(whole, shape, strict=False)):
            if w != p:
                return axis
    return None


def _output_batch_axis(symbol: Any, name: str) -> int:
    """The batch axis of output ``name``: the ``'N'`` of its ``__layout__`` attribute (0 without one), as MXNet."""
    layout = symbol[name].attr("__layout__")
    return DataDesc.get_batch_axis(layout) if layout and "N" in layout else 0


def _grad_req_of(grad_req: Any, name: str) -> str:
    if isinstance(grad_req, str):
        return grad_req
    if isinstance(grad_req, dict):
        return grad_req.get(name, "write")
    raise DataError(f"Module.bind: grad_req must be a str or a dict of str, got {type(grad_req).__name__}")


class ModuleExecutorGroup(base.DataParallelExecutorGroup):
    """One executor per context for a Module, on its slice of each batch.

    Parameters
    ----------
    symbol : Symbol
    contexts : list of Context
    workload : list of float or None
        Each device's share of the batch (MXNet's ``work_load_list``).
    data_shapes, label_shapes : list of DataDesc or (name, shape)
        The inputs with their full-batch shapes; ``label_shapes`` may be empty or None.
    param_names : list of str
        Every learned argument, fixed ones included (they keep their index, as in MXNet).
    for_training, inputs_need_grad : bool
    shared_group : ModuleExecutorGroup, optional
        Take the parameters, gradients and auxiliary states of this group (same names, same shapes),
        and share its ``shared_data_arrays``.
    logger : optional
        Accepted for MXNet's signature; unused.
    fixed_param_names : list of str
        Parameters that get no gradient (their ``grad_arrays`` entries are None).
    grad_req : str or dict
        ``'write'``, ``'add'`` or ``'null'``, for all or per argument name.
    state_names : list of str
        State inputs: set by the user, kept between batches, no gradient.

    Examples
    --------
    >>> import lazynd as mx, lazynd_sym as sym
    >>> net = sym.FullyConnected(sym.Variable("data"), num_hidden=2, name="fc")
    >>> group = ModuleExecutorGroup(net, [mx.cpu(0), mx.cpu(1)], None, [DataDesc("data", (4, 3))], [],
    ...                             ["fc_weight", "fc_bias"], for_training=True, inputs_need_grad=False)
    >>> [exe.arg_dict["data"].shape for exe in group.execs], group.output_shapes
    ([(2, 3), (2, 3)], [('fc_output', (4, 2))])
    """

    # the parent's __init__ binds with simple_bind and cannot share arrays: this one sets the same attributes
    def __init__(
        self,
        symbol: Any,
        contexts: Sequence[Context],
        workload: Sequence[float] | None,
        data_shapes: Sequence[Any],
        label_shapes: Sequence[Any] | None,
        param_names: Sequence[str],
        for_training: bool,
        inputs_need_grad: bool,
        shared_group: ModuleExecutorGroup | None = None,
        logger: Any = None,
        fixed_param_names: Sequence[str] | None = None,
        grad_req: Any = "write",
        state_names: Sequence[str] | None = None,
        group2ctxs: Any = None,
    ) -> None:
        self.symbol = symbol
        self.contexts = list(contexts)
        self.group2ctxs = group2ctx_per_device(group2ctxs, len(self.contexts))
        check_work_load(workload, len(self.contexts))
        workload = [1] * len(self.contexts) if workload is None else list(workload)
        self.data_shapes = [d if isinstance(d, DataDesc) else DataDesc(*d) for d in data_shapes]
        self.label_shapes = [d if isinstance(d, DataDesc) else DataDesc(*d) for d in label_shapes or ()]
        self.data_names = [d.name for d in self.data_shapes]
        self.label_names = [d.name for d in self.label_shapes]
        descs = self.data_shapes + self.label_shapes
        arg_names = symbol.list_arguments()
        unknown = [d.name for d in descs if d.name not in arg_names]
        if unknown:
            raise DataValueError(
                f"Module.bind: inputs {unknown} are not arguments of the symbol; its arguments: {arg_names}"
            )
        self.input_names = [d.name for d in descs]
        self.batch_axes = {d.name: batch_axis_of(d) for d in descs}
        sizes = batch_sizes(descs, self.batch_axes)
        if not sizes or len(set(sizes.values())) != 1:
            raise DataError(
                "Module.bind: the inputs with a batch axis must share one batch size along it (and one input at "
                f"least must have one), got {sizes}"
            )
        self.batch_size = next(iter(sizes.values()))
        self.slices = split_input_slice(self.batch_size, workload)
        self.param_names = list(param_names)
        self.state_names = list(state_names or ())
        self.aux_names = symbol.list_auxiliary_states()
        self.for_training, self.inputs_need_grad = bool(for_training), bool(inputs_need_grad)
        fixed = set(fixed_param_names or ())
        reqs = {}
        for name in arg_names:
            learned = name in self.param_names and name not in fixed
            wanted = learned or (name in self.data_names and self.inputs_need_grad)
            reqs[name] = _grad_req_of(grad_req, name) if (self.for_training and wanted) else "null"
        self.grad_req = reqs
        dtypes = {d.name: d.dtype for d in descs}
        self.shared_data_arrays: list[dict[str, Any]] = (
            shared_group.shared_data_arrays if shared_group is not None else [{} for _ in self.contexts]
        )
        self.execs = [
            self._bind_one(k, ctx, part, dtypes, shared_group)
            for k, (ctx, part) in enumerate(zip(self.contexts, self.slices, strict=True))
        ]
        self._input_arrays: dict[str, list[Any]] = {}
        self.param_arrays = [[exe.arg_dict[name] for exe in self.execs] for name in self.param_names]
        self.grad_arrays = [[exe.grad_dict.get(name) for exe in self.execs] for name in self.param_names]
        self.aux_arrays = [[exe.aux_dict[name] for exe in self.execs] for name in self.aux_names]
        self.state_arrays = [[exe.arg_dict[name] for exe in self.execs] for name in self.state_names]
        full_arg_shapes, out_shapes, _ = symbol.infer_shape(**{d.name: d.shape for d in descs})
        full_shapes = dict(zip(arg_names, full_arg_shapes, strict=True))
        # a state whose shape follows the batch is split over the devices like the batch, along
        # its batch axis (the one where a device's part differs from the whole); None: not split
        self.state_axes = [
            _split_axis(tuple(full_shapes[name]), [tuple(a.shape) for a in arrays])
            for name, arrays in zip(self.state_names, self.state_arrays, strict=True)
        ]
        self.output_shapes = list(zip(symbol.list_outputs(), [tuple(s) for s in out_shapes], strict=True))
        self.output_axes = [_output_batch_axis(symbol, name) for name in symbol.list_outputs()]
        self._set_mxnet_attributes(arg_names, workload, fixed_param_names)

    def _set_mxnet_attributes(self, arg_names: list[str], workload: list[float], fixed: Any) -> None:
        """The attributes of MXNet 1.x's group that user code reads (``data_arrays``: per input, the
        ``(slice of the batch, device array)`` pairs; ``input_grad_arrays``: per data input, the devices'
        gradients, or None without ``inputs_need_grad``; the batch axes as ``*_layouts``)."""
        self.arg_names, self.workload, self.fixed_param_names = arg_names, workload, list(fixed or ())
        self.output_names = self.symbol.list_outputs()
        self.num_outputs = len(self.output_names)
        self.data_layouts = [self.batch_axes[name] for name in self.data_names]
        self.label_layouts = [self.batch_axes[name] for name in self.label_names]
        self.output_layouts = self.output_axes
        inputs = self.data_names + self.label_names
        pairs = [[(part, exe.arg_dict[n]) for part, exe in zip(self.slices, self.execs, strict=True)] for n in inputs]
        self.data_arrays = pairs[: len(self.data_names)]
        self.label_arrays = pairs[len(self.data_names) :] if self.label_names else None
        self.input_grad_arrays = (
            [[exe.grad_dict[name] for exe in self.execs] for name in self.data_names] if self.inputs_need_grad else None
        )

    def _bind_one(
        self, k: int, ctx: Context, part: slice, dtypes: dict[str, Any], shared: ModuleExecutorGroup | None
    ) -> Any:
        """The executor of device ``k``: inputs of its slice, the shared group's arrays where there is one."""
        descs = self.data_shapes + self.label_shapes
        shapes = {d.name: device_shape(d.shape, self.batch_axes[d.name], part) for d in descs}
        hint = "; give each as a data or label shape, or a shape= on its Variable"
        arg_shapes, _, aux_shapes = shapes_to_bind(self.symbol, shapes, "Module.bind", "the inputs ", hint)
        arg_types, _, aux_types = self.symbol.infer_type_partial(**dtypes)  # (the full form warns)
        if None in arg_types + aux_types:
            arg_types, aux_types = [np.float32] * len(arg_shapes), [np.float32] * len(aux_shapes)
        source = shared.execs[k] if shared is not None else None
        group2ctx = self.group2ctxs[k]
        # with ctx_group placement each variable lives where its group runs
        where = PlacedExecutor.variable_contexts(self.symbol, ctx, group2ctx) if group2ctx else {}

        def array(table: str, name: str, shape: tuple, dtype: Any) -> Any:
            if source is not None and name in self.state_names:
                old = source.arg_dict.get(name)
                if old is not None and tuple(old.shape) == tuple(shape):
                    return old  # a state of the same shape keeps its value across buckets and reshapes
            elif source is not None and name in self.param_names + self.aux_names:
                old = getattr(source, table).get(name)
                if old is not None:
                    if tuple(old.shape) != tuple(shape):
                        raise ShapeError(
                            f"Module.bind: {name!r} has shape {tuple(shape)} here but {tuple(old.shape)} in the "
                            "shared module (the default bucket's, or this module's own before a reshape or a forward "
                            "of new input shapes); a parameter keeps one shape: check the input shapes"
                        )
                    return old
            if table == "aux_dict" or name in self.param_names:
                return nd.zeros(shape, ctx=where.get(name, ctx), dtype=dtype)
            buffer, key = self.shared_data_arrays[k], name if table == "arg_dict" else f"grad of {name}"
            old = buffer.get(key)
            if old is None or tuple(old.shape) != tuple(shape) or old.dtype != np.dtype(dtype):
                buffer[key] = old = nd.zeros(shape, ctx=where.get(name, ctx), dtype=dtype)
            return old

        names = self.symbol.list_arguments()
        args = {n: array("arg_dict", n, s, t) for n, s, t in zip(names, arg_shapes, arg_types, strict=True)}
        grads = {
            n: array("grad_dict", n, s, t)
            for n, s, t in zip(names, arg_shapes, arg_types, strict=True)
            if self.grad_req[n] != "null"
        }
        aux = {n: array("aux_dict", n, s, t) for n, s, t in zip(self.aux_names, aux_shapes, aux_types, strict=True)}
        return self.symbol.bind(ctx, args, args_grad=grads, grad_req=self.grad_req, aux_states=aux, group2ctx=group2ctx)

    # -- running ---------------------------------------------------------------------------------
    def forward_batch(self, data_batch: DataBatch, is_train: bool) -> None:
        """Load ``data_batch`` (its labels where group and batch have them: MXNet takes data alone) and run forward."""
        self.load_batch(self.data_names, data_batch.data)
        if self.label_names and (labels := getattr(data_batch, "label", None)):
            self.load_batch(self.label_names, labels)
        self.forward(is_train=is_train)

    def backward_with(self, out_grads: Sequence[Any] | None = None) -> None:
        """Backward on every device; ``out_grads`` (full batch, one per output) are split like the batch."""
        if not self.for_training:
            raise LazyNDError("Module.backward: the module was bound with for_training=False; bind it for training")
        if out_grads is None:
            # the parent's, named: MXNet's group (mxnet_executor_group) gives backward another signature
            base.DataParallelExecutorGroup.backward(self)
            return
        grads: list[Any] = list(out_grads) if isinstance(out_grads, (list, tuple)) else [out_grads]
        not_arrays = [type(g).__name__ for g in grads if not isinstance(g, nd.NDArray)]
        if not_arrays:
            raise ArgumentTypeError(f"Module.backward: out_grads must be NDArrays, one per output; got {not_arrays}")
        for exe, part in zip(self.execs, self.slices, strict=True):
            parts = [take_part(g, axis, part) for g, axis in zip(grads, self.output_axes, strict=False)]
            exe.backward(out_grads=[g.as_in_context(exe.outputs[0].context) for g in parts])

    def update_metric_with(
        self, eval_metric: Any, labels: Any, pre_sliced: bool = False, label_names: Sequence[str] | None = None
    ) -> None:
        """Update ``eval_metric`` with the outputs of the last forward against the batch's ``labels``.

        ``pre_sliced``: ``labels`` holds one list of labels per device (each device's rows of
        the batch, in the order of the contexts), as MXNet's multi-device loops pass them.
        ``label_names`` (default: the group's label inputs) name the labels in order.
        """
        self._check_forward_ran("update_metric")
        if pre_sliced:
            labels = _join_device_labels(labels, len(self.execs))
        labels = list(labels or [])
        known = list(self.label_names if label_names is None else label_names)
        names = (known + [""] * len(labels))[: len(labels)]  # an unknown name splits on axis 0
        base.DataParallelExecutorGroup.update_metric(self, eval_metric, names, labels)  # as in backward_with

    # -- states ----------------------------------------------------------------------------------
    def set_states(self, states: Sequence[Any] | None = None, value: float | None = None) -> None:
        """Give the state inputs ``states`` (per state, one array per device, or one array split like
        the batch) or fill them all with the scalar ``value``; exactly one of the two."""
        if (states is None) == (value is None):
            raise DataError("set_states: give exactly one of states and value")
        if value is not None:
            for arrays in self.state_arrays:
                for array in arrays:
                    array[:] = value
            return
        assert states is not None
        if len(states) != len(self.state_names):
            raise DataError(f"set_states: {len(states)} states given for the state inputs {self.state_names}")
        for name, source, targets in zip(self.state_names, states, self.state_arrays, strict=True):
            for part, target in zip(self._state_parts(name, source, targets), targets, strict=True):
                if tuple(part.shape) != tuple(target.shape):
                    raise ShapeError(
                        f"set_states: state {name!r} has shape {tuple(target.shape)}, given {tuple(part.shape)}"
                    )
                part.copyto(target)

    def _state_parts(self, name: str, source: Any, targets: list[Any]) -> list[Any]:
        """The part of ``source`` each device gets: a list is one array per device; one array is
        split like the batch when the state follows it, else copied to every device."""
        if isinstance(source, (list, tuple)):
            if len(source) != len(targets):
                raise DataError(
                    f"set_states: state {name!r} needs {len(targets)} arrays (one per device), given {len(source)}"
                )
            return list(source)
        if not isinstance(source, nd.NDArray):
            raise DataError(
                f"set_states: state {name!r} must be an NDArray or a list of them, got {type(source).__name__}"
            )
        axis = self.state_axes[self.state_names.index(name)]
        if len(targets) == 1 or axis is None:
            return [source] * len(targets)
        return [source[(slice(None),) * axis + (part,)] for part in self.slices]

    def get_states(self, merge_multi_context: bool = True) -> list[Any]:
        """The state inputs: one array per state (the devices' parts joined when the state follows the
        batch), or per state a list with one array per device."""
        if not merge_multi_context:
            return [list(arrays) for arrays in self.state_arrays]
        return [
            arrays[0] if axis is None else join_device_parts([arrays], [axis])[0]
            for arrays, axis in zip(self.state_arrays, self.state_axes, strict=True)
        ]

    # -- reading back ----------------------------------------------------------------------------
    def _check_forward_ran(self, caller: str) -> None:
        """Refuse to read the outputs before a forward has written them (MXNet hands out the unwritten buffers)."""
        if not self.forward_ran:
            shapes = ", ".join(f"{d.name} {tuple(d.shape)}" for d in self.data_shapes)
            raise LazyNDError(f"{caller}: no forward has run on the executors of these input shapes ({shapes})")

    def get_outputs(self, merge_multi_context: bool = True) -> list[Any]:
        """The outputs: one array per output (batch joined), or per output a list with one array per device."""
        self._check_forward_ran("get_outputs")
        per_device = [[exe.outputs[i] for exe in self.execs] for i in range(len(self.output_shapes))]
        if not merge_multi_context:
            return per_device
        return join_device_parts(per_device, self.output_axes)

    def get_input_grads(self, merge_multi_context: bool = True) -> list[Any]:
        """The gradients of the data inputs (bound with ``inputs_need_grad``), as :meth:`get_outputs`."""
        if not self.inputs_need_grad:
            raise LazyNDError("Module.get_input_grads: bind the module with inputs_need_grad=True (and for_training)")
        # an input bound with grad_req 'null' has no gradient array: None, as MXNet gives
        per_device = [[exe.grad_dict.get(name) for exe in self.execs] for name in self.data_names]
        if not merge_multi_context:
            return per_device
        return join_device_parts(per_device, [self.batch_axes[name] for name in self.data_names])


# MXNet 1.x's executor group, with its method signatures, for the modules users wrote; it builds on
# the class above, so it is imported after it
from .mxnet_executor_group import DataParallelExecutorGroup  # noqa: E402
