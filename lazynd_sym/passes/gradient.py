"""The gradient pass: append the backward graph built from each operator's gradient rule.

Gradients are written with the symbol namespace (``F = lazynd_sym``), so the rule an
operator gives for imperative use serves here too.  An entry read by several nodes
receives the sum of their gradients (many terms: a chain of adds, :mod:`.gradient_sum`).
"""

from __future__ import annotations

from contextlib import nullcontext
from typing import Any

from lazynd.errors import OperatorError

from ..graph import Entry, Node, topo_order
from .gradient_sum import sum_gradient_terms


class GradientResult:
    """What the pass adds: one gradient entry per requested variable, and the head-gradient variables.

    ``grads[k]`` is the entry holding d(heads)/d(wrt[k]) (None when no gradient reaches
    it); ``head_grads`` lists ``(output index, variable node)`` for outputs that take
    a gradient from the caller (loss outputs take none).
    """

    def __init__(self, grads: list[Entry | None], head_grads: list[tuple[int, Node]]) -> None:
        self.grads = grads
        self.head_grads = head_grads


def gradient(outputs: list[Entry], wrt: list[Node]) -> GradientResult:
    """Build gradient entries of ``outputs`` with respect to the variables ``wrt``.

    Examples
    --------
    >>> import lazynd_sym as sym
    >>> a = sym.Variable("a")
    >>> out = a * a
    >>> result = gradient(out._outputs, [a._outputs[0][0]])
    >>> len(result.head_grads), result.grads[0] is not None
    (1, True)
    """
    import lazynd_sym

    F: Any = lazynd_sym  # the operator functions are module attributes made at import time
    from ..attribute import AttrScope
    from ..name import Prefix
    from ..symbol import Symbol

    grads: dict[tuple[int, int], list[Any]] = {}
    head_grads: list[tuple[int, Node]] = []
    with Prefix("_grad_"):
        for k, (node, i) in enumerate(outputs):
            if node.op is not None and node.op.is_loss:
                continue
            var = Node(None, f"{node.output_name(i)}_head_grad")
            head_grads.append((k, var))
            grads.setdefault((id(node), i), []).append(Symbol([(var, 0)]))
        forward_nodes = topo_order(outputs)
        # every loss operator is a source of gradient, a head or not: its rule reads no head
        # gradient, so a BlockGrad above it (``BlockGrad(MakeLoss(x))``) leaves it one, as in MXNet
        losses = {id(n) for n in forward_nodes if n.op is not None and n.op.is_loss}
        forward_ids = {id(n) for n in forward_nodes}
        for node in reversed(forward_nodes):
            if node.op is None:
                continue
            out_grads = [grads.get((id(node), i)) for i in range(node.num_outputs())]
            if not any(out_grads) and id(node) not in losses:
                continue
            if node.op.gradient is None:
                raise OperatorError(f"gradient: operator {node.op.name} (node '{node.name}') has no gradient rule")
            summed: list[Any] = []
            for i, terms in enumerate(out_grads):
                if terms:
                    summed.append(sum_gradient_terms(F, terms))
                elif i < node.num_visible_outputs() and id(node) not in losses:
                    summed.append(F.zeros_like(Symbol([(node, i)])))  # not x * 0: inf * 0 is nan
                else:
                    summed.append(None)
            n_data = node.num_data_inputs()
            inputs = [Symbol([e]) for e in node.inputs[:n_data]]
            outs = [Symbol([(node, i)]) for i in range(node.num_outputs())]
            # gradient nodes run in the forward node's ctx_group (device placement)
            group = node.user.get("__ctx_group__")
            with AttrScope(__ctx_group__=group) if group is not None else nullcontext():
                result = node.op.gradient(F, node.attrs, inputs, outs, summed)
            if len(result) != n_data:
                raise OperatorError(
                    f"gradient: rule of {node.op.name} returned {len(result)} gradients for {n_data} inputs"
                )
            _name_backward_outputs(node, result, forward_ids)
            for (child, j), g in zip(node.inputs[:n_data], result, strict=False):
                if g is not None:
                    grads.setdefault((id(child), j), []).append(g)
        final: list[Entry | None] = []
        for var in wrt:
            terms = grads.get((id(var), 0))
            final.append(sum_gradient_terms(F, terms)._outputs[0] if terms else None)
    return GradientResult(final, head_grads)


def _name_backward_outputs(node: Node, result: list[Any], forward_ids: set[int]) -> None:
    """Name the entries a gradient rule returned for ``node`` as MXNet 1.9.1's monitor does.

    MXNet runs one backward node per forward node, named ``<node>_backward``, whose output
    ``j`` is the gradient of input ``j``: ``fc1_backward_output1`` (``..._output`` when the
    node has one data input).  The name of each returned entry is kept in the producing
    node's ``__backward_outputs__`` attribute (one name per output, comma-separated; empty
    for the others) and the forward node's name in ``__backward_of__``; an entry some earlier
    rule or a forward node produced keeps its name.
    """
    several = len(result) > 1
    for j, g in enumerate(result):
        if g is None:
            continue
        child, k = g._outputs[0]
        if child.op is None or id(child) in forward_ids or "__backward_outputs__" in child.user:
            continue
        names = [""] * child.num_outputs()
        names[k] = f"{node.name}_backward_output{j}" if several else f"{node.name}_backward_output"
        for j2, g2 in enumerate(result[j + 1 :], start=j + 1):  # one node may give several gradients
            if g2 is not None and g2._outputs[0][0] is child and not names[g2._outputs[0][1]]:
                names[g2._outputs[0][1]] = f"{node.name}_backward_output{j2}"
        child.user["__backward_outputs__"] = ",".join(names)
        child.user["__backward_of__"] = node.name
