"""``mx.rnn``: recurrent cells that build symbols, sentence iterators and RNN checkpoints (MXNet 1.x)."""

from __future__ import annotations

from typing import Any

from lazynd.errors import LazyNDError

from . import io
from .cells import BaseRNNCell, GRUCell, LSTMCell, RNNCell, RNNParams
from .checkpoint import do_rnn_checkpoint, load_rnn_checkpoint, save_rnn_checkpoint
from .combinators import BidirectionalCell, DropoutCell, ModifierCell, ResidualCell, SequentialRNNCell, ZoneoutCell
from .fused import FusedRNN, FusedRNNCell
from .io import BucketSentenceIter, encode_sentences

_NOT_YET = ("ConvRNNCell", "ConvLSTMCell", "ConvGRUCell", "BaseConvRNNCell")


def __getattr__(name: str) -> Any:
    if name in _NOT_YET:
        raise LazyNDError(f"mx.rnn.{name}: not supported by lazynd yet (the unfused cells and mx.sym.RNN are)")
    raise AttributeError(f"module 'lazynd_sym.rnn' has no attribute {name!r}")


__all__ = [
    "BaseRNNCell",
    "BidirectionalCell",
    "BucketSentenceIter",
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
    "load_rnn_checkpoint",
    "save_rnn_checkpoint",
]
