"""MXNet 1.x's ``mx.rnn.rnn`` module: the RNN checkpoints, the model checkpoints and ``rnn_unroll``."""

from __future__ import annotations

from typing import Any

from lazynd.errors import LazyNDError
from lazynd.log import warn_from_user_code

from ..model.checkpoint import load_checkpoint, save_checkpoint
from .cells import BaseRNNCell
from .checkpoint import do_rnn_checkpoint, load_rnn_checkpoint, save_rnn_checkpoint

__all__ = [
    "BaseRNNCell",
    "do_rnn_checkpoint",
    "load_checkpoint",
    "load_rnn_checkpoint",
    "rnn_unroll",
    "save_checkpoint",
    "save_rnn_checkpoint",
]


def rnn_unroll(
    cell: BaseRNNCell,
    length: int,
    inputs: Any = None,
    begin_state: Any = None,
    input_prefix: str = "",
    layout: str = "NTC",
) -> tuple[Any, list[Any]]:
    """Deprecated, as in MXNet: ``cell.unroll(length, inputs, begin_state, layout)``.

    ``input_prefix`` is accepted and unused (the cells' ``unroll`` takes no prefix; MXNet 1.9.1's
    ``rnn_unroll`` passes it on and fails on every call).

    Examples
    --------
    >>> import warnings
    >>> import lazynd as mx
    >>> cell = mx.rnn.LSTMCell(4, prefix="l_")
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     outputs, states = mx.rnn.rnn.rnn_unroll(cell, 2, mx.sym.var("x"))
    >>> len(outputs), len(states), caught[0].category.__name__
    (2, 2, 'DeprecationWarning')
    """
    warn_from_user_code("rnn_unroll is deprecated; call cell.unroll directly", DeprecationWarning)
    if inputs is None:
        raise LazyNDError(f"mx.rnn.rnn_unroll: inputs is required (one symbol with a time axis or {length} steps)")
    return cell.unroll(length, inputs, begin_state=begin_state, layout=layout)
