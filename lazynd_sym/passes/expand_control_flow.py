"""The ``expand_control_flow`` pass: ``_foreach``/``_while_loop``/``_cond`` nodes written out as ordinary operators.

lazynd binds with every shape known, so a loop can be unrolled into the graph, and shape and
type inference, the gradient pass, memory planning and the executor then work unchanged:

- ``_foreach``: ``split`` cuts each data input into its ``T`` steps (``T`` from the data's shape),
  ``T`` copies of the body are chained through the states, ``stack`` joins the step outputs;
- ``_while_loop``: ``max_iterations`` guarded steps; a step is *alive* while every condition so
  far held (``alive = alive * (cond != 0)``); ``where`` keeps the loop variables of a dead step
  and writes zeros into its output rows;
- ``_cond``: ``where`` on the predicate selects each output of the two branches, so the
  gradient goes to the branch taken only.

:mod:`lazynd_sym.passes.gate_dead_branches` then closes each selected branch, so the backward
of a branch not taken (or of a step past the loop's end) cannot send a NaN out of it.

A long loop writes out into many nodes (a 1000-step ``while_loop``: seconds), so a bind does it once:
within :func:`one_unrolling_per_bind` the executor reads the graph its shape inference wrote out,
and type inference reads each loop one step long (:func:`unroll_for_types`).

The outer symbols a body closes over (weights) are shared by every copy.  The pass builds new
nodes for whatever reads a control-flow node and leaves the user's graph unchanged.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, NamedTuple

from lazynd.errors import ShapeError

from ..graph import Entry, IndexedGraph, Node, topo_order
from .gate_dead_branches import Selections, follow_copy, gate_dead_branches, note_selection
from .infer_shape import infer_shape, shape_known

# the shape of an entry of the graph being expanded, None while unknown
ShapeOf = Callable[[Entry], "tuple[int, ...] | None"]


def has_control_flow(heads: list[Entry]) -> bool:
    from ..control_flow import is_control_flow

    return any(is_control_flow(node) for node in topo_order(heads))


def shape_reader(known: dict[int, tuple[int, ...]]) -> ShapeOf:
    """A ``shape_of`` for :func:`expand_control_flow`: partial shape inference of an entry from the
    shapes ``known`` of variables (by ``id`` of their node); None for an entry that still reads a
    control-flow node."""

    def shape_of(entry: Entry) -> tuple[int, ...] | None:
        if has_control_flow([entry]):
            return None
        graph = IndexedGraph([entry])
        given = {graph.entry(i): known[id(graph.nodes[i])] for i in graph.variables() if id(graph.nodes[i]) in known}
        return infer_shape(graph, given)[graph.heads[0]]

    return shape_of


class Unrolled(NamedTuple):
    """What :func:`unroll` wrote out: the new heads, and whether ``default_length`` stood in for
    the length of some ``_foreach`` (its data's shape unknown), so that a shape inferred from
    them may follow that made-up length."""

    heads: list[Entry]
    length_defaulted: bool


def expand_control_flow(heads: list[Entry], shape_of: ShapeOf, default_length: int | None = None) -> list[Entry]:
    """``heads`` of a graph without control-flow nodes, computing what ``heads`` compute.

    ``shape_of`` answers the shapes a ``_foreach`` needs (its data's length); where it cannot,
    ``default_length`` stands in (for shape inference, which then tries two lengths), or, when
    None, a :class:`ShapeError` names the node.
    """
    return unroll(heads, shape_of, default_length).heads


def unroll(heads: list[Entry], shape_of: ShapeOf, default_length: int | None = None) -> Unrolled:
    """:func:`expand_control_flow`, saying whether ``default_length`` was used.

    Within :func:`one_unrolling_per_bind`, an unrolling of the same ``heads`` whose questions to
    ``shape_of`` get the same answers now is the same graph, and is handed back instead.
    """
    shared = _BIND_UNROLLINGS.get()
    for done in shared or ():
        if done.serves(heads, shape_of, default_length):
            return done.unrolled
    unrolling = _Unrolling(shape_of, default_length)
    unrolled = _finish(heads, unrolling)
    if shared is not None:
        shared.append(_Done(list(heads), unrolling.answers, default_length, unrolled))
    return unrolled


def unroll_for_types(heads: list[Entry]) -> Unrolled:
    """``heads`` with every loop written out one step long: the graph type inference reads.

    A loop's length does not change its types (MXNet infers them on the body alone), so neither
    a ``_foreach``'s data shape nor a ``_while_loop``'s ``max_iterations`` is needed.
    """
    return _finish(heads, _Unrolling(lambda entry: None, 1, longest=1))


def _finish(heads: list[Entry], unrolling: _Unrolling) -> Unrolled:
    expanded = _expand(heads, unrolling)
    if unrolling.selections:
        expanded = gate_dead_branches(expanded, unrolling.selections, _op)
    return Unrolled(expanded, unrolling.length_defaulted)


class _Unrolling:
    """The state of one expansion: how shapes are asked (and what was answered), the length that
    stands in for an unknown one (and whether it did), the most steps a loop gets (None: all of
    them), and the selections whose dead branches are closed at the end."""

    def __init__(self, shape_of: ShapeOf, default_length: int | None, longest: int | None = None) -> None:
        self._shape_of = shape_of
        self.default_length = default_length
        self.longest = longest
        self.length_defaulted = False
        self.answers: list[tuple[Entry, tuple[int, ...] | None]] = []
        self.selections: Selections = {}

    def shape_of(self, entry: Entry) -> tuple[int, ...] | None:
        answer = self._shape_of(entry)
        self.answers.append((entry, answer))
        return answer


# the unrollings made so far by the bind in progress in this context (None: outside a bind)
_BIND_UNROLLINGS: ContextVar[list[_Done] | None] = ContextVar("lazynd_bind_unrollings", default=None)


@contextmanager
def one_unrolling_per_bind() -> Iterator[None]:
    """Within the block, :func:`unroll` reuses its own results: a bind's shape inference and its
    executor write each loop out once (a 1000-step loop took seconds each time).  The results are
    held for the block only, so no graph outlives the bind that wrote it."""
    token = _BIND_UNROLLINGS.set([])
    try:
        yield
    finally:
        _BIND_UNROLLINGS.reset(token)


class _Done(NamedTuple):
    """An unrolling made in a bind, and what its graph depended on: the ``heads`` written out,
    the answers ``shape_of`` gave (lengths, states' shapes), the length that stood in for one unknown."""

    heads: list[Entry]
    answers: list[tuple[Entry, tuple[int, ...] | None]]
    default_length: int | None
    unrolled: Unrolled

    def serves(self, heads: list[Entry], shape_of: ShapeOf, default_length: int | None) -> bool:
        """Whether unrolling ``heads`` with ``shape_of`` would write out this graph again: the same
        answers mean the same lengths and the same checks passed, step by step (the questions
        follow from the answers before them)."""
        if len(heads) != len(self.heads):
            return False
        if any(a[0] is not b[0] or a[1] != b[1] for a, b in zip(heads, self.heads, strict=True)):
            return False
        if self.unrolled.length_defaulted and default_length != self.default_length:
            return False
        return all(_same_shape(shape_of(entry), answer) for entry, answer in self.answers)


def _same_shape(one: tuple[int, ...] | None, other: tuple[int, ...] | None) -> bool:
    return (None if one is None else tuple(one)) == (None if other is None else tuple(other))


def _expand(heads: list[Entry], unrolling: _Unrolling) -> list[Entry]:
    from ..control_flow import is_control_flow

    order = topo_order(heads)
    if not any(is_control_flow(node) for node in order):
        return list(heads)
    new: dict[int, list[Entry]] = {}
    for node in order:
        inputs = [new[id(child)][k] for child, k in node.inputs]
        if is_control_flow(node):
            expander = _EXPANDERS[node.attrs["kind"]]
            outputs = expander(node, inputs, unrolling)
            # the copies of a body may hold control-flow nodes of their own (nested loops)
            new[id(node)] = _expand(outputs, unrolling)
        elif all(a[0] is b[0] and a[1] == b[1] for a, b in zip(inputs, node.inputs, strict=True)):
            new[id(node)] = [(node, k) for k in range(node.num_outputs())]
        else:
            copy = Node(node.op, node.name, node.params, node.attrs, node.user, inputs)
            follow_copy(unrolling.selections, node, copy)
            new[id(node)] = [(copy, k) for k in range(node.num_outputs())]
    return [new[id(node)][k] for node, k in heads]


def _op(op_name: str, inputs: list[Entry], name: str, **params: Any) -> list[Entry]:
    from ..creation import invoke
    from ..symbol import Symbol

    return invoke(op_name, [Symbol([e]) for e in inputs], {"name": name, **params})._outputs


def _as_output(entry: Entry, name: str) -> Entry:
    """``entry``, or a copy of it when it is a variable (an output must be computed by a node)."""
    return _op("identity", [entry], name)[0] if entry[0].op is None else entry


def _check_states(node: Node, given: list[Entry], returned: list[Entry], shape_of: ShapeOf, what: str) -> None:
    """Refuse a body whose returned states differ in shape from those it was given."""
    for i, (before, after) in enumerate(zip(given, returned, strict=True)):
        old, fresh = shape_of(before), shape_of(after)
        if shape_known(old) and shape_known(fresh) and tuple(old) != tuple(fresh):  # type: ignore[arg-type]
            raise ShapeError(
                f"{node.name}: {what} {i} has shape {old} but the body returns it with shape {fresh}; "
                "a loop state must keep its shape"
            )


def _length(node: Node, data: list[Entry], shapes: list, unrolling: _Unrolling) -> int:
    """The number of steps of a ``_foreach``: the common length of its data along axis 0."""
    lengths = []
    for entry, shape in zip(data, shapes, strict=True):
        if shape is not None and len(shape) == 0:
            raise ShapeError(f"{node.name} (foreach): 'data' {entry[0].name!r} has no axis 0 to loop over")
        lengths.append(shape[0] if shape else 0)
    known = {n for n in lengths if n > 0}
    if len(known) > 1:
        raise ShapeError(
            f"{node.name} (foreach): the arrays of 'data' have lengths {lengths} along axis 0, expected one"
        )
    if known:
        return known.pop()
    if unrolling.default_length is not None:
        unrolling.length_defaulted = True
        return unrolling.default_length
    raise ShapeError(
        f"{node.name} (foreach): the length of 'data' along axis 0 is not known; give the shape of "
        f"{[e[0].name for e in data]}"
    )


def _expand_foreach(node: Node, inputs: list[Entry], unrolling: _Unrolling) -> list[Entry]:
    attrs = node.attrs
    n_data, n_states, n_out = attrs["num_data"], attrs["num_states"], attrs["num_out_data"]
    data, states, free = inputs[:n_data], inputs[n_data : n_data + n_states], inputs[n_data + n_states :]
    shapes = [unrolling.shape_of(d) for d in data]
    length = _length(node, data, shapes, unrolling)
    # as MXNet's, a step of 1-D data keeps its axis: shape (1,), as indexing an NDArray gives
    steps = [
        _op(
            "split",
            [d],
            f"{node.name}_data{i}_steps",
            num_outputs=length,
            axis=0,
            squeeze_axis=shape is None or len(shape) > 1,
        )
        for i, (d, shape) in enumerate(zip(data, shapes, strict=True))
    ]
    rows: list[list[Entry]] = [[] for _ in range(n_out)]
    for t in range(length):
        outs = attrs["subgraph"].clone([s[t] for s in steps] + states + free)
        if t == 0:
            _check_states(node, states, outs[n_out:], unrolling.shape_of, "'init_states' item")
        for i in range(n_out):
            rows[i].append(outs[i])
        states = outs[n_out:]
    stacked = [_op("stack", row, f"{node.name}_output{i}_stacked", axis=0)[0] for i, row in enumerate(rows)]
    return stacked + [_as_output(s, f"{node.name}_state{i}") for i, s in enumerate(states)]


def _select(alive: Entry, new: Entry, old: Entry, name: str, selections: Selections, sides: tuple[int, ...]) -> Entry:
    """``new`` where ``alive`` (one element) is nonzero, else ``old``; ``sides`` (1 for ``new``,
    2 for ``old``) are the branches to close against NaN gradients when not selected."""
    mask = _op("broadcast_like", [alive, new], f"{name}_mask")[0]
    selected = _op("where", [mask, new, old], name)[0]
    note_selection(selections, selected[0], sides)
    return selected


def _expand_while_loop(node: Node, inputs: list[Entry], unrolling: _Unrolling) -> list[Entry]:
    attrs = node.attrs
    positions, n_out = attrs["var_positions"], attrs["num_out_data"]
    variables = [inputs[p] for p in positions]
    rows: list[list[Entry]] = [[] for _ in range(n_out)]
    alive: Entry | None = None
    steps = attrs["max_iterations"] if unrolling.longest is None else min(attrs["max_iterations"], unrolling.longest)
    for t in range(steps):
        step_inputs = list(inputs)
        for p, v in zip(positions, variables, strict=True):
            step_inputs[p] = v
        condition, *outs = attrs["subgraph"].clone(step_inputs)
        holds = _op("_not_equal_scalar", [condition], f"{node.name}_step{t}_holds", scalar=0)[0]
        alive = holds if alive is None else _op("elemwise_mul", [alive, holds], f"{node.name}_step{t}_alive")[0]
        if t == 0:
            _check_states(node, variables, outs[n_out:], unrolling.shape_of, "'loop_vars' item")
        for i in range(n_out):
            zeros = _op("zeros_like", [outs[i]], f"{node.name}_step{t}_pad{i}")[0]
            rows[i].append(_select(alive, outs[i], zeros, f"{node.name}_step{t}_output{i}", unrolling.selections, (1,)))
        # the step's body is closed (side 1); the variables it kept were computed by steps before it
        variables = [
            _select(alive, new, old, f"{node.name}_step{t}_var{i}", unrolling.selections, (1,))
            for i, (new, old) in enumerate(zip(outs[n_out:], variables, strict=True))
        ]
    stacked = [_op("stack", row, f"{node.name}_output{i}_stacked", axis=0)[0] for i, row in enumerate(rows)]
    return stacked + [_as_output(v, f"{node.name}_var{i}") for i, v in enumerate(variables)]


def _expand_cond(node: Node, inputs: list[Entry], unrolling: _Unrolling) -> list[Entry]:
    count = node.attrs["num_outputs"]
    pred, then_outs, else_outs = inputs[0], inputs[1 : 1 + count], inputs[1 + count :]
    return [
        _select(pred, then_out, else_out, f"{node.name}_output{i}", unrolling.selections, (1, 2))
        for i, (then_out, else_out) in enumerate(zip(then_outs, else_outs, strict=True))
    ]


_EXPANDERS = {"foreach": _expand_foreach, "while_loop": _expand_while_loop, "cond": _expand_cond}
