"""Type inference over a graph with each operator's ``infer_type`` rule, to a fixed point.

The rules map input dtypes to output dtypes.  MXNet's also run backwards (``y`` given as float64
in ``FullyConnected(x) + y`` makes ``x`` and the weights float64); here an operator whose inputs
are unknown and whose output dtype is known takes that dtype for them when its rule shows the
output follows the inputs' dtype (elementwise operators, FullyConnected...; not Cast).
"""

from __future__ import annotations

from typing import Any

from lazynd.errors import LazyNDError, OperatorError

from ..attribute import dtype_from_attr
from ..graph import IndexedGraph
from .fixed_point import sweep_to_fixed_point


def _merge(node: str, arg: str, given: str | None, inferred: str | None) -> str | None:
    if inferred is None:
        return given
    if given is not None and given != inferred:
        raise OperatorError(f"infer_type: node '{node}', argument '{arg}': provided dtype {given}, inferred {inferred}")
    return inferred


def _from_outputs(node: Any, in_types: list, aux_types: list, out_types: list) -> list:
    """``in_types`` with the unknown ones set to the one known output dtype, when the node's rule
    makes its output follow them (tried with that dtype and with another); else unchanged."""
    known = {t for t in out_types if t is not None}
    if len(known) != 1 or None not in in_types:
        return in_types
    (dtype,) = known
    other = "float32" if dtype == "float64" else "float64"
    results = []
    for probe in (dtype, other):
        try:
            _, outs, _ = node.opdef.infer_type(node.attrs, [probe if t is None else t for t in in_types], aux_types)
        except LazyNDError:  # the rule refuses the probe (a float-only operator, mixed inputs): no conclusion
            return in_types
        results.append({t for t in outs if t is not None})
    if results == [{dtype}, {other}]:
        return [dtype if t is None else t for t in in_types]
    return in_types


def infer_type(
    graph: IndexedGraph, known: dict[int, str], same_type: list[tuple[int, int]] | None = None
) -> list[str | None]:
    """Dtype names of every entry (None where unknown); stored in ``graph.attrs['dtype']``.

    Examples
    --------
    >>> import lazynd_sym as sym
    >>> from lazynd_sym.graph import IndexedGraph
    >>> infer_type(IndexedGraph((sym.Variable("a") + 1)._outputs), {0: "float64"})
    ['float64', 'float64']
    """
    types: list[str | None] = [None] * graph.num_entries
    for i in graph.variables():
        node = graph.nodes[i]
        if "__dtype__" in node.user and graph.entry(i) not in known:  # a type given overrides it, as in MXNet
            types[graph.entry(i)] = dtype_from_attr(node.user["__dtype__"], f"Variable {node.name!r}: __dtype__")
    for eid, dtype in known.items():
        types[eid] = _merge(graph.entry_name(eid), graph.entry_name(eid), types[eid], dtype)
    op_nodes = [i for i, n in enumerate(graph.nodes) if n.op is not None]

    def apply(i: int) -> tuple[bool, bool]:
        node = graph.nodes[i]
        entries = graph.input_entries(i)
        n_data = node.num_data_inputs()
        in_types = [types[e] for e in entries[:n_data]]
        aux_types = [types[e] for e in entries[n_data:]]
        out_entries = range(graph.entry(i), graph.entry(i + 1))
        out_types = [types[e] for e in out_entries]
        in_types = _from_outputs(node, in_types, aux_types, out_types)
        try:
            new_in, new_out, new_aux = node.opdef.infer_type(node.attrs, in_types, aux_types)
        except OperatorError as err:
            # the rule names its op and argument, not which of the graph's nodes it is (an
            # unrolled RNN has one '_plus' per step), as infer_shape's errors do
            raise OperatorError(f"infer_type: node '{node.name}' ({node.opdef.name}): {err}") from err
        updates = list(zip(entries, node.input_names(), list(new_in) + list(new_aux), strict=False))
        updates += [(graph.entry(i, k), node.output_name(k), t) for k, t in enumerate(new_out)]
        changed = False
        for e, arg, t in updates:
            merged = _merge(node.name, arg, types[e], t)
            if merged != types[e]:
                types[e] = merged
                changed = True
        return changed, all(types[e] is not None for e in entries) and all(types[e] is not None for e in out_entries)

    def merge_pairs() -> bool:
        changed = False
        for a, b in same_type or []:
            if types[a] is None and types[b] is not None:
                types[a], changed = types[b], True
            elif types[b] is None and types[a] is not None:
                types[b], changed = types[a], True
        return changed

    sweep_to_fixed_point(op_nodes, apply, merge_pairs, 2 * len(op_nodes) + 4)
    graph.attrs["dtype"] = types
    return types
