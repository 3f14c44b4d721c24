"""mx.rnn: what the cells make of their arguments: begin_state's keyword arguments, a step's states and
unroll's length.  The expected answers are MXNet 1.9.1's where it has one, else a clear error in place
of a failure deep in the graph."""

from __future__ import annotations

import pytest

import lazynd as mx


@pytest.mark.parametrize("func", [mx.sym.zeros, mx.sym.Variable])
def test_begin_state_keeps_the_states_own_shape_over_a_given_one(func):
    # MXNet 1.9.1: kwargs.update(state_info) -- the cell's (0, hidden) wins, the batch stays open
    cell = mx.rnn.LSTMCell(3, prefix="l_")
    states = cell.begin_state(func=func, shape=(2, 3), dtype="float64")
    attrs = [state.list_attr() for state in states]
    shape_key = "shape" if func is mx.sym.zeros else "__shape__"
    assert [a[shape_key] for a in attrs] == ["(0, 3)", "(0, 3)"]
    assert all(a.get("dtype", a.get("__dtype__")) in ("float64", "1") for a in attrs)


def test_begin_state_with_a_given_shape_binds_to_another_batch():
    cell = mx.rnn.GRUCell(3, prefix="g_")
    outputs, _ = cell.unroll(2, mx.sym.var("data"), begin_state=cell.begin_state(shape=(8, 3)), merge_outputs=True)
    assert outputs.infer_shape(data=(5, 2, 4))[1] == [(5, 2, 3)]
