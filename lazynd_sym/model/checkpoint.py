"""MXNet-compatible checkpoints: ``prefix-symbol.json`` plus ``prefix-%04d.params``.

The ``.params`` file is an ``nd.save`` dict whose keys are ``arg:<name>`` and
``aux:<name>`` — the layout MXNet writes, so checkpoints move between the two
(:func:`save_params` and :func:`load_params` write and read one alone, as a module's
``save_params`` and ``load_params`` do).
:func:`do_checkpoint` is the epoch-end callback that writes one every few epochs
(``mx.callback.do_checkpoint`` hands it on).
"""

from __future__ import annotations

import math
import numbers
import os
from collections.abc import Callable
from typing import Any

import numpy as np

import lazynd as mx
from lazynd import ndarray as nd
from lazynd.errors import ArgumentTypeError, DataError, FormatError
from lazynd.log import get_logger

from ..json_format import load as load_symbol

__all__ = [
    "do_checkpoint", "epoch_number", "load_bucket_symbols", "load_checkpoint", "load_params", "module_checkpoint",
    "save_checkpoint", "save_params", "states_file",
]  # fmt: skip

_log = get_logger("lazynd.sym.checkpoint")


def epoch_number(where: str, what: str, epoch: Any) -> int:
    """``epoch`` checked to be an integer (a training loop's bound, a checkpoint's number).

    Raises
    ------
    DataError
        When it is None (not set).
    ArgumentTypeError
        When it is not an integer (a str, a float, a bool).
    """
    if epoch is None:
        raise DataError(f"{where}: {what} is required")
    if not isinstance(epoch, numbers.Integral) or isinstance(epoch, bool):
        raise ArgumentTypeError(f"{where}: {what} must be an integer, got {type(epoch).__name__} {epoch!r}")
    return int(epoch)


def _params_file(prefix: str, epoch: Any) -> str:
    """``prefix-%04d.params`` (MXNet formats the epoch with ``%04d``)."""
    return f"{prefix}-{epoch_number(f'checkpoint {prefix!r}', 'epoch', epoch):04d}.params"


def states_file(prefix: str, epoch: Any) -> str:
    """``prefix-%04d.states``: where a module's ``save_checkpoint(..., save_optimizer_states=True)``
    writes its optimizer states and ``Module.load(..., load_optimizer_states=True)`` reads them."""
    return f"{prefix}-{epoch_number(f'checkpoint {prefix!r}', 'epoch', epoch):04d}.states"


def save_checkpoint(
    prefix: str,
    epoch: int,
    symbol: Any,
    arg_params: dict[str, Any],
    aux_params: dict[str, Any],
    remove_amp_cast: bool = True,
) -> None:
    """Write ``prefix-symbol.json`` and ``prefix-%04d.params`` (``arg:``/``aux:`` keys), each atomically.

    ``remove_amp_cast`` (MXNet's default) saves the symbol without its AMP casts (``Symbol.tojson``).

    Examples
    --------
    >>> import os, tempfile, lazynd as mx, lazynd_sym as sym
    >>> prefix = os.path.join(tempfile.mkdtemp(), "net")
    >>> net = sym.FullyConnected(sym.Variable("data"), num_hidden=2, name="fc")
    >>> save_checkpoint(prefix, 1, net, {"fc_weight": mx.nd.ones((2, 3))}, {})
    >>> sorted(load_checkpoint(prefix, 1)[1])
    ['fc_weight']
    """
    # everything checked before anything is written: a refused call leaves no half checkpoint
    path = _params_file(prefix, epoch)
    if symbol is not None and not callable(getattr(symbol, "save", None)):
        raise ArgumentTypeError(f"save_checkpoint: symbol must be a Symbol (or None), got {type(symbol).__name__}")
    payload = {}
    for kind, params in (("arg", arg_params), ("aux", aux_params or {})):
        if not isinstance(params, dict):
            raise ArgumentTypeError(
                f"save_checkpoint: {kind}_params must be a dict by name, got {type(params).__name__}"
            )
        for name, value in params.items():
            if not isinstance(value, nd.NDArray):
                raise ArgumentTypeError(
                    f"save_checkpoint: {kind}_params[{name!r}] must be an NDArray, got {type(value).__name__}"
                )
            payload[f"{kind}:{name}"] = value.as_in_context(mx.cpu())
    if symbol is not None:
        symbol.save(f"{prefix}-symbol.json", remove_amp_cast=remove_amp_cast)
    nd.save(path, payload)
    _log.info('Saved checkpoint to "%s"', path)


def save_params(fname: str, arg_params: dict[str, Any], aux_params: dict[str, Any]) -> None:
    """Write ``arg_params`` and ``aux_params`` to the ``.params`` file ``fname`` (``arg:``/``aux:`` keys), as
    MXNet's ``Module.save_params`` does: the arrays as they are, on their own contexts."""
    payload = {f"arg:{k}": v for k, v in arg_params.items()}
    payload.update({f"aux:{k}": v for k, v in aux_params.items()})
    nd.save(fname, payload)


def load_params(
    prefix: str, epoch: int | None = None, *, strict: bool = False
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Split a ``.params`` file into ``arg_params`` and ``aux_params``.

    ``load_params(prefix, epoch)`` reads ``prefix-%04d.params``, as MXNet's ``mx.model.load_params``
    (whose parameters keep their names here); without ``epoch``, ``prefix`` is the file itself.
    Entries of another kind (``opt:...``) are skipped with a warning, as MXNet's reader skips them;
    ``strict=True`` refuses them, as MXNet's ``Module.load_params`` does.
    """
    path = prefix if epoch is None else _params_file(prefix, epoch)
    saved = nd.load(path)
    if isinstance(saved, list) and not saved:
        saved = {}  # a network without parameters: an empty dict is written as an empty list
    if not isinstance(saved, dict):
        raise FormatError(f"{path}: a checkpoint holds a dict of named arrays, found a list of {len(saved)}")
    arg_params, aux_params = {}, {}
    skipped = []
    for key, value in saved.items():
        kind, colon, name = key.partition(":")
        if kind == "arg":
            arg_params[name] = value
        elif kind == "aux":
            aux_params[name] = value
        elif colon and not strict:
            skipped.append(key)  # another kind of entry ('opt:...'): MXNet's reader passes over it
        else:
            raise FormatError(f"{path}: key {key!r} does not start with 'arg:' or 'aux:'")
    if skipped:
        _log.warning("%s: skipped %d entries that are neither 'arg:' nor 'aux:': %s", path, len(skipped), skipped)
    return arg_params, aux_params


def load_checkpoint(prefix: str, epoch: int) -> tuple[Any, dict[str, Any], dict[str, Any]]:
    """Read ``(symbol, arg_params, aux_params)`` written by ``save_checkpoint`` (ours or MXNet's)."""
    params_file = _params_file(prefix, epoch)
    symbol = load_symbol(f"{prefix}-symbol.json")
    arg_params, aux_params = load_params(params_file)
    return symbol, arg_params, aux_params


def load_bucket_symbols(prefix: str) -> dict[int, Any] | None:
    """The bucket symbols of a bucketing checkpoint: bucket key -> ``prefix-<key>-symbol.json``.

    The keys are those of ``prefix.buckets`` (int32, written by MXNet 1.x's and lazynd's
    ``BucketingModule.save_checkpoint``); None when there is no such file (lazynd writes none
    for keys that are not integers).  A listed bucket without its symbol file is a FormatError
    naming the file, as MXNet's ``BucketingModule.load`` fails on it.
    """
    buckets_file = f"{prefix}.buckets"
    if not os.path.exists(buckets_file):
        return None
    saved = nd.load(buckets_file)
    keys = saved[0] if isinstance(saved, list) and len(saved) == 1 else None
    if keys is None or keys.ndim != 1 or np.dtype(keys.dtype).kind not in "iu":
        arrays = list(saved.values()) if isinstance(saved, dict) else list(saved)
        found = [(array.shape, np.dtype(array.dtype).name) for array in arrays]
        raise FormatError(f"{buckets_file}: a bucket key file holds one 1-D integer array, found {found}")
    return {int(key): load_symbol(f"{prefix}-{int(key)}-symbol.json") for key in keys.asnumpy()}


def do_checkpoint(prefix: str, period: int = 1) -> Callable[[int, Any, dict[str, Any], dict[str, Any]], None]:
    """Epoch-end callback saving ``prefix-symbol.json`` and ``prefix-%04d.params`` every ``period`` epochs.

    The callback receives ``(epoch, symbol, arg_params, aux_params)`` with ``epoch``
    counted from 0 and names the file after the number of epochs done (``epoch + 1``),
    as MXNet does.

    Examples
    --------
    >>> callback = do_checkpoint("/tmp/mlp", period=2)
    >>> callable(callback)
    True
    """
    period = _period("do_checkpoint", period)

    def save(epoch: int, symbol: Any, arg_params: dict[str, Any], aux_params: dict[str, Any]) -> None:
        if not isinstance(epoch, numbers.Real):  # (MXNet adds 1 to whatever it is given: a float, a bool)
            raise ArgumentTypeError(f"do_checkpoint: epoch must be a number (counted from 0), got {epoch!r}")
        if (epoch + 1) % period == 0:
            save_checkpoint(prefix, epoch + 1, symbol, arg_params, aux_params)

    return save


def module_checkpoint(
    mod: Any, prefix: str, period: int = 1, save_optimizer_states: bool = False
) -> Callable[[int, Any, dict[str, Any], dict[str, Any]], None]:
    """Epoch-end callback for ``Module.fit``: ``mod.save_checkpoint`` every ``period`` epochs.

    As :func:`do_checkpoint`, the files are named after the epochs done (``epoch + 1``);
    with ``save_optimizer_states`` the module's optimizer states go to ``prefix-%04d.states``.

    Examples
    --------
    >>> callback = module_checkpoint(None, "/tmp/mlp", period=2)
    >>> callable(callback)
    True
    """
    period = _period("module_checkpoint", period)

    def save(epoch: int, symbol: Any = None, arg_params: Any = None, aux_params: Any = None) -> None:
        if (epoch + 1) % period == 0:
            # by name: BucketingModule's third parameter is remove_amp_cast, as in MXNet
            mod.save_checkpoint(prefix, epoch + 1, save_optimizer_states=save_optimizer_states)

    return save


def _period(callback: str, period: Any) -> int:
    """A checkpoint period as MXNet reads it (a number, at least 1: 0 and less save every epoch);
    anything else is an ArgumentTypeError naming the callback."""
    if isinstance(period, bool) or not isinstance(period, numbers.Real) or not math.isfinite(period):
        raise ArgumentTypeError(f"{callback}: period must be a number of epochs, got {period!r}")
    return max(1, int(float(period)))
