"""The shapes and dtypes of every entry of a graph being bound, worked out once at bind.

Bound arrays give every variable its whole shape.  Under ``mx.np_shape`` a 0 in one is a
zero-size axis, as in MXNet 1.9.1, so the shape pass reads it as one (each rule, its inputs all
known, runs as for an imperative call) and a graph of zero-size entries binds and runs.  Outside it a 0 is an
unknown size, and MXNet cannot make such an array: a bound zero-size array is refused by name.
"""

from __future__ import annotations

from typing import Any

from lazynd.errors import ShapeError

from .. import passes
from ..graph import IndexedGraph
from ..passes.shape_semantics import ShapeSemantics


def bound_shapes_and_types(
    graph: IndexedGraph,
    bound: list[tuple[Any, Any]],
    known_shape: dict[int, tuple],
    known_type: dict[int, str],
    same: list[tuple[int, int]],
) -> None:
    """Infer every entry's shape and dtype (into ``graph.attrs``) from the ``(variable node, array)``
    pairs ``bound``, whose shapes and dtypes ``known_shape`` and ``known_type`` give by entry id; ``same``
    pairs entries that must agree (see :func:`lazynd_sym.passes.infer_shape.infer_shape`).  Raises
    ShapeError naming an entry left unknown."""
    semantics = ShapeSemantics.current()  # read once, not per entry
    if not semantics.numpy:
        _refuse_zero_size(bound)
    shapes = passes.infer_shape(graph, known_shape, same)
    types = passes.infer_type(graph, known_type, same)
    for eid, (shape, dtype) in enumerate(zip(shapes, types, strict=False)):
        if not semantics.known(shape) or dtype is None:
            raise ShapeError(f"bind: cannot infer shape/dtype of '{graph.entry_name(eid)}' (got {shape}, {dtype})")


def _refuse_zero_size(bound: list[tuple[Any, Any]]) -> None:
    for node, array in bound:
        if 0 in tuple(array.shape):
            raise ShapeError(
                f"bind: {node.name!r} is bound to a zero-size array of shape {tuple(array.shape)}; outside "
                "mx.np_shape a 0 is an unknown size (as in MXNet 1.9.1): bind it under mx.np_shape()"
            )
