"""What FeedForward takes as its ``symbol``: a Symbol, and a clear error for anything else."""

from __future__ import annotations

import pytest

import lazynd_sym as sym
from lazynd.errors import LazyNDError
from lazynd_sym.model import FeedForward


def test_a_sym_gen_is_refused_at_construction_with_a_pointer_to_bucketing_module() -> None:
    # old char-LSTM scripts pass sym_gen(seq_len) here; MXNet 1.9.1 failed later, inside fit
    def sym_gen(seq_len: int) -> sym.Symbol:
        return sym.FullyConnected(sym.Variable("data"), num_hidden=seq_len)

    with pytest.raises(LazyNDError, match=r"FeedForward: symbol must be a Symbol, got function; .*BucketingModule"):
        FeedForward(sym_gen, num_epoch=1)


def test_something_else_than_a_symbol_is_refused_naming_its_type() -> None:
    with pytest.raises(LazyNDError, match=r"symbol must be a Symbol, got str$"):
        FeedForward("net-symbol.json")
