"""Shape inference over a graph: forward and backward sweeps of each operator's rule to a fixed point."""

from __future__ import annotations

from typing import Any

from lazynd.errors import OperatorError, ShapeError

from ..attribute import parse_shape_hint
from ..graph import IndexedGraph
from .fixed_point import sweep_to_fixed_point
from .shape_semantics import ShapeSemantics

Shape = tuple[int, ...]


def shape_known(shape: Shape | None) -> bool:
    """Whether every dim of ``shape`` is a size, in the calling thread's reading (under
    ``mx.np_shape`` a 0 is one, outside it a 0 is an unknown dim)."""
    return ShapeSemantics.current().known(shape)


def _variable_hint(node: Any) -> Shape | None:
    text = node.user.get("__shape__")
    if text is None:
        return None
    return parse_shape_hint(text, f"variable {node.name!r}")


def infer_shape(
    graph: IndexedGraph,
    known: dict[int, Shape],
    same_shape: list[tuple[int, int]] | None = None,
) -> list[Shape | None]:
    """Shapes of every entry (None, or unknown dims, where unknown); stores them in ``graph.attrs['shape']``.

    ``known`` maps entry ids to given shapes; ``same_shape`` lists entry pairs that must
    agree (a head gradient and its output, a gradient and its argument).

    An unknown dim is a 0, or under ``mx.np_shape`` a -1, where a 0 is a zero-size axis
    (:mod:`~lazynd_sym.passes.shape_semantics`, read once here for the whole inference).

    Examples
    --------
    >>> import lazynd_sym as sym
    >>> from lazynd_sym.graph import IndexedGraph
    >>> g = IndexedGraph((sym.Variable("a") * 2)._outputs)
    >>> infer_shape(g, {0: (3,)})
    [(3,), (3,)]
    """
    semantics = ShapeSemantics.current()
    shapes: list[Shape | None] = [None] * graph.num_entries
    for i in graph.variables():
        shapes[graph.entry(i)] = _variable_hint(graph.nodes[i])
    for eid, shape in known.items():
        shapes[eid] = semantics.fill_hint(shapes[eid], tuple(shape))
    op_nodes = [i for i, n in enumerate(graph.nodes) if n.op is not None]
    pairs = same_shape or []

    def merge_pairs() -> bool:
        changed = False
        for a, b in pairs:
            for x, y in ((a, b), (b, a)):
                merged = semantics.merge(graph.entry_name(x), graph.entry_name(x), shapes[x], shapes[y])
                if merged != shapes[x]:
                    shapes[x] = merged
                    changed = True
        return changed

    sweep_to_fixed_point(
        op_nodes, lambda i: _apply_node(graph, i, shapes, semantics), merge_pairs, 2 * len(op_nodes) + 5
    )
    graph.attrs["shape"] = shapes
    return shapes


def _apply_node(graph: IndexedGraph, i: int, shapes: list, semantics: ShapeSemantics) -> tuple[bool, bool]:
    """Run node ``i``'s rule and merge its answer: ``(changed, settled)`` (see :mod:`.fixed_point`)."""
    node = graph.nodes[i]
    op = node.opdef
    in_entries = graph.input_entries(i)
    n_data = node.num_data_inputs()
    names = node.input_names()
    in_shapes = [shapes[e] for e in in_entries[:n_data]]
    aux_shapes = [shapes[e] for e in in_entries[n_data:]]
    # known output shapes reach the rules that infer backwards (FullyConnected's batch, Concat's and
    # SliceChannel's pieces, a same-shape operator's inputs), as MXNet's rules see them
    out_entries = range(graph.entry(i), graph.entry(i + 1))
    out_shapes = [shapes[e] for e in out_entries]
    if in_shapes and all(s is None for s in in_shapes):
        # as MXNet's rules: nothing known of the inputs, nothing inferred (no half-made weights),
        # except where the output's shape is every input's (``(a * c + b).infer_shape(b=...)``)
        if not (op.output_shape_fills_inputs and any(s is not None for s in out_shapes)):
            return False, False
    try:
        new_in, new_out, new_aux = semantics.run_rule(op, node.attrs, list(in_shapes), list(aux_shapes), out_shapes)
    except OperatorError as err:
        # a rule's own check (inconsistent shapes, a bad parameter such as a 1-entry stride for a 2-D
        # kernel) is the user's error however little is known yet: it must not pass for "unknown"
        error_class = ShapeError if isinstance(err, ShapeError) else OperatorError
        raise error_class(f"infer_shape: node '{node.name}' ({op.name}): {err}") from err
    except (TypeError, ValueError, IndexError) as err:
        if all(semantics.known(s) for s in in_shapes):
            raise ShapeError(
                f"infer_shape: node '{node.name}' ({op.name}) failed on input shapes {in_shapes}: {err}"
            ) from err
        return False, False  # the rule needs more than is known yet
    changed = False
    for e, arg, shape in zip(in_entries, names, list(new_in) + list(new_aux), strict=False):
        merged = semantics.merge(node.name, arg, shapes[e], shape)
        if merged != shapes[e]:
            shapes[e] = merged
            changed = True
    for k, shape in enumerate(new_out):
        e = graph.entry(i, k)
        merged = semantics.merge(node.name, node.output_name(k), shapes[e], shape)
        if merged != shapes[e]:
            shapes[e] = merged
            changed = True
    known = semantics.known
    return changed, all(known(shapes[e]) for e in in_entries) and all(known(shapes[e]) for e in out_entries)
