"""The ``device`` store: values are summed and updated on the GPUs that hold them.

A key is stored on the GPU of its initial value; a key initialised from a CPU
array goes to the GPUs in turn (key ``i`` of a run to ``gpu(i % n)``), so that
the work of summing and updating is spread over the devices, as MXNet does.
Values pushed from other GPUs reach the key's GPU by a peer copy through the
engine.  Without a GPU the store works on the CPU, like ``local``.
"""

from __future__ import annotations

from lazynd.context import Context, cpu, gpu, num_gpus
from lazynd.ndarray import NDArray

from .base import register
from .local import LocalStore


@register("device")
class DeviceStore(LocalStore):
    """Aggregation and update on the GPU(s) (see :class:`lazynd_kv.base.KVStore`)."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self._next_gpu = 0

    def _store_context(self, value: NDArray) -> Context:
        if value._ctx.device_type == "gpu":
            return value._ctx
        count = num_gpus()
        if count == 0:
            return cpu()
        ctx = gpu(self._next_gpu % count)
        self._next_gpu += 1
        return ctx
