"""MXNet's private training-loop helpers of ``mx.model``, for the modules users wrote on ``BaseModule``.

Many MXNet programs carry their own ``Module`` (the ``MutableModule`` of the detection and
segmentation code bases, for one) that imports ``_create_kvstore``, ``_initialize_kvstore``,
``_update_params_on_kvstore`` and ``_update_params`` from ``mxnet.model``.  They take MXNet
1.x's arguments here and run the helpers our own Module uses
(:mod:`lazynd_sym.module.updates`), so such a module trains as ours does: parameter ``i`` is
key ``i`` in the store, and copy ``k`` of it is updater index ``i * num_device + k``.
``param_names`` is accepted where MXNet 1.x takes it and checked against the arrays.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from lazynd.errors import DataError

from ..module import updates

__all__ = ["_create_kvstore", "_initialize_kvstore", "_update_params", "_update_params_on_kvstore"]


def _check_names(where: str, param_arrays: Sequence[Any], param_names: Sequence[str] | None) -> None:
    """Raise when ``param_names`` does not name each entry of ``param_arrays`` once."""
    if param_names is not None and len(param_names) != len(param_arrays):
        raise DataError(
            f"mx.model.{where}: param_names has {len(param_names)} names for "
            f"{len(param_arrays)} parameters in param_arrays; expected one name per parameter"
        )


def _create_kvstore(kvstore: Any, num_device: int, arg_params: dict[str, Any]) -> tuple[Any, bool]:
    """``(store or None, update_on_kvstore)`` for ``kvstore`` (a name or a store) over ``num_device`` devices.

    Examples:
        >>> import lazynd as mx
        >>> mx.model._create_kvstore("local", 1, {})
        (None, False)
    """
    return updates.create_kvstore(kvstore, num_device, arg_params)


def _initialize_kvstore(
    kvstore: Any,
    param_arrays: Sequence[list[Any]],
    arg_params: dict[str, Any],
    param_names: Sequence[str],
    update_on_kvstore: bool,
) -> None:
    """Give ``kvstore`` each parameter's value from ``arg_params``; with ``update_on_kvstore`` every
    device's copy (``param_arrays[i]``) starts from it."""
    _check_names("_initialize_kvstore", param_arrays, param_names)
    missing = [name for name in param_names if name not in arg_params]
    if missing:
        raise DataError(f"mx.model._initialize_kvstore: arg_params has no value for {missing}")
    updates.initialize_kvstore(kvstore, param_arrays, arg_params, param_names, update_on_kvstore)


def _update_params_on_kvstore(
    param_arrays: Sequence[list[Any]],
    grad_arrays: Sequence[list[Any]],
    kvstore: Any,
    param_names: Sequence[str] | None = None,
) -> None:
    """Push every device's gradients to ``kvstore``, which runs the optimizer; pull the new weights."""
    _check_names("_update_params_on_kvstore", param_arrays, param_names)
    updates.update_params_on_kvstore(param_arrays, grad_arrays, kvstore)


def _update_params(
    param_arrays: Sequence[list[Any]],
    grad_arrays: Sequence[list[Any]],
    updater: Callable[..., None],
    num_device: int,
    kvstore: Any = None,
    param_names: Sequence[str] | None = None,
) -> None:
    """Sum the gradients through ``kvstore`` (if any), then let ``updater`` update each device's copy."""
    _check_names("_update_params", param_arrays, param_names)
    updates.update_params(param_arrays, grad_arrays, updater, num_device, kvstore)
