"""Which freed block the memory plan hands to a new entry, and how few blocks it looks at to choose.

The rules, pinned here because the free blocks are kept sorted by size (a bisection, not a scan of
every free block per request: a 1000-step ``while_loop`` has tens of thousands of entries):

- a request takes the smallest free block of at least its size and at most ``MATCH_RANGE`` times it;
- of free blocks of one size, the one freed first;
- a block still holding a ``keep_values`` entry's value serves only when no other block fits, and is
  not overwritten in place while another block fits;
- a block serves entries of one context only.
"""

from __future__ import annotations

from collections.abc import Sequence

import lazynd as mx
from lazynd_sym.graph import IndexedGraph
from lazynd_sym.passes.infer_shape import infer_shape
from lazynd_sym.passes.infer_type import infer_type
from lazynd_sym.passes.plan_memory import plan_memory

S = mx.sym


def _plan(
    heads: list[S.Symbol],
    order: Sequence[str],
    keep: Sequence[str] = (),
    context: dict[str, object] | None = None,
    sizes: dict[str, int] | None = None,
) -> dict[str, int]:
    """Storage id of each named operator's output, the operators run in ``order``.

    Every variable holds 8 float32 (32 bytes) unless ``sizes`` names it.
    """
    graph = IndexedGraph(S.Group(heads)._outputs)
    index = {node.name: i for i, node in enumerate(graph.nodes)}
    variables = graph.variables()
    infer_shape(graph, {graph.entry(i): ((sizes or {}).get(graph.nodes[i].name, 8),) for i in variables})
    infer_type(graph, {graph.entry(i): "float32" for i in variables})
    if context is not None:
        graph.attrs["context"] = [context.get(node.name) for node in graph.nodes]
    storage = plan_memory(
        graph,
        [index[name] for name in order],
        {graph.entry(i) for i in variables},
        keep_values={graph.entry(index[name]) for name in keep},
    )
    return {name: storage[graph.entry(index[name])] for name in order}


def _made(name: str) -> S.Symbol:
    """An entry ``name`` in a block of its own: the sum of two variables (which it cannot overwrite)."""
    return S.elemwise_add(S.var(f"{name}_x"), S.var(f"{name}_y"), name=name)


def _summed(name: str) -> S.Symbol:
    """``name`` read once, by ``<name>_sum`` (4 bytes: no freed 32-byte block fits it)."""
    return S.sum(_made(name), name=f"{name}_sum")


def test_a_request_takes_the_smallest_block_that_fits_not_the_first_freed() -> None:
    # a 32-byte block freed first, a 16-byte one next; a 16-byte request fits both
    sizes = {"small_x": 4, "small_y": 4, "r_x": 4, "r_y": 4}
    order = ["big", "small", "big_sum", "small_sum", "r"]
    ids = _plan([_summed("big"), _summed("small"), _made("r")], order, sizes=sizes)
    assert ids["r"] == ids["small"] != ids["big"]


def test_of_blocks_of_one_size_the_first_freed_serves() -> None:
    heads = [_summed("a"), _summed("b"), _made("r")]
    b_first = _plan(heads, ["a", "b", "b_sum", "a_sum", "r"])
    assert b_first["r"] == b_first["b"]
    a_first = _plan(heads, ["a", "b", "a_sum", "b_sum", "r"])
    assert a_first["r"] == a_first["a"]


def test_a_block_keeping_a_value_serves_only_when_no_other_fits() -> None:
    heads = [_summed("a"), _summed("b"), _made("first"), _made("second")]
    ids = _plan(heads, ["a", "b", "a_sum", "b_sum", "first", "second"], keep=["a"])
    assert (ids["first"], ids["second"]) == (ids["b"], ids["a"])


def test_a_kept_value_is_not_overwritten_in_place_while_another_block_fits() -> None:
    relu = S.Activation(_made("a"), act_type="relu", name="relu")  # may overwrite its input in place
    heads = [_summed("b"), relu]
    other_free = _plan(heads, ["a", "b", "b_sum", "relu"], keep=["a"])
    assert other_free["relu"] == other_free["b"] != other_free["a"]
    none_free = _plan(heads, ["a", "relu", "b", "b_sum"], keep=["a"])
    assert none_free["relu"] == none_free["a"]


def test_a_block_serves_one_context_only() -> None:
    context = {"a": mx.cpu(1), "a_sum": mx.cpu(1), "there": mx.cpu(0), "here": mx.cpu(1)}
    ids = _plan([_summed("a"), _made("there"), _made("here")], ["a", "a_sum", "there", "here"], context=context)
    assert ids["here"] == ids["a"] != ids["there"]


class _CountedPlace:
    """A device placement that counts how often the plan compares it with a block's."""

    compared = 0

    def __eq__(self, other: object) -> bool:
        _CountedPlace.compared += 1
        return other is self

    def __hash__(self) -> int:
        return 0


def test_a_request_looks_at_no_more_blocks_than_it_takes() -> None:
    # 100 blocks freed at once, then 100 requests: a scan of the free blocks compared 4950 times
    width = 100
    x = S.var("x")
    total = S.add_n(*[x * (k + 1) for k in range(width)])
    requests = [total * (k + 1) for k in range(width)]
    graph = IndexedGraph(S.Group(requests)._outputs)
    infer_shape(graph, {graph.entry(graph.variables()[0]): (8,)})
    infer_type(graph, {graph.entry(graph.variables()[0]): "float32"})
    place = _CountedPlace()
    graph.attrs["context"] = [place] * len(graph.nodes)
    order = [i for i, node in enumerate(graph.nodes) if not node.is_variable]
    _CountedPlace.compared = 0
    plan_memory(graph, order, {graph.entry(graph.variables()[0])})
    assert _CountedPlace.compared <= len(order)
    assert len(graph.attrs["storage_bytes"]) <= width + 1  # the requests took the freed blocks
