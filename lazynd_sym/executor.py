"""Executors: a bound graph compiled at bind time into kernel calls over planned storage.

At bind the passes run once (gradient, shapes, types, memory plan) and the forward and
backward passes become lists of ``(kernel, kctx, attrs, inputs, outputs, aux)`` over
preallocated buffers.

Bulk execution (MXNet's term): on a CPU context each pass is pushed to the engine as ONE
operation, a "segment" that reads every argument and auxiliary state and writes every
output and gradient, and whose function calls the precomputed kernels in order.  Each
kernel then costs a Python call instead of an engine push with its own var bookkeeping
and, possibly, a hand-off to a worker thread.  What stays per operator:

- an exception names the failing operator: ``EngineError: operator 'fc1'
  (FullyConnected, in 'executor_forward') failed: ...``, raised at the next wait as
  for any operation;
- a monitor (:meth:`Executor.set_monitor_callback`) is called after each operator of the
  pass, with a private copy of each output (no copies while its ``active`` predicate says no);
- while the profiler records, a pass stays one operation and times each of its operators
  for the profiler as ``executor:<node>``: in the trace they nest inside the pass's own
  event (``executor_forward``, ``executor_backward``) on the same thread;
- ``LAZYND_EXEC_BULK=0`` (read when an executor is bound) pushes one operation per
  operator always, for debugging or comparison.

On a GPU each kernel is pushed on its own, since launches are asynchronous anyway.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from time import perf_counter_ns
from typing import Any

import numpy as np

import lazynd.engine as engine_module
import lazynd.ndarray as nd
from lazynd.backend import get_backend
from lazynd.context import Context
from lazynd.engine import StepFailure, get_engine
from lazynd.engine.var import Var
from lazynd.errors import LazyNDError, ShapeError
from lazynd.ndarray.dispatch import kernel_context, push_kernel
from lazynd.ops.registry import KernelContext

from . import passes
from .bind_graph import prepare_bind_graph
from .graph import IndexedGraph
from .passes.fuse_elemwise import fusion_enabled
from .passes.infer_shape import shape_known
from .passes.plan_memory import entry_bytes

GRAD_REQS = ("write", "add", "null")


def bulk_enabled() -> bool:
    """Whether executors bound now push a whole pass as one operation (``LAZYND_EXEC_BULK``, default on)."""
    return os.environ.get("LAZYND_EXEC_BULK", "1").strip().lower() not in ("0", "false", "no", "off")


def _as_list(values: Any, names: list[str], what: str, allow_missing: bool = False) -> list[Any]:
    if values is None:
        return [None] * len(names)
    if isinstance(values, dict):
        unknown = set(values) - set(names)
        if unknown:
            raise LazyNDError(f"bind: {what} has unknown names {sorted(unknown)}; expected names from {names}")
        missing = [n for n in names if n not in values]
        if missing and not allow_missing:
            raise LazyNDError(f"bind: {what} misses {missing}")
        return [values.get(n) for n in names]
    values = list(values)
    if len(values) != len(names):
        raise LazyNDError(f"bind: {what} has {len(values)} arrays, expected {len(names)} ({names})")
    return values


def _executor_class(ctx: Context, group2ctx: dict | None) -> type[Executor]:
    from .placed_executor import PlacedExecutor, needs_placement

    return PlacedExecutor if needs_placement(ctx, group2ctx) else Executor


class Executor:
    """A symbol bound to arrays on one context.

    Examples
    --------
    >>> import lazynd as mx, lazynd_sym as sym
    >>> a, b = sym.Variable("A"), sym.Variable("B")
    >>> ex = ((a + b) / 10).simple_bind(mx.cpu(), A=(2,), B=(2,))
    >>> ex.forward(A=mx.nd.ones((2,)), B=mx.nd.ones((2,)))[0].asnumpy()
    array([0.2, 0.2], dtype=float32)
    """

    def __init__(
        self, symbol: Any, ctx: Context, args: list, grads: list, reqs: list, aux: list, group2ctx: Any = None
    ) -> None:
        self._symbol = symbol
        self._ctx = ctx
        self._group2ctx = dict(group2ctx or {})
        self.arg_names = symbol.list_arguments()
        self.aux_names = symbol.list_auxiliary_states()
        self.output_names = symbol.list_outputs()
        self._arg_index = {name: i for i, name in enumerate(self.arg_names)}
        self.arg_arrays = args
        self.grad_arrays = [g if r != "null" else None for g, r in zip(grads, reqs, strict=False)]
        self.grad_req = reqs
        self.aux_arrays = aux
        self._monitor: Callable[[str, Any], None] | None = None
        self._monitor_active: Callable[[], bool] | None = None
        self._bulk = bulk_enabled()
        self._compile()

    # -- construction --------------------------------------------------------------------------
    @classmethod
    def bind(
        cls,
        symbol: Any,
        ctx: Context,
        args: Any,
        args_grad: Any,
        grad_req: Any,
        aux_states: Any,
        group2ctx: Any,
        shared_exec: Any,
    ) -> Executor:
        arg_names, aux_names = symbol.list_arguments(), symbol.list_auxiliary_states()
        arrays = _as_list(args, arg_names, "args")
        if any(a is None for a in arrays):
            raise LazyNDError(f"bind: args misses {[n for n, a in zip(arg_names, arrays, strict=False) if a is None]}")
        grads = _as_list(args_grad, arg_names, "args_grad", allow_missing=True)
        if isinstance(grad_req, str):
            reqs = [grad_req] * len(arg_names)
        elif isinstance(grad_req, dict):
            reqs = [grad_req.get(n, "null") for n in arg_names]
        else:
            reqs = list(grad_req)
        for name, req, _grad in zip(arg_names, reqs, grads, strict=False):
            if req not in GRAD_REQS:
                raise LazyNDError(f"bind: grad_req of {name!r} is {req!r}, expected one of {GRAD_REQS}")
        reqs = [r if g is not None else "null" for r, g in zip(reqs, grads, strict=False)]
        aux = _as_list(aux_states, aux_names, "aux_states")
        if any(a is None for a in aux):
            raise LazyNDError(
                f"bind: aux_states misses {[n for n, a in zip(aux_names, aux, strict=False) if a is None]}"
            )
        return _executor_class(ctx, group2ctx)(symbol, ctx, arrays, grads, reqs, aux, group2ctx)

    @classmethod
    def simple_bind(
        cls, symbol: Any, ctx: Context, grad_req: Any, type_dict: Any, group2ctx: Any, shared_exec: Any, shapes: dict
    ) -> Executor:
        arg_shapes, _, aux_shapes = symbol.infer_shape(**shapes)
        if arg_shapes is None:
            partial = symbol.infer_shape_partial(**shapes)[0]
            unknown = [n for n, s in zip(symbol.list_arguments(), partial, strict=False) if not shape_known(s)]
            raise ShapeError(f"simple_bind: cannot infer the shapes of {unknown} from {shapes}")
        arg_types, _, aux_types = symbol.infer_type(**(type_dict or {}))
        names, aux_names = symbol.list_arguments(), symbol.list_auxiliary_states()
        if arg_types is None:
            arg_types, aux_types = [np.float32] * len(names), [np.float32] * len(aux_names)
        shared = shared_exec.arg_dict if shared_exec is not None else {}
        shared_grads = shared_exec.grad_dict if shared_exec is not None else {}
        executor_class = _executor_class(ctx, group2ctx)
        where = executor_class.variable_contexts(symbol, ctx, group2ctx)

        def make(name: str, shape: tuple, dtype: Any, pool: dict) -> Any:
            old = pool.get(name)
            if old is not None and tuple(old.shape) == tuple(shape):
                return old
            return nd.zeros(shape, ctx=where.get(name, ctx), dtype=dtype)

        args = [make(n, s, t, shared) for n, s, t in zip(names, arg_shapes, arg_types, strict=False)]
        if isinstance(grad_req, str):
            reqs = [grad_req] * len(names)
        elif isinstance(grad_req, dict):
            reqs = [grad_req.get(n, "null") for n in names]
        else:
            reqs = list(grad_req)
        grads = [
            make(n, s, t, shared_grads) if r != "null" else None
            for n, s, t, r in zip(names, arg_shapes, arg_types, reqs, strict=False)
        ]
        aux = [
            nd.zeros(s, ctx=where.get(n, ctx), dtype=t)
            for n, s, t in zip(aux_names, aux_shapes, aux_types, strict=False)
        ]
        return executor_class(symbol, ctx, args, grads, reqs, aux, group2ctx)

    @staticmethod
    def variable_contexts(symbol: Any, ctx: Context, group2ctx: Any) -> dict[str, Context]:
        """Where ``simple_bind`` allocates each argument: everything on ``ctx`` here."""
        return {}

    def _grad_array(self, j: int) -> Any:
        """The gradient array of argument ``j``; only arguments whose ``grad_req`` is not ``"null"`` have one."""
        grad = self.grad_arrays[j]
        if grad is None:
            raise LazyNDError(f"executor: argument {self.arg_names[j]!r} has grad_req 'null': it has no gradient array")
        return grad

    def _placement(self, arg_nodes: list, aux_nodes: list, wrt: list) -> Any:
        """Device placement of the bound graph (None: every node on ``ctx``)."""
        return None

    def _compile(self) -> None:
        sym = self._symbol
        outputs = list(sym._outputs)
        self._n_outputs = len(outputs)
        graph0 = IndexedGraph(outputs)
        var_nodes = [graph0.nodes[i] for i in graph0.variables()]
        arg_nodes = [n for n in var_nodes if id(n) not in graph0.aux_ids]
        aux_nodes = [n for n in var_nodes if id(n) in graph0.aux_ids]
        wrt = [n for n, r in zip(arg_nodes, self.grad_req, strict=False) if r != "null"]
        grad = passes.gradient(outputs, wrt) if wrt else None
        # bind-time rewrites (device placement, elementwise fusion) work on copies of the graph
        prepared = prepare_bind_graph(
            outputs, list(grad.grads) if grad else [], self._placement(arg_nodes, aux_nodes, wrt), fusion_enabled()
        )
        outputs, grad_list, forward_nodes = prepared.outputs, prepared.grads, prepared.forward_ids
        grad_entries = [e for e in grad_list if e is not None]
        graph = IndexedGraph(outputs + grad_entries)
        if prepared.node_ctx is not None:
            graph.attrs["context"] = [prepared.node_ctx[id(n)] for n in graph.nodes]
        self._graph = graph
        ops = [i for i, n in enumerate(graph.nodes) if n.op is not None]
        self._forward_order = [i for i in ops if id(graph.nodes[i]) in forward_nodes]
        self._backward_order = [i for i in ops if id(graph.nodes[i]) not in forward_nodes]

        known_shape, known_type = {}, {}
        bound = list(zip(arg_nodes, self.arg_arrays, strict=False)) + list(
            zip(aux_nodes, self.aux_arrays, strict=False)
        )
        for node, arr in bound:
            eid = graph.entry(graph.index[id(node)])
            known_shape[eid], known_type[eid] = tuple(arr.shape), np.dtype(arr.dtype).name
        same = []
        self._head_grads = []
        for k, var in grad.head_grads if grad else []:
            same.append((graph.entry(graph.index[id(var)]), graph.heads[k]))
            self._head_grads.append((k, graph.entry(graph.index[id(var)])))
        wrt_index = {id(n): j for j, n in enumerate(arg_nodes)}
        self._grad_entry: dict[int, int] = {}
        for node, entry in zip(wrt, grad_list, strict=False):
            if entry is not None:
                j = wrt_index[id(node)]
                self._grad_entry[j] = graph.entry_of(entry)
                same.append((self._grad_entry[j], graph.entry(graph.index[id(node)])))
        shapes = passes.infer_shape(graph, known_shape, same)
        types = passes.infer_type(graph, known_type, same)
        for eid, (s, t) in enumerate(zip(shapes, types, strict=False)):
            if not shape_known(s) or t is None:
                raise ShapeError(f"bind: cannot infer shape/dtype of '{graph.entry_name(eid)}' (got {s}, {t})")

        # entries that live in caller-visible arrays: variables, and 'write' gradients made by an op
        external = {graph.entry(i) for i in graph.variables()}
        self._direct_grads: dict[int, int] = {}
        claimed: set[int] = set()
        fwd_heads = set(graph.heads[: self._n_outputs])
        for j, eid in self._grad_entry.items():
            if self.grad_req[j] == "write" and eid not in external and eid not in claimed and eid not in fwd_heads:
                self._direct_grads[j] = eid
                claimed.add(eid)
        external |= claimed
        order = self._forward_order + self._backward_order
        self._skipped = _unread_optional_outputs(graph, order, external)
        storage = passes.plan_memory(graph, order, external | self._skipped)
        for user_pass in passes.bind_passes():
            graph = user_pass(graph) or graph
        self._allocate(storage, claimed)

    def _allocate(self, storage: list[int], claimed: set[int]) -> None:
        graph, ctx = self._graph, self._ctx
        backend = get_backend(ctx)
        shapes, types = graph.attrs["shape"], graph.attrs["dtype"]
        blocks = [backend.empty((max(size, 1),), "uint8") for size in graph.attrs["storage_bytes"]]
        buffers: list[Any] = [None] * graph.num_entries
        for eid, sid in enumerate(storage):
            if sid >= 0:
                n = entry_bytes(shapes[eid], types[eid])
                buffers[eid] = blocks[sid][:n].view(types[eid]).reshape(shapes[eid])
        arg_nodes = [i for i in graph.variables() if id(graph.nodes[i]) not in graph.aux_ids]
        name_to_arg = {graph.nodes[i].name: i for i in arg_nodes}
        for name, arr in zip(self.arg_names, self.arg_arrays, strict=False):
            buffers[graph.entry(name_to_arg[name])] = arr._data
        aux_index = {graph.nodes[i].name: i for i in graph.variables() if id(graph.nodes[i]) in graph.aux_ids}
        for name, arr in zip(self.aux_names, self.aux_arrays, strict=False):
            buffers[graph.entry(aux_index[name])] = arr._data
        for _, eid in self._head_grads:
            buffers[eid] = backend.zeros(shapes[eid], types[eid])
        for j, eid in self._direct_grads.items():
            buffers[eid] = self._grad_array(j)._data
        self._buffers = buffers
        self._internal = Var()
        self.outputs = [nd.NDArray(buffers[e], Var(), ctx) for e in graph.heads[: self._n_outputs]]
        self._steps = {True: self._build(self._forward_order, True), False: self._build(self._forward_order, False)}
        self._backward_steps = self._build(self._backward_order, True)
        self._finish_grads = []
        for j, eid in self._grad_entry.items():
            if j in self._direct_grads:
                continue
            target = self._grad_array(j)._data
            self._finish_grads.append((self.grad_req[j], buffers[eid], target))
        for j, req in enumerate(self.grad_req):
            if req == "write" and j not in self._grad_entry:
                self._finish_grads.append(("zero", None, self._grad_array(j)._data))
        uses_random = any(graph.nodes[i].opdef.needs_random for i in self._forward_order + self._backward_order)
        self._random_var = None
        if uses_random:
            from lazynd.random import generator_for

            self._random_var = generator_for(ctx).var
        self._writes_aux = any(
            graph.nodes[i].opdef.aux and graph.nodes[i].opdef.writes_aux_in_train for i in self._forward_order
        )
        self._forward_vars = {flag: self._vars_of_forward(flag) for flag in (True, False)}
        self._backward_vars = self._vars_of_backward()
        self._finish = _finish_kernel(self._finish_grads) if self._finish_grads else None

    def _build(self, order: list[int], is_train: bool) -> list[tuple]:
        """The steps ``(fn, kctx, attrs, ins, outs, aux, node)`` of the nodes in ``order``."""
        graph = self._graph
        steps = []
        for i in order:
            node = graph.nodes[i]
            op = node.opdef
            where = self._node_context(i)
            kctx = kernel_context(where, is_train)
            if op.needs_random:
                from lazynd.random import generator_for

                kctx = KernelContext(kctx.xp, kctx.backend, kctx.device_id, is_train, generator_for(where).generator)
            fn = op.forward_gpu if where.device_type == "gpu" and op.forward_gpu is not None else op.forward
            entries = graph.input_entries(i)
            n_data = node.num_data_inputs()
            ins = [self._buffers[e] for e in entries[:n_data]]
            aux = [self._buffers[e] for e in entries[n_data:]]
            outs = [self._buffers[graph.entry(i, k)] for k in range(node.num_outputs())]
            step = (fn, kctx, node.attrs, ins, outs, aux, node)
            self._step_built(step, i, where)
            steps.append(step)
        return steps

    def _node_context(self, i: int) -> Context:
        """Where node ``i`` runs: the bind context (a placed executor overrides this)."""
        return self._ctx

    def _step_built(self, step: tuple, i: int, where: Context) -> None:
        """Called for every step :meth:`_build` makes (a placed executor records its push target)."""

    # -- running -------------------------------------------------------------------------------
    def _monitor_now(self) -> Callable[[str, Any], None] | None:
        """The monitor callback, if one is installed and its ``active`` predicate (if any) says yes now."""
        monitor = self._monitor
        if monitor is not None and self._monitor_active is not None and not self._monitor_active():
            return None
        return monitor

    def _run_steps(self, steps: list[tuple]) -> None:
        monitor = self._monitor_now()
        node = None  # the step running: the except clause names it
        try:
            if monitor is None:
                for fn, kctx, attrs, ins, outs, aux, node in steps:  # noqa: B007 - node: see above
                    fn(kctx, attrs, ins, outs, aux)
                return
            for fn, kctx, attrs, ins, outs, aux, node in steps:
                fn(kctx, attrs, ins, outs, aux)
                for k, out in enumerate(outs[: node.num_visible_outputs()]):
                    if out is not None:
                        monitor(node.output_name(k), nd.NDArray(out.copy(), Var(), self._ctx))
        except Exception as err:
            raise _step_failure(node, err) from err

    def _run_bulk(self, steps: list[tuple], tail: Callable[[], None] | None = None) -> None:
        """Run a bulked pass (one engine operation), then ``tail``.

        While the profiler records, each step is timed and handed to the engine's profiler
        hook as ``executor:<node>``, so the trace shows every operator without the pass being
        split into an engine operation per operator (that split cost the MLP epoch 25%).
        """
        hook = get_engine().profiler_hook if engine_module.recording else None
        if hook is None:
            self._run_steps(steps)
        else:
            for step in steps:
                start = perf_counter_ns()
                self._run_steps([step])
                hook("executor:" + step[6].name, self._ctx, (), start, perf_counter_ns())
        if tail is not None:
            tail()

    def _bulk_now(self) -> bool:
        """Push a pass as one operation (see the module docstring)?"""
        return self._bulk

    def _push(
        self, steps: list[tuple], reads: list, writes: list, name: str, tail: Callable[[], None] | None = None
    ) -> None:
        if self._bulk_now() and self._ctx.device_type != "gpu":
            get_engine().push(self._run_bulk, (steps, tail), reads, writes, name, self._ctx)
            return
        # one operation per operator; each one writes the executor's internal var, so they run in
        # order, and all but the first read it too, so they inherit the error of an earlier step
        # of this pass (and are skipped) as the rest of a bulked pass would be, instead of clearing
        # it with their own success
        chained = [*reads, self._internal]
        for k, step in enumerate(steps):
            self._push_step(step, self._run_steps, ([step],), chained if k else reads, writes, step[6].name)
        if tail is not None:
            self._push_step(None, tail, (), chained if steps else reads, writes, name + "_grads")

    def _push_step(
        self, step: tuple | None, fn: Callable[..., Any], args: tuple, reads: list, writes: list, name: str
    ) -> None:
        """Push one operation of a pass run operator by operator (``step`` is None for the tail)."""
        if self._ctx.device_type == "gpu":
            push_kernel(self._ctx, fn, args, reads, writes, name, 0)
        else:
            get_engine().push(fn, args, reads, writes, "executor:" + name if step is not None else name, self._ctx)

    def forward(self, is_train: bool = False, **kwargs: Any) -> list[Any]:
        """Push the forward pass (after copying ``kwargs`` into the named arguments); return ``outputs``.

        In a bulked pass the copies of NDArray arguments on the executor's host are the
        first steps of the pass itself rather than engine operations of their own.
        """
        is_train = bool(is_train)
        reads, writes = self._forward_vars[is_train]
        steps = self._steps[is_train]
        if kwargs:
            copies = self._copy_arguments(kwargs)
            if copies:
                reads = reads + [src._var for src, _ in copies]
                writes = writes + [dst._var for _, dst in copies]
                sources, targets = [src._data for src, _ in copies], [dst._data for _, dst in copies]
                steps = [(_copy_kernel, None, None, sources, targets, [], _INPUT_COPY_NODE), *steps]
        self._push(steps, reads, writes, "executor_forward")
        return self.outputs

    def _copy_arguments(self, kwargs: dict[str, Any]) -> list[tuple[Any, Any]]:
        """Copy ``kwargs`` into the named arguments; return the ``(source, target)`` copies left to the pass."""
        fold = self._bulk_now()
        left = []
        for key, value in kwargs.items():
            index = self._arg_index.get(key)
            if index is None:
                raise LazyNDError(f"forward: {key!r} is not an argument; arguments are {self.arg_names}")
            target = self.arg_arrays[index]
            if isinstance(value, nd.NDArray):
                if value._data.shape != target._data.shape:
                    raise ShapeError(
                        f"forward: {key!r} has shape {value.shape}, the executor was bound with {target.shape}"
                    )
                same_ctx = value._ctx is target._ctx or value._ctx == target._ctx
                if fold and same_ctx and target._ctx.device_type != "gpu":
                    if value._var is not target._var or value._data is not target._data:
                        left.append((value, target))
                else:
                    value.copyto(target)
            else:
                target[:] = value
        return left

    def _vars_of_forward(self, is_train: bool) -> tuple[list[Var], list[Var]]:
        reads = [a._var for a in self.arg_arrays]
        writes = [o._var for o in self.outputs] + [self._internal]
        if is_train and self._writes_aux:
            writes += [a._var for a in self.aux_arrays]
        else:
            reads += [a._var for a in self.aux_arrays]
        if self._random_var is not None:
            writes.append(self._random_var)
        return reads, writes

    def _vars_of_backward(self) -> tuple[list[Var], list[Var]]:
        reads = [a._var for a in self.arg_arrays] + [a._var for a in self.aux_arrays] + [o._var for o in self.outputs]
        writes = [g._var for g in self.grad_arrays if g is not None] + [self._internal]
        if self._random_var is not None:
            writes.append(self._random_var)
        return reads, writes

    def backward(self, out_grads: Any = None) -> None:
        """Push the backward pass; ``out_grads`` feed the outputs that are not losses."""
        if not self._grad_entry and not self._finish_grads:
            return
        if out_grads is None:
            given = []
        elif isinstance(out_grads, nd.NDArray):
            given = [out_grads]
        else:
            given = list(out_grads)
        reads, writes = self._backward_vars
        head_copies = []
        for k, eid in self._head_grads:
            if k < len(given) and given[k] is not None:
                g = given[k]
                if tuple(g.shape) != tuple(self._buffers[eid].shape):
                    raise ShapeError(
                        f"backward: out_grads[{k}] has shape {g.shape}, expected {self._buffers[eid].shape}"
                    )
                head_copies.append((self._buffers[eid], g._data))
                reads = [*reads, g._var]
            elif self._head_grads:
                raise LazyNDError(f"backward: output {self.output_names[k]!r} is not a loss and needs out_grads[{k}]")
        steps = self._backward_steps
        if head_copies:
            steps = [
                (
                    _copy_kernel,
                    None,
                    None,
                    [src for _, src in head_copies],
                    [dst for dst, _ in head_copies],
                    [],
                    _COPY_NODE,
                )
            ] + steps
        self._push(steps, reads, writes, "executor_backward", self._finish)

    # -- views ---------------------------------------------------------------------------------
    @property
    def arg_dict(self) -> dict[str, Any]:
        return dict(zip(self.arg_names, self.arg_arrays, strict=False))

    @property
    def grad_dict(self) -> dict[str, Any]:
        return {n: g for n, g in zip(self.arg_names, self.grad_arrays, strict=False) if g is not None}

    @property
    def aux_dict(self) -> dict[str, Any]:
        return dict(zip(self.aux_names, self.aux_arrays, strict=False))

    @property
    def output_dict(self) -> dict[str, Any]:
        return dict(zip(self.output_names, self.outputs, strict=False))

    def set_monitor_callback(
        self, callback: Callable[[str, Any], None] | None, active: Callable[[], bool] | None = None
    ) -> None:
        """Call ``callback(name, array)`` with every operator output as it is computed.

        ``array`` is a private copy of the output (the planned buffer is reused by later
        operators).  ``active``, when given, is asked before each pass (before each operator
        when operators are pushed one by one): while it returns False
        the executor neither copies outputs nor calls ``callback`` (``mx.mon.Monitor`` passes
        its activation, so the batches it does not record cost nothing).  ``None`` removes the
        callback.
        """
        if callback is not None and not callable(callback):
            raise LazyNDError(f"set_monitor_callback: callback must be callable, got {type(callback).__name__}")
        if active is not None and not callable(active):
            raise LazyNDError(f"set_monitor_callback: active must be callable, got {type(active).__name__}")
        self._monitor = callback
        self._monitor_active = active if callback is not None else None

    def copy_params_from(
        self, arg_params: dict, aux_params: dict | None = None, allow_extra_params: bool = False
    ) -> None:
        """Copy parameter arrays into this executor's arguments and auxiliary states (lazily)."""
        for params, table, what in (
            (arg_params, self.arg_dict, "argument"),
            (aux_params or {}, self.aux_dict, "auxiliary state"),
        ):
            for name, value in params.items():
                if name in table:
                    value.copyto(table[name]) if isinstance(value, nd.NDArray) else table[name].__setitem__(
                        slice(None), value
                    )
                elif not allow_extra_params:
                    raise LazyNDError(f"copy_params_from: {name!r} is not an {what} of the executor")

    def reshape(self, partial_shaping: bool = False, allow_up_sizing: bool = False, **shapes: Any) -> Executor:
        """A new executor for new input shapes, sharing this one's arrays where shapes allow."""
        arg_shapes, _, aux_shapes = self._symbol.infer_shape(**shapes)
        if arg_shapes is None:
            raise ShapeError(f"reshape: cannot infer every shape from {shapes}")

        def share(old: Any, shape: tuple) -> Any:
            if old is None:
                return None
            if tuple(old.shape) == tuple(shape):
                return old
            size = int(np.prod(shape))
            if size <= old.size:
                return nd.NDArray(old._data.reshape(-1)[:size].reshape(shape), old._var, old._ctx)
            if not allow_up_sizing:
                raise ShapeError(f"reshape: new shape {shape} is larger than {old.shape}; pass allow_up_sizing=True")
            return nd.zeros(shape, ctx=self._ctx, dtype=old.dtype)

        args = [share(a, s) for a, s in zip(self.arg_arrays, arg_shapes, strict=False)]
        grads = [share(g, s) for g, s in zip(self.grad_arrays, arg_shapes, strict=False)]
        aux = [share(a, s) for a, s in zip(self.aux_arrays, aux_shapes, strict=False)]
        return type(self)(self._symbol, self._ctx, args, grads, list(self.grad_req), aux, self._group2ctx)

    def debug_str(self) -> str:
        """The compiled graph: each entry with its storage id, and planned vs naive bytes."""
        graph = self._graph
        storage = graph.attrs["storage_id"]
        inplace = graph.attrs["inplace"]
        lines = []
        for title, order in (("forward", self._forward_order), ("backward", self._backward_order)):
            lines.append(f"== {title} ==")
            for i in order:
                node = graph.nodes[i]
                ins = ", ".join(graph.entry_name(e) for e in graph.input_entries(i))
                for k in range(node.num_outputs()):
                    eid = graph.entry(i, k)
                    sid = storage[eid]
                    where = "external" if sid < 0 else f"storage {sid}"
                    if eid in self._skipped:
                        where = "not computed (unread)"
                    note = f" (in place of {graph.entry_name(inplace[eid])})" if eid in inplace else ""
                    if "members" in node.attrs:  # a fused elementwise chain
                        note += f" [fused: {' -> '.join(node.attrs['members'])}]"
                    lines.append(
                        f"{node.opdef.name} {node.output_name(k)} {graph.attrs['shape'][eid]} <- [{ins}]: {where}{note}"
                    )
        lines.append(
            f"Total planned {graph.attrs['planned_bytes'] / 2**20:.3f} MB (naive {graph.attrs['naive_bytes'] / 2**20:.3f} MB)"
        )
        lines.append(f"planned_bytes={graph.attrs['planned_bytes']} naive_bytes={graph.attrs['naive_bytes']}")
        return "\n".join(lines) + "\n"

    @property
    def planned_bytes(self) -> int:
        return int(self._graph.attrs["planned_bytes"])

    @property
    def naive_bytes(self) -> int:
        return int(self._graph.attrs["naive_bytes"])


def _unread_optional_outputs(graph: IndexedGraph, order: list[int], keep: set[int]) -> set[int]:
    """Outputs of ``optional_outputs`` operators that no node reads and no one sees: never computed."""
    read = {e for i in order for e in graph.input_entries(i)}
    keep = read | keep | set(graph.heads)
    unread: set[int] = set()
    for i in order:
        node = graph.nodes[i]
        if node.opdef.optional_outputs:
            unread.update(e for e in range(graph.entry(i), graph.entry(i + 1)) if e not in keep)
    return unread


def _step_failure(node: Any, err: Exception) -> StepFailure:
    """The error of a failed step, naming its node and operator (the engine reports it at a wait)."""
    if node is None:
        return StepFailure("executor", err)
    op = getattr(node, "op", None)
    return StepFailure(node.name, err, op.name if op is not None else "")


def _finish_kernel(finish: list[tuple]) -> Callable[[], None]:
    """The tail of a backward pass: copy, add or zero the gradients not written in place."""

    def run() -> None:
        for req, src, dst in finish:
            if req == "write":
                dst[...] = src
            elif req == "add":
                dst += src
            else:
                dst[...] = 0

    return run


def _copy_kernel(kctx: Any, attrs: Any, ins: list, outs: list, aux: list) -> None:
    for src, dst in zip(ins, outs, strict=False):
        dst[...] = src


class _CopyNode:
    """The node of a copy step a pass adds in front of its kernels (no outputs a monitor sees)."""

    def __init__(self, name: str) -> None:
        self.name = name

    def num_visible_outputs(self) -> int:
        return 0


_COPY_NODE = _CopyNode("head_grads")
_INPUT_COPY_NODE = _CopyNode("argument_copies")
