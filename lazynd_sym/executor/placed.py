"""Executors spanning several contexts: ``bind(..., group2ctx={'dev1': ctx1, ...})``.

Nodes carrying ``ctx_group`` (set with ``AttrScope(ctx_group='dev1')``) run on the
context ``group2ctx`` names; the placement pass decides the rest and inserts a
``_CrossDeviceCopy`` wherever a value crosses devices, forward and backward (see
:mod:`lazynd_sym.passes.place_device`).  Each storage block is allocated on its
context; each kernel runs with its node's kernel context.

On CPU contexts only, a pass is still pushed to the engine as one operation (unless
bulk execution is off: see :mod:`lazynd_sym.executor.run`).  With a GPU involved, each step
is pushed on its own device (copies on the copy streams).
"""

from __future__ import annotations

from typing import Any

from lazynd.backend import get_backend
from lazynd.context import Context
from lazynd.errors import ContextError
from lazynd.runtime import push

from ..passes.place_device import CROSS_DEVICE_COPY, place_device
from ..passes.plan_memory import entry_bytes
from .access import output_arrays, pass_vars
from .accumulate import tail_gradients
from .bind_graph import Placement
from .executor import Executor
from .monitoring import run_monitored
from .steps import finish_kernel, operation_name, step_failure


def needs_placement(ctx: Context, group2ctx: dict | None) -> bool:
    """Whether ``group2ctx`` sends some group off ``ctx``."""
    if group2ctx is not None and not isinstance(group2ctx, dict):
        raise ContextError(f"bind: group2ctx must be a dict of Contexts by group, got {type(group2ctx).__name__}")
    for group, other in (group2ctx or {}).items():
        if not isinstance(other, Context):
            raise ContextError(f"bind: group2ctx[{group!r}] must be a Context, got {type(other).__name__}")
        if other != ctx:
            return True
    return False


class PlacedExecutor(Executor):
    """An :class:`Executor` whose nodes run on several contexts."""

    @staticmethod
    def variable_contexts(symbol: Any, ctx: Context, group2ctx: Any) -> dict[str, Context]:
        """Where each variable lives: its own group, else where its first reader runs."""
        nodes = symbol._nodes()
        where = place_device(nodes, ctx, dict(group2ctx or {}), {})
        return {n.name: where[id(n)] for n in nodes if n.op is None}

    def _placement(self, arg_nodes: list, aux_nodes: list, wrt: list) -> Placement:
        fixed = {id(n): a.context for n, a in zip(arg_nodes, self.arg_arrays, strict=False)}
        fixed.update({id(n): a.context for n, a in zip(aux_nodes, self.aux_arrays, strict=False)})
        index = {id(n): j for j, n in enumerate(arg_nodes)}
        grad_ctx = [self._grad_array(index[id(n)]).context for n in wrt]
        return Placement(self._ctx, self._group2ctx, fixed, grad_ctx)

    # -- storage on each context ---------------------------------------------------------------
    def _entry_contexts(self) -> list[Context]:
        graph = self._graph
        node_ctx = graph.attrs["context"]
        return [node_ctx[i] for i, n in enumerate(graph.nodes) for _ in range(n.num_outputs())]

    def _allocate(self, storage: list[int], claimed: set[int]) -> None:
        graph = self._graph
        entry_ctx = self._entry_contexts()
        shapes, types = graph.attrs["shape"], graph.attrs["dtype"]
        blocks = self._storage_blocks(list(graph.attrs["storage_bytes"]), list(graph.attrs["storage_context"]))
        buffers: list[Any] = [None] * graph.num_entries
        for eid, sid in enumerate(storage):
            if sid >= 0:
                n = entry_bytes(shapes[eid], types[eid])
                buffers[eid] = blocks[sid][:n].view(types[eid]).reshape(shapes[eid])
        variables = {graph.nodes[i].name: graph.entry(i) for i in graph.variables()}
        for name, arr in zip(self.arg_names + self.aux_names, self.arg_arrays + self.aux_arrays, strict=False):
            if name in variables:  # (not a state a loop only passes through: see Executor._compile)
                buffers[variables[name]] = arr.data_array
        for _, eid in self._head_grads:
            buffers[eid] = get_backend(entry_ctx[eid]).zeros(shapes[eid], types[eid])
        for j, eid in self._direct_grads.items():
            buffers[eid] = self._grad_array(j).data_array
        self._buffers = buffers
        self._internal = self._memory_group.internal
        self.outputs = output_arrays(self, buffers, entry_ctx, self._block_vars(storage))
        self._push_target: dict[int, tuple[Context, str]] = {}
        self._step_ctx: dict[int, Context] = {}
        self._steps = {True: self._build(self._forward_order, True), False: self._build(self._forward_order, False)}
        self._backward_steps = self._build(self._backward_order, True)
        done = self._direct_grads.keys() | self._accumulation.arguments
        self._finish_grads = tail_gradients(self._grad_entry, self.grad_req, buffers, self._grad_array, done)
        self._uses_gpu = any(c.device_type == "gpu" for c in graph.attrs["context"])
        pass_vars(self)
        self._finish = finish_kernel(self._finish_grads) if self._finish_grads else None

    def _node_context(self, i: int) -> Context:
        return self._graph.attrs["context"][i]

    def _step_built(self, step: tuple, i: int, where: Context) -> None:
        self._push_target[id(step)] = self._push_target_of(i, where)
        self._step_ctx[id(step)] = where

    def _push_target_of(self, i: int, where: Context) -> tuple[Context, str]:
        """The device and stream kind a step is pushed with: copies go on the GPU side's copy streams."""
        graph = self._graph
        if graph.nodes[i].op is not CROSS_DEVICE_COPY:
            return where, "compute"
        source_node = graph.index[id(graph.nodes[i].inputs[0][0])]
        source = graph.attrs["context"][source_node]
        if source.device_type == "gpu" and where.device_type != "gpu":
            return source, "d2h"
        if source.device_type != "gpu" and where.device_type == "gpu":
            return where, "h2d"
        return where, "compute"

    # -- running -------------------------------------------------------------------------------
    def _run_steps(self, steps: list[tuple]) -> None:
        monitor = self._monitor_now()
        node = None
        try:
            for step in steps:
                fn, kctx, attrs, ins, outs, aux, node = step
                if monitor is None:
                    fn(kctx, attrs, ins, outs, aux)
                else:
                    run_monitored(step, monitor, self._step_ctx.get(id(step), self._ctx), self._monitor_all)
        except Exception as err:
            raise step_failure(node, err) from err

    def _bulk_now(self) -> bool:
        # with a GPU in the graph every operator is pushed where it is placed (see _push_step)
        return not self._uses_gpu and super()._bulk_now()

    def _push_step(self, step: tuple | None, fn: Any, args: tuple, reads: list, writes: list, name: str) -> None:
        if not self._uses_gpu:  # host memory only: as on one CPU
            super()._push_step(step, fn, args, reads, writes, name)
            return
        # each operator where it is placed; copies go on the GPU side's copy streams
        where, kind = (
            self._push_target.get(id(step), (self._ctx, "compute")) if step is not None else (self._ctx, "compute")
        )
        push(where, fn, args, reads, writes, operation_name(step, name), kind=kind)

    def debug_str(self) -> str:
        """The base listing, then the context of every operator."""
        graph = self._graph
        lines = [super().debug_str().rstrip("\n"), "== placement =="]
        for i in self._forward_order + self._backward_order:
            lines.append(f"{graph.nodes[i].name}: {graph.attrs['context'][i]}")
        return "\n".join(lines) + "\n"
