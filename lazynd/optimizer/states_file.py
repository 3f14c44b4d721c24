"""Optimizer states on disk, in the layout MXNet 1.x's ``save_optimizer_states`` writes, so that a
checkpoint moves between lazynd and MXNet 1.9.1 either way.

:meth:`KVStore.save_optimizer_states` (and so ``Module.save_checkpoint``) writes the updater's
``get_states()``: MXNet's pickled dict of states, each array an MXNet NDArray record
(:mod:`lazynd.optimizer.states_pickle`).  When every state is ``None``, an NDArray, or a tuple or
list of NDArrays -- the states of every built-in optimizer -- the file names nothing but MXNet's
NDArray and ``bytearray``, and is read back by an unpickler that knows only those: it runs no code.
Other states (a custom optimizer keeping numbers or objects, a custom updater), and states saved
with their optimizer (``dump_optimizer=True``), are pickled as they are, and reading those runs
whatever code the file names, so :func:`load_states` must only be given such files from a trusted
source.

Files earlier lazynd versions wrote still load: an MXNet NDArray-list file (told apart by its magic
number) whose arrays are named by a JSON list ``[key, layout, position]`` (``[3, "array", 0]``: the
state of key ``3`` is one NDArray; ``["fc1_weight", "none", 0]``: the state is ``None``;
``[3, "tuple", 1]``: item 1 of a tuple state), and pickles of NumPy arrays.
"""

from __future__ import annotations

import inspect
import json
import os
import struct
from typing import Any

from ..errors import FormatError, LazyNDError
from ..formats.fileio import open_for_read, write_atomic
from ..formats.ndarray_file import LIST_MAGIC, decode
from ..ndarray import NDArray
from ..ndarray import array as _array
from .updater import Updater

__all__ = ["load_states", "save_states"]

_MAGIC_BYTES = struct.pack("<Q", LIST_MAGIC)
_SEQUENCES = {"tuple": tuple, "list": list}


def save_states(
    updater: Any,
    fname: str | os.PathLike[str],
    dump_optimizer: bool = False,
    key_names: dict[Any, str] | None = None,
) -> None:
    """Write ``updater``'s optimizer states to ``fname`` atomically (a path, or a URL with fsspec).

    Parameters
    ----------
    updater : Updater or object with ``get_states()``
        The updater whose states are saved.
    fname : str or os.PathLike
        Target file.
    dump_optimizer : bool
        Save the optimizer with the states, as MXNet does, so that loading the
        file brings back its settings and update counts (a lazynd optimizer, which
        MXNet cannot read).  A custom updater's ``get_states`` is handed the flag
        when it takes one.
    key_names : dict, optional
        Save the state of key ``k`` of a lazynd :class:`Updater` under the name
        ``key_names[k]`` (keys not in it keep their own), as MXNet's Module keys its
        store's states by parameter name.

    Examples
    --------
    >>> import lazynd as mx, os, tempfile
    >>> updater = mx.optimizer.get_updater(mx.optimizer.create('sgd', momentum=0.9))
    >>> updater(0, mx.nd.ones((2,)), mx.nd.ones((2,)))
    >>> path = os.path.join(tempfile.mkdtemp(), 'sgd.states')
    >>> save_states(updater, path)
    >>> restored = mx.optimizer.get_updater(mx.optimizer.create('sgd', momentum=0.9))
    >>> load_states(restored, path)
    >>> restored.states[0].asnumpy().tolist() == updater.states[0].asnumpy().tolist()
    True
    """
    if key_names and isinstance(updater, Updater):
        names = list(key_names.get(k, k) for k in updater.states)
        if len(set(names)) != len(names):
            raise LazyNDError(f"save_optimizer_states: key_names {key_names!r} give two states one name")
        named = Updater(updater.optimizer)
        named.states = dict(zip(names, updater.states.values(), strict=True))
        updater = named
    get_states = updater.get_states
    data = get_states(dump_optimizer) if inspect.signature(get_states).parameters else get_states()
    if isinstance(data, str):
        data = data.encode("latin-1")
    write_atomic(fname, data)


def load_states(updater: Any, fname: str | os.PathLike[str]) -> None:
    """Restore states written by :func:`save_states` or by MXNet 1.x (onto the CPU).

    An NDArray-format file (earlier lazynd versions) is read without ``pickle``.
    Any other file is handed to ``updater.set_states``: states of arrays in
    MXNet's layout are read without running code; any other pickle is unpickled,
    and **pickle runs the code a file names, so load only files you trust.**

    Raises
    ------
    FormatError
        When an NDArray-format file does not hold optimizer states, or a pickle holds an
        MXNet object other than its NDArrays (an optimizer saved with ``dump_optimizer=True``);
        every error of a pickle names the file.
    LazyNDError
        When an NDArray-format file is given to an updater that is not a
        lazynd :class:`Updater`.
    """
    data = open_for_read(fname)
    if not data.startswith(_MAGIC_BYTES):
        try:
            updater.set_states(data)  # a pickle: trusted files only (see above)
        except LazyNDError as err:
            # the updater's message says what is wrong; the reader also needs to know which file
            raise type(err)(f"load_optimizer_states: {os.fspath(fname)!r}: {err}") from err
        return
    if not isinstance(updater, Updater):
        raise LazyNDError(
            f"load_optimizer_states: {os.fspath(fname)!r} holds arrays, which only lazynd's Updater "
            f"can take; the installed updater is a {type(updater).__name__}"
        )
    updater.restore_states(_from_named_arrays(decode(data, source=os.fspath(fname)), os.fspath(fname)))


def _from_named_arrays(named: Any, source: str) -> dict[Any, Any]:
    if isinstance(named, list) and not named:
        return {}  # no states yet (saved before the first update): the format reads an empty dict as []
    if not isinstance(named, dict):
        raise FormatError(f"{source}: an optimizer states file names its arrays; this one holds an unnamed list")
    states: dict[Any, Any] = {}
    items: dict[Any, dict[int, NDArray]] = {}
    layouts: dict[Any, str] = {}
    for name, record in named.items():
        try:
            key, layout, position = json.loads(name)
            if not isinstance(key, (int, str)) or not isinstance(position, int):
                raise ValueError
        except (ValueError, TypeError):
            raise FormatError(
                f"{source}: array name {name!r} is not an optimizer state name [key, layout, position]; "
                "is this an nd.save file rather than saved optimizer states?"
            ) from None
        if layouts.setdefault(key, layout) != layout or (layout in ("none", "array") and key in states):
            raise FormatError(f"{source}: the state of key {key!r} is stored more than once ({name!r})")
        if layout == "none":
            states[key] = None
        elif layout == "array" and record.array is not None:
            states[key] = _array(record.array, dtype=record.array.dtype)
        elif layout in _SEQUENCES and record.array is not None:
            items.setdefault(key, {})[position] = _array(record.array, dtype=record.array.dtype)
            states[key] = None  # placeholder keeps the saved order of keys
        else:
            raise FormatError(f"{source}: array {name!r} has unknown layout {layout!r} or no data")
    for key, parts in items.items():
        if sorted(parts) != list(range(len(parts))):
            raise FormatError(f"{source}: state of key {key!r} has items {sorted(parts)}; expected 0..{len(parts) - 1}")
        states[key] = _SEQUENCES[layouts[key]](parts[i] for i in range(len(parts)))
    return states
