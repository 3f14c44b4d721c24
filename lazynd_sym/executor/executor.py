"""Executors: a bound graph compiled at bind time into kernel calls over planned storage.

At bind the passes run once (gradient, shapes, types, memory plan) and the forward and
backward passes become lists of ``(kernel, kctx, attrs, inputs, outputs, aux)`` over
preallocated buffers; the optional outputs nobody reads, found with the memory plan
(:mod:`lazynd_sym.passes.plan_memory`), are not computed.  Running the passes (bulk
execution, monitor, profiler) is :mod:`lazynd_sym.executor.run`; checking or allocating
the bound arrays is :mod:`lazynd_sym.executor.binding`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import lazynd.ndarray as nd
from lazynd.backend import get_backend
from lazynd.context import Context
from lazynd.engine.var import Var
from lazynd.errors import ArgumentTypeError, LazyNDError, ParameterError, ShapeError
from lazynd.runtime import generator_for, kernel_context, kernel_for, with_generator

from .. import passes
from ..graph import IndexedGraph
from ..passes.fuse_elemwise import fusion_enabled
from ..passes.gradient_sum import ready_first_order
from ..passes.plan_memory import _unread_optional_outputs, entry_bytes
from .access import output_arrays, pass_vars, written_output_vars
from .accumulate import adding_kernel, plan_accumulation, tail_gradients
from .bind_graph import collection_paused, prepare_bind_graph
from .bound_shapes import bound_shapes_and_types
from .bulking import bulk_enabled, pass_graphs
from .memory import out_of_memory_named
from .memory_group import MemoryGroup, StorageBlock
from .report import plan_report
from .rereads import forward_values_backward_reads, overwritten_forward_value
from .run import PassRunner
from .steps import finish_kernel


class Executor(PassRunner):
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
        self,
        symbol: Any,
        ctx: Context,
        args: list,
        grads: list,
        reqs: list,
        aux: list,
        group2ctx: Any = None,
        shared_memory: Executor | None = None,
    ) -> None:
        self._symbol = symbol
        self._ctx = ctx
        self._group2ctx = dict(group2ctx or {})
        self.arg_names = symbol.list_arguments()
        self.aux_names = symbol.list_auxiliary_states()
        self.output_names = symbol.list_outputs()
        self._arg_index = {name: i for i, name in enumerate(self.arg_names)}
        self.arg_arrays = args
        # as MXNet: an array passed for an argument bound with grad_req 'null' is still its
        # gradient array (left untouched by backward), so grad_dict shows it
        self.grad_arrays = list(grads)
        self.grad_req = reqs
        self.aux_arrays = aux
        self._monitor = None
        self._monitor_active = None
        self._bulk = bulk_enabled(training=any(r != "null" for r in reqs))
        # executors sharing storage blocks (MXNet's shared memory pool): one internal var, and each
        # one's passes also write the others' outputs, which may lie in the same blocks
        self._memory_group: MemoryGroup = shared_memory._memory_group if shared_memory is not None else MemoryGroup()
        self._shared_blocks: list[StorageBlock] = list(shared_memory._blocks) if shared_memory is not None else []
        self._blocks: list[StorageBlock] = []
        with collection_paused():
            self._compile()
        self._memory_group.add(self)
        members = self._memory_group.members()
        if len(members) > 1:
            for member in members:
                pass_vars(member)

    # -- compilation ---------------------------------------------------------------------------
    @staticmethod
    def variable_contexts(symbol: Any, ctx: Context, group2ctx: Any) -> dict[str, Context]:
        """Where ``simple_bind`` allocates each argument: everything on ``ctx`` here."""
        return {}

    def _grad_array(self, j: int) -> Any:
        """The gradient array backward writes for argument ``j``: only one whose ``grad_req`` is not ``"null"``."""
        grad = self.grad_arrays[j]
        if grad is None or self.grad_req[j] == "null":
            raise LazyNDError(f"executor: argument {self.arg_names[j]!r} has grad_req 'null': it has no gradient array")
        return grad

    def _placement(self, arg_nodes: list, aux_nodes: list, wrt: list) -> Any:
        """Device placement of the bound graph (None: every node on ``ctx``)."""
        return None

    def _compile(self) -> None:
        outputs = list(self._symbol._outputs)
        self._n_outputs = len(outputs)
        graph0 = IndexedGraph(outputs)
        var_nodes = [graph0.nodes[i] for i in graph0.variables()]
        arg_nodes = [n for n in var_nodes if id(n) not in graph0.aux_ids]
        aux_nodes = [n for n in var_nodes if id(n) in graph0.aux_ids]
        # control flow (foreach, while_loop, cond) unrolled, now that the bound arrays give every shape
        bound = list(zip(arg_nodes, self.arg_arrays, strict=False)) + list(
            zip(aux_nodes, self.aux_arrays, strict=False)
        )
        outputs = passes.expand_control_flow(outputs, passes.shape_reader({id(n): a.shape for n, a in bound}))
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
        self._backward_order = ready_first_order(graph, [i for i in ops if id(graph.nodes[i]) not in forward_nodes])

        known_shape, known_type = {}, {}
        for node, arr in bound:
            if id(node) not in graph.index:
                continue  # read only by a control-flow node whose expansion does not need it (a passed-through state)
            eid = graph.entry(graph.index[id(node)])
            known_shape[eid], known_type[eid] = tuple(arr.shape), np.dtype(arr.dtype).name
        same = []
        self._head_grads = []
        for k, var in grad.head_grads if grad else []:
            if id(var) not in graph.index:
                continue  # no gradient reads this head's gradient (ceil, comparisons...): the caller need not give it
            same.append((graph.entry(graph.index[id(var)]), graph.heads[k]))
            self._head_grads.append((k, graph.entry(graph.index[id(var)])))
        wrt_index = {id(n): j for j, n in enumerate(arg_nodes)}
        self._grad_entry: dict[int, int] = {}
        for node, entry in zip(wrt, grad_list, strict=False):
            if entry is not None:
                j = wrt_index[id(node)]
                self._grad_entry[j] = graph.entry_of(entry)
                same.append((self._grad_entry[j], graph.entry(graph.index[id(node)])))
        bound_shapes_and_types(graph, bound, known_shape, known_type, same)

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
        reread = forward_values_backward_reads(graph, self._forward_order, self._backward_order)
        self._accumulation = accumulation = plan_accumulation(
            graph, self._backward_order, self._grad_entry, self.grad_req, external | fwd_heads
        )
        storage = passes.plan_memory(graph, order, external | self._skipped, reread.keys(), accumulation.released)
        self._overwritten_forward = overwritten_forward_value(graph, storage, reread, self._backward_order)
        self._forward_value_read = next(
            (f"{graph.entry_name(e)!r} (read by {reader})" for e, reader in reread.items()), None
        )
        for user_pass in passes.bind_passes():
            graph = user_pass(graph) or graph
        self._allocate(storage, claimed)

    def _allocate(self, storage: list[int], claimed: set[int]) -> None:
        graph, ctx = self._graph, self._ctx
        backend = get_backend(ctx)
        shapes, types = graph.attrs["shape"], graph.attrs["dtype"]
        sizes = graph.attrs["storage_bytes"]
        blocks = self._storage_blocks(sizes, [ctx] * len(sizes))
        buffers: list[Any] = [None] * graph.num_entries
        for eid, sid in enumerate(storage):
            if sid >= 0:
                n = entry_bytes(shapes[eid], types[eid])
                buffers[eid] = blocks[sid][:n].view(types[eid]).reshape(shapes[eid])
        arg_nodes = [i for i in graph.variables() if id(graph.nodes[i]) not in graph.aux_ids]
        name_to_arg = {graph.nodes[i].name: i for i in arg_nodes}
        for name, arr in zip(self.arg_names, self.arg_arrays, strict=False):
            if name in name_to_arg:  # (not a state a loop only passes through: see _compile)
                buffers[graph.entry(name_to_arg[name])] = arr.data_array
        aux_index = {graph.nodes[i].name: i for i in graph.variables() if id(graph.nodes[i]) in graph.aux_ids}
        for name, arr in zip(self.aux_names, self.aux_arrays, strict=False):
            buffers[graph.entry(aux_index[name])] = arr.data_array
        for _, eid in self._head_grads:
            buffers[eid] = backend.zeros(shapes[eid], types[eid])
        for j, eid in self._direct_grads.items():
            buffers[eid] = self._grad_array(j).data_array
        self._buffers = buffers
        self._internal = self._memory_group.internal
        self.outputs = output_arrays(self, buffers, [ctx] * graph.num_entries, self._block_vars(storage))
        # a host executor of quiet operators only runs each pass inside one switch of NumPy's
        # warnings (lazynd.backend.fperr), its kernels without their own
        self._raw_kernels = ctx.device_type == "cpu" and all(
            node.op is None or node.opdef.quiet for node in graph.nodes
        )
        self._steps = {True: self._build(self._forward_order, True), False: self._build(self._forward_order, False)}
        self._backward_steps = self._build(self._backward_order, True)
        self._graphs = pass_graphs(ctx, self._bulk_now(), [*self._steps.values(), self._backward_steps])
        done = self._direct_grads.keys() | self._accumulation.arguments
        self._finish_grads = tail_gradients(self._grad_entry, self.grad_req, buffers, self._grad_array, done)
        pass_vars(self)
        self._finish = finish_kernel(self._finish_grads) if self._finish_grads else None

    def _storage_blocks(self, sizes: list[int], contexts: list[Context]) -> list[Any]:
        """A byte block for each planned storage id: a shared executor's block (with its var) where
        one is big enough."""
        free = list(self._shared_blocks)
        self._blocks = []
        for size, where in zip(sizes, contexts, strict=True):
            fits = [(b.data.nbytes, k) for k, b in enumerate(free) if b.context == where and b.data.nbytes >= size]
            if fits:
                self._blocks.append(free.pop(min(fits)[1]))  # the smallest that fits
            else:
                self._blocks.append(StorageBlock(where, get_backend(where).empty((max(size, 1),), "uint8"), Var()))
        return [b.data for b in self._blocks]

    def _block_vars(self, storage: list[int]) -> list[Var | None]:
        """The var of the storage block each graph entry lies in (None: in no planned block)."""
        return [self._blocks[sid].var if sid >= 0 else None for sid in storage]

    def _shared_output_vars(self) -> list[Var]:
        """The output vars of the executors this one shares storage with."""
        return [v for member in self._memory_group.members() if member is not self for v in written_output_vars(member)]

    def _build(self, order: list[int], is_train: bool) -> list[tuple]:
        """The steps ``(fn, kctx, attrs, ins, outs, aux, node)`` of the nodes in ``order``."""
        graph = self._graph
        steps = []
        for i in order:
            node = graph.nodes[i]
            op = node.opdef
            where = self._node_context(i)
            kctx = kernel_context(where, is_train)
            if op.draws_random(node.attrs):
                kctx = with_generator(kctx, generator_for(where).generator)
            fn = kernel_for(op, where, raw=self._raw_kernels)
            adds = [(k, self._grad_array(j).data_array) for k, j in self._accumulation.adds.get(i, ())]
            fn = adding_kernel(fn, adds) if adds else fn
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

    # -- views ---------------------------------------------------------------------------------
    @property
    def arg_dict(self) -> dict[str, Any]:
        return dict(zip(self.arg_names, self.arg_arrays, strict=False))

    @property
    def grad_dict(self) -> dict[str, Any]:
        """Every argument's gradient array, as in MXNet: None where none was bound (``simple_bind`` with
        ``grad_req='null'``, or ``bind`` without one); an array ``bind`` was given for an argument with
        ``grad_req='null'`` is shown, and backward leaves it untouched."""
        return dict(zip(self.arg_names, self.grad_arrays, strict=False))

    @property
    def aux_dict(self) -> dict[str, Any]:
        return dict(zip(self.aux_names, self.aux_arrays, strict=False))

    @property
    def output_dict(self) -> dict[str, Any]:
        return dict(zip(self.output_names, self.outputs, strict=False))

    def copy_params_from(
        self, arg_params: dict, aux_params: dict | None = None, allow_extra_params: bool = False
    ) -> None:
        """Copy parameter arrays into this executor's arguments and auxiliary states (lazily)."""
        for params, what in ((arg_params, "arg_params"), (aux_params, "aux_params")):
            if params is not None and not isinstance(params, dict):
                raise ArgumentTypeError(
                    f"copy_params_from: {what} must be a dict of arrays by name, got {type(params).__name__}"
                )
        for params, table, what in (
            (arg_params or {}, self.arg_dict, "argument"),
            (aux_params or {}, self.aux_dict, "auxiliary state"),
        ):
            for name, value in params.items():
                shape = getattr(value, "shape", None)  # an array's; a number fills the whole array
                if name in table and shape is not None and tuple(shape) != tuple(table[name].shape):
                    raise ShapeError(
                        f"copy_params_from: {what} {name!r} is given with shape {tuple(shape)}, "
                        f"the executor's is {tuple(table[name].shape)}"
                    )
                if name in table:
                    value.copyto(table[name]) if isinstance(value, nd.NDArray) else table[name].__setitem__(
                        slice(None), value
                    )
                elif not allow_extra_params:
                    raise ParameterError(
                        f"copy_params_from: {name!r} is not an {what} of the executor (pass allow_extra_params=True)"
                    )

    def reshape(self, partial_shaping: bool = False, allow_up_sizing: bool = False, **shapes: Any) -> Executor:
        """A new executor for new input shapes, sharing this one's arrays where shapes allow.

        As MXNet's, the new executor also takes its outputs and internal storage from this
        one's blocks where they are big enough: running one overwrites the other's outputs.
        """
        # as MXNet's (and simple_bind's), shapes of names the symbol lacks are passed over: a
        # label's for a net without one
        inputs = set(self._symbol.list_inputs())
        shapes = {name: shape for name, shape in shapes.items() if name in inputs}
        arg_shapes, _, aux_shapes = self._symbol.infer_shape(**shapes)
        if arg_shapes is None:
            raise ShapeError(f"reshape: cannot infer every shape from {shapes}")
        if not partial_shaping:
            # as MXNet: an array whose shape was not asked for and changes (a weight, a label)
            # would stop being shared, or be shared as a view of the wrong elements
            names, arrays = self.arg_names + self.aux_names, self.arg_arrays + self.aux_arrays
            for name, old, shape in zip(names, arrays, arg_shapes + aux_shapes, strict=True):
                if name not in shapes and tuple(old.shape) != tuple(shape):
                    raise ShapeError(
                        f"reshape: the shape of {name!r} changes from {tuple(old.shape)} to {tuple(shape)} though it "
                        "was not given; give it, or pass partial_shaping=True"
                    )

        def share(old: Any, shape: tuple) -> Any:
            if old is None:
                return None
            if tuple(old.shape) == tuple(shape):
                return old
            size = int(np.prod(shape))
            if size <= old.size:
                return old.reshape(-1)[:size].reshape(shape)  # a view of part of old's storage
            if not allow_up_sizing:
                raise ShapeError(f"reshape: new shape {shape} is larger than {old.shape}; pass allow_up_sizing=True")
            return nd.zeros(shape, ctx=self._ctx, dtype=old.dtype)

        with out_of_memory_named("reshape", self._ctx):
            args = [share(a, s) for a, s in zip(self.arg_arrays, arg_shapes, strict=False)]
            grads = [share(g, s) for g, s in zip(self.grad_arrays, arg_shapes, strict=False)]
            aux = [share(a, s) for a, s in zip(self.aux_arrays, aux_shapes, strict=False)]
            return type(self)(
                self._symbol, self._ctx, args, grads, list(self.grad_req), aux, self._group2ctx, shared_memory=self
            )

    def debug_str(self) -> str:
        """The compiled graph: each entry with its storage id, planned vs naive bytes, and MXNet's
        closing ``Total <n> MB allocated`` (the planned storage in whole MB) and
        ``Total 0 TempSpace resource requested`` lines that scripts parse."""
        passes_run = (("forward", self._forward_order), ("backward", self._backward_order))
        return plan_report(self._graph, passes_run, self._skipped)

    def get_optimized_symbol(self) -> Any:
        """The symbol this executor runs, as MXNet's ``get_optimized_symbol``: a new Symbol.

        MXNet returns the graph after its backend's passes; lazynd's passes (memory plan,
        kernel fusion) work on the compiled graph and leave the symbol as bound, so this is a
        copy of the bound symbol, with the same arguments, outputs, auxiliary states and JSON.

        Examples
        --------
        >>> import lazynd as mx
        >>> net = mx.sym.FullyConnected(mx.sym.Variable('data'), num_hidden=2, name='fc')
        >>> ex = net.simple_bind(mx.cpu(), data=(4, 3))
        >>> ex.get_optimized_symbol().list_arguments()
        ['data', 'fc_weight', 'fc_bias']
        """
        return self._symbol.__copy__()

    @property
    def planned_bytes(self) -> int:
        return int(self._graph.attrs["planned_bytes"])

    @property
    def naive_bytes(self) -> int:
        return int(self._graph.attrs["naive_bytes"])
