"""The ``device`` store: values are summed and updated on the GPUs that hold them.

Where a key lives (its *home*): a key initialised from a GPU array stays on that
GPU.  A key initialised from a CPU array stays on the CPU until values are first
pushed to it from GPUs; it then moves to the one of those GPUs that holds the
fewest bytes of keys so far (MXNet's balancing of merge buffers), so that the
work of summing and updating is spread over the devices.  The store therefore
never asks how many GPUs the machine has, and a CPU-only program never imports
CuPy.

How a push is summed (:func:`merge_plan`):

- ``"as_is"``: one value, already at home: handed to the updater, no copy;
- ``"nccl"``: one value on each of several GPUs, one of them home, a dtype NCCL
  sums, and NCCL loadable: one NCCL reduce into the key's merge buffer at home
  (:mod:`lazynd.backend.cuda.nccl`);
- ``"copy"``: anything else (NCCL missing, several values on one GPU, CPU values,
  home not among the values' GPUs): values on other devices are copied home
  (peer copies between GPUs) and summed there; with every value at home this is a
  plain sum on that device.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from lazynd.context import Context, cpu
from lazynd.ndarray import NDArray

from .base import register
from .local import LocalStore, sum_arrays
from .nccl_reduce import NCCL_DTYPES
from .pairs import Key


def choose_home(value_contexts: Sequence[Context], bytes_on: dict[Context, int]) -> Context:
    """The GPU among ``value_contexts`` holding the fewest bytes (lowest id on ties); ``cpu()`` without GPUs.

    Examples
    --------
    >>> from lazynd.context import cpu, gpu
    >>> choose_home([gpu(0), gpu(1)], {gpu(0): 4096})
    gpu(1)
    >>> choose_home([cpu()], {})
    cpu(0)
    """
    gpus = {c for c in value_contexts if c.device_type == "gpu"}
    if not gpus:
        return cpu()
    return min(gpus, key=lambda c: (bytes_on.get(c, 0), c.device_id))


def merge_plan(
    value_contexts: Sequence[Context],
    home: Context,
    dtype: str,
    nccl_available: Callable[[], bool],
    contiguous: bool = True,
) -> str:
    """How the values pushed to a key living on ``home`` are summed: ``"as_is"``, ``"nccl"`` or ``"copy"``.

    ``nccl_available`` is called only when NCCL could be used (values on several GPUs),
    so deciding a CPU push never imports CuPy.

    Examples
    --------
    >>> from lazynd.context import cpu, gpu
    >>> merge_plan([gpu(0), gpu(1)], gpu(1), "float32", lambda: True)
    'nccl'
    >>> merge_plan([gpu(0), gpu(1)], gpu(1), "float32", lambda: False)
    'copy'
    >>> merge_plan([cpu()], cpu(), "float32", lambda: True)
    'as_is'
    """
    if len(value_contexts) == 1 and value_contexts[0] == home:
        return "as_is"
    one_per_gpu = len(set(value_contexts)) == len(value_contexts) >= 2 and all(
        c.device_type == "gpu" for c in value_contexts
    )
    if one_per_gpu and home in value_contexts and dtype in NCCL_DTYPES and contiguous and nccl_available():
        return "nccl"
    return "copy"


# "local_allreduce_device" is MXNet 0.9's name; "nccl" MXNet 1.x's NCCL store (this one sums GPUs with NCCL)
@register("device", "local_allreduce_device", "nccl")
class DeviceStore(LocalStore):
    """Aggregation and update on the GPU(s) (see :class:`lazynd_kv.base.KVStore` and the module notes)."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self._bytes_on: dict[Context, int] = {}

    def _store_context(self, value: NDArray) -> Context:
        return value.context

    def _init_key(self, key: Key, value: NDArray) -> NDArray:
        stored = value.copyto(value.context)
        if stored.context.device_type == "gpu":
            self._count_bytes(stored)
        return stored

    def _count_bytes(self, stored: NDArray) -> None:
        self._bytes_on[stored.context] = self._bytes_on.get(stored.context, 0) + stored.data_array.nbytes

    def _home(self, key: Key, values: list[NDArray]) -> NDArray:
        """The key's stored value, moved to a GPU the first time GPU values are pushed to a CPU key."""
        stored = self._store[key]
        if stored.context.device_type == "gpu":
            return stored
        home = choose_home([v.context for v in values], self._bytes_on)
        if home.device_type != "gpu":
            return stored
        stored = stored.copyto(home)
        self._store[key] = stored
        self._merge_buffers.pop(key, None)
        self._count_bytes(stored)
        return stored

    def _merge(self, key: Key, values: list[NDArray], stored: NDArray) -> NDArray:
        contexts = [v.context for v in values]
        contiguous = all(v.data_array.flags.c_contiguous for v in values)
        plan = merge_plan(contexts, stored.context, stored.data_array.dtype.name, _nccl_available, contiguous)
        if plan == "as_is":
            return values[0]
        if plan == "nccl":
            from .nccl_reduce import push_reduce

            return push_reduce(values, self._merge_buffer(key, stored))
        return sum_arrays(values, self._merge_buffer(key, stored))

    def _push_groups(self, groups: Sequence[tuple[Key, list[NDArray]]]) -> None:
        for key, values in groups:
            stored = self._home(key, values)
            self._apply_update(key, self._merge(key, values, stored), stored)


def _nccl_available() -> bool:
    from .nccl_reduce import nccl_available

    return nccl_available()
