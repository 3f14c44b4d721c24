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

Whose threads run a host product (:data:`GEMM_THREADS`): by default lazynd's own.  Importing
lazynd limits the host BLAS to one thread and :mod:`.gemm_split` splits each large product
across a thread per core, threads that sleep while they wait; ``LAZYND_GEMM_THREADS`` sets
their count (1: every product on the calling thread; 0: leave the BLAS its own threads, as
setting ``OPENBLAS_NUM_THREADS`` or another of :data:`THREAD_VARIABLES` also does).  The reason
is a shared machine: OpenBLAS's threads spin while they wait for each other, and while other
processes hold the cores a product split across them waits for a thread that is not running.
On the 2-core development machine, while other jobs ran, an MNIST MLP epoch took 2-17 s with
OpenBLAS's two threads against 0.4-0.5 s on one (hand NumPy: 2.2-3.6 s against 0.3 s).
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Mapping

from ..engine.var import Var
from ..errors import LazyNDError

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


def gemm_threads(environ: Mapping[str, str] | None = None) -> int:
    """How many of lazynd's threads split a large host product: ``LAZYND_GEMM_THREADS`` when set
    (0: none, the host BLAS keeps its own threads), else 0 when one of :data:`THREAD_VARIABLES`
    is set (the user chose the BLAS's threads), else one per core.

    Examples
    --------
    >>> gemm_threads({"LAZYND_GEMM_THREADS": "3", "OMP_NUM_THREADS": "1"})
    3
    >>> gemm_threads({"OPENBLAS_NUM_THREADS": "4"})
    0
    """
    variables = os.environ if environ is None else environ
    value = variables.get("LAZYND_GEMM_THREADS", "").strip()
    if value:
        if not value.isdigit():
            raise LazyNDError(f"LAZYND_GEMM_THREADS must be a count of threads (0 or more), got {value!r}")
        return int(value)
    if any(variables.get(name, "").strip() for name in THREAD_VARIABLES):
        return 0
    return os.cpu_count() or 1


def _limit_host_blas() -> bool:
    """Limit the BLAS libraries loaded now (NumPy's) to one thread; False where none can be."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        return False
    import numpy  # noqa: F401 -- its BLAS must be loaded to be found

    return threadpool_limits(limits=1, user_api="blas").get_original_num_threads().get("blas") is not None


# read once, at import (the BLAS library itself was loaded with NumPy, before this module)
SPLIT_THREADS = gemm_threads()
if SPLIT_THREADS and not _limit_host_blas():
    SPLIT_THREADS = 0  # no BLAS whose threads lazynd can set: it keeps its own
# the host BLAS library's own threads, and the threads a host product through the CPU
# backend's GEMM route runs on (the BLAS's, or lazynd's split across SPLIT_THREADS)
BLAS_THREADS = 1 if SPLIT_THREADS else host_blas_threads()
GEMM_THREADS = SPLIT_THREADS or BLAS_THREADS
# the host products' threads as an engine var, written by every GEMM-heavy operation while they
# are several (None while a product runs on one thread: such operations then run in parallel)
BLAS_VAR: Var | None = Var() if GEMM_THREADS > 1 else None
_section_lock = threading.Lock()
_no_section = contextlib.nullcontext()


def blas_section(on_host: bool = True) -> contextlib.AbstractContextManager:
    """A context for one GEMM-heavy kernel: exclusive among such kernels when a host product
    runs on several threads, a no-op otherwise (or when ``on_host`` is False: GPU kernels)."""
    return _section_lock if on_host and GEMM_THREADS > 1 else _no_section
