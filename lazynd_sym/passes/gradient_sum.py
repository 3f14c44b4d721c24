"""Gradient sums of many terms: a chain of in-place adds, each run as soon as its term is made.

An entry read by ``n`` nodes receives ``n`` gradient terms.  Summed by one n-ary node
(``ElementWiseSum``), every term lives until the last one is made: the four weights an LSTM
unrolled 35 steps shares kept 35 gradients each alive to the end of the backward pass, and its
training bind planned 66 MB where MXNet plans 25.  From :func:`chain_cap` terms on (8, as MXNet),
the gradient pass sums them as MXNet does, in a chain of ``_grad_add`` nodes in the order the
terms come: each link adds one term into the running sum, and takes the sum's block (its
operator's in-place option, which the memory plan honours).  Fewer terms keep the n-ary sum, one
step where a chain takes ``n - 1``.

A chain only saves memory when each link runs as soon as its term is made, and the terms are made
in the chain's order.  The depth-first order the graph's nodes come in does neither: from the
embedding's gradient it walks every step's gradient back through the recurrence first, then runs
the input layers' backward nodes (each of which makes a weight term) from the first step on, while
the chain adds the last step's term first, so every term waited for the last one.  The executor
runs its backward pass in :func:`ready_first_order` instead: each node as soon as its last input
is made, which makes a step's terms as soon as its gradient is known (last step first, as the
chain adds them) and runs each link right after its term.  It is also what lets a step's gradient
die at once, where the depth-first order kept all of them for the input layers' backward nodes at
the end (the LSTM: 66 MB with the n-ary sums, 45 with chains in depth-first order, 26 with both).
Elementwise fusion leaves the links alone (:mod:`lazynd_sym.fused_kernel`): a fused chain would
read every term in one kernel again.

``LAZYND_INPLACE_GRAD_SUM_CAP`` (or MXNet's ``MXNET_EXEC_INPLACE_GRAD_SUM_CAP``) sets the number
of terms from which a chain is built; a large one keeps the n-ary sum everywhere.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from lazynd.environment import integer_setting
from lazynd.ops.registry import sum_gradients

from ..graph import IndexedGraph

ENV_VARS = ("LAZYND_INPLACE_GRAD_SUM_CAP", "MXNET_EXEC_INPLACE_GRAD_SUM_CAP")
DEFAULT_CAP = 8  # MXNet's default


def chain_cap() -> int:
    """How many terms a gradient sum needs to be built as a chain (from the environment, else 8)."""
    cap = integer_setting(*ENV_VARS, minimum=0)
    return DEFAULT_CAP if cap is None else cap


def sum_gradient_terms(F: Any, terms: list[Any]) -> Any:
    """The sum of ``terms`` (symbols of ``F``): a chain of ``_grad_add`` from :func:`chain_cap`
    terms on, else the n-ary sum of :func:`~lazynd.ops.registry.sum_gradients`.

    Examples
    --------
    >>> import lazynd_sym as sym
    >>> terms = [sym.Variable(f"t{k}") for k in range(9)]
    >>> total = sum_gradient_terms(sym, terms)
    >>> total._outputs[0][0].op.name, len(total.list_arguments())
    ('_grad_add', 9)
    """
    if len(terms) < 2 or len(terms) < chain_cap():  # MXNet: a cap under 2 chains from 2 terms on
        return sum_gradients(F, terms)
    total = terms[0]
    for term in terms[1:]:
        total = F._grad_add(total, term)
    return total


def ready_first_order(graph: IndexedGraph, order: Sequence[int]) -> list[int]:
    """``order`` (node indices of ``graph``, a topological order) rearranged so that each node runs as
    soon as possible after the node that makes its last input: Kahn's order, taking among the nodes
    ready to run the one readied last, and among those readied together the first in ``order``.

    Inputs made outside ``order`` (the forward pass's values, the variables) count as ready.  What
    only the forward values feed (a loss's backward) starts in ``order``'s own order, each followed
    by what it readies.

    Examples
    --------
    >>> import lazynd_sym as sym
    >>> a, b, c = (sym.Variable(n) for n in "abc")
    >>> g = IndexedGraph([(sym._grad_add(sym.exp(a), sym.exp(b)) + sym.exp(c))._outputs[0]])
    >>> [g.nodes[i].op.name for i in [1, 3, 6, 4, 7]]
    ['exp', 'exp', 'exp', '_grad_add', '_plus']
    >>> [g.nodes[i].op.name for i in ready_first_order(g, [1, 3, 6, 4, 7])]
    ['exp', 'exp', '_grad_add', 'exp', '_plus']
    """
    in_order = set(order)
    waiting: dict[int, int] = {}  # node -> how many of its producers in ``order`` have not run yet
    readers: dict[int, list[int]] = {}  # producer -> the nodes of ``order`` that read it, in order
    for i in order:
        producers = {graph.index[id(child)] for child, _ in graph.nodes[i].inputs} & in_order
        waiting[i] = len(producers)
        for p in producers:
            readers.setdefault(p, []).append(i)
    ready = [i for i in reversed(order) if waiting[i] == 0]  # a stack: the last pushed runs next
    scheduled: list[int] = []
    while ready:
        node = ready.pop()
        scheduled.append(node)
        for reader in reversed(readers.get(node, ())):
            waiting[reader] -= 1
            if waiting[reader] == 0:
                ready.append(reader)
    return scheduled  # every node: a graph of symbols holds no cycle, so none waits forever
