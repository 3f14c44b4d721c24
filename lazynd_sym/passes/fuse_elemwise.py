"""Elementwise fusion: replace chains of elementwise operators by one fused operator.

A chain links a fusable node to the fusable node that is the *only* reader of its
output (an output that is also a graph head, or that anything else reads, ends the
chain), so no intermediate of a chain is ever needed outside it and none is stored.
The pass runs at bind on the full graph (forward and gradient nodes together, after
the gradient pass): a forward intermediate that the backward pass reads has a second
reader and is kept, which is what makes backward through fused code correct; gradient
chains fuse the same way.  Nodes fuse only when ``key`` gives them the same value
(the executor's key is the pass, forward or backward, and the device).

Set ``LAZYND_SYM_FUSION=0`` to bind without fusion.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from lazynd.environment import flag_setting

from ..fused_kernel import ACC, FusedStep, is_fusable, make_fused_op
from ..graph import Entry, Node, topo_order

ENV_VAR = "LAZYND_SYM_FUSION"
MAX_INPUTS = 16  # a chain stops growing when it would need more inputs


def fusion_enabled() -> bool:
    """False when ``LAZYND_SYM_FUSION`` is ``0``, ``false``, ``no`` or ``off`` (another value is refused)."""
    return flag_setting(ENV_VAR, default=True)


def find_chains(heads: list[Entry], key: Callable[[Node], Any] | None = None) -> list[list[Node]]:
    """Chains of two or more fusable nodes, each in execution order.

    Examples
    --------
    >>> import lazynd_sym as sym
    >>> y = sym.relu(sym.exp(sym.Variable("x")) * 2)
    >>> [[n.op.name for n in chain] for chain in find_chains(y._outputs)]
    [['exp', '_mul_scalar', 'relu']]
    """
    nodes = topo_order(heads)
    readers: dict[int, list[Node]] = {}
    for node in nodes:
        for child, _ in node.inputs:
            readers.setdefault(id(child), []).append(node)
    pinned = {id(node) for node, _ in heads}
    fusable = {id(n) for n in nodes if is_fusable(n.op, n.attrs)}
    key = key or (lambda node: None)
    predecessor: dict[int, Node] = {}
    has_successor: set[int] = set()
    for node in nodes:
        if id(node) not in fusable:
            continue
        for child, _ in node.inputs:
            if (
                id(child) in fusable
                and id(child) not in pinned
                and id(child) not in has_successor
                and all(r is node for r in readers[id(child)])
                and key(child) == key(node)
            ):
                predecessor[id(node)] = child
                has_successor.add(id(child))
                break
    chains = []
    for node in nodes:
        if id(node) in predecessor and id(node) not in has_successor:
            chain = [node]
            while id(chain[-1]) in predecessor:
                chain.append(predecessor[id(chain[-1])])
            chains += _split_by_inputs(chain[::-1])
    return chains


def _split_by_inputs(chain: list[Node]) -> list[list[Node]]:
    """``chain`` cut where a part would read more than ``MAX_INPUTS`` entries from outside it.

    The part's outside inputs are kept as the chain is walked: a node added at the end can only
    add some (no earlier member reads it).  Working them out anew for every prefix made a long
    chain (thousands of unary operators) quadratic at bind.
    """
    parts, start = [], 0
    members: set[int] = set()
    outside: set[tuple[int, int]] = set()
    for end, node in enumerate(chain):
        new = {(id(child), k) for child, k in node.inputs if id(child) not in members} - outside
        if len(outside) + len(new) > MAX_INPUTS:
            parts.append(chain[start:end])
            start, members, outside = end, set(), set()
            new = {(id(child), k) for child, k in node.inputs}
        members.add(id(node))
        outside |= new
    parts.append(chain[start:])
    return [p for p in parts if len(p) >= 2]


def fuse_elementwise(
    heads: list[Entry], key: Callable[[Node], Any] | None = None
) -> tuple[list[Entry], dict[int, Node], list[Node]]:
    """A copy of the graph under ``heads`` with every chain replaced by one fused node.

    Returns the new heads, a map from ``id(old node)`` to its new node (variables map
    to themselves; a chain's last node maps to the fused node; the other members are
    gone) and the fused nodes.  The fused node keeps the name and attributes of the
    chain's last node, so its output keeps its name.  The input graph is not modified.
    """
    chains = find_chains(heads, key)
    if not chains:
        return list(heads), {id(n): n for n in topo_order(heads)}, []
    last_of = {id(chain[-1]): chain for chain in chains}
    inner = {id(n) for chain in chains for n in chain[:-1]}
    new: dict[int, Node] = {}
    fused: list[Node] = []
    for node in topo_order(heads):
        if node.op is None:
            new[id(node)] = node
        elif id(node) in inner:
            continue
        elif id(node) in last_of:
            new[id(node)] = _fused_node(last_of[id(node)], new)
            fused.append(new[id(node)])
        else:
            inputs = [(new[id(c)], k) for c, k in node.inputs]
            new[id(node)] = Node(node.op, node.name, node.params, node.attrs, node.user, inputs)
    return [(new[id(n)], k) for n, k in heads], new, fused


def _fused_node(chain: list[Node], new: dict[int, Node]) -> Node:
    index: dict[tuple[int, int], int] = {}
    inputs: list[Entry] = []
    steps: list[FusedStep] = []
    for position, node in enumerate(chain):
        refs = []
        for child, k in node.inputs:
            if position > 0 and child is chain[position - 1]:
                refs.append(ACC)
                continue
            if (id(child), k) not in index:
                index[(id(child), k)] = len(inputs)
                inputs.append((new[id(child)], k))
            refs.append(index[(id(child), k)])
        steps.append(FusedStep(node.opdef, node.attrs, tuple(refs)))
    last = chain[-1]
    op = make_fused_op(steps, len(inputs))
    # monitor_names: what a monitor calls each member's output (MXNet's names for backward nodes)
    attrs = {"steps": steps, "members": [n.name for n in chain], "monitor_names": [n.monitor_name(0) for n in chain]}
    return Node(op, last.name, {}, attrs, last.user, inputs)
