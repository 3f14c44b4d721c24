"""A Module's device arguments: its contexts, each one's share of the batch, its model-parallel groups."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from lazynd.context import Context, cpu
from lazynd.errors import ContextError, DataError, LazyNDError

__all__ = ["check_devices", "check_work_load", "group2ctx_per_device"]


def check_devices(
    context: Any, work_load_list: Sequence[float] | None, group2ctxs: Any, compression_params: Any
) -> list[Context]:
    """A Module's contexts (default the CPU), its other device arguments checked against them.

    ``work_load_list`` needs one share per context and ``group2ctxs`` one group placement per
    context (see :func:`group2ctx_per_device`); ``compression_params`` (the KVStore's gradient
    compression, which lazynd does not have) must be None.
    """
    contexts = [cpu()] if context is None else list(context) if isinstance(context, (list, tuple)) else [context]
    if not contexts or not all(isinstance(c, Context) for c in contexts):
        raise ContextError(f"Module: context must be a Context or a non-empty list of them, got {context!r}")
    group2ctx_per_device(group2ctxs, len(contexts))
    if compression_params is not None:
        raise LazyNDError(
            "Module: compression_params (the KVStore's gradient compression) is not supported by lazynd; leave it None"
        )
    check_work_load(work_load_list, len(contexts))
    return contexts


def check_work_load(work_load_list: Sequence[float] | None, num_contexts: int) -> None:
    if work_load_list is not None and len(work_load_list) != num_contexts:
        raise DataError(
            f"Module: work_load_list has {len(work_load_list)} entries for {num_contexts} contexts; "
            "give one per context"
        )


def group2ctx_per_device(group2ctxs: Any, num_devices: int) -> list[dict[str, Context] | None]:
    """MXNet 1.x's ``group2ctxs`` of a Module as one ``group2ctx`` per device: a list of dicts (one per
    device), or a dict whose values are a context (every device) or a list of one per device.

    Examples
    --------
    >>> import lazynd as mx
    >>> group2ctx_per_device({"stage2": [mx.cpu(2), mx.cpu(3)]}, 2)
    [{'stage2': cpu(2)}, {'stage2': cpu(3)}]
    """
    if group2ctxs is None:
        return [None] * num_devices
    if isinstance(group2ctxs, (list, tuple)):
        if len(group2ctxs) != num_devices:
            raise DataError(f"Module: group2ctxs has {len(group2ctxs)} entries for {num_devices} contexts")
        return [dict(g) if g is not None else None for g in group2ctxs]
    if not isinstance(group2ctxs, dict):
        raise DataError(
            "Module: group2ctxs must be a dict of ctx_group to a context (or a list of one per context), "
            f"or a list of such dicts, got {type(group2ctxs).__name__}"
        )
    per_device: list[dict[str, Context] | None] = [{} for _ in range(num_devices)]
    for group, where in group2ctxs.items():
        targets = [where] * num_devices if isinstance(where, Context) else list(where)
        if len(targets) == 1:
            targets *= num_devices
        if len(targets) != num_devices:
            raise DataError(
                f"Module: group2ctxs[{group!r}] has {len(targets)} contexts; give one, or one per context ({num_devices})"
            )
        for device, target in zip(per_device, targets, strict=True):
            device[group] = target  # type: ignore[index]
    return per_device
