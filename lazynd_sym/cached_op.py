"""``mx.nd.CachedOp``: a symbol called as one imperative function (MXNet 1.x's API; Gluon's hybridize uses it).

Calling a ``CachedOp`` with NDArrays runs the symbol's operators one by one through ``mx.nd``, in
the graph's order, so a call is an ordinary sequence of lazy operator calls: the engine overlaps
them, and inside ``autograd.record()`` each is recorded and ``backward`` reaches the inputs.  The
graph's order, its variables and its outputs are worked out once, when the ``CachedOp`` is made.
"""

from __future__ import annotations

from typing import Any

import lazynd as mx
from lazynd.errors import LazyNDError

from .graph import Entry, Node, topo_order
from .passes.expand_control_flow import expand_control_flow, has_control_flow, shape_reader
from .symbol import Symbol

# MXNet's CachedOp flags; they tune MXNet's own memory planning and bulking, which lazynd's engine
# and plan cache do on their own, so they are taken and have no effect
KNOWN_FLAGS = frozenset(
    ("static_alloc", "static_shape", "inline_limit", "forward_bulk_size", "backward_bulk_size")
    + ("data_indices", "param_indices", "is_dynamic")
)


class CachedOp:
    """A symbol run as a function of its inputs (``sym.list_inputs()``, in that order).

    Examples
    --------
    >>> import lazynd as mx
    >>> x, y = mx.sym.var("x"), mx.sym.var("y")
    >>> op = mx.nd.CachedOp(x * 2 + y)
    >>> op(mx.nd.array([1.0, 2.0]), mx.nd.array([10.0, 20.0])).asnumpy()
    array([12., 24.], dtype=float32)
    """

    def __init__(self, sym: Symbol, flags: Any = ()) -> None:
        if not isinstance(sym, Symbol):
            raise LazyNDError(f"CachedOp: expected a Symbol, got {type(sym).__name__}")
        self.flags = dict(flags)
        unknown = sorted(set(self.flags) - KNOWN_FLAGS)
        if unknown:
            raise LazyNDError(f"CachedOp: unknown flag(s) {unknown} (allowed: {sorted(KNOWN_FLAGS)})")
        self._outputs = list(sym._outputs)
        self._order: list[Node] = sym._nodes()
        self._variables = [node for node in self._order if node.is_variable]
        self._input_names = [node.name for node in self._variables]
        # a graph with control flow (foreach, while_loop, cond) runs written out for its inputs' shapes
        self._has_control_flow = has_control_flow(self._outputs)
        self._expanded: dict[tuple, tuple[list[Node], list[Entry]]] = {}

    def __call__(self, *args: Any, out: Any = None, default_ctx: Any = None) -> Any:
        """The symbol's output (or list of outputs) for the inputs ``args``; written into ``out`` when given.

        ``default_ctx`` is taken for MXNet's signature: the operators run where their inputs are.
        """
        if len(args) != len(self._variables):
            raise LazyNDError(
                f"CachedOp: expected {len(self._variables)} input(s) {self._input_names}, got {len(args)}"
            )
        values: dict[int, list[Any]] = {}
        for node, array in zip(self._variables, args, strict=True):
            if not isinstance(array, mx.nd.NDArray):
                raise LazyNDError(f"CachedOp: input '{node.name}' must be an NDArray, got {type(array).__name__}")
            values[id(node)] = [array]
        order, outputs = self._graph_for(args)
        for node in order:
            if not node.is_variable:
                inputs = [_output(values, entry) for entry in node.inputs]
                result = getattr(mx.nd.op, node.opdef.name)(*inputs, **node.params)
                values[id(node)] = list(result) if isinstance(result, (list, tuple)) else [result]
        results = [_output(values, entry) for entry in outputs]
        if out is None:
            return results[0] if len(results) == 1 else results
        targets = list(out) if isinstance(out, (list, tuple)) else [out]
        if len(targets) != len(results):
            raise LazyNDError(f"CachedOp: out has {len(targets)} array(s), the symbol has {len(results)} output(s)")
        for result, target in zip(results, targets, strict=True):
            result.copyto(target)
        return out

    def _graph_for(self, args: tuple) -> tuple[list[Node], list[Entry]]:
        """The nodes to run, in order, and the outputs: the symbol's own, or, with control flow, the
        graph written out for the shapes of ``args`` (once per set of shapes)."""
        if not self._has_control_flow:
            return self._order, self._outputs
        shapes = tuple(tuple(a.shape) for a in args)
        if shapes not in self._expanded:
            known = {id(node): shape for node, shape in zip(self._variables, shapes, strict=True)}
            outputs = expand_control_flow(self._outputs, shape_reader(known))
            self._expanded[shapes] = (topo_order(outputs), outputs)
        return self._expanded[shapes]


def _output(values: dict[int, list[Any]], entry: tuple[Node, int]) -> Any:
    node, index = entry
    outputs = values[id(node)]
    if index >= len(outputs):
        raise LazyNDError(f"CachedOp: output {index} of '{node.name}' is internal to its operator and cannot be read")
    return outputs[index]
