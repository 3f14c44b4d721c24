"""How often a bind writes a loop out: once for its shapes, and one step for its types.

Each written-out step is a copy of the loop's body (``Subgraph.clone``); counting the copies pins
the work without timing it.  A 1000-step ``while_loop`` used to be written out five times per
``simple_bind`` (shape inference twice, type inference twice, the executor once): 8.5 s of binding.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

import lazynd as mx
from lazynd_sym.control_flow import Subgraph
from lazynd_sym.passes.expand_control_flow import one_unrolling_per_bind, shape_reader, unroll

S = mx.sym
STEPS = 12


@pytest.fixture
def copies(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """A one-item list counting the body copies made while the test runs."""
    count = [0]
    clone = Subgraph.clone

    def counted(self: Subgraph, substitutes: list) -> list:
        count[0] += 1
        return clone(self, substitutes)

    monkeypatch.setattr(Subgraph, "clone", counted)
    yield count


def _while_loop() -> S.Symbol:
    out, states = S.contrib.while_loop(
        lambda i, s: i < 5, lambda i, s: (s * 2, (i + 1, s + 1)), [S.var("i"), S.var("s")], max_iterations=STEPS
    )
    return S.Group([out, states[1]])


def _foreach() -> S.Symbol:
    out, states = S.contrib.foreach(lambda x, s: (x * s[0], [s[0] + x]), S.var("d"), [S.var("h")])
    return S.Group([out, states[0]])


def test_a_simple_bind_writes_a_while_loop_out_once_and_types_it_on_one_step(copies: list[int]) -> None:
    executor = _while_loop().simple_bind(mx.cpu(), i=(1,), s=(2,))
    assert copies[0] == STEPS + 1
    outputs = executor.forward(i=mx.nd.zeros((1,)), s=mx.nd.ones((2,)))
    rows = [2 * (1 + t) if t < 5 else 0 for t in range(STEPS)]
    np.testing.assert_allclose(outputs[0].asnumpy(), np.repeat(np.array(rows, np.float32)[:, None], 2, axis=1))
    np.testing.assert_allclose(outputs[1].asnumpy(), [6, 6])


def test_a_simple_bind_writes_a_foreach_of_known_length_out_once(copies: list[int]) -> None:
    executor = _foreach().simple_bind(mx.cpu(), d=(STEPS, 2), h=(2,))
    assert copies[0] == STEPS + 1
    assert executor.outputs[0].shape == (STEPS, 2)


def test_infer_shape_writes_a_loop_of_known_length_out_once(copies: list[int]) -> None:
    assert _foreach().infer_shape(d=(STEPS, 2), h=(2,))[1] == [(STEPS, 2), (2,)]
    assert copies[0] == STEPS
    copies[0] = 0
    assert _while_loop().infer_shape(i=(1,), s=(2,))[1] == [(STEPS, 2), (2,)]
    assert copies[0] == STEPS


def test_infer_shape_of_an_unknown_length_still_tries_two_lengths(copies: list[int]) -> None:
    assert _foreach().infer_shape_partial(h=(2,))[1] == [(0, 2), (2,)]
    assert copies[0] == 1 + 2


def test_infer_type_of_a_while_loop_reads_one_step(copies: list[int]) -> None:
    assert _while_loop().infer_type(i="int32", s="float16")[1] == [np.float16, np.float16]
    assert copies[0] == 1


def test_an_unrolling_serves_a_bind_only_for_the_same_shapes() -> None:
    loop = _foreach()
    d, h = loop.get_internals()["d"]._outputs[0][0], loop.get_internals()["h"]._outputs[0][0]

    def reader(length: int):  # noqa: ANN202
        return shape_reader({id(d): (length, 2), id(h): (2,)})

    with one_unrolling_per_bind():
        first = unroll(loop._outputs, reader(3))
        assert unroll(loop._outputs, reader(3)) is first
        longer = unroll(loop._outputs, reader(5))
    assert longer is not first
    assert S.Symbol(longer.heads[:1]).infer_shape(d=(5, 2), h=(2,))[1] == [(5, 2)]
    assert unroll(loop._outputs, reader(3)) is not first  # outside a bind nothing is kept
