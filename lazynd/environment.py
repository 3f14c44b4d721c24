"""Environment variables: lazynd's own and the MXNet ones that MXNet programs set.

An MXNet program run with ``import lazynd as mx`` often comes with ``MXNET_*``
variables from MXNet's environment-variable and performance guides.  Each one
lazynd knows is listed in :data:`MXNET_VARIABLES` with what happens to it:

- *honoured*: it does here what it does in MXNet, read where lazynd reads its
  own variable for the same thing (the ``LAZYND_*`` one wins when both are set);
- *ignored*: it tunes something lazynd does another way (MXNet's reduction
  trees, memory mirroring, its storage pools); results are the same without it,
  so it is left alone.

A value that cannot mean anything (``MXNET_CPU_WORKER_NTHREADS=many``) raises a
:class:`~lazynd.errors.LazyNDError` naming the variable, the value and what was
expected; so does an unknown engine name in ``MXNET_ENGINE_TYPE``.

Examples
--------
>>> from lazynd.environment import MXNET_VARIABLES
>>> MXNET_VARIABLES["MXNET_ENGINE_TYPE"].startswith("honoured")
True
>>> MXNET_VARIABLES["MXNET_BACKWARD_DO_MIRROR"].startswith("ignored")
True
"""

from __future__ import annotations

import os

from .errors import LazyNDError

__all__ = ["MXNET_VARIABLES", "flag_setting", "integer_setting", "setting", "start_profiler_if_asked"]

_MEMORY_PLAN = "ignored: lazynd's memory plan does not recompute forward values; results are the same"
_WHOLE_PASS = "ignored: an executor bulks a whole pass; the profiler still names each of its operators"
_STORAGE = "ignored: temporary storage comes from the memory plan and the CPU pool"
_REDUCTION = "ignored: tunes MXNet's own reduction of gradients; lazynd's KVStore reduces another way"

MXNET_VARIABLES: dict[str, str] = {
    "MXNET_ENGINE_TYPE": "honoured: NaiveEngine, ThreadedEngine, ThreadedEnginePerDevice (LAZYND_ENGINE wins)",
    "MXNET_CPU_WORKER_NTHREADS": "honoured: threads of the CPU worker pool (LAZYND_CPU_WORKERS wins)",
    "MXNET_EXEC_BULK_EXEC_TRAIN": "honoured: 0 pushes one operation per operator in training executors "
    "(LAZYND_EXEC_BULK wins)",
    "MXNET_EXEC_BULK_EXEC_INFERENCE": "honoured: 0 pushes one operation per operator in inference executors "
    "(LAZYND_EXEC_BULK wins)",
    "MXNET_PROFILER_AUTOSTART": "honoured: 1 starts the profiler at import; profile.json is written at exit",
    "MXNET_PROFILER_MODE": "honoured: with MXNET_PROFILER_AUTOSTART, 0 (default) records executors' operators, "
    "1 or a mask with the imperative bit (2, as in 15) records every operation",
    "MXNET_UPDATE_ON_KVSTORE": "honoured: 0 runs the optimizer on the devices",
    "MXNET_HOME": "honoured: the folder of downloads",
    "MXNET_BACKWARD_DO_MIRROR": _MEMORY_PLAN,
    "MXNET_EXEC_BULK_EXEC_MAX_NODE_TRAIN": _WHOLE_PASS,
    "MXNET_EXEC_BULK_EXEC_MAX_NODE_TRAIN_FWD": _WHOLE_PASS,
    "MXNET_EXEC_BULK_EXEC_MAX_NODE_TRAIN_BWD": _WHOLE_PASS,
    "MXNET_EXEC_NUM_TEMP": _STORAGE,
    "MXNET_CPU_TEMP_COPY": _STORAGE,
    "MXNET_GPU_TEMP_COPY": _STORAGE,
    "MXNET_CPU_PARALLEL_COPY_SIZE": "ignored: host copies are NumPy's",
    "MXNET_OPTIMIZER_AGGREGATION_SIZE": "honoured: how many parameters one LARS step takes, which decides which "
    "ones its momentum correction reaches, as in MXNet; other optimizers' results do not depend on it",
    "MXNET_EXEC_ENABLE_INPLACE": "ignored: the memory plan always works in place where it is safe",
    "MXNET_EXEC_INPLACE_GRAD_SUM_CAP": "honoured: from this many gradient terms on (default 8) a gradient is "
    "summed by a chain of in-place adds (LAZYND_INPLACE_GRAD_SUM_CAP wins)",
    "MXNET_GPU_WORKER_NTHREADS": "ignored: one thread per GPU",
    "MXNET_GPU_COPY_NTHREADS": "ignored: one copy stream each way per GPU",
    "MXNET_CPU_PRIORITY_NTHREADS": "ignored: the engine has no priority pool",
    "MXNET_GPU_MEM_POOL_TYPE": "ignored: GPU memory comes from CuPy's pool",
    "MXNET_GPU_MEM_POOL_RESERVE": "ignored: GPU memory comes from CuPy's pool",
    "MXNET_GPU_MEM_POOL_ROUND_LINEAR_CUTOFF": "ignored: GPU memory comes from CuPy's pool",
    "MXNET_GPU_MEM_LARGE_ALLOC_ROUND_SIZE": "ignored: GPU memory comes from CuPy's pool",
    "MXNET_KVSTORE_REDUCTION_NTHREADS": _REDUCTION,
    "MXNET_KVSTORE_BIGARRAY_BOUND": _REDUCTION,
    "MXNET_KVSTORE_USETREE": _REDUCTION,
    "MXNET_KVSTORE_LOGTREE": _REDUCTION,
    "MXNET_ENABLE_GPU_P2P": _REDUCTION,
    "MXNET_KVSTORE_TREE_ARRAY_BOUND": _REDUCTION,
    "MXNET_KVSTORE_TREE_BACKTRACK": _REDUCTION,
    "MXNET_KVSTORE_TREE_LINK_USAGE_PENALTY": _REDUCTION,
    "MXNET_MKLDNN_ENABLED": "ignored: lazynd has no MKL-DNN kernels",
    "MXNET_MKLDNN_CACHE_NUM": "ignored: lazynd has no MKL-DNN kernels",
    "MXNET_CPU_NNPACK_NTHREADS": "ignored: lazynd has no NNPACK kernels",
    "MXNET_LIBRARY_PATH": "ignored: lazynd loads no libmxnet",
    "MXNET_CUDNN_AUTOTUNE_DEFAULT": "ignored: lazynd's convolutions do not call cuDNN",
    "MXNET_SUBGRAPH_BACKEND": "ignored: lazynd has no MKL-DNN or TensorRT subgraphs",
    "MXNET_OMP_MAX_THREADS": "ignored: CPU kernels use NumPy's BLAS threads (OMP_NUM_THREADS, OPENBLAS_NUM_THREADS)",
    "MXNET_STORAGE_FALLBACK_LOG_VERBOSE": "ignored: sparse storage is refused, so nothing falls back",
}

_TRUE = ("1", "true", "yes", "on")
_FALSE = ("0", "false", "no", "off")


def setting(*names: str) -> tuple[str, str] | None:
    """The first of ``names`` set to a non-empty value, as ``(name, value)``; None if none is.

    Examples
    --------
    >>> from lazynd.test_utils import environment
    >>> with environment("MXNET_CPU_WORKER_NTHREADS", "3"):
    ...     setting("LAZYND_CPU_WORKERS", "MXNET_CPU_WORKER_NTHREADS")
    ('MXNET_CPU_WORKER_NTHREADS', '3')
    """
    for name in names:
        value = os.environ.get(name, "").strip()
        if value:
            return name, value
    return None


def integer_setting(*names: str, minimum: int = 0) -> int | None:
    """The first of ``names`` that is set, as an integer of at least ``minimum``; None if none is set."""
    found = setting(*names)
    if found is None:
        return None
    name, value = found
    try:
        number = int(value)
    except ValueError:
        number = None
    if number is None or number < minimum:
        raise LazyNDError(f"environment variable {name}: expected an integer >= {minimum}, got {value!r}")
    return number


def flag_setting(*names: str, default: bool) -> bool:
    """The first of ``names`` that is set, read as on (1/true/yes/on) or off (0/false/no/off)."""
    found = setting(*names)
    if found is None:
        return default
    name, value = found
    if value.lower() in _TRUE:
        return True
    if value.lower() in _FALSE:
        return False
    raise LazyNDError(f"environment variable {name}: expected 1 or 0 (true/false, yes/no, on/off), got {value!r}")


def start_profiler_if_asked() -> None:
    """Start the profiler when ``MXNET_PROFILER_AUTOSTART`` is on, as MXNet does at start-up.

    ``MXNET_PROFILER_MODE`` chooses what is recorded (see :func:`_profiler_mode`).  The trace goes to ``profile.json`` in the working folder when the process ends (MXNet's
    default), unless the program names another file with ``mx.profiler.set_config``.
    """
    if not flag_setting("MXNET_PROFILER_AUTOSTART", default=False):
        return
    from . import profiler

    profiler.set_config(mode=_profiler_mode(), filename="profile.json")
    profiler.set_state("run")


def _profiler_mode() -> str:
    """``MXNET_PROFILER_MODE`` as lazynd's profiler mode.

    MXNet's guide gives 0 (symbolic operators, the default) and 1 (all operators); MXNet 1.x reads
    it as a mask (1 symbolic, 2 imperative, 4 API calls, 8 memory; the performance guide sets 15).
    lazynd records no API or memory events, so the imperative bit, or 1, means every operation.
    """
    mask = integer_setting("MXNET_PROFILER_MODE", minimum=0)
    return "all" if mask is not None and (mask == 1 or mask & 2) else "symbolic"
