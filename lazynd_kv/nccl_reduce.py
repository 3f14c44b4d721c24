"""The ``device`` store's sum of one value per GPU as one engine operation running NCCL.

:func:`push_reduce` checks the values and pushes an operation that reads every value and
writes the key's merge buffer; the operation itself is
:func:`lazynd.backend.cuda.nccl.reduce_on_streams` (CuPy stays inside the backend).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from lazynd.backend import get_backend
from lazynd.backend.cuda.nccl import NCCL_DTYPES, nccl_available
from lazynd.engine import get_engine
from lazynd.errors import LazyNDError
from lazynd.ndarray import NDArray

__all__ = ["NCCL_DTYPES", "nccl_available", "push_reduce"]


def push_reduce(values: Sequence[NDArray], out: NDArray) -> NDArray:
    """Push ``out = values[0] + values[1] + ...`` as one NCCL reduce onto ``out``'s GPU.

    Parameters
    ----------
    values : sequence of NDArray
        C-contiguous arrays of one shape and dtype, one per GPU; one of them on ``out``'s GPU.
    out : NDArray
        The destination (not one of ``values``).

    Returns
    -------
    NDArray
        ``out``, written when the engine runs the operation.
    """
    devices = tuple(v.context.device_id for v in values)
    if any(v.context.device_type != "gpu" for v in values) or len(set(devices)) != len(devices):
        raise LazyNDError(f"push_reduce: needs one value per GPU, got values on {[str(v.context) for v in values]}")
    if out.context.device_type != "gpu" or out.context.device_id not in devices:
        raise LazyNDError(f"push_reduce: out is on {out.context}, expected one of the values' GPUs {list(devices)}")
    dtype = out.data_array.dtype.name
    for v in values:
        if v.shape != out.shape or v.data_array.dtype.name != dtype or not v.data_array.flags.c_contiguous:
            raise LazyNDError(
                f"push_reduce: every value must be a C-contiguous {dtype} array of shape {out.shape}, "
                f"got {v.data_array.dtype.name} {v.shape} on {v.context}"
            )
    root = devices.index(out.context.device_id)
    backends: list[Any] = [get_backend(v.context) for v in values]
    value_vars = [v.var for v in values]
    out_var = out.var
    buffers = [v.data_array for v in values]
    result = out.data_array

    def run() -> None:
        from lazynd.backend.cuda.nccl import reduce_on_streams

        reduce_on_streams(backends, value_vars, out_var, buffers, result, root)

    get_engine().push(run, (), value_vars, [out_var], "_kvstore_nccl_reduce", out.context, inline_ok=True)
    return out
