"""Summing one buffer per GPU with NCCL (``cupy.cuda.nccl``), ordered by the engine's CUDA events.

The ``device`` store calls :func:`push_reduce` when the values pushed for a key lie
on several GPUs, one value per GPU.  It pushes one engine operation that reads
every value and writes the key's merge buffer; when it runs, each device's
compute stream first waits for the events of the vars it touches (the rules of
``CupyBackend.wrap``), then one ``ncclReduce`` per device is enqueued inside
one NCCL group (one thread drives every device, so the calls must be grouped),
and an event recorded on each stream is stored on the vars: the merge buffer's
new write event, and a read event on every value so that a later write to it on
another stream waits for NCCL to have read it.

Communicators are made with ``ncclCommInitAll`` once per set of devices (in
rank order) and cached.  This module imports CuPy only inside its functions, and
only the GPU path calls them, so the CPU path never imports CuPy.
"""

from __future__ import annotations

import threading
import warnings
from collections.abc import Sequence
from typing import Any

from lazynd.backend import get_backend
from lazynd.engine import get_engine
from lazynd.errors import LazyNDError
from lazynd.ndarray import NDArray

# the dtypes NCCL sums that lazynd arrays use
NCCL_DTYPES = ("float16", "float32", "float64")

_lock = threading.Lock()
_NCCL_ISSUE_LOCK = threading.Lock()
_nccl: Any = None
_nccl_checked = False
_communicators: dict[tuple[int, ...], list[Any]] = {}


def nccl_module() -> Any | None:
    """``cupy.cuda.nccl`` when CuPy can load the NCCL library, else ``None`` (checked once).

    CuPy warns when ``libnccl`` is missing; here that only means "use peer copies",
    so the warning is silenced.
    """
    global _nccl, _nccl_checked
    if not _nccl_checked:
        with _lock:
            if not _nccl_checked:
                try:
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        from cupy.cuda import nccl
                    _nccl = nccl if getattr(nccl, "available", False) else None
                except ImportError:
                    _nccl = None
                _nccl_checked = True
    return _nccl


def nccl_available() -> bool:
    """Whether NCCL can be used (CuPy installed and ``libnccl`` loadable)."""
    return nccl_module() is not None


def communicators(device_ids: tuple[int, ...]) -> list[Any]:
    """One NCCL communicator per device of ``device_ids`` (rank ``i`` on ``device_ids[i]``), cached."""
    comms = _communicators.get(device_ids)
    if comms is None:
        nccl = nccl_module()
        if nccl is None:
            raise LazyNDError("device KVStore: NCCL is not available (pip install nvidia-nccl-cu12)")
        if len(set(device_ids)) != len(device_ids):
            raise LazyNDError(f"device KVStore: an NCCL communicator needs distinct GPUs, got {list(device_ids)}")
        with _lock:
            comms = _communicators.get(device_ids)
            if comms is None:
                comms = nccl.NcclCommunicator.initAll(list(device_ids))
                _communicators[device_ids] = comms
    return comms


def _nccl_dtype(nccl: Any, name: str) -> int:
    codes = {"float16": nccl.NCCL_FLOAT16, "float32": nccl.NCCL_FLOAT32, "float64": nccl.NCCL_FLOAT64}
    if name not in codes:
        raise LazyNDError(f"device KVStore: NCCL sums {', '.join(NCCL_DTYPES)}, got dtype {name}")
    return codes[name]


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
    devices = tuple(v._ctx.device_id for v in values)
    if any(v._ctx.device_type != "gpu" for v in values) or len(set(devices)) != len(devices):
        raise LazyNDError(f"push_reduce: needs one value per GPU, got values on {[str(v._ctx) for v in values]}")
    if out._ctx.device_type != "gpu" or out._ctx.device_id not in devices:
        raise LazyNDError(f"push_reduce: out is on {out._ctx}, expected one of the values' GPUs {list(devices)}")
    dtype = out._data.dtype.name
    for v in values:
        if v.shape != out.shape or v._data.dtype.name != dtype or not v._data.flags.c_contiguous:
            raise LazyNDError(
                f"push_reduce: every value must be a C-contiguous {dtype} array of shape {out.shape}, "
                f"got {v._data.dtype.name} {v.shape} on {v._ctx}"
            )
    root = devices.index(out._ctx.device_id)
    backends: list[Any] = [get_backend(v._ctx) for v in values]
    value_vars = [v._var for v in values]
    out_var = out._var
    buffers = [v._data for v in values]
    result = out._data
    count = int(result.size)

    def run() -> None:
        from lazynd.backend.cupy_backend import wait_for_vars

        comms = communicators(devices)  # raises when NCCL is missing
        nccl: Any = nccl_module()
        kind = _nccl_dtype(nccl, dtype)
        streams = [b.compute_stream for b in backends]
        for rank, (backend, stream) in enumerate(zip(backends, streams, strict=True)):
            with backend.device:
                wait_for_vars(stream, [value_vars[rank]], [out_var] if rank == root else [])
        # NCCL calls on one set of communicators must be issued by one thread at a time, in one
        # order: reduces of keys homed on different GPUs run on different device threads
        with _NCCL_ISSUE_LOCK:
            nccl.groupStart()
            try:
                for rank, (backend, stream) in enumerate(zip(backends, streams, strict=True)):
                    with backend.device:
                        # the receive buffer is read only on the root
                        recv = result.data.ptr if rank == root else 0
                        comms[rank].reduce(buffers[rank].data.ptr, recv, count, kind, nccl.NCCL_SUM, root, stream.ptr)
            finally:
                nccl.groupEnd()
        for rank, (backend, stream) in enumerate(zip(backends, streams, strict=True)):
            with backend.device:
                backend.record_done(stream, [value_vars[rank]], [out_var] if rank == root else [])

    get_engine().push(run, (), value_vars, [out_var], "_kvstore_nccl_reduce", out._ctx, inline_ok=True)
    return out
