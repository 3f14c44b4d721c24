"""MXNet 1.x's submodules of mx.rnn: ``rnn_cell``, ``io`` and ``rnn`` hand on the objects of mx.rnn."""

from __future__ import annotations

import pytest

import lazynd as mx
from lazynd.errors import LazyNDError

# the public names of MXNet 1.9.1's modules (numeric_types/string_types aside), each held by lazynd
RNN_CELL_NAMES = [
    "BaseConvRNNCell",
    "BaseRNNCell",
    "BidirectionalCell",
    "ConvGRUCell",
    "ConvLSTMCell",
    "ConvRNNCell",
    "DropoutCell",
    "FusedRNNCell",
    "GRUCell",
    "LSTMCell",
    "ModifierCell",
    "RNNCell",
    "RNNParams",
    "ResidualCell",
    "SequentialRNNCell",
    "ZoneoutCell",
]
IO_NAMES = ["BucketSentenceIter", "DataBatch", "DataDesc", "DataIter", "encode_sentences"]
RNN_NAMES = [
    "BaseRNNCell",
    "do_rnn_checkpoint",
    "load_checkpoint",
    "load_rnn_checkpoint",
    "rnn_unroll",
    "save_checkpoint",
    "save_rnn_checkpoint",
]


@pytest.mark.parametrize(("module", "names"), [("rnn_cell", RNN_CELL_NAMES), ("io", IO_NAMES), ("rnn", RNN_NAMES)])
def test_rnn_submodule_holds_mxnets_names_as_mx_rnn_objects(module, names):
    for name in names:
        assert getattr(getattr(mx.rnn, module), name) is getattr(mx.rnn, name), f"mx.rnn.{module}.{name}"


def test_mx_rnn_io_reaches_the_io_classes():
    assert mx.rnn.io.DataBatch is mx.io.DataBatch and mx.rnn.io.DataIter is mx.io.DataIter


def test_rnn_rnn_checkpoints_are_the_model_checkpoints():
    assert mx.rnn.rnn.load_checkpoint is mx.model.load_checkpoint
    assert mx.rnn.rnn.save_checkpoint is mx.model.save_checkpoint


def test_rnn_cell_module_cells_unroll():
    cell = mx.rnn.rnn_cell.SequentialRNNCell()
    cell.add(mx.rnn.rnn_cell.LSTMCell(4, prefix="l0_"))
    cell.add(mx.rnn.rnn_cell.GRUCell(3, prefix="l1_"))
    outputs, states = cell.unroll(2, mx.sym.var("data"), merge_outputs=True)
    _, out_shapes, _ = outputs.infer_shape(data=(5, 2, 6))
    assert out_shapes == [(5, 2, 3)] and len(states) == 3


def test_rnn_unroll_is_the_cells_unroll_with_a_deprecation_warning():
    cell = mx.rnn.LSTMCell(4, prefix="l_")
    with pytest.warns(DeprecationWarning, match="rnn_unroll is deprecated"):
        outputs, states = mx.rnn.rnn.rnn_unroll(cell, 3, mx.sym.var("x"), layout="TNC")
    expected, _ = mx.rnn.LSTMCell(4, prefix="l_").unroll(3, mx.sym.var("x"), layout="TNC")
    assert [o.list_arguments() for o in outputs] == [o.list_arguments() for o in expected]
    assert len(outputs) == 3 and len(states) == 2


def test_rnn_unroll_without_inputs_names_the_argument():
    with pytest.warns(DeprecationWarning), pytest.raises(LazyNDError, match="rnn_unroll: inputs is required"):
        mx.rnn.rnn_unroll(mx.rnn.LSTMCell(4), 2)
