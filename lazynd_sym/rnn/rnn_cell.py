"""MXNet 1.x's ``mx.rnn.rnn_cell`` module: the recurrent cells, handed on from where they live here."""

from __future__ import annotations

from .cells import BaseRNNCell, GRUCell, LSTMCell, RNNCell, RNNParams
from .combinators import BidirectionalCell, DropoutCell, ModifierCell, ResidualCell, SequentialRNNCell, ZoneoutCell
from .conv_cells import BaseConvRNNCell, ConvGRUCell, ConvLSTMCell, ConvRNNCell
from .fused import FusedRNNCell

__all__ = [
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
