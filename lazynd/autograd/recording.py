"""Recording: what autograd keeps of each operation on recorded arrays, and the variables.

An operation is recorded when its thread records and one of its data inputs has an entry:
it becomes a :class:`~.graph.Node` of the recorded graph (:mod:`.graph`: the nodes, the
variables' :class:`~.graph.Leaf` made here by ``attach_grad`` or :func:`mark_variables`, and
the entries that tie arrays to them).  Writing into a recorded array while recording
(``x += 1``, ``out=x``, ``x[:] = v``, ``x.copyto``...) is refused at once, as MXNet does.

This module is :data:`lazynd.ndarray.dispatch.recorder` while any thread records or trains:
``invoke`` and the NDArray paths that make arrays outside it (views, copies, assignments,
``concatenate``) call it.
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..arguments import is_choice
from ..errors import LazyNDError, MissingKeyError
from ..ndarray import dispatch
from ..ndarray.dispatch import run_plan, visible_outputs
from ..ops.registry import BackwardOpGradient, OpDef
from ..runtime import plan_for
from .graph import Leaf, Node, entry_of
from .state import flags

GRAD_REQS = ("write", "add", "null")
# id(var) -> (weak reference to the var, weak reference to the node that wrote recorded values
# into it through x[...] = v, copyto or out=, the array written into's memory): an array without an
# entry sharing that var (a view made before the write) would hide that history from a recorded
# operation reading it; one on the same memory object is a detach() of that array, a constant by
# request.  A plain dict, so the common case (empty) costs a recorded call one truth test; entries
# go with their vars.
_written_vars: dict[int, tuple[weakref.ref, weakref.ref, Any]] = {}


def _refuse_recorded_write(array: Any, what: str) -> None:
    raise LazyNDError(
        f"{what}: writes into an array in a recorded graph (a variable or the result of a recorded operation) "
        "inside autograd.record(); its gradient would be wrong. In-place operations (+=, out=, x[...] = v, "
        "copyto) are not allowed on recorded arrays while recording: write outside record(), or into a new array"
    )


def check_write(array: Any, what: str) -> None:
    """Refuse a write into ``array`` while this thread records, if ``array`` is in a recorded graph."""
    if flags.recording and entry_of(array) is not None:
        _refuse_recorded_write(array, what)


def _refuse_filled_result(op: OpDef, attrs: dict, i: int, producer: str) -> None:
    """Refuse a recorded call whose kernel overwrites input ``i`` with a constant (``OpDef.fills``:
    BatchNorm's gamma with ``fix_gamma``) when that input is the result of a recorded operation
    (``producer``) whose gradient reads it: the gradient would read the constant."""
    names = () if op.variadic else op.input_names(attrs)
    label = f"input {i} ('{names[i]}')" if i < len(names) else f"input {i}"
    raise LazyNDError(
        f"{op.name}: {label} is the result of the recorded operation '{producer}', whose gradient reads it, "
        f"and {op.name} overwrites it with a constant (as MXNet's kernels do: BatchNorm's fix_gamma=True writes "
        "1 into gamma), which would make that gradient wrong; pass a variable or a constant there (or "
        "fix_gamma=False)"
    )


def _refuse_out_into_input(name: str, out: Any, input_vars: list) -> None:
    """Refuse a recorded call writing its result (``out=``, ``x += y``) into memory one of its inputs
    reads: the gradient rule would read the overwritten values (MXNet refuses it too)."""
    for o in out if isinstance(out, (list, tuple)) else (out,):
        i = next((k for k, var in enumerate(input_vars) if isinstance(o, dispatch.NDArray) and o.var is var), None)
        if i is not None:
            raise LazyNDError(
                f"{name} (out=): writes its result into the memory of its input {i} inside autograd.record(); "
                "the gradient would read the overwritten values. In-place operations (+=, out=) that read a "
                "recorded array are not allowed while recording: write into a new array (y = x + v)"
            )


def _check_input(array: Any, node_name: str, i: int) -> None:
    """Refuse an unrecorded input sharing memory with recorded values written through another array."""
    var = array.var
    written = _written_vars.get(id(var))
    if written is None or written[0]() is not var:
        return
    node = written[1]()
    if node is not None and not node.freed and array.data_array is not written[2]:
        raise LazyNDError(
            f"autograd: input {i} of operator '{node_name}' shares memory with recorded values that were written "
            "(x[...] = v, copyto or out=) into another array; its gradient would be lost: use that array, or a view of "
            "it taken after the write"
        )


def _note_written(target: Any, node: Node) -> None:
    """Remember that ``node`` wrote recorded values into ``target``'s var (see ``_written_vars``)."""
    var = target.var
    key = id(var)

    def forget(_: weakref.ref) -> None:  # the var is gone: so is what was written into it
        _written_vars.pop(key, None)

    # the memory object itself, held while the var lives: its views hold it anyway
    _written_vars[key] = (weakref.ref(var, forget), weakref.ref(node), target.data_array)


def _record(node: Node, outputs: Sequence[Any]) -> None:
    for i, o in enumerate(outputs):
        o._ag = (node, i)


# -- operator calls ---------------------------------------------------------------------------------
def invoke(op: OpDef, inputs: Sequence[Any], kwargs: dict[str, Any], out: Any, is_train: bool) -> Any:
    """:func:`lazynd.ndarray.dispatch.invoke` while some thread records or trains."""
    state = flags
    is_train = is_train or state.training
    if not state.recording:  # training mode only, or the gradient rules of a backward pass
        return dispatch.invoke(op, inputs, kwargs, out, is_train, unrecorded=True)
    plan = plan_for(op, inputs, kwargs, is_train)
    n_in = plan.n_in
    data_inputs = inputs[:n_in]
    entries: list[Any] = []
    recorded = False
    for x in data_inputs:  # entry_of, written out: a recorded call's commonest step
        entry = x._ag
        if entry is None or entry[0].freed:
            entries.append(None)
        else:
            entries.append(entry)
            recorded = True
    if _written_vars:
        for i, (x, entry) in enumerate(zip(data_inputs, entries, strict=True)):
            if entry is None:
                _check_input(x, op.name, i)
    if out is None and plan.fresh_alloc is not None:
        # one fresh output, nothing else written (``relu(h)``, ``h * 2``): invoke's own path, no
        # checks of writes; the inputs' versions cannot change by this call, so they are read after it
        output = dispatch.invoke(op, inputs, kwargs, None, is_train, True, plan)
        if recorded:
            _record_call(op, plan, data_inputs, entries, [output])
        return output
    if out is not None:
        for o in out if isinstance(out, (list, tuple)) else (out,):
            if isinstance(o, dispatch.NDArray) and entry_of(o) is not None:
                _refuse_recorded_write(o, f"{op.name} (out=)")
    access = plan.access
    for i in access.mutated:
        if entries[i] is None:
            continue
        if i not in access.filled:
            _refuse_recorded_write(inputs[i], f"{op.name} (updates input {i} in place)")
        elif isinstance(entries[i][0], Node) and any(var is inputs[i].var for var in entries[i][0].watched):
            # a filled variable takes no recorded value, but a result whose gradient reads it would
            # be differentiated with the constant: refused now, not as a write found at backward
            _refuse_filled_result(op, plan.attrs, i, entries[i][0].name)
    datas, reads = [], []
    for x in inputs:
        datas.append(x.data_array)
        reads.append(x.var)
    if not recorded:
        return visible_outputs(plan, run_plan(plan, datas, reads, out), out)
    if out is not None:
        _refuse_out_into_input(op.name, out, reads[:n_in])
    versions = [var.version for var in reads[:n_in]]  # before the push: a call may write an input
    outputs = run_plan(plan, datas, reads, out)
    node = _record_call(op, plan, data_inputs, entries, outputs, versions)
    if out is not None:  # recorded values written into the caller's arrays, as x[...] = v writes them
        for o in out if isinstance(out, (list, tuple)) else (out,):
            if isinstance(o, dispatch.NDArray):
                _note_written(o, node)
    return visible_outputs(plan, outputs, out)


def _record_call(
    op: OpDef, plan: Any, data_inputs: Sequence[Any], entries: list, outputs: list, versions: list | None = None
) -> Node:
    """Record the call ``plan`` of ``op`` that made ``outputs`` from ``data_inputs`` (with their
    ``entries``); ``versions``: the inputs' var versions before the call (None: read now).

    The node watches the arrays the rule reads, whose in-place writes backward refuses: a
    backward operator's rule reads the first few inputs and no output (FullyConnected: data and
    weight, not the bias); any other rule, every input and output.
    """
    rule = op.gradient
    if isinstance(rule, BackwardOpGradient):
        n_watched, watch_outputs = rule.reads, False
    else:
        n_watched, watch_outputs = len(data_inputs), True
    watched = [x.var for x in data_inputs[:n_watched]]
    versions = [var.version for var in watched] if versions is None else versions[:n_watched]
    # an input the call updates in place (a Custom operator's auxiliary state, as BatchNorm's
    # moving mean) is state, not a value the gradient depends on: its writes, this call's and
    # later ones, do not make the gradient wrong (MXNet's backward takes them as they are)
    for i in plan.access.mutated:
        if i < len(versions):
            versions[i] = None
    node = Node(op.name, rule, plan.attrs, list(data_inputs), entries, outputs, op, plan.n_visible, plan)
    for i, o in enumerate(outputs):
        if watch_outputs:
            var = o.var
            watched.append(var)
            versions.append(var.version)
        o._ag = (node, i)
    node.watched, node.versions = watched, versions
    return node


# -- arrays made outside invoke: views, copies, assignments, concatenation ----------------------------
def view(parent: Any, result: Any, key: Any) -> None:
    """Record ``result = parent[key]``, a view by basic indexing, when ``parent`` is recorded."""
    entry = entry_of(parent)
    if flags.recording and entry is not None:
        _record(Node("__getitem__", _view_gradient, {"key": key}, [parent], [entry], [result]), [result])


def reshaped(parent: Any, result: Any) -> None:
    """Record ``result``, a view of ``parent`` with another shape, when ``parent`` is recorded."""
    entry = entry_of(parent)
    if flags.recording and entry is not None:
        _record(Node("reshape", _reshape_gradient, {}, [parent], [entry], [result]), [result])


def copied(source: Any, target: Any) -> None:
    """Record ``target`` as a copy of ``source`` (any devices and dtypes) when ``source`` is recorded
    (the caller refused the write first: :func:`check_write`)."""
    entry = entry_of(source)
    if flags.recording and entry is not None:
        node = Node("_copyto", _copy_gradient, {}, [source], [entry], [target])
        _note_written(target, node)
        _record(node, [target])


def assigned(target: Any, key: Any, value: Any) -> None:
    """Record ``target[key] = value`` (an NDArray) when ``value`` is recorded: ``target`` then takes
    the gradient of ``value`` at ``key``; its other elements are constants."""
    entry = entry_of(value)
    if flags.recording and entry is not None:
        node = Node("_set_value", _assign_gradient, {"key": key}, [value], [entry], [target])
        _note_written(target, node)
        _record(node, [target])


def concatenated(arrays: Sequence[Any], result: Any, axis: int) -> None:
    """Record ``result``, the concatenation of ``arrays`` along ``axis``, when one of them is recorded."""
    if not flags.recording:
        return
    entries = [entry_of(a) for a in arrays]
    if any(entries):
        node = Node("concatenate", _concat_gradient, {"axis": axis}, list(arrays), entries, [result])
        _record(node, [result])


def is_recorded(array: Any) -> bool:
    """Whether an operation reading ``array`` now is recorded (this thread records and ``array``
    is a variable or the result of a recorded operation)."""
    return flags.recording and entry_of(array) is not None


def refuse_gather(array: Any, what: str) -> None:
    """Assignment of a recorded array by index arrays (``x[[0, 2]] = value``): refused while recording."""
    if is_recorded(array):
        raise LazyNDError(
            f"{what} a recorded array (shape {array.shape}) by index arrays is not differentiable here; "
            "use nd.take or nd.pick, or basic slices"
        )


def _view_gradient(F: Any, attrs: dict, inputs: list, outputs: list, out_grads: list) -> list:
    (parent,) = inputs
    grad = F.zeros(parent.shape, ctx=parent.context, dtype=parent.dtype)
    grad[attrs["key"]] = out_grads[0]
    return [grad]


def _reshape_gradient(F: Any, attrs: dict, inputs: list, outputs: list, out_grads: list) -> list:
    return [out_grads[0].reshape(inputs[0].shape)]


def _copy_gradient(F: Any, attrs: dict, inputs: list, outputs: list, out_grads: list) -> list:
    (source,) = inputs
    grad = out_grads[0].as_in_context(source.context)
    return [grad if grad.dtype == source.dtype else grad.astype(source.dtype)]


def _assign_gradient(F: Any, attrs: dict, inputs: list, outputs: list, out_grads: list) -> list:
    (value,) = inputs
    grad = out_grads[0][attrs["key"]]
    if grad.shape != value.shape:  # the value was broadcast: sum over the axes it was repeated along
        extra = grad.ndim - value.ndim
        if extra > 0:
            grad = F.sum(grad, axis=tuple(range(extra)))
        axes = tuple(d for d, n in enumerate(value.shape) if n == 1 and grad.shape[d] != 1)
        if axes:
            grad = F.sum(grad, axis=axes, keepdims=True)
    grad = grad.as_in_context(value.context)
    return [grad if grad.dtype == value.dtype else grad.astype(value.dtype)]


def _concat_gradient(F: Any, attrs: dict, inputs: list, outputs: list, out_grads: list) -> list:
    axis, begin, grads = attrs["axis"], 0, []
    for x in inputs:
        end = begin + x.shape[axis]
        grad = F.slice_axis(out_grads[0], axis=axis, begin=begin, end=end)
        grads.append(grad if grad.dtype == x.dtype else grad.astype(x.dtype))
        begin = end
    return grads


# -- variables --------------------------------------------------------------------------------------
def _grad_req(value: Any, where: str) -> str:
    # a KeyError too: MXNet looks the name up in its table of grad_reqs, so ``except KeyError`` is what its users wrote
    if not is_choice(value, GRAD_REQS):
        raise MissingKeyError(f"{where}: grad_req must be one of {', '.join(map(repr, GRAD_REQS))}, got {value!r}")
    return value


def attach_grad(array: Any, grad_req: str = "write") -> None:
    """Make ``array`` a variable with a fresh gradient buffer of zeros (see ``NDArray.attach_grad``)."""
    from ..ndarray.creation import zeros

    grad_req = _grad_req(grad_req, "attach_grad")
    grad = None if grad_req == "null" else zeros(array.shape, ctx=array.context, dtype=array.dtype)
    array._ag = (Leaf(grad, grad_req), 0)


def mark_variables(variables: Any, gradients: Any, grad_reqs: str | Sequence[str] = "write") -> None:
    """Make each of ``variables`` a variable of autograd whose gradient goes into the matching
    array of ``gradients`` (one array, or lists of equal length), by ``grad_reqs``
    (``'write'``, ``'add'`` or ``'null'``; one for all, or one each).

    Examples
    --------
    >>> import lazynd as mx
    >>> x, dx = mx.nd.array([1.0, 2.0]), mx.nd.zeros((2,))
    >>> mx.autograd.mark_variables(x, dx)
    >>> with mx.autograd.record():
    ...     y = x * x
    >>> y.backward()
    >>> dx.asnumpy()
    array([2., 4.], dtype=float32)
    """
    NDArray = dispatch.NDArray
    if isinstance(variables, NDArray):
        variables, gradients = [variables], [gradients]
    if not isinstance(variables, (list, tuple)):
        raise LazyNDError(
            f"mark_variables: variables must be an NDArray or a list of them, got {type(variables).__name__}"
        )
    if not isinstance(gradients, (list, tuple)):  # one array for a list of variables: which one's is it?
        raise LazyNDError(
            "mark_variables: gradients must be a list of NDArrays, one per variable, as variables is a list; "
            f"got {type(gradients).__name__}"
        )
    variables, gradients = list(variables), list(gradients)
    if not isinstance(grad_reqs, (str, list, tuple)):
        raise LazyNDError(
            f"mark_variables: grad_reqs must be 'write', 'add' or 'null', or a list of them, got {grad_reqs!r}"
        )
    reqs = [grad_reqs] * len(variables) if isinstance(grad_reqs, str) else list(grad_reqs)
    if not (len(variables) == len(gradients) == len(reqs)):
        raise LazyNDError(
            f"mark_variables: {len(variables)} variables, {len(gradients)} gradients and {len(reqs)} grad_reqs; "
            "expected as many of each"
        )
    for i, (x, grad, req) in enumerate(zip(variables, gradients, reqs, strict=True)):
        req = _grad_req(req, "mark_variables")
        if not isinstance(x, NDArray):
            raise LazyNDError(f"mark_variables: variable {i} must be an NDArray, got {type(x).__name__}")
        if req != "null" and (
            not isinstance(grad, NDArray) or (grad.shape, grad.dtype, grad.context) != (x.shape, x.dtype, x.context)
        ):  # a gradient of another dtype could be written but not added to (MXNet refuses both)
            given = (
                f"shape {grad.shape}, dtype {np.dtype(grad.dtype).name} on {grad.context}"
                if isinstance(grad, NDArray)
                else type(grad).__name__
            )
            raise LazyNDError(
                f"mark_variables: gradient {i} must be an NDArray of shape {x.shape}, dtype {np.dtype(x.dtype).name} "
                f"on {x.context}, got {given}"
            )
        x._ag = (Leaf(None if req == "null" else grad, req), 0)


def grad_of(array: Any) -> Any:
    """The gradient buffer of a variable; None for any other array (:attr:`lazynd.NDArray.grad`)."""
    return array.grad
