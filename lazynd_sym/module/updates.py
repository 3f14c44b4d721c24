"""A Module's parameter updates: through the KVStore's optimizer, or by an updater on every device.

:func:`create_updates` sets them up for ``init_optimizer``: the store, the optimizer and, where
the devices update their own copies, the updater.
The store is chosen as ``FeedForward`` chooses it (one device needs none unless
distributed; a store created by name runs the optimizer).  Parameter ``i`` is
key ``i`` in the store; when the devices update their own copies, copy ``k`` of
parameter ``i`` is updater index ``i * num_device + k`` -- MXNet's numbering, so
optimizer states and ``param_idx2name`` line up with MXNet's.  Fixed parameters
(no gradient) keep their index and are skipped.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from lazynd import optimizer as opt_module
from lazynd.errors import DataError
from lazynd.log import warn_from_user_code
from lazynd.optimizer.states_file import load_states, save_states

from ..model.kvstore_setup import create_kvstore, create_optimizer, is_dist_sync, name_indices, push_pull
from ..model.kvstore_setup import initialize_kvstore as setup_kvstore
from ..model.sparse_grads import warn_dense_row_sparse

__all__ = [
    "create_kvstore",
    "create_updates",
    "initialize_kvstore",
    "is_dist_sync",
    "load_optimizer_states",
    "save_optimizer_states",
    "update_params",
    "update_params_on_kvstore",
]


def create_updates(
    kvstore: Any, optimizer: Any, optimizer_params: Any, symbol: Any, group: Any, arg_params: dict[str, Any]
) -> tuple[Any, Any, bool, Any]:
    """``(optimizer, store, update_on_kvstore, updater)`` for the bound executor ``group``.

    ``optimizer`` is a name, made with ``optimizer_params`` (``rescale_grad`` one over the batch of
    every synchronous worker), or an ``Optimizer``.  The store (or None, see
    :func:`~lazynd_sym.model.kvstore_setup.create_kvstore`) gets every parameter's value from
    ``arg_params``; it runs the optimizer, or the returned updater runs it on every device.
    """
    num_device = len(group.contexts)
    store, update_on_kvstore = create_kvstore(kvstore, num_device, arg_params)
    batch_size = group.batch_size * (int(store.num_workers) if is_dist_sync(store) else 1)
    copies = 1 if update_on_kvstore else num_device
    if isinstance(optimizer, str):
        optimizer = create_optimizer(optimizer, optimizer_params, symbol, group.param_names, copies, batch_size)
    elif isinstance(optimizer, opt_module.Optimizer):
        if optimizer.rescale_grad != 1.0 / batch_size:
            warn_from_user_code(
                f"Module.init_optimizer: the optimizer's rescale_grad is {optimizer.rescale_grad}, not "
                f"1/batch_size = {1.0 / batch_size}; the gradients are sums over the batch",
            )
        name_indices(optimizer, group.param_names, copies)
    else:
        raise DataError(f"init_optimizer: optimizer must be a name or an Optimizer, got {type(optimizer).__name__}")
    warn_dense_row_sparse(symbol, optimizer, "Module.init_optimizer")
    if store is not None:
        initialize_kvstore(store, group.param_arrays, arg_params, group.param_names, update_on_kvstore)
    if update_on_kvstore:
        store.set_optimizer(optimizer)
        return optimizer, store, True, None
    return optimizer, store, False, opt_module.get_updater(optimizer)


def initialize_kvstore(
    store: Any,
    param_arrays: Sequence[list[Any]],
    arg_params: dict[str, Any],
    param_names: Sequence[str],
    update_on_kvstore: bool,
) -> None:
    """Give the store each parameter's value; when it runs the optimizer, every device starts from it."""
    setup_kvstore(store, param_arrays, [arg_params[name] for name in param_names], update_on_kvstore)


def _learned(grad_arrays: Sequence[list[Any]]) -> list[int]:
    return [i for i, grads in enumerate(grad_arrays) if grads and grads[0] is not None]


def update_params_on_kvstore(param_arrays: Sequence[list[Any]], grad_arrays: Sequence[list[Any]], store: Any) -> None:
    """Push every device's gradients; the store sums them, runs the optimizer and the devices pull the weights."""
    keys = _learned(grad_arrays)
    if keys:
        push_pull(store, keys, [grad_arrays[i] for i in keys], [param_arrays[i] for i in keys])


def update_params(
    param_arrays: Sequence[list[Any]],
    grad_arrays: Sequence[list[Any]],
    updater: Callable[..., None],
    num_device: int,
    store: Any = None,
) -> None:
    """Sum the gradients through ``store`` (if any), then update each device's copy with ``updater``."""
    keys = _learned(grad_arrays)
    if not keys:
        return
    if store is not None:  # the summed gradients come back in place
        push_pull(store, keys, [grad_arrays[i] for i in keys], [grad_arrays[i] for i in keys])
    for k in range(num_device):
        # one call per device with every parameter (SGD makes it one multi_sgd_update)
        updater(
            [i * num_device + k for i in keys],
            [grad_arrays[i][k] for i in keys],
            [param_arrays[i][k] for i in keys],
        )


def save_optimizer_states(fname: str, store: Any, updater: Any, param_names: Sequence[str] = ()) -> None:
    """Write the states of the store's optimizer (``store`` given) or of the devices' ``updater`` to ``fname``.

    The store's states are saved under the parameters' names (key ``i`` is ``param_names[i]``), as
    MXNet's Module, which keys its store by name, saves them: MXNet 1.9.1 resuming from the file
    finds them so (keyed by number, it silently started every state afresh).
    """
    from lazynd_kv.base import KVStore

    if store is not None:
        if isinstance(store, KVStore) and param_names:
            store.save_optimizer_states(fname, key_names=dict(enumerate(param_names)))
        else:
            store.save_optimizer_states(fname)
    else:
        save_states(updater, fname)


def load_optimizer_states(fname: str, store: Any, updater: Any) -> None:
    """Restore states written by :func:`save_optimizer_states`.

    The file brings the states to the host; the updater moves each to the device of the copy it
    updates at that copy's first update.
    """
    if store is not None:
        store.load_optimizer_states(fname)
        return
    load_states(updater, fname)
