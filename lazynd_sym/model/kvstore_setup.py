"""The KVStore a training loop aggregates through, shared by ``FeedForward`` and the Module API:
which store, whether the optimizer runs on it, one push-and-pull of a list of keys, and the
optimizer created by name with the updater numbering that goes with the store."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import numpy as np

from lazynd import optimizer as opt_module
from lazynd.errors import ArgumentTypeError, DataError

__all__ = [
    "LOCAL_UPDATE_LIMIT",
    "calls_per_key",
    "create_kvstore",
    "create_optimizer",
    "initialize_kvstore",
    "is_dist_sync",
    "push_pull",
]

LOCAL_UPDATE_LIMIT = 16 * 1024 * 1024  # elements; a larger parameter is updated on the devices, not in the store


def create_kvstore(kvstore: Any, num_device: int, arg_params: dict[str, Any]) -> tuple[Any, bool]:
    """The store to aggregate gradients through (or None) and whether the optimizer runs on it.

    As in MXNet: one device needs no store unless it is distributed; a store
    of lazynd's created by name runs the optimizer (``update_on_kvstore``), except a
    ``local`` store for parameters over 16M elements and the ``local_allreduce_cpu`` /
    ``local_allreduce_device`` stores, where each device updates its own copy from the
    summed gradients instead.  A ``KVStoreBase`` store (given, or registered and named)
    runs it when ``is_capable(KVStoreBase.OPTIMIZER)``, any other store object when it has
    ``set_optimizer``; otherwise it only sums gradients.  The environment
    variable ``MXNET_UPDATE_ON_KVSTORE=0`` keeps the optimizer on the devices in every case.
    """
    if kvstore is None:
        return None, False
    store, on_store = _store_and_update(kvstore, num_device, arg_params)
    return store, on_store and store is not None and _update_on_kvstore_allowed()


def _update_on_kvstore_allowed() -> bool:
    """MXNet's ``MXNET_UPDATE_ON_KVSTORE`` (default 1): 0 runs the optimizer on the devices."""
    text = os.environ.get("MXNET_UPDATE_ON_KVSTORE", "1")
    try:
        return bool(int(text))
    except ValueError:
        raise DataError(f"MXNET_UPDATE_ON_KVSTORE must be an integer (0 or 1), got {text!r}") from None


def _store_and_update(kvstore: Any, num_device: int, arg_params: dict[str, Any]) -> tuple[Any, bool]:
    """The store and whether the optimizer may run on it, before the environment has its say."""
    if isinstance(kvstore, str):
        if num_device == 1 and "dist" not in kvstore:
            return None, False
        import lazynd_kv

        store = lazynd_kv.create(kvstore)
        if calls_per_key(store):  # a store registered with @KVStoreBase.register: asked, as when given itself
            return _store_and_update(store, num_device, arg_params)
        largest = max((int(np.prod(v.shape)) for v in arg_params.values()), default=0)
        # MXNet 0.9's 'local_allreduce_cpu'/'_device' only sum: each device runs the optimizer
        aggregate_only = "local_allreduce" in kvstore or (kvstore == "local" and largest > LOCAL_UPDATE_LIMIT)
        return store, not aggregate_only
    from lazynd_kv.registry import KVStoreBase

    if isinstance(kvstore, KVStoreBase):  # MXNet asks the store itself
        on_store = bool(kvstore.is_capable(KVStoreBase.OPTIMIZER))
        if not on_store and not callable(getattr(kvstore, "init", None)):
            raise DataError(
                f"kvstore {type(kvstore).__name__}: a store that cannot run the optimizer "
                "(is_capable(KVStoreBase.OPTIMIZER) is False) needs init(key, value) to take the parameters"
            )
        return kvstore, on_store
    for method in ("init", "push", "pull"):
        if not callable(getattr(kvstore, method, None)):
            raise DataError(f"kvstore must be a store name or have init/push/pull, got {type(kvstore).__name__}")
    return kvstore, callable(getattr(kvstore, "set_optimizer", None))


def calls_per_key(store: Any) -> bool:
    """Whether ``store`` is a user's ``KVStoreBase`` store, which MXNet calls one key at a time
    (lazynd's own stores take every key in one call)."""
    from lazynd_kv.base import KVStore, KVStoreBase

    return isinstance(store, KVStoreBase) and not isinstance(store, KVStore)


def initialize_kvstore(
    store: Any, param_arrays: Sequence[list[Any]], values: list[Any], update_on_kvstore: bool
) -> None:
    """Give the store parameter ``i``'s value under key ``i``; when it runs the optimizer, every
    device's copy (``param_arrays[i]``) starts from it (a user's ``KVStoreBase`` store gets one
    ``broadcast`` per key, as MXNet gives it, or one ``init`` when it does not run the optimizer)."""
    keys = list(range(len(values)))
    if calls_per_key(store):
        for key in keys:
            if update_on_kvstore:
                store.broadcast(key, values[key], out=param_arrays[key])
            else:
                store.init(key, values[key])
        return
    store.init(keys, values)
    if update_on_kvstore:
        store.pull(keys, list(param_arrays))


def push_pull(store: Any, keys: list[int], values: Any, outs: Any) -> None:
    """Push ``values`` and pull into ``outs`` in one ``pushpull`` where the store has one, as MXNet
    1.x does (a dist store with no optimizer then sums the gradients in place, in one Allreduce).

    A user's ``KVStoreBase`` store gets one call per key, priority ``-key``, with ``out=None``
    where the sums go back into ``values``, as MXNet calls it."""
    if calls_per_key(store):
        for key, value, out in zip(keys, values, outs, strict=True):
            store.pushpull(key, value, out=None if out is value else out, priority=-key)
        return
    pushpull = getattr(store, "pushpull", None)
    if callable(pushpull):
        pushpull(keys, values, out=outs)
    else:
        store.push(keys, values)
        store.pull(keys, outs)


def is_dist_sync(store: Any) -> bool:
    """Whether ``store`` sums the gradients of several synchronous workers (the batch is then larger)."""
    if store is None:
        return False
    kind = getattr(store, "type", "")
    return isinstance(kind, str) and "dist" in kind and "async" not in kind


def index_names(param_names: Sequence[str], copies: int) -> dict[int, str]:
    """The updater's numbering: ``copies`` indices per parameter, copy ``k`` of parameter ``i`` at
    ``i * copies + k`` (one copy when the store runs the optimizer, one per device when each updates
    its own), each to its parameter's name."""
    return {i * copies + k: param for i, param in enumerate(param_names) for k in range(copies)}


def create_optimizer(
    name: str, params: Any, symbol: Any, param_names: Sequence[str], copies: int, batch_size: int
) -> Any:
    """The optimizer ``name`` made with ``params`` (a dict or ``(key, value)`` pairs), as MXNet makes it.

    ``rescale_grad`` defaults to ``1 / batch_size``; ``param_idx2name`` follows :func:`index_names`.
    """
    try:
        kwargs = dict(params)
    except (TypeError, ValueError):
        raise ArgumentTypeError(
            f"optimizer_params must be a dict or (key, value) pairs, got {type(params).__name__} {params!r:.80}"
        ) from None
    kwargs.setdefault("rescale_grad", 1.0 / batch_size)
    return opt_module.create(name, sym=symbol, param_idx2name=index_names(param_names, copies), **kwargs)


def name_indices(optimizer: Any, param_names: Sequence[str], copies: int) -> Any:
    """An ``Optimizer`` the user made, given the parameters' names by :func:`index_names` unless it
    has names already (as MXNet does: its multipliers by name then reach the parameters)."""
    if not optimizer.idx2name:
        optimizer.idx2name = index_names(param_names, copies)
    return optimizer
