"""The KVStore interface: the registry, the calls checked against the stored values, updaters, optimizer states.

A store keeps one NDArray per key.  ``push`` sums the values given for a key
(one per device, one per worker) and hands the sum to the *updater*,
``updater(key, received, stored)``, which updates the stored value in place;
with no updater the stored value is replaced by the sum.  ``pull`` copies the
stored value into one or more outputs.  Everything is pushed to the engine and
returns at once.

``pushpull`` does both in one call.

Subclasses implement :meth:`KVStore._init_key` and :meth:`KVStore._push_groups`,
and may override :meth:`KVStore._pull_groups` and :meth:`KVStore._pushpull_groups`; the
checks below run before any of them, so a bad call raises without changing
anything.  How a call's keys and arrays are grouped and checked, and how values are
copied between arrays, is :mod:`lazynd_kv.pairs`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from lazynd.errors import LazyNDError, ParameterError, ShapeError
from lazynd.ndarray import NDArray
from lazynd.optimizer.states_file import load_states, save_states

from .pairs import Key, MixedKeyTypesError, _check_key, _check_priority, copy_pairs, group_pairs, key_kind
from .registry import KVStoreBase, OneWorker, create, register, supported_types

__all__ = [
    "KVKeyError",
    "KVStore",
    "MixedKeyTypesError",
    "KVStoreBase",
    "Updater",
    "create",
    "register",
    "supported_types",
]

Updater = Callable[[Key, NDArray, NDArray], None]


class KVKeyError(LazyNDError, KeyError):
    """A key is missing from the store, or initialised twice."""

    def __str__(self) -> str:  # KeyError would quote the whole message
        return str(self.args[0]) if self.args else ""


class KVStore(OneWorker, KVStoreBase):
    """A key-value store of NDArrays that sums pushes and applies an updater.

    Examples
    --------
    >>> import lazynd as mx, lazynd_kv
    >>> kv = lazynd_kv.create('local')
    >>> kv.init(3, mx.nd.ones((2, 3)))
    >>> kv.push(3, [mx.nd.ones((2, 3)) * 2] * 4)     # summed: 8
    >>> out = mx.nd.zeros((2, 3))
    >>> kv.pull(3, out=out)
    >>> out.asnumpy()[0]
    array([8., 8., 8.], dtype=float32)
    """

    def __init__(self, name: str) -> None:
        self._type = name
        self._store: dict[Key, NDArray] = {}
        self._updater: Updater | None = None
        self._key_kind: str | None = None  # 'int' or 'str' once a key is initialised: a store keeps to one

    # -- properties ----------------------------------------------------------------------------
    @property
    def type(self) -> str:
        return self._type

    def __repr__(self) -> str:
        return f"<KVStore {self._type} rank={self.rank}/{self.num_workers} keys={len(self._store)}>"

    # -- public API ----------------------------------------------------------------------------
    def init(self, key: Any, value: Any) -> None:
        """Initialise ``key`` (or a list of keys) with ``value``; with a list of values the first is used."""
        groups = self._pairs(key, value, "init")
        if isinstance(key, (list, tuple)) and len(groups) < len(key):
            repeated = next(k for k, count in Counter(map(_check_key, key)).items() if count > 1)
            raise KVKeyError(f"KVStore.init: key {repeated!r} is given twice in one call (init each key once)")
        for k, _ in groups:
            if k in self._store:
                raise KVKeyError(f"KVStore.init: key {k!r} is already initialised (init each key once)")
        self._init_groups(groups)
        if groups:
            self._key_kind = key_kind(groups[0][0])

    def push(self, key: Any, value: Any, priority: int = 0) -> None:
        """Push values for ``key`` (or lists); the values of one key are summed, then the updater runs."""
        _check_priority(priority)
        groups = self._checked_values(self._pairs(key, value, "push"), "push")
        self._push_groups(groups)

    def pull(self, key: Any, out: Any = None, priority: int = 0, ignore_sparse: bool = True) -> None:
        """Copy the value of ``key`` (or lists) into ``out`` (an NDArray or a list, e.g. one per device).

        ``ignore_sparse`` is MXNet's switch for skipping row_sparse values; every lazynd
        value is dense, so every key is pulled either way.
        """
        _check_priority(priority)
        if not isinstance(ignore_sparse, (bool, np.bool_)):
            raise LazyNDError(f"KVStore.pull: ignore_sparse must be True or False, got {ignore_sparse!r}")
        if out is None:
            raise LazyNDError("KVStore.pull: out= is required (an NDArray or a list of NDArrays per key)")
        groups = self._pairs(key, out, "pull")
        self._check_outs(groups, "pull")
        self._pull_groups(groups)

    def row_sparse_pull(self, key: Any, out: Any = None, priority: int = 0, row_ids: Any = None) -> None:
        """MXNet's pull of some rows of a row_sparse value: refused, lazynd's values are all dense (use :meth:`pull`)."""
        raise LazyNDError(
            "KVStore.row_sparse_pull: row_sparse values are not supported (lazynd arrays are all dense); "
            "pull the whole value with pull(key, out=...)"
        )

    def broadcast(self, key: Any, value: Any, out: Any, priority: int = 0) -> None:
        """Initialise ``key`` (or lists) with ``value`` and pull it into ``out`` at once, as MXNet 1.x's
        ``broadcast``: the key must not be initialised yet.

        Examples
        --------
        >>> import lazynd as mx, lazynd_kv
        >>> kv = lazynd_kv.create('local')
        >>> outs = [mx.nd.zeros((2,)), mx.nd.zeros((2,))]      # one per device
        >>> kv.broadcast('w', mx.nd.ones((2,)) * 4, out=outs)
        >>> [o.asnumpy().tolist() for o in outs]
        [[4.0, 4.0], [4.0, 4.0]]
        """
        _check_priority(priority)
        if out is None:
            raise LazyNDError("KVStore.broadcast: out= is required (an NDArray or a list of NDArrays per key)")
        self._check_outs_shaped_like(self._pairs(key, value, "broadcast"), self._pairs(key, out, "broadcast"))
        self.init(key, value)
        self.pull(key, out=out, priority=priority)

    def pushpull(self, key: Any, value: Any, out: Any = None, priority: int = 0) -> None:
        """Push ``value`` for ``key`` (or lists), then pull the key's new value into ``out``.

        The result is that of ``push(key, value)`` followed by ``pull(key, out)``, with
        the arguments of both checked before anything runs; ``out=None`` pulls into
        ``value`` itself (gradients summed in place).  With no updater the distributed
        stores sum straight into the first output of each key, in one Allreduce, and
        copy the sum into the store from there; a later ``pull`` still returns the sum
        when ``out`` has been written since.

        Examples
        --------
        >>> import lazynd as mx, lazynd_kv
        >>> kv = lazynd_kv.create('local')
        >>> kv.init('g', mx.nd.zeros((2,)))
        >>> grads = [mx.nd.ones((2,)), mx.nd.ones((2,)) * 2]     # one per device
        >>> kv.pushpull('g', grads)                              # each now holds the sum
        >>> [g.asnumpy().tolist() for g in grads]
        [[3.0, 3.0], [3.0, 3.0]]
        """
        _check_priority(priority)
        given = self._pairs(key, value, "pushpull")
        out_groups = given if out is None else self._pairs(key, out, "pushpull")
        groups = self._checked_values(given, "pushpull")
        self._check_outs(out_groups, "pushpull")
        self._pushpull_groups(groups, out_groups)

    def set_updater(self, updater: Updater) -> None:
        """Use ``updater(key, received, stored)`` to merge pushed sums into the stored values."""
        if not callable(updater):
            raise LazyNDError(f"set_updater: expected a callable(key, recv, stored), got {type(updater).__name__}")
        self._updater = updater

    _set_updater = set_updater

    def is_capable(self, capability: str) -> bool:
        """Whether this store can do ``capability``; lazynd's stores all run an optimizer (``'optimizer'``)."""
        if not isinstance(capability, str) or capability.lower() != self.OPTIMIZER:
            raise ParameterError(f"KVStore.is_capable: unknown capability {capability!r} (known: {self.OPTIMIZER!r})")
        return True

    def set_gradient_compression(self, compression_params: Any) -> None:
        """MXNet's 1-bit and 2-bit gradient compression: refused, lazynd sums gradients uncompressed."""
        raise LazyNDError(
            f"KVStore.set_gradient_compression: gradient compression is not supported by lazynd's "
            f"{self._type!r} store (given {compression_params!r}); gradients are summed uncompressed"
        )

    def set_optimizer(self, optimizer: Any) -> None:
        """Update the stored values with ``optimizer``: a :mod:`lazynd.optimizer` Optimizer, or its
        registered name (``'sgd'``), created with its default settings.

        Examples
        --------
        >>> import lazynd as mx, lazynd_kv
        >>> kv = lazynd_kv.create('local')
        >>> kv.set_optimizer(mx.optimizer.create('sgd', learning_rate=0.5))
        >>> kv.set_optimizer('adam')
        """
        from lazynd import optimizer as opt

        if isinstance(optimizer, str):
            optimizer = opt.create(optimizer)
        elif not isinstance(optimizer, opt.Optimizer):
            raise LazyNDError(
                f"set_optimizer: expected an Optimizer (lazynd.optimizer.create('sgd', ...)) or an optimizer "
                f"name such as 'sgd', got {type(optimizer).__name__}; for a function use set_updater"
            )
        self.set_updater(opt.get_updater(optimizer))

    def save_optimizer_states(
        self, fname: str, dump_optimizer: bool = False, key_names: dict[Any, str] | None = None
    ) -> None:
        """Write the optimizer states of the installed Updater to ``fname`` (atomically).

        ``key_names`` (lazynd's) saves the state of key ``k`` under the name ``key_names[k]``: a
        Module numbers its parameters' keys, where MXNet's Module keys its store by parameter name,
        so its checkpoint names them for MXNet to find (loading maps names back through the
        optimizer's ``idx2name``).

        The file is the updater's ``get_states()``: states made of arrays (those
        of every built-in optimizer) in MXNet 1.x's layout, which MXNet 1.9.1
        reads and lazynd reads back without running pickled code; other states,
        and the states with the optimizer itself (``dump_optimizer=True``, which
        :meth:`load_optimizer_states` then installs, as MXNet does), pickled as
        they are.  ``fname`` may be a URL when fsspec
        is installed.  See :mod:`lazynd.optimizer.states_file`.
        """
        save_states(self._optimizer_updater("save_optimizer_states"), fname, dump_optimizer, key_names)

    def load_optimizer_states(self, fname: str) -> None:
        """Restore optimizer states written by :meth:`save_optimizer_states`.

        .. warning:: A file that is not states of arrays in MXNet's layout (a
           custom optimizer's states, an optimizer saved with them, or a pickle
           from an older lazynd) is unpickled in full, and unpickling runs
           whatever code the file names: load only files you trust.
        """
        load_states(self._optimizer_updater("load_optimizer_states"), fname)

    def barrier(self) -> None:
        """Wait until every worker gets here (and, locally, until pushed work is done)."""
        from lazynd.engine import waitall

        waitall()

    # -- helpers for subclasses ----------------------------------------------------------------
    def _pairs(self, key: Any, value: Any, what: str) -> list[tuple[Key, list[NDArray]]]:
        """:func:`group_pairs`, with the keys checked to be of the store's kind: as MXNet 1.9.1, a store
        whose keys are ints refuses a str key in any call, and the other way round."""
        groups = group_pairs(key, value, what)
        kind = self._key_kind
        for k, _ in groups if kind is not None else ():
            if key_kind(k) != kind:
                raise MixedKeyTypesError(
                    f"KVStore.{what}: key {k!r} is of type {key_kind(k)}, but this store's keys are of type "
                    f"{kind}; a store takes keys of one type"
                )
        return groups

    def _checked_values(
        self, groups: Sequence[tuple[Key, list[NDArray]]], what: str
    ) -> list[tuple[Key, list[NDArray]]]:
        """``groups`` checked against the stored values' shapes, each value of another dtype cast
        to its key's (as MXNet converts a float16 gradient pushed to a float32 key)."""
        self._check_like_stored(groups, what, "pushed value")
        cast = []
        for k, arrays in groups:
            dtype = self._store[k].dtype
            cast.append((k, [v if v.dtype == dtype else v.astype(dtype) for v in arrays]))
        return cast

    def _check_outs(self, groups: Sequence[tuple[Key, list[NDArray]]], what: str) -> None:
        self._check_like_stored(groups, what, "output")

    def _check_like_stored(self, groups: Sequence[tuple[Key, list[NDArray]]], what: str, role: str) -> None:
        store = self._store
        for k, arrays in groups:
            stored = store.get(k)
            if stored is None:
                stored = self._stored(k, what)  # raises the clear error
            data = stored.data_array
            shape = data.shape
            for v in arrays:
                vdata = v.data_array
                if vdata.shape != shape:
                    raise ShapeError(
                        f"KVStore.{what}: key {k!r} holds shape {stored.shape}, {role} has shape {v.shape}"
                    )

    def _check_outs_shaped_like(
        self, groups: Sequence[tuple[Key, list[NDArray]]], out_groups: Sequence[tuple[Key, list[NDArray]]]
    ) -> None:
        """Outputs of a broadcast shaped as the value each key is initialised with (checked before init)."""
        for (k, values), (_, outs) in zip(groups, out_groups, strict=True):
            for o in outs:
                if o.shape != values[0].shape:
                    raise ShapeError(
                        f"KVStore.broadcast: key {k!r} is given a value of shape {values[0].shape}, "
                        f"output has shape {o.shape}"
                    )

    def _pull_groups(self, groups: Sequence[tuple[Key, list[NDArray]]]) -> None:
        copy_pairs([(self._store[k], o) for k, outs in groups for o in outs])

    def _stored(self, key: Key, what: str) -> NDArray:
        stored = self._store.get(key)
        if stored is None:
            raise KVKeyError(f"KVStore.{what}: key {key!r} is not initialised; call init({key!r}, value) first")
        return stored

    def _optimizer_updater(self, what: str) -> Any:
        updater = self._updater
        if updater is None or not hasattr(updater, "get_states"):
            raise LazyNDError(f"{what}: no optimizer is set; call set_optimizer(optimizer) first")
        return updater

    def _apply_update(self, key: Key, merged: NDArray, stored: NDArray) -> None:
        if self._updater is None:
            if merged is not stored:
                merged.copyto(stored)
        else:
            self._updater(key, merged, stored)

    # -- what each store implements ------------------------------------------------------------
    def _init_groups(self, groups: Sequence[tuple[Key, list[NDArray]]]) -> None:
        """Store each key's first value (checked: no key is initialised yet)."""
        for k, values in groups:
            self._store[k] = self._init_key(k, values[0])

    def _init_key(self, key: Key, value: NDArray) -> NDArray:
        raise NotImplementedError

    def _push_groups(self, groups: Sequence[tuple[Key, list[NDArray]]]) -> None:
        raise NotImplementedError

    def _pushpull_groups(
        self, groups: Sequence[tuple[Key, list[NDArray]]], out_groups: Sequence[tuple[Key, list[NDArray]]]
    ) -> None:
        """Push then pull; a store that can do better overrides this (see :class:`lazynd_kv.dist.DistSyncStore`)."""
        self._push_groups(groups)
        self._pull_groups(out_groups)
