"""``mx.sym.contrib.foreach``, ``while_loop`` and ``cond``: control flow in a symbolic graph.

Each function calls the user's functions once, on placeholder variables standing for a step's
slice of the data and for the loop states (as MXNet does), and records one control-flow node
(``_foreach0``, ``_while_loop0``, ``_cond0``, named and with outputs named as MXNet 1.9.1's) whose
inputs are the outer entries the body reads: the data, the states, then the outer symbols the body
closes over (weights...), in MXNet's order, so ``list_arguments`` answers as MXNet's.  The node is
never run: :mod:`lazynd_sym.passes.expand_control_flow` writes it out into ordinary operators once
the shapes are known (at bind, ``infer_shape`` and ``infer_type``).

A body node is one that depends on a placeholder; the entries such nodes read from outside the
body are its *boundary*, shared by every copy the expansion makes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from lazynd.errors import LazyNDError, OperatorError
from lazynd.ndarray.control_flow import _check_callable, _flatten, _regroup, _split_step
from lazynd.ops.opdef import OpDef

from .graph import Entry, Node
from .name import NameManager
from .symbol import Symbol


@dataclass(frozen=True)
class Subgraph:
    """A body captured once: its outputs, its operator nodes (inputs first), and its boundary."""

    heads: list[Entry]
    nodes: list[Node]
    boundary: list[Entry]  # in the control-flow node's input order

    def clone(self, substitutes: list[Entry]) -> list[Entry]:
        """The body's outputs in a fresh copy whose boundary entry ``i`` reads ``substitutes[i]``."""
        mapping = {(id(node), k): entry for (node, k), entry in zip(self.boundary, substitutes, strict=True)}
        copies: dict[int, Node] = {}

        def resolve(entry: Entry) -> Entry:
            node, k = entry
            if id(node) in copies:
                return copies[id(node)], k
            return mapping[(id(node), k)]

        for node in self.nodes:
            copies[id(node)] = Node(
                node.op, node.name, node.params, node.attrs, node.user, [resolve(e) for e in node.inputs]
            )
        return [resolve(e) for e in self.heads]


def capture(heads: list[Entry], placeholders: list[Node], first: list[Entry]) -> Subgraph:
    """The subgraph of ``heads`` that depends on ``placeholders``; ``first`` opens its boundary.

    The rest of the boundary follows in the order a depth-first walk from ``heads`` meets it
    (MXNet's ``list_inputs`` order of the body graph).
    """
    inside = {id(p) for p in placeholders}
    nodes: list[Node] = []
    seen: set[int] = set()
    boundary = list(first)
    noted = {(id(n), k) for n, k in first}

    def note(entry: Entry) -> None:
        key = (id(entry[0]), entry[1])
        if key not in noted:
            noted.add(key)
            boundary.append(entry)

    verdict: dict[int, bool] = {}  # id(node) -> whether it depends on a placeholder

    def depends(node: Node) -> bool:
        # iterative: outer graphs the body closes over may be deep
        stack = [node]
        while stack:
            top = stack[-1]
            pending = [c for c, _ in top.inputs if id(c) not in verdict and id(c) not in inside]
            if pending:
                stack.extend(pending)
                continue
            stack.pop()
            verdict[id(top)] = id(top) in inside or any(id(c) in inside or verdict[id(c)] for c, _ in top.inputs)
        return verdict[id(node)]

    for head in heads:  # depth-first, post-order, stopping at the boundary
        stack: list[tuple[Node, int]] = []
        if id(head[0]) in inside or not depends(head[0]):
            note(head)
        elif id(head[0]) not in seen:
            stack.append((head[0], 0))
            seen.add(id(head[0]))
        while stack:
            node, i = stack[-1]
            if i < len(node.inputs):
                stack[-1] = (node, i + 1)
                child, k = node.inputs[i]
                if id(child) in inside or not depends(child):
                    note((child, k))
                elif id(child) not in seen:
                    seen.add(id(child))
                    stack.append((child, 0))
            else:
                stack.pop()
                nodes.append(node)
    return Subgraph(list(heads), nodes, boundary)


def _refuse_run(*_: Any) -> None:
    raise LazyNDError("a control-flow node runs only once expanded (lazynd_sym.passes.expand_control_flow)")


def _output_names(attrs: dict) -> list[str]:
    count = attrs["num_outputs"]
    return ["output"] if count == 1 else [f"output{i}" for i in range(count)]


def _refuse_infer(attrs: dict, *_: Any, **__: Any) -> Any:
    raise LazyNDError(f"{attrs['kind']}: shapes and types are inferred on the expanded graph")


def _control_flow_op(kind: str) -> OpDef:
    return OpDef(
        f"_{kind}",
        _refuse_run,
        inputs=lambda attrs: [f"data{i}" for i in range(attrs["num_inputs"])],
        outputs=_output_names,
        infer_shape=_refuse_infer,
        infer_type=_refuse_infer,
        doc=f"MXNet's ``_{kind}``: a subgraph operator, expanded before anything runs.",
    )


# not registered: these nodes exist only until the expansion pass writes them out
CONTROL_FLOW_OPS: dict[str, OpDef] = {kind: _control_flow_op(kind) for kind in ("foreach", "while_loop", "cond")}


def is_control_flow(node: Node) -> bool:
    return node.op is not None and any(node.op is op for op in CONTROL_FLOW_OPS.values())


def _node(kind: str, inputs: list[Entry], num_outputs: int, **attrs: Any) -> list[Symbol]:
    name = NameManager.current.get(None, f"_{kind}")
    attrs.update(kind=kind, num_inputs=len(inputs), num_outputs=num_outputs)
    node = Node(CONTROL_FLOW_OPS[kind], name, {}, attrs, {}, inputs)
    return [Symbol([(node, i)]) for i in range(num_outputs)]


def _placeholders(symbols: list[Symbol], where: str, what: str) -> list[Node]:
    nodes = []
    for i, symbol in enumerate(symbols):
        if len(symbol._outputs) != 1:
            raise OperatorError(f"{where}: {what}[{i}] is a group of {len(symbol._outputs)} outputs, expected one")
        node, k = symbol._outputs[0]
        nodes.append(Node(None, f"{node.name}-{k}"))  # MXNet's name for the placeholder of an entry
    return nodes


def _entries(symbols: list[Symbol]) -> list[Entry]:
    return [s._outputs[0] for s in symbols]


def _flat_symbols(value: Any, where: str, what: str) -> tuple[list[Symbol], Any]:
    flat, form = _flatten(value, where, what, Symbol)
    for i, symbol in enumerate(flat):
        if len(symbol._outputs) != 1:
            raise OperatorError(f"{where}: {what} item {i} is a group of {len(symbol._outputs)} outputs, expected one")
    return flat, form


def foreach(body: Callable[[Any, Any], tuple[Any, Any]], data: Any, init_states: Any, name: str = "foreach") -> Any:
    """``out, states = body(data[i], states)`` for each step ``i`` along axis 0 of ``data``, as a graph.

    Returns ``(outputs, states)`` as :func:`lazynd.ndarray.contrib.foreach` does: each output
    stacked along a new axis 0 (nested as the body gave them), the states of the last step.

    Examples
    --------
    >>> import lazynd as mx
    >>> x, h = mx.sym.var("x"), mx.sym.var("h")
    >>> out, states = mx.sym.contrib.foreach(lambda d, s: (d + s[0], [s[0] * 2]), x, [h])
    >>> mx.sym.Group([out] + states).list_arguments()
    ['x', 'h']
    """
    where = "foreach"
    _check_callable(body, where, "'body'")
    sequences, data_form = _flat_symbols(data, where, "'data'")
    if data_form is not None and any(form is not None for form in data_form):
        raise OperatorError(f"{where}: 'data' must be a Symbol or a flat list of Symbols, got a nested list")
    states, state_form = _flat_symbols(init_states, where, "'init_states'")
    data_nodes = _placeholders(sequences, where, "'data'")
    state_nodes = _placeholders(states, where, "'init_states'")
    step_data = [Symbol([(n, 0)]) for n in data_nodes]
    step_states = [Symbol([(n, 0)]) for n in state_nodes]
    outs, new_states = _split_step(
        body(step_data[0] if data_form is None else step_data, _regroup(step_states, state_form)), where, "'body'"
    )
    flat_outs, out_form = _flat_symbols(outs, where, "the outputs of 'body'")
    flat_new, _ = _flat_symbols(new_states, where, "the states 'body' returns")
    if len(flat_new) != len(states):
        raise OperatorError(f"{where}: 'body' returned {len(flat_new)} states, expected {len(states)} as 'init_states'")
    first = [(n, 0) for n in data_nodes + state_nodes]
    subgraph = capture(_entries(flat_outs + flat_new), data_nodes + state_nodes, first)
    read = {id(c) for n in subgraph.nodes for c, _ in n.inputs} | {id(n) for n, _ in subgraph.heads}
    for what, nodes in (("data", data_nodes), ("init_states", state_nodes)):
        unused = [i for i, n in enumerate(nodes) if id(n) not in read]
        if unused:
            raise OperatorError(
                f"{where}: 'body' does not use '{what}' item(s) {unused}; as in MXNet, each must be used"
            )
    inputs = _entries(sequences + states) + subgraph.boundary[len(first) :]
    results = _node(
        "foreach", inputs, len(flat_outs) + len(states), subgraph=subgraph,
        num_data=len(sequences), num_states=len(states), num_out_data=len(flat_outs),
    )  # fmt: skip
    return _regroup(results[: len(flat_outs)], out_form), _regroup(results[len(flat_outs) :], state_form)


def while_loop(
    cond: Callable[..., Any], func: Callable[..., tuple[Any, Any]], loop_vars: Any,
    max_iterations: int | None = None, name: str = "while_loop",
) -> tuple[Any, Any]:  # fmt: skip
    """``step_output, loop_vars = func(*loop_vars)`` while ``cond(*loop_vars)``, at most ``max_iterations`` times.

    The graph holds ``max_iterations`` guarded steps: the stacked outputs have that many rows
    (rows past the last step are zeros; MXNet leaves them undefined), the loop variables are
    those of the last step run.

    Examples
    --------
    >>> import lazynd as mx
    >>> i, s = mx.sym.var("i"), mx.sym.var("s")
    >>> with mx.sym.NameManager():  # automatic names counted from zero
    ...     outs, final = mx.sym.contrib.while_loop(
    ...         lambda i, s: i <= 3, lambda i, s: ([i + s], [i + 1, s + i]), [i, s], max_iterations=5)
    >>> mx.sym.Group(outs + final).list_outputs()
    ['_while_loop0_output0', '_while_loop0_output1', '_while_loop0_output2']
    """
    where = "while_loop"
    _check_callable(cond, where, "'cond'")
    _check_callable(func, where, "'func'")
    if max_iterations is None:
        raise OperatorError(f"{where}: 'max_iterations' must be given (the stacked outputs have that many rows)")
    if isinstance(max_iterations, bool) or not isinstance(max_iterations, int) or max_iterations < 1:
        raise OperatorError(f"{where}: 'max_iterations' must be an integer >= 1, got {max_iterations!r}")
    variables, var_form = _flat_symbols(loop_vars, where, "'loop_vars'")
    if not variables:
        raise OperatorError(f"{where}: 'loop_vars' must hold at least one Symbol")
    var_nodes = _placeholders(variables, where, "'loop_vars'")
    step_vars = _regroup([Symbol([(n, 0)]) for n in var_nodes], var_form)
    step_vars = step_vars if isinstance(step_vars, list) else [step_vars]
    condition = cond(*step_vars)
    if not isinstance(condition, Symbol) or len(condition._outputs) != 1:
        raise OperatorError(f"{where}: 'cond' must return one Symbol, got {type(condition).__name__}")
    step_output, new_vars = _split_step(func(*step_vars), where, "'func'")
    flat_outs, out_form = _flat_symbols([] if step_output is None else step_output, where, "the step outputs of 'func'")
    flat_new, _ = _flat_symbols([] if new_vars is None else new_vars, where, "the loop variables 'func' returns")
    if len(flat_new) != len(variables):
        raise OperatorError(
            f"{where}: 'func' returned {len(flat_new)} loop variables, expected {len(variables)} as 'loop_vars'"
        )
    subgraph = capture(_entries([condition] + flat_outs + flat_new), var_nodes, [])
    missing = [(n, 0) for n in var_nodes if (n, 0) not in subgraph.boundary]
    subgraph = Subgraph(subgraph.heads, subgraph.nodes, subgraph.boundary + missing)
    positions = [next(j for j, (n, _) in enumerate(subgraph.boundary) if n is v) for v in var_nodes]
    inputs = [variables[var_nodes.index(n)]._outputs[0] if n in var_nodes else (n, k) for n, k in subgraph.boundary]
    results = _node(
        "while_loop", inputs, len(flat_outs) + len(variables), subgraph=subgraph, var_positions=positions,
        num_out_data=len(flat_outs), max_iterations=max_iterations,
    )  # fmt: skip
    outputs = _regroup(results[: len(flat_outs)], out_form) if flat_outs else []
    final = _regroup(results[len(flat_outs) :], var_form)
    return outputs, final


def cond(pred: Symbol, then_func: Callable[[], Any], else_func: Callable[[], Any], name: str = "cond") -> Any:
    """``then_func()`` where ``pred`` (a one-element Symbol) is nonzero, else ``else_func()``, as a graph.

    Both branches are in the graph; the output selects one, so the gradient reaches only the branch taken.

    Examples
    --------
    >>> import lazynd as mx
    >>> a, b = mx.sym.var("a"), mx.sym.var("b")
    >>> out = mx.sym.contrib.cond(a * b < 5, lambda: (a + 5) * (b + 5), lambda: (a - 5) * (b - 5))
    >>> out.list_arguments()
    ['a', 'b']
    """
    where = "cond"
    _check_callable(then_func, where, "'then_func'")
    _check_callable(else_func, where, "'else_func'")
    if not isinstance(pred, Symbol) or len(pred._outputs) != 1:
        raise OperatorError(f"{where}: 'pred' must be a Symbol with one output, got {type(pred).__name__}")
    then_outs, then_form = _flat_symbols(then_func(), where, "the outputs of 'then_func'")
    else_outs, else_form = _flat_symbols(else_func(), where, "the outputs of 'else_func'")
    if len(then_outs) != len(else_outs):
        raise OperatorError(
            f"{where}: 'then_func' returned {len(then_outs)} outputs and 'else_func' {len(else_outs)}, expected the same"
        )
    results = _node("cond", _entries([pred] + then_outs + else_outs), len(then_outs))
    return _regroup(results, then_form)


FUNCTIONS: dict[str, Callable[..., Any]] = {"foreach": foreach, "while_loop": while_loop, "cond": cond}
