"""Cutting a long elementwise chain by its outside inputs, in one walk of the chain.

A fused part reads at most ``MAX_INPUTS`` entries from outside it.  The cut points were found by
working out the outside inputs of every prefix anew: quadratic in the chain's length, seconds at
bind for a few thousand unary operators in a row.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import lazynd as mx
import lazynd_sym as sym
from lazynd.ops import registry
from lazynd_sym.graph import Node
from lazynd_sym.passes.fuse_elemwise import MAX_INPUTS, _split_by_inputs


class _CountingNode(Node):
    """A node that counts the reads of its inputs."""

    reads = 0

    @property  # type: ignore[override]
    def inputs(self) -> Any:
        _CountingNode.reads += 1
        return self._inputs

    @inputs.setter
    def inputs(self, value: Any) -> None:
        self._inputs = value


def _reference_cuts(chain: list[Node]) -> list[list[Node]]:
    """The cuts, from the outside inputs of every prefix of the part being built."""

    def outside(part: list[Node]) -> set:
        members = {id(n) for n in part}
        return {(id(c), k) for n in part for c, k in n.inputs if id(c) not in members}

    parts, start = [], 0
    for end in range(1, len(chain) + 1):
        if len(outside(chain[start:end])) > MAX_INPUTS:
            parts.append(chain[start : end - 1])
            start = end - 1
    parts.append(chain[start:])
    return [p for p in parts if len(p) >= 2]


def test_a_long_unary_chain_is_cut_reading_each_node_once() -> None:
    tanh = registry.get("tanh")
    node = _CountingNode(None, "x")
    chain = []
    for i in range(3000):
        node = _CountingNode(tanh, f"t{i}", inputs=[(node, 0)])
        chain.append(node)
    _CountingNode.reads = 0
    assert _split_by_inputs(chain) == [chain]
    assert _CountingNode.reads <= 2 * len(chain)


def test_the_cuts_are_where_a_part_would_read_too_many_inputs() -> None:
    rng = np.random.RandomState(0)
    x = sym.Variable("x")
    outer = [sym.Variable(f"v{i}") for i in range(30)]
    for step in range(120):
        pick = rng.randint(0, 4)
        if pick == 0:
            x = sym.tanh(x)
        elif pick == 1:
            x = x + outer[rng.randint(0, len(outer))]
        else:
            x = x * outer[step % len(outer)] + outer[rng.randint(0, len(outer))]
    nodes = []  # the whole chain, first operator first
    node = x._outputs[0][0]
    while node.op is not None:
        nodes.append(node)
        node = node.inputs[0][0]
    nodes.reverse()
    cuts = _split_by_inputs(nodes)
    assert len(cuts) > 3
    assert cuts == _reference_cuts(nodes)


def test_a_long_chain_binds_and_runs_fused() -> None:
    x = sym.Variable("x")
    y = x
    for _ in range(2000):
        y = sym.tanh(y) * 0.5
    out = y.simple_bind(mx.cpu(), grad_req="null", x=(3,)).forward(x=mx.nd.array([0.1, -0.2, 0.3]))[0].asnumpy()
    expected = np.array([0.1, -0.2, 0.3], np.float32)
    for _ in range(2000):
        expected = np.tanh(expected) * np.float32(0.5)
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-30)
