"""What an executor's passes read and write, derived from the runtime's plan of each step.

A pass (forward or backward) is pushed as one engine operation on the CPU, or one per step
on a GPU.  Besides the executor's own arrays (arguments and auxiliary states read, outputs
or gradients written, and one var for its internal storage), a step may write what its
operator declares: inputs it mutates, auxiliary states in training, the host BLAS's var, the
random generator's var.  :class:`lazynd.runtime.VarAccess` says which, for imperative calls
and executors alike; this module maps it onto the executor's arrays.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import lazynd.ndarray as nd
from lazynd.context import Context
from lazynd.engine.var import Var
from lazynd.runtime import VarAccess

from ..graph import IndexedGraph


def step_access(graph: IndexedGraph, i: int, where: Context, is_train: bool) -> VarAccess:
    """The runtime's :class:`VarAccess` of node ``i`` run on ``where``."""
    node = graph.nodes[i]
    return VarAccess(node.opdef, node.attrs, where, is_train)


def pass_writes(
    graph: IndexedGraph,
    order: list[int],
    is_train: bool,
    node_context: Callable[[int], Context],
    entry_vars: dict[int, Var],
    internal: Var,
) -> list[Var]:
    """The vars the steps of ``order`` write besides the pass's outputs, gradients and internal var.

    ``entry_vars`` maps graph entries held in caller-visible arrays (arguments, auxiliary
    states) to their vars; any other entry a step writes in place is internal storage.
    """
    writes: list[Var] = []
    for i in order:
        where = node_context(i)
        access = step_access(graph, i, where, is_train)
        if access.plain:
            continue
        entries = graph.input_entries(i)
        n_data = graph.nodes[i].num_data_inputs()
        for entry in access.written_inputs(entries[:n_data], entries[n_data:]):
            writes.append(entry_vars.get(entry, internal))
        writes += access.extra_writes(where)
    return list(dict.fromkeys(writes))


def bound_entry_vars(executor: Any) -> dict[int, Var]:
    """The vars of the graph entries held in the executor's argument and aux arrays, by entry."""
    graph = executor._graph
    arrays = dict(zip(executor.arg_names + executor.aux_names, executor.arg_arrays + executor.aux_arrays, strict=False))
    return {graph.entry(i): arrays[graph.nodes[i].name].var for i in graph.variables() if graph.nodes[i].name in arrays}


def output_arrays(
    executor: Any, buffers: list[Any], contexts: list[Context], block_vars: list[Var | None]
) -> list[Any]:
    """The executor's outputs: an NDArray on each head entry's buffer.

    A head that is a variable (an argument or aux state output as it is) is that array's storage
    and takes its var; a head given twice is one array for the engine; any other head takes the
    var of the storage block it lies in (``block_vars``, by entry), which the outputs of executors
    sharing that block (:meth:`Executor.reshape`) take too.  So a read of such an output waits for
    the writes of every array over its memory (on a GPU the read copies on another stream), as in
    MXNet, where those outputs share the argument's or the memory pool's storage chunk.
    """
    entry_vars = bound_entry_vars(executor)
    outputs = []
    for e in executor._graph.heads[: executor._n_outputs]:
        var = entry_vars.get(e)
        if var is None:
            var = entry_vars[e] = block_vars[e] or Var()
        outputs.append(nd.NDArray(buffers[e], var, contexts[e]))
    return outputs


def written_output_vars(executor: Any) -> list[Var]:
    """The vars of the outputs the executor's passes write: each once, none of an argument or aux
    state output as it is (the passes only read those)."""
    bound = {id(a.var) for a in (*executor.arg_arrays, *executor.aux_arrays)}
    return list({id(o.var): o.var for o in executor.outputs if id(o.var) not in bound}.values())


def pass_vars(executor: Any) -> None:
    """Set ``executor._forward_vars`` (per training flag) and ``_backward_vars``: (reads, writes)."""
    graph = executor._graph
    entry_vars = bound_entry_vars(executor)
    internal = executor._internal
    args = [a.var for a in executor.arg_arrays]
    aux = [a.var for a in executor.aux_arrays]
    outputs = written_output_vars(executor)
    # storage shared with other executors may hold their outputs (see Executor.reshape)
    internal_writes = [internal, *executor._shared_output_vars()]

    def extra(order: list[int], is_train: bool) -> list[Var]:
        return pass_writes(graph, order, is_train, executor._node_context, entry_vars, internal)

    # a var both read and written is scheduled as a write (the engine deduplicates)
    executor._forward_vars = {
        flag: (args + aux, outputs + internal_writes + extra(executor._forward_order, flag)) for flag in (True, False)
    }
    grads = [g.var for g, r in zip(executor.grad_arrays, executor.grad_req, strict=True) if r != "null"]
    executor._backward_vars = (args + aux + outputs, grads + internal_writes + extra(executor._backward_order, True))
    executor._copies_access = {}  # see copies_access: worked out again from these vars


def copies_access(executor: Any, is_train: bool, targets: list[Any]) -> tuple[list[Var], list[Var], list[Any], int]:
    """What a forward pass that first copies into the arguments ``targets`` reads besides the
    copies' sources, what it writes, the targets' buffers, and the elements the copies touch
    (sources of the targets' shapes: checked at the call); worked out once per training flag
    and set of targets, as :func:`pass_vars` works out the pass's own.

    An argument the pass copies in first is written, not read: it does not inherit the error of
    an earlier pass that failed (as a copy pushed before the pass would clear it).
    """
    key = (is_train, *map(id, targets))  # arguments of the executor, which holds them
    found = executor._copies_access.get(key)
    if found is None:
        reads, writes = executor._forward_vars[is_train]
        copied = {id(t.var) for t in targets}
        found = executor._copies_access[key] = (
            [v for v in reads if id(v) not in copied],
            writes + [t.var for t in targets],
            [t.data_array for t in targets],
            2 * sum(int(t.size) for t in targets),
        )
    return found
