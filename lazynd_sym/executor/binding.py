"""Binding a symbol: the arrays given to ``bind`` checked, those of ``simple_bind`` allocated.

Both hand the arrays, in argument order, to the executor class the contexts call for: an
:class:`~lazynd_sym.executor.Executor` on one context, a
:class:`~lazynd_sym.executor.placed.PlacedExecutor` when ``group2ctx`` sends nodes elsewhere.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import lazynd.ndarray as nd
from lazynd.context import Context, as_context
from lazynd.errors import ArgumentTypeError, ArgumentValueError, ContextError, LazyNDError, ShapeError
from lazynd.ndarray.sparse import check_dense

from ..inference import shapes_to_bind, types_to_bind
from ..passes.expand_control_flow import one_unrolling_per_bind
from .executor import Executor
from .memory import out_of_memory_named
from .placed import PlacedExecutor, needs_placement

GRAD_REQS = ("write", "add", "null")


def _as_list(values: Any, names: list[str], what: str, allow_missing: bool = False) -> list[Any]:
    """``values`` (a list in ``names`` order, or a dict by name) as a list in ``names`` order.

    A dict may hold names the symbol lacks, as in MXNet: a part of a network (one of its
    ``get_internals()``) binds with the whole network's parameters.  Every array given must be
    an NDArray (MXNet raises ``TypeError`` otherwise, so does this: :class:`ArgumentTypeError`);
    one missing, or a list of another length, is an :class:`ArgumentValueError` (MXNet's ``ValueError``).
    """
    if values is None:
        return [None] * len(names)
    if isinstance(values, dict):
        missing = [n for n in names if n not in values]
        if missing and not allow_missing:
            raise ArgumentValueError(f"bind: {what} misses {missing}")
        chosen = [values.get(n) for n in names]
    elif isinstance(values, (list, tuple)):
        if len(values) != len(names):
            raise ArgumentValueError(f"bind: {what} has {len(values)} arrays, expected {len(names)} ({names})")
        chosen = list(values)
    else:
        raise ArgumentTypeError(
            f"bind: {what} must be a list of NDArrays or a dict of NDArrays by name, got {type(values).__name__}"
        )
    for name, value in zip(names, chosen, strict=True):
        if value is not None and not isinstance(value, nd.NDArray):
            raise ArgumentTypeError(f"bind: {what}[{name!r}] must be an NDArray, got {type(value).__name__}")
    return chosen


def _optional_dict(caller: str, what: str, value: Any) -> dict:
    """``value`` (a dict, or None for an empty one) checked to be a dict."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ArgumentTypeError(f"{caller}: {what} must be a dict by name, got {type(value).__name__}")
    return value


def _check_binding(caller: str, symbol: Any, ctx: Any) -> Context:
    """``ctx`` as a :class:`Context`; refuses arguments MXNet cannot bind (duplicate names)."""
    names = symbol.list_arguments()
    if len(set(names)) != len(names):
        duplicated = sorted({n for n in names if names.count(n) > 1})
        raise LazyNDError(
            f"{caller}: argument names {duplicated} appear more than once; give each variable its own name"
        )
    return as_context(ctx, f"{caller}: ctx")


def _executor_class(caller: str, symbol: Any, ctx: Context, group2ctx: dict | None) -> type[Executor]:
    """The executor class for ``group2ctx``; as MXNet, a non-empty ``group2ctx`` must give a
    context to every ``ctx_group`` of the symbol (a group left out is most often a typo)."""
    placed = needs_placement(ctx, group2ctx)
    if group2ctx:
        groups = {node.user.get("__ctx_group__") for node in symbol._nodes()} - {None}
        missing = sorted(groups - set(group2ctx))
        if missing:
            raise ContextError(
                f"{caller}: group2ctx gives no context to the ctx_group {missing} of the symbol; "
                f"it names {sorted(group2ctx)}"
            )
    return PlacedExecutor if placed else Executor


def bind(
    symbol: Any,
    ctx: Context,
    args: Any,
    args_grad: Any,
    grad_req: Any,
    aux_states: Any,
    group2ctx: Any,
    shared_exec: Any,
) -> Executor:
    """The executor of ``symbol.bind``: the given arrays checked against the symbol's arguments."""
    ctx = _check_binding("bind", symbol, ctx)
    arg_names, aux_names = symbol.list_arguments(), symbol.list_auxiliary_states()
    arrays = _as_list(args, arg_names, "args")
    if any(a is None for a in arrays):
        raise ArgumentValueError(
            f"bind: args misses {[n for n, a in zip(arg_names, arrays, strict=False) if a is None]}"
        )
    grads = _as_list(args_grad, arg_names, "args_grad", allow_missing=True)
    for name, array, grad in zip(arg_names, arrays, grads, strict=True):
        if grad is not None and tuple(grad.shape) != tuple(array.shape):
            raise ShapeError(
                f"bind: args_grad[{name!r}] has shape {grad.shape}, expected {array.shape} like its argument"
            )
        # as MXNet, which refuses it: a kernel writing the gradient in place would write the
        # argument's dtype into another's storage (on the GPU, raw bytes of the wrong width)
        if grad is not None and np.dtype(grad.dtype) != np.dtype(array.dtype):
            raise ArgumentTypeError(
                f"bind: args_grad[{name!r}] has dtype {np.dtype(grad.dtype).name}, "
                f"expected {np.dtype(array.dtype).name} like its argument"
            )
    reqs = _grad_reqs("bind", grad_req, arg_names)
    reqs = [r if g is not None else "null" for r, g in zip(reqs, grads, strict=False)]
    aux = _as_list(aux_states, aux_names, "aux_states")
    if any(a is None for a in aux):
        raise ArgumentValueError(
            f"bind: aux_states misses {[n for n, a in zip(aux_names, aux, strict=False) if a is None]}"
        )
    with out_of_memory_named("bind", ctx):
        return _executor_class("bind", symbol, ctx, group2ctx)(symbol, ctx, arrays, grads, reqs, aux, group2ctx)


def _grad_reqs(caller: str, grad_req: Any, names: list[str]) -> list[str]:
    """``grad_req`` (one string, a dict by name, or a list) as one checked request per argument;
    None, as in MXNet, asks for no gradient."""
    if grad_req is None:
        reqs = ["null"] * len(names)
    elif isinstance(grad_req, str):
        reqs = [grad_req] * len(names)
    elif isinstance(grad_req, dict):
        reqs = [grad_req.get(n, "null") for n in names]
    elif isinstance(grad_req, (list, tuple)):
        reqs = list(grad_req)
        if len(reqs) != len(names):
            raise LazyNDError(f"{caller}: grad_req has {len(reqs)} entries, expected one per argument {names}")
    else:
        raise ArgumentTypeError(
            f"{caller}: grad_req must be a string, a list or a dict by name, got {type(grad_req).__name__}"
        )
    for name, req in zip(names, reqs, strict=False):
        if req not in GRAD_REQS:
            raise LazyNDError(f"{caller}: grad_req of {name!r} is {req!r}, expected one of {GRAD_REQS}")
    return reqs


class Sharing:
    """Where ``simple_bind`` may take arrays from instead of allocating them: ``shared_exec``'s
    arguments and gradients of the same name and shape named in ``shared_arg_names`` (none when
    it is not given, as in MXNet 1.9.1) and, as in MXNet 1.x, ``shared_buffer``, a dict by name
    whose arrays are reused (a view of their first elements) when large enough and of the dtype,
    and which receives every array allocated (a gradient under ``'grad of <name>'``)."""

    def __init__(self, shared_exec: Any = None, shared_arg_names: Any = None, shared_buffer: Any = None) -> None:
        if shared_buffer is not None and not isinstance(shared_buffer, dict):
            raise LazyNDError(
                f"simple_bind: shared_buffer must be a dict of NDArrays by name, got {type(shared_buffer).__name__}"
            )
        for name, held in (shared_buffer or {}).items():
            if not isinstance(held, nd.NDArray):
                raise ArgumentTypeError(
                    f"simple_bind: shared_buffer[{name!r}] must be an NDArray, got {type(held).__name__}"
                )
        self.buffer = shared_buffer
        self.args: dict = {}
        self.grads: dict = {}
        if shared_exec is not None and not isinstance(shared_exec, Executor):
            raise ArgumentTypeError(f"simple_bind: shared_exec must be an Executor, got {type(shared_exec).__name__}")
        if shared_exec is not None and shared_arg_names is not None:
            # as MXNet 1.9.1: without shared_arg_names nothing of shared_exec's is taken (its
            # arguments are not the new executor's; a bucket that shares weights names them)
            shared = set(shared_arg_names)
            self.args = {n: a for n, a in shared_exec.arg_dict.items() if n in shared}
            self.grads = {n: g for n, g in shared_exec.grad_dict.items() if g is not None and n in shared}

    def take(self, key: str, name: str, shape: tuple, dtype: Any, allocate: Any) -> Any:
        """The array for argument ``name`` (its gradient when ``key`` is ``'grad'``)."""
        old = (self.grads if key == "grad" else self.args).get(name)
        if old is not None and tuple(old.shape) == tuple(shape):
            return old
        if self.buffer is None:
            return allocate()
        buffer_name = f"grad of {name}" if key == "grad" else name
        held = self.buffer.get(buffer_name)
        size = int(np.prod(shape, dtype=np.int64))
        if held is not None and np.dtype(held.dtype) == np.dtype(dtype) and held.size >= size:
            if tuple(held.shape) == tuple(shape):
                return held
            return held.reshape((held.size,))[0:size].reshape(shape)
        array = allocate()
        self.buffer[buffer_name] = array
        return array


def simple_bind(
    symbol: Any,
    ctx: Context,
    grad_req: Any,
    type_dict: Any,
    stype_dict: Any,
    group2ctx: Any,
    sharing: Sharing,
    shapes: dict,
) -> Executor:
    """The executor of ``symbol.simple_bind``: arrays of the inferred shapes, or those ``sharing`` holds.

    Its shape inference and its executor read one graph with the control flow written out.
    """
    ctx = _check_binding("simple_bind", symbol, ctx)
    for name, stype in _optional_dict("simple_bind", "stype_dict", stype_dict).items():
        check_dense(stype, f"simple_bind: stype_dict[{name!r}]")
    with one_unrolling_per_bind():
        return _simple_bind(symbol, ctx, grad_req, type_dict, group2ctx, sharing, shapes)


def _simple_bind(
    symbol: Any, ctx: Context, grad_req: Any, type_dict: Any, group2ctx: Any, sharing: Sharing, shapes: dict
) -> Executor:
    # as MXNet's, shapes of names the symbol lacks are passed over (a label's for a net without one)
    inputs = set(symbol.list_inputs())
    shapes = {name: shape for name, shape in shapes.items() if name in inputs}
    arg_shapes, _, aux_shapes = shapes_to_bind(symbol, shapes, "simple_bind")
    names, aux_names = symbol.list_arguments(), symbol.list_auxiliary_states()
    arg_types, aux_types = types_to_bind(symbol, _optional_dict("simple_bind", "type_dict", type_dict))
    executor_class = _executor_class("simple_bind", symbol, ctx, group2ctx)
    where = executor_class.variable_contexts(symbol, ctx, group2ctx)

    def make(key: str, name: str, shape: tuple, dtype: Any) -> Any:
        return sharing.take(key, name, shape, dtype, lambda: nd.zeros(shape, ctx=where.get(name, ctx), dtype=dtype))

    reqs = _grad_reqs("simple_bind", grad_req, names)
    # a bool argument has no derivative, so no gradient (MXNet 1.9.1 allocates one its backward refuses)
    reqs = ["null" if np.dtype(t) == np.bool_ else r for r, t in zip(reqs, arg_types, strict=False)]
    with out_of_memory_named("simple_bind", ctx):
        args = [make("arg", n, s, t) for n, s, t in zip(names, arg_shapes, arg_types, strict=False)]
        grads = [
            make("grad", n, s, t) if r != "null" else None
            for n, s, t, r in zip(names, arg_shapes, arg_types, reqs, strict=False)
        ]
        aux = [
            nd.zeros(s, ctx=where.get(n, ctx), dtype=t)
            for n, s, t in zip(aux_names, aux_shapes, aux_types, strict=False)
        ]
        return executor_class(symbol, ctx, args, grads, reqs, aux, group2ctx)
