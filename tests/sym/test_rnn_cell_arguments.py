"""mx.rnn: what the cells make of their arguments: begin_state's keyword arguments, a step's states and
unroll's length.  The expected answers are MXNet 1.9.1's where it has one, else a clear error in place
of a failure deep in the graph."""

from __future__ import annotations

import pytest

import lazynd as mx
from lazynd.errors import ArgumentTypeError, ArgumentValueError, LazyNDError


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


@pytest.mark.parametrize(
    "make",
    [
        lambda: mx.rnn.LSTMCell(3),
        lambda: mx.rnn.GRUCell(3),
        lambda: mx.rnn.RNNCell(3),
        lambda: mx.rnn.ConvLSTMCell(input_shape=(1, 2, 4, 4), num_hidden=2),
    ],
)
@pytest.mark.parametrize("states", [[], [mx.sym.var("a"), mx.sym.var("b"), mx.sym.var("c")], [[mx.sym.var("a")]]])
def test_a_step_refuses_states_that_are_not_the_cells(make, states):
    cell = make()
    with pytest.raises(LazyNDError, match=rf"{type(cell).__name__}\.__call__: states must be a list of"):
        cell(mx.sym.var("x"), states)


def test_a_step_given_its_states_counts_its_steps():
    cell = mx.rnn.LSTMCell(3, prefix="l_")
    states = cell.begin_state()
    first, states = cell(mx.sym.var("x0"), states)
    second, _ = cell(mx.sym.var("x1"), states)
    assert (first.name, second.name) == ("l_t0_out", "l_t1_out")


@pytest.mark.parametrize("length", ["2", 2.0, True])
def test_unroll_refuses_a_length_that_is_not_an_int(length):
    cell = mx.rnn.LSTMCell(3)
    with pytest.raises(ArgumentTypeError, match="length must be an int"):
        cell.unroll(length, [mx.sym.var("a"), mx.sym.var("b")])
    # MXNet 1.9.1 raises a TypeError for the string, an MXNetError (a RuntimeError) for the others
    with pytest.raises(TypeError):
        cell.unroll(length, mx.sym.var("data"))
    with pytest.raises(RuntimeError):
        cell.unroll(length, mx.sym.var("data"))


@pytest.mark.parametrize(
    "cell",
    [mx.rnn.LSTMCell(3), mx.rnn.FusedRNNCell(3), mx.rnn.DropoutCell(0.5), mx.rnn.ResidualCell(mx.rnn.GRUCell(3))],
)
def test_unroll_refuses_to_split_a_sequence_into_no_steps(cell):
    with pytest.raises(ArgumentValueError, match="length must be at least 1 to split"):
        cell.unroll(0, mx.sym.var("data"), merge_outputs=False)


def test_unroll_of_no_steps_from_an_empty_list_is_the_begin_state():
    # MXNet 1.9.1 gives no outputs and the begin states
    outputs, states = mx.rnn.LSTMCell(3, prefix="l_").unroll(0, [], merge_outputs=False)
    assert outputs == [] and [s.name for s in states] == ["l_begin_state_0", "l_begin_state_1"]
