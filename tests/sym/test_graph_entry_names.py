"""IndexedGraph.entry_name: the name of an output entry, found by a search of ``row_ptr``.

The shape and type passes name both entries of every pair they merge, at every sweep; a scan of
all nodes per name made binding Inception-ResNet-v2 take seconds (most of it in those scans).
"""

from __future__ import annotations

import pytest

import lazynd_sym as sym
from lazynd_sym.graph import IndexedGraph


class _CountingList(list):
    """A list that counts how many items are read from it."""

    reads = 0

    def __getitem__(self, index):  # type: ignore[no-untyped-def]
        type(self).reads += 1
        return super().__getitem__(index)


def _deep_graph(layers: int) -> tuple[IndexedGraph, sym.Symbol]:
    x = sym.Variable("x")
    for i in range(layers):
        x = sym.BatchNorm(sym.FullyConnected(x, num_hidden=3, name=f"fc{i}"), name=f"bn{i}")
    return IndexedGraph(x._outputs), x


def test_entry_name_names_every_entry_of_nodes_with_several_outputs():
    graph, _ = _deep_graph(3)
    expected = [node.output_name(k) for node in graph.nodes for k in range(node.num_outputs())]
    assert [graph.entry_name(e) for e in range(graph.num_entries)] == expected
    assert "bn2_output" in expected


def test_entry_name_refuses_an_entry_outside_the_graph():
    graph, _ = _deep_graph(1)
    with pytest.raises(IndexError):
        graph.entry_name(graph.num_entries)
    with pytest.raises(IndexError):
        graph.entry_name(-1)


def test_entry_name_reads_a_logarithmic_number_of_row_offsets():
    graph, net = _deep_graph(200)
    counting = _CountingList(graph.row_ptr)
    graph.row_ptr = counting
    _CountingList.reads = 0
    assert graph.entry_name(graph.num_entries - 3) == net.list_outputs()[0]
    # about 2 log2(1400) reads; the old scan read two per node before it (about 2800)
    assert _CountingList.reads < 40
