"""What an executor's backward pass reads of the values its forward pass computed.

The memory plan keeps those values (a block the backward would read is not reused before it),
backward before any forward is refused when there are any, and a second backward after one
forward is refused when a backward step writes a block that holds one of them.
"""

from __future__ import annotations

from ..graph import IndexedGraph


def forward_values_backward_reads(
    graph: IndexedGraph, forward_order: list[int], backward_order: list[int]
) -> dict[int, str]:
    """The entries computed by the forward pass whose values a backward step reads, each
    with the operator of its first such reader.

    An input the operator declares shape-only (``shape_only_inputs`` in the registry: the
    data of ``sum``'s gradient, the ``like`` of a broadcast's) does not count: its block
    may hold anything of the right size when the step runs.
    """
    computed = {graph.entry(i, k) for i in forward_order for k in range(graph.nodes[i].num_outputs())}
    read: dict[int, str] = {}
    for i in backward_order:
        node = graph.nodes[i]
        for index, e in enumerate(graph.input_entries(i)):
            if e in computed and e not in read and node.opdef.reads_value(node.attrs, index):
                read[e] = node.opdef.name
    return read


def overwritten_forward_value(
    graph: IndexedGraph, storage: list[int], reread: dict[int, str], backward_order: list[int]
) -> str | None:
    """A forward value the backward pass reads (``reread``) whose block a backward step
    writes, named with its reader, or None.  With one, a second backward after one forward
    would read what the first one wrote there, so the executor's ``backward`` refuses it (a new
    forward makes the values again).

    The plan keeps those values wherever another free block serves as well; pinning them
    all to the end instead cost LeNet a tenth more memory.
    """
    holder = {storage[e]: e for e in reread if storage[e] >= 0}
    for i in backward_order:
        for k in range(graph.nodes[i].num_outputs()):
            e = holder.get(storage[graph.entry(i, k)])
            if e is not None:
                return f"{graph.entry_name(e)!r} (read by {reread[e]}, overwritten by {graph.nodes[i].opdef.name})"
    return None
