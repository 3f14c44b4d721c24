"""``mx.executor_manager``: MXNet's helpers for splitting a batch over devices, as programs import them.

The executor groups users wrote for their own Modules (the detection and segmentation code
bases, mxnetgo among them) import ``_split_input_slice`` from ``mxnet.executor_manager``, and
some ``_check_arguments`` or the ``_load_*`` copies of a batch into sliced executor inputs.
They keep MXNet's names and arguments here; the split itself is
:func:`lazynd_sym.executor_group.split_input_slice`, the one our groups use.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from lazynd import ndarray as nd
from lazynd.errors import DataError

from .executor_group import split_input_slice

__all__ = ["_check_arguments", "_load_data", "_load_general", "_load_label", "_split_input_slice"]


def _split_input_slice(batch_size: int, work_load_list: Sequence[float]) -> list[slice]:
    """One slice of ``range(batch_size)`` per device, in proportion to ``work_load_list``.

    Examples
    --------
    >>> _split_input_slice(8, [1, 1, 2])
    [slice(0, 2, None), slice(2, 4, None), slice(4, 8, None)]
    """
    return split_input_slice(batch_size, work_load_list)


def _check_arguments(symbol: Any) -> None:
    """Raise :class:`~lazynd.errors.DataError` if ``symbol`` names an argument or auxiliary state twice."""
    for kind, names in (("argument", symbol.list_arguments()), ("auxiliary state", symbol.list_auxiliary_states())):
        seen: set[str] = set()
        for name in names:
            if name in seen:
                raise DataError(
                    f"executor_manager._check_arguments: the symbol has the {kind} {name!r} twice "
                    f"(its {kind}s: {names}); give the layers distinct names"
                )
            seen.add(name)


def _load_general(data: Sequence[Any], targets: Sequence[Any]) -> None:
    """Copy each array of ``data`` into its target: an NDArray, or ``(slice, array)`` pairs, one per device."""
    for source, target in zip(data, targets, strict=False):
        if isinstance(target, nd.NDArray):
            source.copyto(target)
            continue
        covered = target[-1][0].stop
        if covered != source.shape[0]:
            raise DataError(
                f"executor_manager._load_general: the batch has {source.shape[0]} examples, "
                f"the devices' slices take {covered}"
            )
        for part, destination in target:
            source[part].copyto(destination)


def _load_data(batch: Any, targets: Sequence[Any]) -> None:
    """:func:`_load_general` of ``batch.data``."""
    _load_general(batch.data, targets)


def _load_label(batch: Any, targets: Sequence[Any]) -> None:
    """:func:`_load_general` of ``batch.label``."""
    _load_general(batch.label, targets)
