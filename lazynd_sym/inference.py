"""Shape and type inference as ``Symbol`` offers it: the values given, and the results handed back.

``Symbol.infer_shape(*args, **kwargs)`` and ``infer_type`` take what is known of the
symbol's arguments by position (in ``list_arguments`` order) or by input name (auxiliary
states too); the passes (:mod:`lazynd_sym.passes.infer_shape`, :mod:`~lazynd_sym.passes.infer_type`)
complete it over the graph; the results come back as MXNet's
``(arg_values, out_values, aux_values)`` triple.  The full forms return ``(None, None, None)``
when anything stays unknown; the partial forms return what is known (MXNet's way: an unknown
shape as ``()``, an unknown dimension as 0, an unknown type as None).  Read back the same way,
a given ``()`` is an unknown shape outside ``mx.np_shape`` and a scalar's under it.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable
from typing import Any

import numpy as np

from lazynd.errors import ArgumentValueError, LazyNDError, ShapeError
from lazynd.log import warn_from_user_code
from lazynd.util import is_np_shape

from .attribute import check_dtype_hint
from .graph import Entry, IndexedGraph
from .passes.expand_control_flow import Unrolled, has_control_flow, shape_reader, unroll, unroll_for_types
from .passes.infer_shape import infer_shape as infer_shape_pass
from .passes.infer_shape import shape_known
from .passes.infer_type import infer_type as infer_type_pass

Triple = tuple[list | None, list | None, list | None]


def infer_shape(outputs: list[Entry], args: tuple, kwargs: dict, partial: bool, warn: bool = True) -> Triple:
    """``Symbol.infer_shape`` (``partial``: ``infer_shape_partial``) of the graph of ``outputs``.

    ``warn=False`` leaves out the warning that names the unknown shapes, for a caller that raises.
    """
    graph = IndexedGraph(outputs)
    known = _known_by_name(graph, args, kwargs, "infer_shape")
    given = {k: _given_shape(graph.entry_name(k), v) for k, v in known.items()}
    if not is_np_shape():
        # MXNet's legacy reading: a shape of no dimensions is an unknown one, as infer_shape_partial
        # reports it, so that its results can be given back (under mx.np_shape it is a scalar's)
        given = {k: v for k, v in given.items() if v}
    by_node = {id(graph.nodes[i]): given[graph.entry(i)] for i in graph.variables() if graph.entry(i) in given}

    def inferred_with(default_length: int) -> tuple[list, list, bool]:
        expanded, at, defaulted = _expanded(
            graph, outputs, lambda heads: unroll(heads, shape_reader(by_node), default_length)
        )
        inferred = infer_shape_pass(expanded, {at[k]: v for k, v in given.items() if k in at})
        return inferred, _read_back(graph, at, inferred, given), defaulted

    # a loop of unknown length is written out twice, 1 and 2 steps long: the dims the two disagree
    # on follow the length and stay unknown (MXNet's foreach output (0, ...)); a loop whose length
    # is known (a while_loop's max_iterations, a foreach's data shape) is written out once
    inferred, shapes, defaulted = inferred_with(1)
    if defaulted:
        shapes = [_agreed(a, b) for a, b in zip(shapes, inferred_with(2)[1], strict=True)]
    if partial:
        return _split(graph, [_partial_shape(s) for s in shapes])
    ends = [*_variables(graph, shapes), *(shapes[e] for e in graph.heads)]
    if all(shape_known(s) for s in inferred) and all(s is not None and shape_known(s) for s in ends):
        return _split(graph, shapes)
    if warn:
        unknown = [s is None or not shape_known(s) for s in _split(graph, shapes)[0]]
        _warn_unknown(graph, "shape", unknown, _split(graph, [_partial_shape(s) for s in shapes])[0])
    return None, None, None


def shapes_to_bind(symbol: Any, shapes: dict, who: str, given: str = "", hint: str = "") -> tuple[list, list, list]:
    """The full shapes of ``symbol`` from the input ``shapes`` that a bind needs.

    When some stay unknown, a ``ShapeError`` from ``who`` names those arguments, and nothing
    is warned first (MXNet's bind raises alone; infer_shape's warning said the same thing with
    the shapes it did not know written as ``()``).
    """
    arg_shapes, out_shapes, aux_shapes = infer_shape(symbol._outputs, (), shapes, partial=False, warn=False)
    if arg_shapes is not None and out_shapes is not None and aux_shapes is not None:
        return arg_shapes, out_shapes, aux_shapes
    partial = infer_shape(symbol._outputs, (), shapes, partial=True)[0] or []
    names = symbol.list_arguments()
    unknown = [n for n, s in zip(names, partial, strict=False) if not s or not shape_known(s)]
    raise ShapeError(f"{who}: cannot infer the shapes of {unknown} from {given}{shapes}{hint}")


def infer_type(outputs: list[Entry], args: tuple, kwargs: dict, partial: bool) -> Triple:
    """``Symbol.infer_type`` (``partial``: ``infer_type_partial``) of the graph of ``outputs``, as NumPy types.

    Examples
    --------
    >>> import lazynd_sym as sym
    >>> c = sym.Variable("A") + sym.Variable("B")
    >>> infer_type(c._outputs, (), {"A": "float16"}, partial=False)[1]
    [<class 'numpy.float16'>]
    >>> infer_type(c._outputs, (), {}, partial=False), infer_type(c._outputs, (), {}, partial=True)[0]
    ((None, None, None), [None, None])
    """
    what = "infer_type_partial" if partial else "infer_type"
    graph = IndexedGraph(outputs)
    known = _known_by_name(graph, args, kwargs, what)
    expanded, at, _ = _expanded(graph, outputs, unroll_for_types)
    inferred, types = _types(graph, expanded, at, known, what)
    if partial:
        return _split(graph, [None if t is None else np.dtype(t).type for t in types])
    if any(t is None for t in inferred) or any(t is None for t in _variables(graph, types)):
        arg_types = _split(graph, types)[0]
        _warn_unknown(graph, "type", [t is None for t in arg_types], arg_types)
        return None, None, None
    return _split(graph, [np.dtype(t).type for t in types])


def types_to_bind(symbol: Any, type_dict: dict) -> tuple[list, list]:
    """The dtypes simple_bind gives the arguments and auxiliary states of ``symbol``: those of
    ``type_dict``, those inferred from them, and float32 (MXNet's default dtype) for the rest.

    An argument nothing decides is float32, and the types are inferred again from that, since an
    auxiliary state or another argument may follow it.  Both inferences run on one written-out graph.
    """
    graph = IndexedGraph(symbol._outputs)
    expanded, at, _ = _expanded(graph, symbol._outputs, unroll_for_types)
    given = dict(type_dict)

    def arg_and_aux_types() -> tuple[list, list]:
        known = _known_by_name(graph, (), given, "infer_type_partial")
        types = _types(graph, expanded, at, known, "infer_type_partial")[1]
        args, _, aux = _split(graph, [None if t is None else np.dtype(t).type for t in types])
        return args, aux

    arg_types, aux_types = arg_and_aux_types()
    if None not in arg_types + aux_types:
        return arg_types, aux_types
    for name, dtype in zip(symbol.list_arguments(), arg_types, strict=False):
        if dtype is None:
            given.setdefault(name, np.float32)
    arg_types, aux_types = arg_and_aux_types()
    return [np.float32 if t is None else t for t in arg_types], [np.float32 if t is None else t for t in aux_types]


def _types(graph: IndexedGraph, expanded: IndexedGraph, at: dict[int, int], known: dict, what: str) -> tuple:
    """The types inferred over ``expanded`` from those ``known`` of ``graph``'s entries, and what
    they are for ``graph``'s own entries (``expanded``: the loops written out one step long)."""
    given = {k: check_dtype_hint(v, f"{what}: {graph.entry_name(k)!r}") for k, v in known.items()}
    inferred = infer_type_pass(expanded, {at[k]: v for k, v in given.items() if k in at})
    return inferred, _read_back(graph, at, inferred, given)


def _warn_unknown(graph: IndexedGraph, what: str, unknown: list[bool], values: list) -> None:
    """Warn, as MXNet's infer_shape and infer_type do, naming the arguments (the first ten) whose
    ``what`` stays unknown, so a user whose call gave ``(None, None, None)`` sees which to give."""
    names = [graph.nodes[i].name for i in graph.variables() if id(graph.nodes[i]) not in graph.aux_ids]
    missing = [f"{name}: {value}" for name, value, u in zip(names, values, unknown, strict=True) if u]
    listed = "\n\t".join(missing[:10] + (["..."] if len(missing) > 10 else []))
    warn_from_user_code(
        f"infer_{what}: the {what} of these arguments cannot be inferred from what was given; give them:\n\t{listed}",
    )


def _expanded(graph: IndexedGraph, outputs: list[Entry], unrolled: Callable[[list[Entry]], Unrolled]) -> tuple:
    """The graph of ``outputs`` with its control flow written out by ``unrolled``, a map from the
    entries of ``graph``'s variables and heads to its own (``graph`` itself when it has no control
    flow), and whether a made-up length stood in for a loop's unknown one."""
    if not has_control_flow(outputs):
        return graph, {e: e for e in range(graph.num_entries)}, False
    written = unrolled(outputs)
    expanded = IndexedGraph(written.heads)
    # a variable only a loop passes through, unchanged, to an output nobody reads is not in the
    # expanded graph: it has no entry there
    at = {
        graph.entry(i): expanded.entry(expanded.index[id(graph.nodes[i])])
        for i in graph.variables()
        if id(graph.nodes[i]) in expanded.index
    }
    at.update(zip(graph.heads, expanded.heads, strict=True))
    return expanded, at, written.length_defaulted


def _read_back(graph: IndexedGraph, at: dict[int, int], values: list, given: dict[int, Any]) -> list:
    """``values`` of the expanded graph as values of ``graph``'s entries (its variables and heads);
    a variable the expanded graph does not read keeps what was ``given`` for it."""
    result: list[Any] = [given.get(e) for e in range(graph.num_entries)]
    for mine, theirs in at.items():
        result[mine] = values[theirs]
    return result


def _agreed(one: tuple | None, other: tuple | None) -> tuple | None:
    """A shape both inferences agree on, with an unknown dim (0, or -1 under ``mx.np_shape``) where they differ."""
    if one is None or other is None or len(one) != len(other):
        return None
    unknown = -1 if is_np_shape() else 0
    return tuple(a if a == b else unknown for a, b in zip(one, other, strict=True))


def _variables(graph: IndexedGraph, values: list) -> list:
    """The values of ``graph``'s variables (arguments and auxiliary states)."""
    return [values[graph.entry(i)] for i in graph.variables()]


def _known_by_name(graph: IndexedGraph, args: tuple, kwargs: dict, what: str) -> dict[int, Any]:
    """The values given, by graph entry: positionally for the arguments, or by the name of any input."""
    arg_nodes = [i for i in graph.variables() if id(graph.nodes[i]) not in graph.aux_ids]
    names = [graph.nodes[i].name for i in arg_nodes]
    known: dict[int, Any] = {}
    if args and kwargs:
        raise ArgumentValueError(f"{what}: give either positional or keyword arguments, not both")
    if len(args) > len(names):
        raise ArgumentValueError(f"{what}: {len(args)} positional values for {len(names)} arguments {names}")
    for i, value in zip(arg_nodes, args, strict=False):
        if value is not None:
            known[graph.entry(i)] = value
    # two variables may share a name (each made by its own ``Variable("a")``): as in MXNet, a value
    # given by that name is every one of theirs
    by_name: dict[str, list[int]] = {}
    for i in graph.variables():
        by_name.setdefault(graph.nodes[i].name, []).append(i)
    for key, value in kwargs.items():
        if key not in by_name:
            raise LazyNDError(f"{what}: {key!r} is not an input of the symbol; inputs are {list(by_name)}")
        if value is not None:
            known.update((graph.entry(i), value) for i in by_name[key])
    return known


def _split(graph: IndexedGraph, values: list) -> tuple[list, list, list]:
    """The values of every entry as ``(arguments, outputs, auxiliary states)``."""
    args: list[Any] = []
    aux: list[Any] = []
    for i in graph.variables():
        (aux if id(graph.nodes[i]) in graph.aux_ids else args).append(values[graph.entry(i)])
    return args, [values[e] for e in graph.heads], aux


def _partial_shape(shape: tuple[int, ...] | None) -> tuple[int, ...] | None:
    """An inferred shape as ``infer_shape_partial`` reports it: MXNet's legacy way (unknown size 0,
    unknown shape ``()``), or under ``mx.np_shape`` its NumPy-shape way (-1, as the pass has it, and None)."""
    if not is_np_shape():
        return () if shape is None else shape
    return shape


def _given_shape(name: str, value: Any) -> tuple[int, ...]:
    """A shape given to ``infer_shape``: a tuple or list of dimensions; -1 is an unknown one, and so
    is 0 outside ``mx.np_shape`` (as MXNet 1.9.1 reads them), where under it a 0 is a zero size."""
    if isinstance(value, (tuple, list)) and all(_is_dimension(d) for d in value):
        if is_np_shape():
            return tuple(int(d) for d in value)
        return tuple(max(int(d), 0) for d in value)
    raise ShapeError(
        f"infer_shape: the shape of {name!r} must be a tuple of dimensions >= 0 (-1: unknown, and 0 outside "
        f"mx.np_shape), got {value!r}"
    )


def _is_dimension(value: Any) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool) and int(value) >= -1
