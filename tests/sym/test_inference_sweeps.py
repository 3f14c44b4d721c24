"""The shape and type passes run each operator's rule once on a graph that settles in one sweep.

Both passes sweep the graph's rules until a sweep changes nothing.  The sweep that only confirmed
the fixed point used to rerun every rule, though a node whose entries are all known can only give
its answer again: on a 1000-step loop written out at bind that was half of each pass.
"""

from __future__ import annotations

import pytest

import lazynd as mx
from lazynd.errors import ShapeError
from lazynd.ops.opdef import OpDef
from lazynd_sym.graph import IndexedGraph
from lazynd_sym.passes import infer_shape, infer_type

S = mx.sym
STEPS = 500


def _chain() -> IndexedGraph:
    x = S.var("x")
    for _ in range(STEPS):
        x = S.tanh(x) + 1
    return IndexedGraph(x._outputs)


def _count(monkeypatch: pytest.MonkeyPatch, method: str) -> list[int]:
    calls = [0]
    rule = getattr(OpDef, method)

    def counted(self: OpDef, *args: object, **kwargs: object) -> object:
        calls[0] += 1
        return rule(self, *args, **kwargs)

    monkeypatch.setattr(OpDef, method, counted)
    return calls


def test_a_long_chain_runs_each_shape_rule_once(monkeypatch: pytest.MonkeyPatch) -> None:
    graph = _chain()
    calls = _count(monkeypatch, "infer_shape")
    shapes = infer_shape(graph, {0: (2, 3)})
    assert calls[0] == 2 * STEPS
    assert shapes[-1] == (2, 3) and all(s == (2, 3) for s in shapes)


def test_a_long_chain_runs_each_type_rule_once(monkeypatch: pytest.MonkeyPatch) -> None:
    graph = _chain()
    calls = _count(monkeypatch, "infer_type")
    assert set(infer_type(graph, {0: "float64"})) == {"float64"}
    assert calls[0] == 2 * STEPS


def test_a_shape_known_only_from_the_output_still_reaches_the_input() -> None:
    # the backward sweep must still run the rules that settled nothing on the forward one
    x, w = S.var("x"), S.var("w")
    graph = IndexedGraph((S.tanh(x) + w)._outputs)
    shapes = infer_shape(graph, {graph.entry(graph.index[id(w._outputs[0][0])]): (4, 5)})
    assert shapes == [(4, 5)] * 4


def test_a_conflict_found_after_a_node_settled_is_still_refused() -> None:
    x, y = S.var("x"), S.var("y")
    out = S.tanh(x) + y
    with pytest.raises(ShapeError):
        out.infer_shape(x=(2, 3), y=(3, 3))


def test_input_entries_hands_out_a_list_its_caller_may_change() -> None:
    x = S.var("x")
    graph = IndexedGraph((x * x + x)._outputs)
    entries = graph.input_entries(1)
    entries.append(99)
    assert graph.input_entries(1) == [0, 0]
