"""``mx.autograd.get_symbol``: the computation autograd recorded, as a symbol (MXNet 1.x's API).

The recorded graph (:mod:`lazynd.autograd.graph`) already holds what a symbol needs: each
recorded operator call keeps its operator and parsed parameters, and each input is either the
output of another recorded call, a variable (``attach_grad``), or a constant (an array
autograd never saw).  :func:`get_symbol` walks it from one array, as MXNet does, and names the
nodes as MXNet does: the free inputs ``var0``, ``var1``... for the variables and ``null0``...
for the constants, in one count, and the operators ``node_0``, ``node_1``...

Of what is recorded outside registered operators, a reshaped view becomes ``Reshape``, a view by
basic indexing ``slice`` then ``Reshape`` (as MXNet records it), a concatenation ``Concat`` and a
copy ``_copy`` (``Cast`` into another dtype); the others (assignments, an ``autograd.Function``)
have no symbol form here and are refused by name.
"""

from __future__ import annotations

from typing import Any

from lazynd.autograd.graph import Leaf, Node
from lazynd.errors import LazyNDError
from lazynd.ndarray import NDArray
from lazynd.ops import registry

from .creation import _param_text
from .graph import Entry
from .graph import Node as SymNode
from .symbol import Symbol


def _recorded(node: Node) -> Node:
    """``node``, whose arrays the conversion reads: refused once a backward has freed them."""
    if node.freed:
        raise LazyNDError(
            f"autograd.get_symbol: the graph recorded for '{node.name}' was freed by a backward; "
            "pass retain_graph=True to backward, or call get_symbol before it"
        )
    return node


def _view_operators(node: Node) -> list[tuple[str, dict[str, Any]]]:
    """``parent[key]`` (basic indexing) as ``slice`` of the indexed axes, then ``Reshape`` to the view's
    shape (which drops the axes an integer picks and adds those a None makes), as MXNet records it."""
    key = node.attrs["key"]
    key = key if isinstance(key, tuple) else (key,)
    ndim = len(_recorded(node).inputs[0].shape)
    if Ellipsis in key:
        at = key.index(Ellipsis)
        rest = key[at + 1 :]
        fill = ndim - sum(1 for k in key if k is not None and k is not Ellipsis)
        key = (*key[:at], *(slice(None),) * fill, *rest)
    begin, end, step = [], [], []
    for k in key:
        if k is None:  # a new axis: the Reshape adds it
            continue
        if isinstance(k, slice):
            begin.append(k.start)
            end.append(k.stop)
            step.append(k.step)
        else:  # an integer: that one row (the Reshape drops the axis)
            k = int(k)
            begin.append(k)
            end.append(k + 1 if k != -1 else None)
            step.append(None)
    operators = []
    if any(v is not None for v in (*begin, *end, *step)):
        operators.append(("slice", {"begin": tuple(begin), "end": tuple(end), "step": tuple(step)}))
    operators.append(("Reshape", {"shape": tuple(node.outputs[0].shape)}))
    return operators


def _copy_operators(node: Node) -> list[tuple[str, dict[str, Any]]]:
    """A copy (``copy()``, ``copyto``, ``astype`` into another array) as ``_copy``, or ``Cast`` where the
    dtype changes: the values a symbol can say (not the device the copy went to)."""
    source, target = _recorded(node).inputs[0], node.outputs[0]
    if source.dtype != target.dtype:
        return [("Cast", {"dtype": target.dtype})]
    return [("_copy", {})]


# the recorded nodes made outside registered operators that have a symbol form: the operators
# that compute the same, one after the other, and their parameters
_AS_OPERATORS = {
    "_copyto": _copy_operators,
    "reshape": lambda node: [("Reshape", {"shape": tuple(_recorded(node).outputs[0].shape)})],
    "__getitem__": _view_operators,
    "concatenate": lambda node: [("Concat", {"num_args": len(node.entries), "dim": node.attrs["axis"]})],
}


class _Builder:
    """One walk of a recorded graph, making one symbol node per recorded node, variable and constant."""

    def __init__(self) -> None:
        self.made: dict[int, SymNode] = {}  # id of a recorded Node or Leaf -> its symbol node
        self.free_inputs = 0  # the count shared by var<k> and null<k>
        self.operators = 0

    def _free_input(self, prefix: str) -> SymNode:
        node = SymNode(None, f"{prefix}{self.free_inputs}")
        self.free_inputs += 1
        return node

    def entry(self, entry: Any) -> Entry:
        """The symbol entry of the recorded entry ``entry`` (None: a constant), with everything it reads.

        A walk depth first, inputs in order, without recursion (a long recorded loop is a deep
        graph): a free input is named where the walk meets it, an operator once its inputs are
        made, which is MXNet's order.
        """
        if entry is None:
            return (self._free_input("null"), 0)
        head = self._known(entry[0])
        if head is None:
            stack: list[list[Any]] = [[entry[0], 0, []]]  # node, next input, its inputs' entries so far
            while stack:
                frame = stack[-1]
                node, k, inputs = frame
                entries = node.entries
                while k < len(entries):
                    e = entries[k]
                    if e is None:
                        inputs.append((self._free_input("null"), 0))
                    else:
                        made = self._known(e[0])
                        if made is None:
                            break  # an operator not made yet: make it first
                        inputs.append((made, e[1]))
                    k += 1
                frame[1] = k
                if k < len(entries):
                    stack.append([entries[k][0], 0, []])
                    continue
                stack.pop()
                self.made[id(node)] = self._operator(node, inputs)
            head = self.made[id(entry[0])]
        return (head, entry[1])

    def _known(self, owner: Any) -> SymNode | None:
        """The symbol node of a recorded node or variable already made (a variable is made at once)."""
        made = self.made.get(id(owner))
        if made is None and owner.__class__ is Leaf:
            made = self.made[id(owner)] = self._free_input("var")
        return made

    def _operator(self, node: Node, inputs: list[Entry]) -> SymNode:
        if node.op is not None:
            return self._node(node.op, dict(node.attrs), inputs)
        convert = _AS_OPERATORS.get(node.name) if node.plan is None and node.rule is not None else None
        if convert is None:
            raise LazyNDError(
                f"autograd.get_symbol: the recorded graph holds '{node.name}', which has no symbol form here "
                "(assignments and autograd.Function are recorded for gradients only)"
            )
        made = None
        for name, given in convert(node):
            op = registry.get(name)
            made = self._node(op, op.parse(given), inputs)
            inputs = [(made, 0)]
        assert made is not None
        return made

    def _node(self, op: Any, attrs: dict[str, Any], inputs: list[Entry]) -> SymNode:
        """A symbol node of operator ``op`` with parsed parameters ``attrs`` on ``inputs``, named next."""
        op = op.specialize(attrs)
        # auxiliary states (BatchNorm's moving statistics) are not recorded: free inputs of their own
        inputs = inputs + [(self._free_input("null"), 0) for _ in op.aux]
        params = {name: _param_text(value) for name, value in attrs.items() if name in op.params}
        made = SymNode(op, f"node_{self.operators}", params, attrs, {}, inputs)
        self.operators += 1
        return made


def get_symbol(x: Any) -> Symbol:
    """The recorded computation of ``x`` as a :class:`~lazynd_sym.Symbol`.

    ``x`` must be the result of operations recorded by :func:`lazynd.autograd.record`.  The
    symbol's arguments are the variables (``var0``...) and constants (``null<k>``) the
    computation read, named as MXNet names them; the operators' nodes are ``node_0``...

    Examples
    --------
    >>> import lazynd as mx
    >>> x = mx.nd.array([1.0, 2.0])
    >>> x.attach_grad()
    >>> with mx.autograd.record():
    ...     y = mx.nd.relu(x * 2)
    >>> s = mx.autograd.get_symbol(y)
    >>> s.list_arguments(), s.list_outputs()
    (['var0'], ['node_1_output'])
    >>> s.eval(var0=mx.nd.array([-1.0, 3.0]))[0].asnumpy()
    array([0., 6.], dtype=float32)
    """
    if not isinstance(x, NDArray):
        raise LazyNDError(f"autograd.get_symbol: x must be an NDArray, got {type(x).__name__}")
    entry = x._ag
    if entry is None:
        raise LazyNDError(
            f"autograd.get_symbol: x (shape {x.shape}) is not in a recorded graph: compute it inside "
            "autograd.record() from arrays marked with attach_grad()"
        )
    return Symbol([_Builder().entry(entry)])
