"""``mx.rnn``: recurrent cells that build symbols, sentence iterators and RNN checkpoints (MXNet 1.x).

The names come through MXNet's modules: :mod:`.rnn_cell` (the cells), :mod:`.io` (sentences)
and :mod:`.rnn` (checkpoints, ``rnn_unroll``).
"""

from __future__ import annotations

from . import io, rnn, rnn_cell
from .fused import FusedRNN
from .io import BucketSentenceIter, DataBatch, DataDesc, DataIter, encode_sentences
from .rnn import (
    do_rnn_checkpoint,
    load_checkpoint,
    load_rnn_checkpoint,
    rnn_unroll,
    save_checkpoint,
    save_rnn_checkpoint,
)
from .rnn_cell import *  # noqa: F403

__all__ = [
    *rnn_cell.__all__,
    "BucketSentenceIter",
    "DataBatch",
    "DataDesc",
    "DataIter",
    "FusedRNN",
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
