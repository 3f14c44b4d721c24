"""The pairs a KVStore call works on: ``(key, arrays)`` in, ``(source, destination)`` copies out.

Every call takes a key and a value, or a list of keys and a list of values; a
value is one NDArray or a list of them (one per device).  :func:`group_pairs`
turns both forms into ``[(key, [arrays...]), ...]``, merging a key given twice
into one group in the order given.  A key is an ``int`` or a ``str`` (a NumPy
integer is taken as an ``int``, a ``bool`` is refused), the keys of one call all
of one kind, as MXNet 1.9.1 asserts; a priority is an ``int``.  A bad argument raises a :class:`~lazynd.errors.LazyNDError` naming
the call and the key before the store changes anything.

:func:`copy_pairs` is how the stores hand values on (a pull into the outputs,
a sum into the store): a copy per ``(source, destination)`` pair, the copies
between small host arrays bundled into one engine operation.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from lazynd.context import cpu
from lazynd.errors import LazyNDError
from lazynd.ndarray import NDArray
from lazynd.runtime import push

Key = int | str
BUNDLE_BYTES = 1 << 20  # copies of host arrays smaller than this share one engine operation


class MixedKeyTypesError(LazyNDError, AssertionError):
    """int and str keys mixed in one call or one store.  MXNet 1.9.1 raises an ``AssertionError``
    for a call's list and an ``MXNetError`` (a ``RuntimeError``) for a store: this is both."""


def key_kind(key: Key) -> str:
    """``'int'`` or ``'str'``: the type of a checked key (NumPy integers are ints), which one store keeps to."""
    return "str" if isinstance(key, str) else "int"


def _check_key(key: Any) -> Key:
    if key.__class__ is int or key.__class__ is str:  # the common keys, at once
        return key
    if isinstance(key, (bool, np.bool_)) or not isinstance(key, (int, np.integer, str)):
        raise LazyNDError(f"KVStore keys are int or str, got {key!r} of type {type(key).__name__}")
    return int(key) if isinstance(key, np.integer) else key


def _as_list(value: Any, what: str, key: Any) -> list[NDArray]:
    if value.__class__ is NDArray:  # one array per key, the common call
        return [value]
    values = list(value) if isinstance(value, (list, tuple)) else [value]
    if not values:
        raise LazyNDError(f"{what}: key {key!r} was given an empty list of arrays")
    for v in values:
        if not isinstance(v, NDArray):
            raise LazyNDError(f"{what}: key {key!r} expects NDArray values, got {type(v).__name__}")
    return values


def group_pairs(key: Any, value: Any, what: str) -> list[tuple[Key, list[NDArray]]]:
    """Normalise ``(key, value)`` into ``[(key, [arrays...]), ...]``, merging repeated keys in order."""
    if isinstance(key, (list, tuple)):
        if not isinstance(value, (list, tuple)) or len(value) != len(key):
            given = len(value) if isinstance(value, (list, tuple)) else type(value).__name__
            raise LazyNDError(f"{what}: {len(key)} keys need a list of {len(key)} values (or lists), got {given}")
        checked = [_check_key(k) for k in key]
        if len({key_kind(k) for k in checked}) > 1:
            raise MixedKeyTypesError(f"{what}: the keys {list(key)!r} mix int and str keys; give keys of one type")
        groups: dict[Key, list[NDArray]] = {}
        for k, v in zip(checked, value, strict=True):
            vs = _as_list(v, what, k)
            if k in groups:  # a key given twice: its arrays are merged, in order
                groups[k].extend(vs)
            else:
                groups[k] = vs
        return list(groups.items())
    return [(_check_key(key), _as_list(value, what, key))]


def _check_priority(priority: Any) -> None:
    if isinstance(priority, bool) or not isinstance(priority, (int, np.integer)):
        raise LazyNDError(f"priority must be an int, got {priority!r}")


def copy_pairs(pairs: Sequence[tuple[NDArray, NDArray]]) -> None:
    """Push a copy of each ``(source, destination)`` pair, skipping a source already in place.

    A large array's copy is one engine operation, so that several run side by side; the copies
    between small host arrays go in one operation, which saves an engine hand-off per key.
    """
    small: list[tuple[NDArray, NDArray]] = []
    data_pairs: list[tuple[Any, Any]] = []
    work = 0
    for src, dst in pairs:
        sdata, ddata = src.data_array, dst.data_array
        if ddata is sdata:
            continue
        if sdata.nbytes < BUNDLE_BYTES and src.context.device_type != "gpu" and dst.context.device_type != "gpu":
            small.append((src, dst))
            data_pairs.append((sdata, ddata))
            work += sdata.size
        else:
            src.copyto(dst)
    if len(small) == 1:
        small[0][0].copyto(small[0][1])
    elif small:
        reads = list(dict.fromkeys([src.var for src, _ in small]))
        writes = list(dict.fromkeys([dst.var for _, dst in small]))
        push(cpu(), _copy_host_pairs, (data_pairs,), reads, writes, "_kvstore_copy", work)


def _copy_host_pairs(pairs: list[tuple[np.ndarray, np.ndarray]]) -> None:
    for src, dst in pairs:
        dst[...] = src  # unsafe casting, as np.copyto(casting="unsafe"), at half its call cost
