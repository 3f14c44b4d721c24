"""Checkpoints of recurrent networks: the cells' fused weights stored one array per gate, as MXNet's
``mx.rnn.save_rnn_checkpoint`` writes them (``lstm_i2h_i_weight``...)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..model.checkpoint import load_checkpoint, save_checkpoint
from .cells import BaseRNNCell


def _as_list(cells: BaseRNNCell | list[BaseRNNCell]) -> list[BaseRNNCell]:
    return [cells] if isinstance(cells, BaseRNNCell) else list(cells)


def save_rnn_checkpoint(
    cells: BaseRNNCell | list[BaseRNNCell],
    prefix: str,
    epoch: int,
    symbol: Any,
    arg_params: dict[str, Any],
    aux_params: dict[str, Any],
) -> None:
    """``prefix-symbol.json`` and ``prefix-%04d.params`` with the cells' weights unpacked per gate."""
    for cell in _as_list(cells):
        arg_params = cell.unpack_weights(arg_params)
    save_checkpoint(prefix, epoch, symbol, arg_params, aux_params)


def load_rnn_checkpoint(
    cells: BaseRNNCell | list[BaseRNNCell], prefix: str, epoch: int
) -> tuple[Any, dict[str, Any], dict[str, Any]]:
    """The symbol and parameters of :func:`save_rnn_checkpoint`, the gates' weights packed again."""
    symbol, arg_params, aux_params = load_checkpoint(prefix, epoch)
    for cell in _as_list(cells):
        arg_params = cell.pack_weights(arg_params)
    return symbol, arg_params, aux_params


def do_rnn_checkpoint(cells: BaseRNNCell | list[BaseRNNCell], prefix: str, period: int = 1) -> Callable[..., None]:
    """An epoch-end callback that saves an RNN checkpoint every ``period`` epochs."""
    period = int(max(1, period))

    def callback(iter_no: int, symbol: Any = None, arg: Any = None, aux: Any = None) -> None:
        if (iter_no + 1) % period == 0:
            save_rnn_checkpoint(cells, prefix, iter_no + 1, symbol, arg, aux)

    return callback
