"""Binding long loops: what made a 1000-step ``foreach`` take minutes to bind.

The gradient of the ``stack`` that joins a loop's step outputs takes each of its ``T`` pieces from one
``split`` by position, and every pass asks a node for its output names or their count. Taking output
``i`` listed every output's name (``T`` names, each built from a fresh list of ``T``), and each
question to ``split`` built its ``T`` names anew: a cubic bind (201 s for 1000 steps, 2.6 s now).
"""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx
from lazynd.ops.registry import get as get_op

S = mx.sym


def test_an_output_taken_by_position_lists_no_names(monkeypatch: pytest.MonkeyPatch) -> None:
    pieces = S.split(S.var("x"), num_outputs=4, axis=0)

    def refuse(self: S.Symbol) -> list[str]:
        raise AssertionError("list_outputs called")

    monkeypatch.setattr(S.Symbol, "list_outputs", refuse)
    assert pieces[2]._outputs == [pieces._outputs[2]]
    assert pieces[-1]._outputs == [pieces._outputs[3]]


def test_an_output_taken_by_name_still_finds_it() -> None:
    pieces = S.split(S.var("x"), num_outputs=3, axis=0, name="cut")
    assert pieces["cut_output1"].list_outputs() == ["cut_output1"]


def test_split_builds_the_names_of_a_count_once() -> None:
    split = get_op("SliceChannel")
    attrs = {"num_outputs": 1000, "axis": 0, "squeeze_axis": True}
    first, again = split._outputs(attrs), split._outputs(dict(attrs))
    assert first is again
    assert split.output_names(attrs)[999] == "output999"
    assert split.num_outputs(attrs) == 1000


def test_a_long_foreach_binds_and_runs_as_its_steps() -> None:
    steps = 300
    out, states = S.contrib.foreach(lambda x, s: (x * s[0], [s[0] + x]), S.var("d"), [S.var("h")])
    data = np.random.RandomState(0).uniform(-1, 1, (steps, 2)).astype(np.float32)
    grads = {"d": mx.nd.zeros((steps, 2)), "h": mx.nd.zeros((2,))}
    executor = S.Group([out, states[0]]).bind(
        mx.cpu(), args={"d": mx.nd.array(data), "h": mx.nd.ones((2,))}, args_grad=grads
    )
    outputs = executor.forward(is_train=True)
    running = 1 + np.concatenate([np.zeros((1, 2), np.float32), np.cumsum(data, axis=0)[:-1]])
    np.testing.assert_allclose(outputs[0].asnumpy(), data * running, rtol=1e-4, atol=1e-4)
    executor.backward([mx.nd.zeros((steps, 2)), mx.nd.ones((2,))])
    np.testing.assert_allclose(grads["h"].asnumpy(), [1, 1])
    np.testing.assert_allclose(grads["d"].asnumpy(), np.ones((steps, 2)))
