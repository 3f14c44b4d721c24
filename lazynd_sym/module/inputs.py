"""A module's inputs: the roles of its symbol's arguments, ``(name, shape)`` descriptions checked
against its names, the shapes of a batch, and the labels its metric is given.

:func:`sort_arguments` sorts the symbol's arguments into data, labels, states and parameters
(learned or fixed) by the names a ``Module`` is constructed with.
``bind`` takes the data and label shapes as ``(name, shape)`` pairs or
``DataDesc`` objects; :func:`check_inputs` turns them into ``DataDesc`` lists
in the module's order and refuses names the module does not have.
:func:`shapes_of_batch` gives the descriptions a batch needs (its arrays'
shapes; labels it lacks follow its batch size), so ``forward`` can tell when
a batch calls for executors of other shapes; :func:`join_device_batches` makes one batch of the
list of per-device batches ``forward`` may be given.  :func:`_join_device_labels` makes the
batch's labels of the per-device lists that ``update_metric(pre_sliced=True)`` is given.
:func:`_check_input_names` and :func:`_parse_data_desc` are the checks MXNet keeps private in
``mxnet.module.base_module``, which modules written by users import from there.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, NamedTuple

from lazynd import ndarray as nd
from lazynd.arguments import flag
from lazynd.errors import DataError, DataTypeError, DataValueError, LazyNDError, ParameterError
from lazynd.io import DataBatch, DataDesc
from lazynd.log import warn_from_user_code

from ..executor_group import batch_axis_of, split_input_slice

__all__ = [
    "ArgumentRoles",
    "as_descs",
    "bind_flags",
    "check_inputs",
    "join_device_batches",
    "shapes_of_batch",
    "sort_arguments",
]


class ArgumentRoles(NamedTuple):
    """A module's names for its symbol's arguments (``fixed_params`` are among ``params``)."""

    data: list[str]
    labels: list[str]
    states: list[str]
    params: list[str]
    fixed_params: list[str]


def sort_arguments(
    symbol: Any,
    data_names: Sequence[str],
    label_names: Sequence[str] | None,
    state_names: Sequence[str] | None,
    fixed_param_names: Sequence[str] | None,
    logger: Any,
) -> ArgumentRoles:
    """The roles of ``symbol``'s arguments: the data, labels and states named, and every other
    argument a parameter (those in ``fixed_param_names`` not learned).

    Data, states and fixed parameters the symbol does not have are a :class:`~lazynd.errors.DataValueError`
    (a ``ValueError``, as MXNet raises);
    labels it does not take are only warned about (a module without a loss is fed none).  A fixed name
    that is an input is accepted, as MXNet accepts it, and dropped: inputs are not learned.
    """
    if not callable(getattr(symbol, "list_arguments", None)):
        raise DataTypeError(f"Module: symbol must be a Symbol, got {type(symbol).__name__}")
    arg_names = symbol.list_arguments()
    data, labels = _name_list(data_names, "data_names"), _name_list(label_names, "label_names")
    missing = [n for n in data if n not in arg_names]
    if missing:
        raise DataValueError(
            f"Module: data_names {missing} are not arguments of the symbol; its arguments: {arg_names}"
        )
    absent = [n for n in labels if n not in arg_names]
    if absent:
        logger.warning("Module: label_names %s are not arguments of the symbol; they are not fed", absent)
    states = _name_list(state_names, "state_names")
    stray = [n for n in states if n not in arg_names]
    if stray:
        raise DataValueError(f"Module: state_names {stray} are not arguments of the symbol; its arguments: {arg_names}")
    inputs = set(data) | set(labels) | set(states)
    params = [n for n in arg_names if n not in inputs]
    fixed = _name_list(fixed_param_names, "fixed_param_names")
    unknown = [n for n in fixed if n not in arg_names]
    if unknown:
        raise DataValueError(
            f"Module: fixed_param_names {unknown} are not arguments of the symbol; its arguments: {arg_names}"
        )
    # data, labels and states among them (MXNet-SSD fixes all of list_arguments()) get no gradient anyway
    fixed = [n for n in fixed if n in params]
    return ArgumentRoles(data, labels, states, params, fixed)


def _name_list(names: Any, what: str) -> list[str]:
    """``names`` (a list or tuple of names; None for none, as MXNet takes it) as a list."""
    if names is None:
        return []
    if isinstance(names, (str, bytes)) or not isinstance(names, Iterable):
        # a bare string would be read as its letters, a number not at all
        raise DataTypeError(f"Module: {what} must be a list of names, got {names!r}")
    return list(names)


def as_descs(shapes: Sequence[Any] | None, what: str) -> list[DataDesc]:
    """``(name, shape)`` pairs or ``DataDesc`` objects (or None) as a list of ``DataDesc``.

    Examples
    --------
    >>> as_descs([("data", (4, 3))], "data_shapes")
    [DataDesc[data,(4, 3),<class 'numpy.float32'>,NCHW]]
    """
    if shapes is None:
        return []
    if isinstance(shapes, (str, bytes)) or not isinstance(shapes, Iterable):
        raise DataTypeError(f"Module.bind: {what} must be a list of (name, shape) pairs or DataDesc, got {shapes!r}")
    descs = []
    for item in shapes:
        if isinstance(item, DataDesc):
            descs.append(item)
        elif isinstance(item, (tuple, list)) and len(item) == 2 and isinstance(item[0], str):
            descs.append(DataDesc(item[0], item[1]))
        else:
            # a TypeError as MXNet's DataDesc(*item) raises, so ``except TypeError`` catches it too
            raise DataTypeError(f"Module.bind: {what} must be a list of (name, shape) pairs or DataDesc, got {item!r}")
    return descs


def check_inputs(
    data_shapes: Any, label_shapes: Any, data_names: Sequence[str], label_names: Sequence[str], arg_names: Sequence[str]
) -> tuple[list[DataDesc], list[DataDesc]]:
    """The data and label descriptions of a bind, checked against the module's names.

    The data must be named ``data_names``, in any order (an iterator's order, which its
    batches follow, as MXNet's); labels are kept only when the module has ``label_names``
    and the symbol takes them (a module without labels ignores the labels an iterator provides).
    """
    data = as_descs(data_shapes, "data_shapes")
    if sorted(d.name for d in data) != sorted(data_names):
        raise DataValueError(
            f"Module.bind: data_shapes name {[d.name for d in data]}, the module's data_names are "
            f"{list(data_names)} (in SequentialModule.add, auto_wiring=True renames them)"
        )
    labels = as_descs(label_shapes, "label_shapes") if label_names else []
    stray = [d.name for d in labels if d.name not in label_names]
    if stray:
        raise DataValueError(
            f"Module.bind: label_shapes name {stray}, the module's label_names are {list(label_names)}"
        )
    return data, [d for d in labels if d.name in arg_names]


def bind_flags(for_training: Any, inputs_need_grad: Any) -> tuple[bool, bool]:
    """``for_training`` and ``inputs_need_grad`` of a bind as flags (an array of several elements, which has
    no truth, refused by name); gradients of the inputs need training."""
    for_training = flag("Module.bind", "for_training", for_training)
    if flag("Module.bind", "inputs_need_grad", inputs_need_grad) and not for_training:
        raise LazyNDError("Module.bind: inputs_need_grad=True needs for_training=True")
    return for_training, bool(inputs_need_grad)


def _check_input_names(symbol: Any, names: Sequence[str], typename: str, throw: bool) -> None:
    """Refuse (``throw``) or warn about ``names`` that are not arguments of ``symbol``.

    ``typename`` says which names they are (``"data"``, ``"label"``...); a refusal is a
    :class:`~lazynd.errors.ParameterError`, a ``ValueError`` as in MXNet.

    Examples
    --------
    >>> import lazynd_sym as sym
    >>> _check_input_names(sym.Variable("data") * 2, ["data"], "data", throw=True)
    """
    arg_names = symbol.list_arguments()
    for name in names:
        if name in arg_names:
            continue
        message = (
            f"Module: {typename}_names has {name!r}, which is not an argument of the symbol; its arguments: {arg_names}"
        )
        if throw:
            raise ParameterError(message)
        warn_from_user_code(message)


def _check_names_match(names: Sequence[str], descs: Sequence[DataDesc], typename: str, throw: bool) -> None:
    given = [d.name for d in descs]
    if sorted(given) == sorted(names):
        return
    message = f"Module: {typename}_shapes name {given}, the module's {typename}_names are {list(names)}"
    if throw:
        raise ParameterError(message)
    warn_from_user_code(message)


def _parse_data_desc(
    data_names: Sequence[str], label_names: Sequence[str] | None, data_shapes: Any, label_shapes: Any
) -> tuple[list[DataDesc], list[DataDesc] | None]:
    """``data_shapes`` and ``label_shapes`` as ``DataDesc`` lists, their names checked against the module's.

    Data named otherwise than ``data_names`` is a :class:`~lazynd.errors.ParameterError`; labels named
    otherwise than ``label_names`` are only warned about.  ``label_shapes`` None stays None.

    Examples
    --------
    >>> _parse_data_desc(["data"], None, [("data", (2, 3))], None)
    ([DataDesc[data,(2, 3),<class 'numpy.float32'>,NCHW]], None)
    """
    data = as_descs(data_shapes, "data_shapes")
    _check_names_match(data_names, data, "data", throw=True)
    labels = None if label_shapes is None else as_descs(label_shapes, "label_shapes")
    _check_names_match(label_names or [], labels or [], "label", throw=False)
    return data, labels


def _resized(desc: DataDesc, shape: tuple) -> DataDesc:
    return DataDesc(desc.name, tuple(shape), desc.dtype, desc.layout)


def shapes_of_batch(
    data_batch: DataBatch, data_shapes: Sequence[DataDesc], label_shapes: Sequence[DataDesc] | None
) -> tuple[list[DataDesc], list[DataDesc] | None]:
    """The bound descriptions with the shapes of ``data_batch`` (labels it lacks follow its batch size).

    A batch that is not a ``DataBatch`` is a :class:`~lazynd.errors.DataError`.  An object with only
    a ``data`` list is one without labels, as MXNet reads it (its debugging how-to feeds a module a
    class holding ``data`` alone).  One that holds
    fewer data arrays than the module has data names leaves the last inputs with the values they
    hold, as MXNet does (programs leave an RNN's begin states out of their batches that way), with
    a warning that names them.  A module without labels ignores the batch's labels, whatever they hold.
    """
    if not isinstance(getattr(data_batch, "data", None), (list, tuple)):
        raise DataError(
            f"Module.forward: expected a DataBatch (mx.io.DataBatch(data=[...], label=[...])), "
            f"got {type(data_batch).__name__}"
        )
    # a module without labels never reads a batch's: MXNet's neural-style feeds DataBatch([img], [0])
    given_labels = (getattr(data_batch, "label", None) or []) if label_shapes else []
    not_arrays = [type(a).__name__ for a in [*data_batch.data, *given_labels] if not hasattr(a, "shape")]
    if not_arrays:  # (DataBatch checks that both are lists, MXNet's does not check what they hold)
        raise DataTypeError(f"Module.forward: a DataBatch's data and label must be lists of NDArrays, got {not_arrays}")
    given = len(data_batch.data)
    if given < len(data_shapes):
        kept = [d.name for d in data_shapes[given:]]
        warn_from_user_code(
            f"Module.forward: the batch holds {given} data array(s), the module takes {len(data_shapes)} "
            f"({[d.name for d in data_shapes]}): {kept} keep the values they hold, as in MXNet",
        )
    data = [_resized(d, a.shape) for d, a in zip(data_shapes, data_batch.data, strict=False)]
    data += list(data_shapes[given:])
    labels = list(label_shapes) if label_shapes else None
    if labels and given_labels:
        labels = [_resized(d, a.shape) for d, a in zip(labels, given_labels, strict=False)]
    elif labels and any(batch_axis_of(d) >= 0 for d in data):
        first = next(d for d in data if batch_axis_of(d) >= 0)  # the first input with a batch axis
        size = first.shape[batch_axis_of(first)]
        labels = [
            _resized(d, tuple(size if i == batch_axis_of(d) else n for i, n in enumerate(d.shape))) for d in labels
        ]
    return data, labels


def join_device_batches(
    batches: list[Any], data_shapes: Sequence[DataDesc], work_load_list: Sequence[float] | None, contexts: Sequence[Any]
) -> DataBatch:
    """One batch of ``batches``, a list of one batch per device (MXNet's pre-sliced ``forward``).

    Batch ``i`` is the rows device ``i`` gets: the batches, which must hold arrays of the same
    shapes, are joined on each input's batch axis, and the module's split of the joined batch
    (by ``work_load_list``) must give each device its own rows back.  A list of another length
    than the devices is refused (MXNet fills the devices it zips with and leaves the others).
    """
    work_load_list = list(work_load_list) if work_load_list is not None else [1.0] * len(contexts)
    if not batches or any(not isinstance(getattr(b, "data", None), (list, tuple)) for b in batches):
        raise DataError(
            "Module.forward: expected a DataBatch or a list of one DataBatch per device, "
            f"got a list holding {[type(b).__name__ for b in batches]}"
        )
    if len(batches) != len(work_load_list):
        raise DataError(
            f"Module.forward: got {len(batches)} batches for {len(work_load_list)} devices; give one per device"
        )
    shapes = [[a.shape for a in b.data] for b in batches]
    if any(s != shapes[0] for s in shapes):
        raise DataError(f"Module.forward: the batches of a list must hold arrays of the same shapes, got {shapes}")
    axes = [batch_axis_of(d) for d in data_shapes] + [0] * (len(shapes[0]) - len(data_shapes))
    size = shapes[0][0][axes[0]] if axes[0] >= 0 else 0
    split = [s.stop - s.start for s in split_input_slice(size * len(batches), work_load_list)]
    if split != [size] * len(batches):
        raise DataError(
            f"Module.forward: batches of {size} examples do not match the devices' shares {split} "
            f"of the joined batch (work_load_list {list(work_load_list)})"
        )

    def joined(arrays: Sequence[Any], axis: int) -> Any:
        return nd.concatenate(list(arrays), axis=axis) if axis >= 0 else arrays[0]

    data = [joined([b.data[i] for b in batches], axis) for i, axis in enumerate(axes)]
    labels = None
    if getattr(batches[0], "label", None):  # as MXNet, the first batch tells whether labels are given
        labels = [joined([b.label[i] for b in batches], 0) for i in range(len(batches[0].label))]
    return DataBatch(data=data, label=labels, pad=sum(getattr(b, "pad", 0) or 0 for b in batches))


def _join_device_labels(per_device: Any, num_devices: int) -> list[Any]:
    """The batch's labels from one list per device (rows in device order): each label joined on axis 0."""
    per_device = list(per_device)
    if len(per_device) != num_devices or not all(isinstance(labels, (list, tuple)) for labels in per_device):
        raise LazyNDError(
            f"update_metric: pre_sliced labels must be one list of labels per device ({num_devices}), "
            f"got {len(per_device)} item(s)"
        )
    return [
        nd.concatenate([nd.array(label) if not isinstance(label, nd.NDArray) else label for label in labels])
        for labels in zip(*per_device, strict=True)
    ]
