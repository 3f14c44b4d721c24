"""The graph an executor compiles: the symbol's outputs and gradients, placed on devices and fused.

``prepare_bind_graph`` runs the bind-time rewrites in order: device placement with
cross-device copies (when the executor spans several contexts), then elementwise
fusion.  Each rewrite copies the graph, so the user's symbol is never changed.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, NamedTuple

from lazynd.context import Context

from ..graph import Entry, Node, topo_order
from ..passes.fuse_elemwise import fuse_elementwise
from ..passes.place_device import insert_copies, place_device


class Placement(NamedTuple):
    """What device placement needs: the default context, the groups, and where arrays live."""

    default_ctx: Context
    group2ctx: dict[str, Context]
    fixed: dict[int, Context]  # id(variable node) -> context of its bound array
    grad_ctx: list[Context | None]  # per gradient head: the context of its gradient array


class PreparedGraph(NamedTuple):
    outputs: list[Entry]
    grads: list[Entry | None]
    forward_ids: set[int]  # ids of the nodes the outputs need
    node_ctx: dict[int, Context] | None  # id(node) -> context, when placed
    fused: list[Node]


def prepare_bind_graph(
    outputs: list[Entry], grads: list[Entry | None], placement: Placement | None, fuse: bool
) -> PreparedGraph:
    """Apply placement (if ``placement``) and fusion (if ``fuse``) to outputs + gradients."""
    n_out = len(outputs)
    present = [j for j, g in enumerate(grads) if g is not None]
    heads: list[Entry] = list(outputs) + [g for g in grads if g is not None]
    node_ctx = None
    if placement is not None:
        where = place_device(topo_order(heads), placement.default_ctx, placement.group2ctx, placement.fixed)
        targets: list[Any] = [None] * n_out + [placement.grad_ctx[j] for j in present]
        heads, _, node_ctx = insert_copies(heads, where, targets)
    fused: list[Node] = []
    if fuse:
        forward_ids = {id(n) for n in topo_order(heads[:n_out])}
        ctx_of = node_ctx

        def key(node: Node) -> tuple:
            return (id(node) in forward_ids, ctx_of[id(node)] if ctx_of is not None else None)

        heads, new, fused = fuse_elementwise(heads, key)
        if ctx_of is not None:
            node_ctx = {id(n): ctx_of[old] for old, n in new.items()}
    new_grads: list[Entry | None] = [None] * len(grads)
    for j, entry in zip(present, heads[n_out:], strict=False):
        new_grads[j] = entry
    forward_ids = {id(n) for n in topo_order(heads[:n_out])}
    return PreparedGraph(heads[:n_out], new_grads, forward_ids, node_ctx, fused)


@contextmanager
def collection_paused() -> Iterator[None]:
    """Python's cyclic garbage collector paused while an executor compiles its graph.

    Compiling makes a graph's worth of objects (nodes, entry lists, steps), all alive until the
    bind ends, and the collector walks every live object on each full collection: it found nothing
    to free, yet took a fifth of a 1000-step ``while_loop``'s bind and three fifths of a 4000-step
    one.  The collector's own state is restored after (left off if the caller had turned it off),
    and a cycle made meanwhile is freed at its next run.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
