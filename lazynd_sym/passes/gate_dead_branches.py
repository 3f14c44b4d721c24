"""Gradients that stop at the edge of a branch not taken, for the expanded ``_cond`` and ``_while_loop``.

:mod:`lazynd_sym.passes.expand_control_flow` computes both branches of a ``_cond`` and every
guarded step of a ``_while_loop``, and ``where`` selects what was meant.  ``where`` gives the
branch not taken a zero gradient, but the operators of that branch still run their backward on
it, and ``0 * f'(x)`` is NaN wherever the derivative is infinite: ``sqrt`` or ``1 / x`` at 0, an
``exp`` that overflowed in a step past the loop's end.  That NaN then reaches the inputs the branch
shares with the rest of the graph.  MXNet runs only the branch taken, so its gradient is finite.

This pass closes each branch: the nodes whose every reader is the branch's side of a selection
(or another such node) form its *region*, and each input a region node reads from outside comes
through a *gate*, ``where(mask, x, BlockGrad(x))``: ``x`` going forward, and backward the
gradient where the branch was taken and an exact 0 (never ``0 * inf``) where it was not.
"""

from __future__ import annotations

from collections.abc import Callable

from ..graph import Entry, Node, topo_order

# id(where node) -> (that node, the sides whose branches it closes: 1 for ``x``, kept where the mask
# holds, 2 for ``y``, kept where it does not); the node is held so that its id is not reused
Selections = dict[int, tuple[Node, tuple[int, ...]]]


def note_selection(selections: Selections, where: Node, sides: tuple[int, ...]) -> None:
    """Record that ``where`` (``where(broadcast_like(mask, x), x, y)``) selects the branches on ``sides``."""
    selections[id(where)] = (where, sides)


def follow_copy(selections: Selections, original: Node, copy: Node) -> None:
    """``copy`` replaces ``original`` in the graph: a selection ``original`` was stays one."""
    if id(original) in selections and selections[id(original)][0] is original:
        selections[id(copy)] = (copy, selections[id(original)][1])


# builds one operator node: (operator name, inputs, node name, **parameters) -> its outputs
MakeOp = Callable[..., list[Entry]]


def gate_dead_branches(heads: list[Entry], selections: Selections, make_op: MakeOp) -> list[Entry]:
    """``heads`` with each selected branch's outside inputs gated by the mask of its selection.

    The ``where`` nodes of ``selections`` are the pass's own and are rewired in place; the
    region's nodes (which may be the user's) are copied, never changed.  ``make_op`` builds the
    gates' nodes (the expansion's own builder).
    """
    order = topo_order(heads)
    position = {id(n): i for i, n in enumerate(order)}
    readers: dict[int, set[tuple[int, int]]] = {id(n): set() for n in order}
    nodes: dict[int, Node] = {id(n): n for n in order}
    for node in order:
        for slot, (child, _) in enumerate(node.inputs):
            readers[id(child)].add((id(node), slot))
    pinned = {id(node) for node, _ in heads}

    # one group per (mask entry, side): a while loop's step, a cond's branch
    groups: dict[tuple[int, int, int], list[Node]] = {}
    for key in sorted(
        (k for k in selections if k in position and selections[k][0] is nodes[k]), key=position.__getitem__
    ):
        where, sides = selections[key]
        mask_node, mask_index = where.inputs[0][0].inputs[0]
        for side in sides:
            groups.setdefault((id(mask_node), mask_index, side), []).append(where)

    def link(node: Node) -> None:
        nodes[id(node)] = node
        readers.setdefault(id(node), set())
        for slot, (child, _) in enumerate(node.inputs):
            readers[id(child)].add((id(node), slot))

    for (_, _, side), wheres in groups.items():
        mask = wheres[0].inputs[0][0].inputs[0]
        region = _region(wheres, side, readers, pinned)
        copies: dict[int, Node] = {}
        gates: dict[tuple[int, int], Entry] = {}
        for node in _in_order(wheres, side, region):
            data_inputs = node.num_data_inputs()
            inputs: list[Entry] = []
            for slot, (child, k) in enumerate(node.inputs):
                readers[id(child)].discard((id(node), slot))
                if id(child) in region:
                    inputs.append((copies[id(child)], k))
                elif slot >= data_inputs:  # an auxiliary state is written by the node: never gated
                    inputs.append((child, k))
                else:
                    if (id(child), k) not in gates:
                        made = _gate(make_op, mask, (child, k), side, f"{node.name}_gate{len(gates)}")
                        for part in made:
                            link(part)
                        gates[(id(child), k)] = (made[-1], 0)
                    inputs.append(gates[(id(child), k)])
            copy = Node(node.op, node.name, node.params, node.attrs, node.user, inputs)
            copies[id(node)] = copy
            link(copy)
        for reader, slot in _sinks(wheres, side):
            child, k = reader.inputs[slot]
            if id(child) in copies:
                readers[id(child)].discard((id(reader), slot))
                reader.inputs[slot] = (copies[id(child)], k)
                readers[id(copies[id(child)])].add((id(reader), slot))
    return heads


def _sinks(wheres: list[Node], side: int) -> list[tuple[Node, int]]:
    """Where the branch on ``side`` is read: the ``where`` itself, and the ``broadcast_like`` that
    shapes its mask like the branch (it reads only the shape, so it is no reader outside)."""
    sinks = []
    for where in wheres:
        sinks.append((where, side))
        shaper = where.inputs[0][0]
        if shaper.inputs[1] == where.inputs[side]:
            sinks.append((shaper, 1))
    return sinks


def _region(wheres: list[Node], side: int, readers: dict[int, set[tuple[int, int]]], pinned: set[int]) -> set[int]:
    """The operator nodes read only by ``wheres`` on ``side`` or by each other (ids)."""
    region: set[int] = set()
    counted: dict[int, int] = {}
    pending = [reader.inputs[slot][0] for reader, slot in _sinks(wheres, side)]
    while pending:
        node = pending.pop()
        key = id(node)
        if node.op is None or key in pinned or key in region:
            continue
        counted[key] = counted.get(key, 0) + 1
        if counted[key] == len(readers[key]):
            region.add(key)
            pending.extend(child for child, _ in node.inputs)
    return region


def _in_order(wheres: list[Node], side: int, region: set[int]) -> list[Node]:
    """The nodes of ``region`` inputs first (a walk that never leaves the region)."""
    return topo_order([where.inputs[side] for where in wheres], within=region)


def _gate(op: MakeOp, mask: Entry, entry: Entry, side: int, name: str) -> list[Node]:
    """The nodes of ``entry`` gated by ``mask``, the gate last: ``entry`` going forward; backward,
    its gradient where ``mask`` selects ``side``, else an exact 0."""
    condition = op("broadcast_like", [mask, entry], f"{name}_mask")[0]
    blocked = op("BlockGrad", [entry], f"{name}_blocked")[0]
    kept, dropped = (entry, blocked) if side == 1 else (blocked, entry)
    gate = op("where", [condition, kept, dropped], name)[0]
    return [condition[0], blocked[0], gate[0]]
