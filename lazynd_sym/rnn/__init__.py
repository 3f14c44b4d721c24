"""``mx.rnn``: recurrent cells that build symbols, sentence iterators and RNN checkpoints (MXNet 1.x)."""

from __future__ import annotations

from . import io, rnn, rnn_cell
from .cells import BaseRNNCell, GRUCell, LSTMCell, RNNCell, RNNParams
from .checkpoint import do_rnn_checkpoint, load_rnn_checkpoint, save_rnn_checkpoint
from .combinators import BidirectionalCell, DropoutCell, ModifierCell, ResidualCell, SequentialRNNCell, ZoneoutCell
from .conv_cells import BaseConvRNNCell, ConvGRUCell, ConvLSTMCell, ConvRNNCell
from .fused import FusedRNN, FusedRNNCell
from .io import BucketSentenceIter, DataBatch, DataDesc, DataIter, encode_sentences
from .rnn import load_checkpoint, rnn_unroll, save_checkpoint

__all__ = [
    "BaseConvRNNCell",
    "BaseRNNCell",
    "BidirectionalCell",
    "BucketSentenceIter",
    "ConvGRUCell",
    "ConvLSTMCell",
    "ConvRNNCell",
    "DataBatch",
    "DataDesc",
    "DataIter",
    "DropoutCell",
    "FusedRNN",
    "FusedRNNCell",
    "GRUCell",
    "LSTMCell",
    "ModifierCell",
    "RNNCell",
    "RNNParams",
    "ResidualCell",
    "SequentialRNNCell",
    "ZoneoutCell",
    "do_rnn_checkpoint",
    "encode_sentences",
    "io",
    "load_checkpoint",
    "load_rnn_checkpoint",
    "rnn",
    "rnn_cell",
    "rnn_unroll",
    "save_checkpoint",
    "save_rnn_checkpoint",
]
