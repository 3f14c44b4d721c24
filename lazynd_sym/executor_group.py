"""Data parallelism over several devices: one executor per device, each on a slice of the batch.

``DataParallelExecutorGroup`` binds the symbol once per context with the batch
split along the batch axis of each input (the ``'N'`` of its ``DataDesc``
layout), in proportion to ``work_load_list``.  Every batch is copied slice by
slice into the executors, which run forward and backward side by side on the
engine.  The parameters of one name on all devices are exposed together
(``param_arrays[i][k]`` is parameter ``i`` on device ``k``), ready to be summed
through a KVStore and updated; without a store each device may update its own copy.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from lazynd import metric as metric_module
from lazynd import ndarray as nd
from lazynd.context import Context
from lazynd.errors import ArgumentTypeError, DataError, DataValueError
from lazynd.io import DataDesc

# the operator functions are generated at import time, so type checkers cannot see them
_nd_ops: Any = nd

__all__ = [
    "DataParallelExecutorGroup",
    "batch_axis_of",
    "batch_sizes",
    "device_shape",
    "split_input_slice",
    "take_part",
]


def split_input_slice(batch_size: int, work_load_list: Sequence[float]) -> list[slice]:
    """Split ``range(batch_size)`` into one slice per device, sized in proportion to ``work_load_list``.

    Examples
    --------
    >>> split_input_slice(10, [1, 1])
    [slice(0, 5, None), slice(5, 10, None)]
    >>> split_input_slice(10, [1, 3])
    [slice(0, 2, None), slice(2, 10, None)]
    """
    loads = [float(w) for w in work_load_list]
    if not loads or any(not w > 0 for w in loads):
        raise DataError(f"work_load_list must hold one positive number per device, got {list(work_load_list)}")
    total = sum(loads)
    sizes = [round(w * batch_size / total) for w in loads]
    sizes[-1] += batch_size - sum(sizes)
    slices, start = [], 0
    for size in sizes:
        stop = min(start + size, batch_size)
        if stop <= start:
            # a ValueError, as MXNet's ("Too many slices"), so code catching that catches this
            raise DataValueError(
                f"a batch of {batch_size} cannot be split over {len(loads)} devices with work loads {loads}: "
                "some devices would get no examples (use a larger batch or fewer devices)"
            )
        slices.append(slice(start, stop))
        start = stop
    return slices


def batch_axis_of(desc: Any) -> int:
    """The batch axis of an input: the ``'N'`` of its layout (0 without a layout, or for a 1-D label;
    -1 for a layout without ``'N'``: an input with no batch axis, copied whole to every device)."""
    layout = getattr(desc, "layout", None)
    axis = DataDesc.get_batch_axis(layout) if layout else 0
    return axis if len(desc[1]) > axis else 0


def batch_sizes(descs: Sequence[Any], axes: dict[str, int]) -> dict[str, int]:
    """The batch size of each input that has a batch axis (``axes``: name -> batch axis)."""
    return {desc[0]: int(desc[1][axes[desc[0]]]) for desc in descs if axes[desc[0]] >= 0}


def device_shape(shape: Sequence[int], axis: int, part: slice) -> tuple[int, ...]:
    """The shape of a device's part ``part`` of an input of ``shape`` (the whole, where ``axis`` is -1)."""
    out = list(shape)
    if axis >= 0:
        out[axis] = part.stop - part.start
    return tuple(out)


def take_part(array: Any, axis: int, index: slice) -> Any:
    """The rows ``index`` of ``array`` along ``axis`` (a device's part of a batch)."""
    if axis == 0:
        return array[index]
    return _nd_ops.slice_axis(array, axis=axis, begin=index.start, end=index.stop)


def _unpadded(output: Any, part: slice, stop: int) -> Any:
    """An executor's output without the padding rows of its slice ``part`` (rows before ``stop`` kept).

    Only an output laid out by batch (its first axis the slice's rows) loses rows; others, such as an
    unrolled RNN's ``(batch * time, classes)``, are whole, as MXNet hands every output to the metric.
    """
    rows = part.stop - part.start
    if stop - part.start < rows and output.shape[:1] == (rows,):
        return output[: stop - part.start]
    return output


class DataParallelExecutorGroup:
    """Executors of one symbol on several devices, each bound to its slice of the batch.

    Parameters
    ----------
    symbol : Symbol
    contexts : list of Context
    work_load_list : list of float, optional
        Relative share of the batch for each device (default: equal).
    input_descs : list of DataDesc or (name, shape)
        The data and label inputs with the full batch shape.
    param_names : list of str
        The arguments that are learned (they get gradients when ``for_training``).
    arg_params, aux_params : dict of str to NDArray
        Starting values, copied onto every device.
    for_training : bool
    shared_group : DataParallelExecutorGroup, optional
        Another group (the bucket of another key of a ``sym_gen``) whose parameters, their
        gradients and the auxiliary states this one's executors use, the same arrays, so
        that an update through either is seen by both; ``arg_params`` and ``aux_params``
        are then not copied.
    bucket_key : optional
        The key of that bucket, for error messages.

    Examples
    --------
    >>> import lazynd as mx, lazynd_sym as sym
    >>> net = sym.FullyConnected(sym.Variable("data"), num_hidden=2, name="fc")
    >>> params = {"fc_weight": mx.nd.ones((2, 3)), "fc_bias": mx.nd.zeros((2,))}
    >>> group = DataParallelExecutorGroup(
    ...     net, [mx.cpu(0), mx.cpu(1)], None, [("data", (4, 3))], ["fc_weight", "fc_bias"], params, {}, True)
    >>> [exe.arg_dict["data"].shape for exe in group.execs]
    [(2, 3), (2, 3)]
    """

    forward_ran = False  # (until then the outputs hold whatever their fresh buffers held)
    # per label_names given to update_metric: the metric's label keys, the labels' batch axes and the
    # symbol's output names (made at the first update_metric)
    _label_layouts: dict[tuple, tuple[list[str], list[int], list[str]]] | None = None

    def __init__(
        self,
        symbol: Any,
        contexts: Sequence[Context],
        work_load_list: Sequence[float] | None,
        input_descs: Sequence[Any],
        param_names: Sequence[str],
        arg_params: dict[str, Any],
        aux_params: dict[str, Any],
        for_training: bool,
        shared_group: DataParallelExecutorGroup | None = None,
        bucket_key: Any = None,
    ) -> None:
        self.symbol = symbol
        self.contexts = list(contexts)
        if work_load_list is None:
            work_load_list = [1] * len(self.contexts)
        if len(work_load_list) != len(self.contexts):
            raise DataError(
                f"work_load_list has {len(work_load_list)} entries for {len(self.contexts)} devices; give one per device"
            )
        self.input_names = [desc[0] for desc in input_descs]
        self.batch_axes = {desc[0]: batch_axis_of(desc) for desc in input_descs}
        sizes = batch_sizes(input_descs, self.batch_axes)
        if not sizes or len(set(sizes.values())) != 1:
            raise DataError(f"the inputs must share one batch size along their batch axes, got {sizes}")
        self.batch_size = next(iter(sizes.values()))
        self.slices = split_input_slice(self.batch_size, work_load_list)
        self.param_names = list(param_names)
        grad_req = {name: ("write" if for_training else "null") for name in self.param_names}
        self.execs: list[Any] = []
        for k, (ctx, part) in enumerate(zip(self.contexts, self.slices, strict=True)):
            shapes = {desc[0]: device_shape(desc[1], self.batch_axes[desc[0]], part) for desc in input_descs}
            if shared_group is None:
                exe = symbol.simple_bind(ctx, grad_req=grad_req, **shapes)
                exe.copy_params_from(arg_params, aux_params, allow_extra_params=True)
            else:
                exe = _bind_shared(symbol, ctx, grad_req, shapes, shared_group.execs[k], bucket_key)
            self.execs.append(exe)
        self.aux_names = symbol.list_auxiliary_states()
        self._input_arrays: dict[str, list[Any]] = {}
        self.param_arrays = [[exe.arg_dict[name] for exe in self.execs] for name in self.param_names]
        self.grad_arrays = (
            [[exe.grad_dict[name] for exe in self.execs] for name in self.param_names] if for_training else []
        )
        self.aux_arrays = [[exe.aux_dict[name] for exe in self.execs] for name in self.aux_names]

    def load_batch(self, names: Sequence[str], arrays: Sequence[Any]) -> None:
        """Copy each device's slice of the batch ``arrays`` (the inputs ``names``) into its executor."""
        for name, array in zip(names, arrays, strict=False):
            if not isinstance(array, nd.NDArray):
                array = nd.array(np.asarray(array))
            axis = self.batch_axes[name]
            if axis >= 0 and array.shape[axis] != self.batch_size:
                raise DataError(
                    f"input {name!r} has {array.shape[axis]} examples on axis {axis}, "
                    f"the executors were bound for batches of {self.batch_size}"
                )
            targets = self.input_arrays(name)
            if len(targets) == 1 or axis < 0:  # one device, or an input without a batch axis: whole
                for target in targets:
                    array.copyto(target)
                continue
            for target, part in zip(targets, self.slices, strict=True):
                take_part(array, axis, part).copyto(target)

    def input_arrays(self, name: str) -> list[Any]:
        """Each executor's bound array of the input ``name`` (looked up once per group)."""
        arrays = self._input_arrays.get(name)
        if arrays is None:
            arrays = self._input_arrays[name] = [exe.arg_dict[name] for exe in self.execs]
        return arrays

    def forward(self, is_train: bool = False) -> None:
        for exe in self.execs:
            exe.forward(is_train=is_train)
        self.forward_ran = True

    def backward(self) -> None:
        for exe in self.execs:
            exe.backward()

    def update_metric(
        self, eval_metric: metric_module.EvalMetric, label_names: Sequence[str], labels: Sequence[Any], pad: int = 0
    ) -> None:
        """Update ``eval_metric`` with each device's outputs against its slice of ``labels``, padding left out.

        As in MXNet, the metric is given every output and every label by name (``update_dict``), so
        that its ``output_names``/``label_names`` pick the ones it scores; a label without a name
        (``""``) is keyed by its position.
        """
        keep = self.batch_size - (pad or 0)
        # MXNet hands a metric NDArrays (custom metrics call ``asnumpy`` or ``mx.nd`` functions on
        # them); the built-in metrics take NDArrays and NumPy arrays alike
        labels = [label if hasattr(label, "asnumpy") else np.asarray(label) for label in labels]
        names = tuple(label_names)
        layouts = self._label_layouts
        if layouts is None:
            layouts = self._label_layouts = {}
        layout = layouts.get(names)
        if layout is None:
            layout = layouts[names] = (
                [name or f"label{i}" for i, name in enumerate(label_names)],
                [self.batch_axes.get(name, 0) for name in label_names],
                self.symbol.list_outputs(),
            )
        keys, axes, output_names = layout
        for exe, part in zip(self.execs, self.slices, strict=True):
            stop = min(part.stop, keep)
            if stop <= part.start:
                continue
            rows = slice(part.start, stop)
            # a label whose rows are all this device's (one device, no padding) goes as it is
            dev_labels = [
                lab if part.start == 0 and ax >= 0 and lab.shape[ax] == stop else lab[(slice(None),) * ax + (rows,)]
                for lab, ax in zip(labels, axes, strict=True)
            ]
            preds = [_unpadded(out, part, stop) for out in exe.outputs]
            eval_metric.update_dict(
                dict(zip(keys, dev_labels, strict=True)), dict(zip(output_names, preds, strict=True))
            )

    def set_params(self, arg_params: dict[str, Any], aux_params: dict[str, Any]) -> None:
        """Copy ``arg_params`` and ``aux_params`` onto every device."""
        for exe in self.execs:
            exe.copy_params_from(arg_params, aux_params, allow_extra_params=True)

    def copy_params_to(self, arg_params: dict[str, Any], aux_params: dict[str, Any]) -> None:
        """Write the parameters into ``arg_params`` and the auxiliary states into ``aux_params``, each
        averaged over the devices, as MXNet does: BatchNorm statistics differ between devices, and so
        do the weights when every device updates its own copy without a KVStore."""
        for names, blocks, target in (
            (self.param_names, self.param_arrays, arg_params),
            (self.aux_names, self.aux_arrays, aux_params),
        ):
            for name, arrays in zip(names, blocks, strict=True):
                if name in target:
                    _average_into(arrays, target[name])

    def install_monitor(self, monitor: Any) -> None:
        """Have ``monitor`` (an ``mx.mon.Monitor``) watch every executor."""
        if not callable(getattr(monitor, "install", None)):
            raise ArgumentTypeError(
                f"install_monitor: monitor must be an mx.mon.Monitor (with install()), got {type(monitor).__name__}"
            )
        for exe in self.execs:
            monitor.install(exe)


def _bind_shared(
    symbol: Any, ctx: Context, grad_req: dict[str, str], shapes: dict[str, tuple], shared: Any, key: Any
) -> Any:
    """Bind ``symbol`` on ``ctx`` with new arrays for the inputs (``shapes``) and ``shared``'s own
    arrays for the parameters, their gradients and the auxiliary states."""
    missing = [n for n in symbol.list_arguments() if n not in shapes and n not in shared.arg_dict]
    missing += [n for n in symbol.list_auxiliary_states() if n not in shared.aux_dict]
    if missing:
        raise DataError(
            f"bucket {key!r}: {missing} are neither inputs nor parameters of the default bucket's symbol; "
            "every bucket must use the parameters of the default one"
        )
    inferred = dict(zip(symbol.list_arguments(), symbol.infer_shape(**shapes)[0] or [], strict=False))
    for name, shape in inferred.items():
        if name not in shapes and tuple(shape) != tuple(shared.arg_dict[name].shape):
            raise DataError(
                f"bucket {key!r}: parameter {name!r} has shape {tuple(shape)}, the default bucket's is "
                f"{tuple(shared.arg_dict[name].shape)}; every bucket must use the parameters of the default one"
            )
    args = {n: shared.arg_dict[n] if n not in shapes else nd.zeros(shapes[n], ctx=ctx) for n in symbol.list_arguments()}
    req = {n: grad_req.get(n, "null") for n in args}
    grads = {n: shared.grad_dict[n] for n in args if req[n] != "null"}
    aux = {n: shared.aux_dict[n] for n in symbol.list_auxiliary_states()}
    return symbol.bind(ctx, args=args, args_grad=grads, grad_req=req, aux_states=aux)


def _average_into(arrays: Sequence[Any], target: Any) -> None:
    """Copy the mean of the devices' ``arrays`` into ``target`` (one device: a plain copy)."""
    if len(arrays) == 1:
        arrays[0].copyto(target)
        return
    total = arrays[0].copyto(target.context)
    for array in arrays[1:]:
        total += array.copyto(target.context)
    (total / len(arrays)).copyto(target)
