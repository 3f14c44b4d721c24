"""Summing one buffer per GPU with NCCL (``cupy.cuda.nccl``), ordered by the engine's CUDA events.

:func:`reduce_on_streams` is the body of the engine operation that the ``device``
KVStore pushes (``lazynd_kv.nccl_reduce.push_reduce``): each device's compute stream
first waits for the events of the vars it touches (the rules of ``CupyBackend.wrap``),
then one ``ncclReduce`` per device is enqueued inside one NCCL group (one thread drives
every device, so the calls must be grouped), and :meth:`CupyBackend.record_done` notes
the events on the vars, as for every GPU operation.

Communicators are made with ``ncclCommInitAll`` once per set of devices (in
rank order) and cached.  CuPy is imported only inside the functions.
"""

from __future__ import annotations

import threading
import warnings
from collections.abc import Sequence
from typing import Any

from ...errors import LazyNDError
from .backend import wait_for_vars

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


def reduce_on_streams(
    backends: Sequence[Any], value_vars: Sequence[Any], out_var: Any, buffers: Sequence[Any], result: Any, root: int
) -> None:
    """``result = sum(buffers)`` on the GPU of ``backends[root]``: one NCCL reduce per device, each
    on that device's compute stream, ordered by and recorded on the engine vars."""
    devices = tuple(b.device_id for b in backends)
    comms = communicators(devices)  # raises when NCCL is missing
    nccl: Any = nccl_module()
    kind = _nccl_dtype(nccl, result.dtype.name)
    count = int(result.size)
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
