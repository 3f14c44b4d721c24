"""Control-flow nodes in symbol JSON: ``_foreach``, ``_while_loop`` and ``_cond`` with their ``subgraphs``, as MXNet 1.x writes them.

MXNet writes each body as a graph of its own whose variables are the body's inputs, and says
in the node's attributes where each of them comes from among the node's inputs:

- ``_foreach``: one subgraph (step outputs, then new states); ``in_data_locs``,
  ``in_state_locs`` and ``remain_locs`` give the position in the subgraph's inputs of each data
  input, each state and each other input, which follow in the node's inputs in that order;
- ``_while_loop``: the condition and the step; ``cond_input_locs`` and ``func_input_locs`` give,
  for each subgraph input, its position among the node's inputs, ``func_var_locs`` the position
  of each loop variable among the step's inputs;
- ``_cond``: predicate, then and else subgraphs, each with its ``*_input_locs``.

A ``_cond`` read here is inlined (its branches join the outer graph, which computes the same
values), so writing it again gives one-variable subgraphs.
"""

from __future__ import annotations

import json
from typing import Any

from lazynd.errors import LazyNDError

from .graph import Entry, IndexedGraph, Node

CONTROL_FLOW_OPS = ("_foreach", "_while_loop", "_cond")
_UNNAMED = "\0input"  # the name of a placeholder until a body names it


def _locs(values: list[int]) -> str:
    return "[" + ", ".join(str(v) for v in values) + "]"


def _body_graph(
    heads: list[Entry], nodes: list[Node], boundary: list[Entry], names: list[str], node: Node
) -> tuple[dict, list[int]]:
    """The JSON object of a body (``nodes``, reading ``boundary`` through variables named ``names``),
    and, for each of its inputs in order, the index of the boundary entry it stands for."""
    from .control_flow import Subgraph
    from .json_format import graph_document
    from .passes.expand_control_flow import _op

    variables = [Node(None, name) for name in names]
    copies = Subgraph(heads, nodes, boundary).clone([(v, 0) for v in variables])
    # a body output must be computed inside the body (MXNet's rule): a variable goes through identity
    copies = [
        _op("identity", [e], f"{node.name}_identity{i}")[0] if e[0].op is None else e for i, e in enumerate(copies)
    ]
    index = {id(v): j for j, v in enumerate(variables)}
    graph = IndexedGraph(copies)
    return graph_document(copies), [index[id(graph.nodes[i])] for i in graph.variables()]


def _boundary_names(boundary: list[Entry]) -> list[str]:
    """Variables are named as they are; an outer expression by its output name (MXNet's cut)."""
    return [n.name if n.op is None else n.output_name(k) for n, k in boundary]


def write_control_flow(node: Node) -> tuple[dict[str, str], list[dict]] | None:
    """The attributes and ``subgraphs`` MXNet writes for a control-flow ``node``; None for any other node."""
    from .control_flow import is_control_flow

    if not is_control_flow(node):
        return None
    attrs = node.attrs
    kind, count = attrs["kind"], len(node.inputs)
    if kind == "cond":
        n = attrs["num_outputs"]
        parts = [node.inputs[:1], node.inputs[1 : 1 + n], node.inputs[1 + n :]]
        documents, written = [], {"num_args": str(count + 3), "num_outputs": str(n)}
        offset = 0
        for part, key in zip(parts, ("cond", "then", "else"), strict=True):
            unique = list(dict.fromkeys((id(e[0]), e[1]) for e in part))
            boundary = [next(e for e in part if (id(e[0]), e[1]) == u) for u in unique]
            document, order = _body_graph(list(part), [], boundary, _boundary_names(boundary), node)
            position = {u: offset + part.index(b) for u, b in zip(unique, boundary, strict=True)}
            written[f"{key}_input_locs"] = _locs([position[unique[j]] for j in order])
            documents.append(document)
            offset += len(part)
        return written, documents
    subgraph = attrs["subgraph"]
    names = _boundary_names(subgraph.boundary)
    if kind == "foreach":
        document, order = _body_graph(subgraph.heads, subgraph.nodes, subgraph.boundary, names, node)
        where = {b: j for j, b in enumerate(order)}  # boundary index -> position among the subgraph's inputs
        n_data, n_states = attrs["num_data"], attrs["num_states"]
        return {
            "in_data_locs": _locs([where[i] for i in range(n_data)]),
            "in_state_locs": _locs([where[i] for i in range(n_data, n_data + n_states)]),
            "remain_locs": _locs([where[i] for i in range(n_data + n_states, count)]),
            "num_args": str(count + 1),
            "num_out_data": str(attrs["num_out_data"]),
            "num_outputs": str(attrs["num_outputs"]),
        }, [document]
    cond_document, cond_order = _body_graph(subgraph.heads[:1], subgraph.nodes, subgraph.boundary, names, node)
    func_document, func_order = _body_graph(subgraph.heads[1:], subgraph.nodes, subgraph.boundary, names, node)
    return {
        "cond_input_locs": _locs(cond_order),
        "func_input_locs": _locs(func_order),
        "func_var_locs": _locs([func_order.index(p) if p in func_order else -1 for p in attrs["var_positions"]]),
        "max_iterations": str(attrs["max_iterations"]),
        "num_args": str(count + 2),
        "num_out_data": str(attrs["num_out_data"]),
        "num_outputs": str(attrs["num_outputs"]),
    }, [cond_document, func_document]


def _int_list(params: dict[str, str], key: str) -> list[int]:
    try:
        values = json.loads(params[key])
    except (KeyError, ValueError):
        raise LazyNDError(f"attribute {key!r} is {params.get(key)!r}; expected a list of integers") from None
    if not isinstance(values, list) or not all(type(v) is int for v in values):
        raise LazyNDError(f"attribute {key!r} is {params[key]!r}; expected a list of integers")
    return values


def _int(params: dict[str, str], key: str) -> int:
    try:
        return int(params[key])
    except (KeyError, ValueError):
        raise LazyNDError(f"attribute {key!r} is {params.get(key)!r}; expected an integer") from None


def _inline(body: Any, locs: list[int], inputs: list[Entry]) -> list[Entry]:
    """The outputs of ``body`` (a symbol read from ``subgraphs``) reading ``inputs[locs[j]]`` as its input ``j``."""
    from .control_flow import Subgraph

    graph = IndexedGraph(body._outputs)
    variables = [(graph.nodes[i], 0) for i in graph.variables()]
    if len(variables) != len(locs) or not all(0 <= j < len(inputs) for j in locs):
        raise LazyNDError(f"a subgraph has {len(variables)} inputs but its locations are {locs}")
    for (variable, _), j in zip(variables, locs, strict=True):
        if inputs[j][0].name.startswith(_UNNAMED):  # a placeholder takes the name the body gives it
            inputs[j][0].name = variable.name
    nodes = [n for n in graph.nodes if n.op is not None]
    # MXNet passes a body input that is also an output through identity: the input itself is meant
    heads = [
        node.inputs[0]
        if node.op is not None and node.op.name == "identity" and node.inputs[0][0].op is None
        else (node, k)
        for node, k in body._outputs
    ]
    return Subgraph(heads, nodes, variables).clone([inputs[j] for j in locs])


def read_control_flow(
    op_name: str, name: str, params: dict[str, str], subgraphs: Any, inputs: list[Entry], read: Any
) -> Node:
    """The node of a ``_foreach``/``_while_loop``/``_cond`` read from JSON; ``read`` builds a subgraph's symbol."""
    from .control_flow import CONTROL_FLOW_OPS as OPS
    from .control_flow import Subgraph, capture

    kind = op_name[1:]
    wanted = {"foreach": 1, "while_loop": 2, "cond": 3}[kind]
    if not isinstance(subgraphs, list) or len(subgraphs) != wanted:
        raise LazyNDError(f"expected {wanted} graph(s) in 'subgraphs', found {subgraphs!r:.80}")
    bodies = [read(document) for document in subgraphs]
    count = _int(params, "num_outputs")
    attrs: dict[str, Any] = {"kind": kind, "num_inputs": len(inputs), "num_outputs": count}
    if kind == "cond":
        parts = [
            _inline(body, _int_list(params, f"{key}_input_locs"), inputs)
            for body, key in zip(bodies, ("cond", "then", "else"), strict=True)
        ]
        inputs = parts[0][:1] + parts[1] + parts[2]
        attrs["num_inputs"] = len(inputs)
        return Node(OPS["cond"], name, {}, attrs, {}, inputs)
    # every input of the node becomes one placeholder that the bodies read
    placeholders = [Node(None, f"{_UNNAMED}{i}") for i in range(len(inputs))]
    stand_ins = [(p, 0) for p in placeholders]
    if kind == "foreach":
        data, states = _int_list(params, "in_data_locs"), _int_list(params, "in_state_locs")
        remain = _int_list(params, "remain_locs")
        positions = data + states + remain  # position in the subgraph's inputs of each node input
        locs = [positions.index(j) if j in positions else -1 for j in range(len(positions))]
        heads = _inline(bodies[0], locs, stand_ins)
        attrs.update(num_data=len(data), num_states=len(states), num_out_data=count - len(states))
    else:
        cond_locs, func_locs = _int_list(params, "cond_input_locs"), _int_list(params, "func_input_locs")
        var_locs = _int_list(params, "func_var_locs")
        if any(not 0 <= v < len(func_locs) for v in var_locs):
            raise LazyNDError(f"func_var_locs {var_locs} must each name one of the step's {len(func_locs)} inputs")
        heads = _inline(bodies[0], cond_locs, stand_ins)[:1] + _inline(bodies[1], func_locs, stand_ins)
        attrs.update(
            var_positions=[func_locs[v] for v in var_locs],
            num_out_data=_int(params, "num_out_data"),
            max_iterations=_int(params, "max_iterations"),
        )
    subgraph = capture(heads, placeholders, stand_ins)
    if len(subgraph.boundary) != len(inputs):
        raise LazyNDError("a subgraph reads values that are not among the node's inputs")
    attrs["subgraph"] = Subgraph(subgraph.heads, subgraph.nodes, subgraph.boundary)
    return Node(OPS[kind], name, {}, attrs, {}, inputs)
