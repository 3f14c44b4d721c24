"""The host BLAS's own threads, and a section that keeps GEMM-heavy CPU kernels from overlapping.

A multi-threaded OpenBLAS runs one level-3 call at a time: a second thread that
calls GEMM meanwhile waits on a lock inside the library, while the library's
worker threads spin.  Two engine workers that each run a GEMM-heavy kernel (a
convolution's forward next to an independent backward) therefore gain nothing
on their GEMMs and lose on the rest: their copies and sums compete with the
BLAS threads for the same cores, and a GEMM split across descheduled threads
waits for the slowest.  Such a kernel runs inside :func:`blas_section`, which
lets one of them run at a time while BLAS has threads of its own.  With a
single-threaded BLAS (``OPENBLAS_NUM_THREADS=1``, the setting for running
independent operations in parallel on the engine's workers) it does nothing.

The section alone still lets the engine hand such a kernel to a worker, where it
waits for the other one to leave the section: two thread hand-offs for nothing
(a LeNet convolution's forward and backward pushed together took 7.5-7.8 ms
that way, against 6.6-7.4 ms one after the other on one thread).  So an operator that declares itself
``blas_heavy`` also writes :data:`BLAS_VAR` when called imperatively: the
engine then orders such operations as it orders writes to one array, and a
program that pushes two of them and waits runs both on its own thread.

On a machine that other processes share, a multi-threaded BLAS can stall: :data:`GOVERNOR`
(:mod:`.host_threads`) sets it to one thread for a while after a product stalls.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Mapping

from ..engine.var import Var
from ..errors import LazyNDError
from .host_threads import BlasThreads

# the variables OpenBLAS (then MKL, then OpenMP) reads, in its order of precedence
THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "MKL_NUM_THREADS", "OMP_NUM_THREADS")


def host_blas_threads(environ: Mapping[str, str] | None = None) -> int:
    """The thread count the host BLAS takes when it loads: the first positive
    ``*_NUM_THREADS`` of :data:`THREAD_VARIABLES`, else one thread per core.

    Examples
    --------
    >>> host_blas_threads({"OMP_NUM_THREADS": "4", "OPENBLAS_NUM_THREADS": "1"})
    1
    >>> host_blas_threads({"OMP_NUM_THREADS": "4"})
    4
    """
    variables = os.environ if environ is None else environ
    for name in THREAD_VARIABLES:
        value = variables.get(name, "").strip()
        if value.isdigit() and int(value) > 0:
            return int(value)
    return os.cpu_count() or 1


# read once, like the BLAS library itself (it was loaded with NumPy, before this module)
BLAS_THREADS = host_blas_threads()


def thread_governor(environ: Mapping[str, str] | None = None) -> BlasThreads | None:
    """The :class:`~.host_threads.BlasThreads` that runs the host products, or None where lazynd
    leaves the BLAS's threads alone: a BLAS thread variable (:data:`THREAD_VARIABLES`) is set,
    ``LAZYND_HOST_THREADS=fixed``, the BLAS has one thread, or none can be set (threadpoolctl
    finds no BLAS it knows)."""
    variables = os.environ if environ is None else environ
    choice = variables.get("LAZYND_HOST_THREADS", "adaptive").strip().lower() or "adaptive"
    if choice not in ("adaptive", "fixed"):
        raise LazyNDError(f"LAZYND_HOST_THREADS must be adaptive or fixed, got {choice!r}")
    if choice == "fixed" or any(variables.get(name, "").strip() for name in THREAD_VARIABLES):
        return None
    try:
        from threadpoolctl import ThreadpoolController
    except ImportError:
        return None
    controller = ThreadpoolController().select(user_api="blas")
    threads = max((info["num_threads"] for info in controller.info()), default=1)
    if threads < 2:
        return None

    def set_threads(count: int) -> None:
        # the libraries loaded by then (MKL's, on request, after this module): looked up at each switch
        ThreadpoolController().select(user_api="blas").limit(limits=count)

    return BlasThreads(threads, set_threads)


GOVERNOR = thread_governor()
# the host BLAS's threads as an engine var, written by every GEMM-heavy operation while they
# are several (None with a single-threaded BLAS: such operations then run in parallel)
BLAS_VAR: Var | None = Var() if BLAS_THREADS > 1 else None
_section_lock = threading.Lock()
_no_section = contextlib.nullcontext()


def blas_section(on_host: bool = True) -> contextlib.AbstractContextManager:
    """A context for one GEMM-heavy kernel: exclusive among such kernels when the host BLAS
    is multi-threaded, a no-op otherwise (or when ``on_host`` is False: GPU kernels)."""
    return _section_lock if on_host and BLAS_THREADS > 1 else _no_section
