"""The ``local`` store: values are summed and updated on the CPU.

Each key keeps its stored value and, once a key is pushed several values at a
time, a merge buffer of its own, reused on every push; the engine orders the
reuse after the previous update has read it.  A single pushed value that
already lives where the key is stored is handed to the updater as it is, with
no copy.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from lazynd.backend import get_backend
from lazynd.context import Context, cpu
from lazynd.ndarray import NDArray, empty
from lazynd.runtime import push

from .base import KVStore, register
from .pairs import Key, copy_pairs


def _sum_into(xp: Any, out: Any, *sources: Any) -> None:
    xp.add(sources[0], sources[1], out=out)
    for src in sources[2:]:
        xp.add(out, src, out=out)


def sum_arrays(values: Sequence[NDArray], out: NDArray) -> NDArray:
    """Push ``out = values[0] + values[1] + ...`` on ``out``'s device (values copied there first)."""
    if len(values) == 1:
        return values[0].copyto(out)  # one copy, across devices too: no staging array
    ctx = out.context
    local = [v if v.context == ctx else v.copyto(ctx) for v in values]
    xp = get_backend(ctx).xp
    args = (xp, out.data_array, *(v.data_array for v in local))
    reads = [v.var for v in local]
    push(ctx, _sum_into, args, reads, [out.var], "_kvstore_sum", out.size * len(local))
    return out


@register("local", "local_update_cpu", "local_allreduce_cpu")  # the last two: MXNet 0.9 names
class LocalStore(KVStore):
    """Aggregation and update on the CPU (see :class:`lazynd_kv.base.KVStore`)."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self._merge_buffers: dict[Key, NDArray] = {}

    def _store_context(self, value: NDArray) -> Context:
        return cpu()

    def _init_key(self, key: Key, value: NDArray) -> NDArray:
        return value.copyto(self._store_context(value))

    def _merge_buffer(self, key: Key, stored: NDArray) -> NDArray:
        buf = self._merge_buffers.get(key)
        if buf is None:
            buf = empty(stored.shape, ctx=stored.context, dtype=stored.data_array.dtype)
            self._merge_buffers[key] = buf
        return buf

    def _merge(self, key: Key, values: list[NDArray], stored: NDArray) -> NDArray:
        if len(values) == 1 and (values[0].context is stored.context or values[0].context == stored.context):
            return values[0]
        return sum_arrays(values, self._merge_buffer(key, stored))

    def _push_groups(self, groups: Sequence[tuple[Key, list[NDArray]]]) -> None:
        if self._updater is None:
            # no updater: the merged values are copied in, the small ones in one engine operation
            pairs = []
            for key, values in groups:
                stored = self._store[key]
                pairs.append((self._merge(key, values, stored), stored))
            copy_pairs(pairs)
            return
        for key, values in groups:
            stored = self._store[key]
            self._apply_update(key, self._merge(key, values, stored), stored)
