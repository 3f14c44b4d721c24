"""The graph under a symbol: nodes, their output entries (which an index selects, a copy of them), and the
indexed view the passes work on."""

from __future__ import annotations

import bisect
import numbers
from collections.abc import Container, Iterable
from typing import Any

from lazynd.errors import ArgumentTypeError, IndexingError, OperatorError
from lazynd.ops.registry import OpDef

Entry = tuple["Node", int]


class Node:
    """One operator application or one variable (``op is None``).

    ``inputs`` holds the data inputs followed by the auxiliary states; ``params``
    keeps the operator parameters as given (strings in JSON), ``attrs`` the parsed
    values the kernels use, ``user`` the ``__xxx__`` attributes.
    """

    __slots__ = ("op", "name", "params", "attrs", "user", "inputs", "__weakref__")

    def __init__(
        self,
        op: OpDef | None,
        name: str,
        params: dict[str, str] | None = None,
        attrs: dict[str, Any] | None = None,
        user: dict[str, str] | None = None,
        inputs: list[Entry] | None = None,
    ) -> None:
        self.op = op
        self.name = name
        self.params = dict(params or {})
        self.attrs = dict(attrs or {})
        self.user = dict(user or {})
        self.inputs = list(inputs or [])

    @property
    def is_variable(self) -> bool:
        return self.op is None

    @property
    def opdef(self) -> OpDef:
        """The operator of an operator node; a variable node has none and raises."""
        op = self.op
        if op is None:
            raise TypeError(f"graph node {self.name!r} is a variable: it has no operator")
        return op

    def num_data_inputs(self) -> int:
        return len(self.inputs) - (len(self.op.aux) if self.op is not None else 0)

    def num_outputs(self) -> int:
        return 1 if self.op is None else self.op.num_outputs(self.attrs)

    def num_visible_outputs(self) -> int:
        return 1 if self.op is None else self.op.num_visible_outputs(self.attrs)

    def output_name(self, index: int) -> str:
        if self.op is None:
            return self.name
        return f"{self.name}_{self.op.output_names(self.attrs)[index]}"

    def monitor_name(self, index: int) -> str:
        """The name a monitor shows for output ``index``: MXNet's backward name
        (``fc1_backward_output0``) where the gradient pass gave one, else :meth:`output_name`."""
        backward = self.user.get("__backward_outputs__", "").split(",")
        if index < len(backward) and backward[index]:
            return backward[index]
        return self.output_name(index)

    def input_names(self) -> list[str]:
        op = self.opdef
        return op.input_names(self.attrs) + list(op.aux)


def topo_order(heads: Iterable[Entry], within: Container[int] | None = None) -> list[Node]:
    """Nodes reachable from ``heads`` in depth-first post-order (inputs before users); with ``within``
    (node ids), only the nodes in it, reached through nodes in it (a region of the graph)."""
    order: list[Node] = []
    seen: set[int] = set()
    for head, _ in heads:
        if id(head) in seen or (within is not None and id(head) not in within):
            continue
        stack: list[tuple[Node, int]] = [(head, 0)]
        seen.add(id(head))
        while stack:
            node, i = stack[-1]
            if i < len(node.inputs):
                stack[-1] = (node, i + 1)
                child = node.inputs[i][0]
                if id(child) not in seen and (within is None or id(child) in within):
                    seen.add(id(child))
                    stack.append((child, 0))
            else:
                stack.pop()
                order.append(node)
    return order


def child_entries(heads: Iterable[Entry]) -> list[Entry]:
    """The input entries of the nodes of ``heads``, each node once, in the heads' order (MXNet's
    ``get_children``: ``[x, x]`` for a group of ``relu(x)`` and ``sigmoid(x)``)."""
    seen: set[int] = set()
    children: list[Entry] = []
    for node, _ in heads:
        if id(node) not in seen:
            seen.add(id(node))
            children.extend(node.inputs)
    return children


def copied_graph(heads: list[Entry]) -> list[Entry]:
    """``heads`` over new nodes: the graph below them copied node by node (``copy.copy(symbol)``)."""
    memo: dict[int, Node] = {}
    for node in topo_order(heads):
        memo[id(node)] = Node(
            node.op, node.name, node.params, node.attrs, node.user, [(memo[id(c)], i) for c, i in node.inputs]
        )
    return [(memo[id(n)], i) for n, i in heads]


AMP_CAST_OPS = ("amp_cast", "amp_multicast")


def without_amp_casts(heads: list[Entry]) -> list[Entry]:
    """``heads`` over a copy of their graph in which every reader of an ``amp_cast`` or ``amp_multicast``
    output reads that cast's input instead (output ``k`` of a multicast: its input ``k``).

    What MXNet's ``tojson(remove_amp_cast=True)`` writes, so that a graph converted for mixed precision
    saves as the float32 graph it came from; a cast that is itself a head stays, as in MXNet.

    Examples:
        >>> from lazynd.ops import registry
        >>> data = Node(None, "data")
        >>> cast = Node(registry.get("amp_cast"), "c", {"dtype": "float16"}, inputs=[(data, 0)])
        >>> relu = Node(registry.get("relu"), "r", inputs=[(cast, 0)])
        >>> [n.name for n in topo_order(without_amp_casts([(relu, 0)]))]
        ['data', 'r']
    """
    order = topo_order(heads)
    if not any(node.op is not None and node.op.name in AMP_CAST_OPS for node in order):
        return heads  # the common graph, which every tojson() writes: nothing to copy
    memo: dict[int, Node] = {}

    def source(entry: Entry) -> Entry:
        child, k = entry
        copy = memo[id(child)]
        if copy.op is not None and copy.op.name in AMP_CAST_OPS:
            return copy.inputs[0 if copy.op.name == "amp_cast" else k]  # already bypassed below it
        return copy, k

    for node in order:
        inputs = [source(entry) for entry in node.inputs]
        memo[id(node)] = Node(node.op, node.name, node.params, node.attrs, node.user, inputs)
    return [(memo[id(n)], k) for n, k in heads]


def selected_outputs(outputs: list[Entry], names: list[str], index: int | str | slice) -> list[Entry]:
    """The entries of ``outputs`` (named ``names``) that ``index`` selects: a position (negative from
    the end), an output name, or a slice, with MXNet 1.x's errors (``IndexError``, ``ValueError``,
    ``TypeError``) for one that selects none.

    Examples:
        >>> selected_outputs([("a", 0), ("b", 0)], ["a_output", "b_output"], -1)
        [('b', 0)]
    """
    count = len(outputs)
    if isinstance(index, slice):
        if not (picked := [outputs[i] for i in range(*index.indices(count))]):
            raise OperatorError(f"output slice {index!r} selects none of the symbol's {count} output(s)")
        return picked
    if isinstance(index, str):
        if index not in names:
            raise OperatorError(f"symbol has no output named {index!r}; outputs are {names}")
        if names.count(index) > 1:  # as MXNet's: which one was meant is not known
            raise OperatorError(f"symbol has {names.count(index)} outputs named {index!r}; pick one by position")
        index = names.index(index)
    if not isinstance(index, numbers.Integral) or isinstance(index, bool):
        raise ArgumentTypeError(f"Symbol index: an int, an output name or a slice, not {type(index).__name__}")
    if not -count <= index < count:
        raise IndexingError(f"output index {index!r} out of range for a symbol with {count} output(s)")
    return [outputs[int(index)]]


def debug_text(heads: list[Entry]) -> str:
    """``Symbol.debug_str``: the outputs, the variables, and each operator with its inputs and parameters."""
    lines = ["Symbol Outputs:"]
    for i, (node, k) in enumerate(heads):
        lines.append(f"\toutput[{i}]={node.name}({k})")
    for node in topo_order(heads):
        if node.op is None:
            lines.append(f"Variable:{node.name}")
            continue
        lines += ["--------------------", f"Op:{node.op.name}, Name={node.name}", "Inputs:"]
        for j, (child, k) in enumerate(node.inputs):
            lines.append(f"\targ[{j}]={child.name}({k})" + (" version=0" if child.op is None else ""))
        if node.params:
            lines.append("Attrs:")
            lines += [f"\t{key}={value}" for key, value in node.params.items()]
    return "\n".join(lines) + "\n"


def refuse_operator_aux(node: Node) -> None:
    """Raise unless every auxiliary state of ``node`` is a variable.

    The operator updates its auxiliary states in place (BatchNorm's running mean and variance);
    an operator's output there would be overwritten under that operator's other readers. MXNet
    refuses it when composing ('Mutation target can only be Variable') and crashes running a file
    that holds one.
    """
    op = node.op
    if op is None or not op.aux:
        return
    for aux_name, (child, k) in zip(op.aux, node.inputs[node.num_data_inputs() :], strict=False):
        if child.op is not None:
            raise OperatorError(
                f"{op.name} {node.name!r}: auxiliary state {aux_name!r} must be a variable (the operator "
                f"updates it in place), got {child.output_name(k)!r}, an output of {child.op.name}"
            )


def aux_variables(nodes: Iterable[Node]) -> set[int]:
    """ids of the variables used as auxiliary states."""
    aux: set[int] = set()
    for node in nodes:
        if node.op is not None and node.op.aux:
            for child, _ in node.inputs[node.num_data_inputs() :]:
                aux.add(id(child))
    return aux


class IndexedGraph:
    """Nodes numbered in topological order and their output entries numbered densely.

    ``entry(node_index, output)`` is the entry id; ``attrs`` collects what passes
    compute (``shape``, ``dtype``, ``storage_id``...).
    """

    def __init__(self, heads: list[Entry]) -> None:
        self.nodes = topo_order(heads)
        self.index = {id(n): i for i, n in enumerate(self.nodes)}
        self.row_ptr = [0]
        for node in self.nodes:
            self.row_ptr.append(self.row_ptr[-1] + node.num_outputs())
        self.heads = [self.entry_of(e) for e in heads]
        self.aux_ids = aux_variables(self.nodes)
        self.attrs: dict[str, Any] = {}
        self._input_entries: list[tuple[int, ...]] | None = None

    @property
    def num_entries(self) -> int:
        return self.row_ptr[-1]

    def entry(self, node_index: int, output: int = 0) -> int:
        return self.row_ptr[node_index] + output

    def entry_of(self, entry: Entry) -> int:
        return self.row_ptr[self.index[id(entry[0])]] + entry[1]

    def input_entries(self, node_index: int) -> list[int]:
        # every pass asks this of every node, some once a sweep: the entry ids of all nodes are
        # worked out once, on the first question, not looked up (two dicts an input) each time
        if self._input_entries is None:
            index, row_ptr = self.index, self.row_ptr
            self._input_entries = [
                tuple(row_ptr[index[id(child)]] + k for child, k in node.inputs) for node in self.nodes
            ]
        return list(self._input_entries[node_index])

    def entry_name(self, eid: int) -> str:
        # the shape and type passes name both entries of every pair they merge, each sweep: a
        # search of row_ptr (sorted) keeps that from growing with nodes x pairs (seconds at bind)
        if not 0 <= eid < self.num_entries:
            raise IndexError(eid)
        i = bisect.bisect_right(self.row_ptr, eid) - 1
        return self.nodes[i].output_name(eid - self.row_ptr[i])

    def variables(self) -> list[int]:
        return [i for i, n in enumerate(self.nodes) if n.op is None]
