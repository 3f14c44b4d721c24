"""The host BLAS's threads on a machine that other work shares: its own threads while they run
a product fast, one thread while other processes hold the cores.

OpenBLAS (and OpenMP's BLAS builds) split a product across threads that spin while they wait
for each other.  On a quiet machine that is the fastest way to run the products of a training
step.  While other processes keep the cores busy, one of those threads is descheduled now and
then, and the others spin until the scheduler runs it again: a product of 100 us takes
milliseconds.  On the 2-core development machine, with two busy processes beside it, an MLP
training loop with OpenBLAS's two threads ran up to 96 times slower than alone (hand NumPy,
whose products are the same, up to 10 times), where one BLAS thread ran it at the same speed.

So every product of the CPU backend's GEMM route (:meth:`~lazynd.backend.cpu.NumpyBackend.matmul`)
that the BLAS would split (:data:`STALL_MIN_MACS` multiply-adds and more) runs through
:meth:`BlasThreads.run`, which times it.  A product that takes :data:`STALL_FACTOR` times the
best time seen for its shapes and layouts, plus :data:`STALL_MIN_S` (or :data:`STALL_FACTOR`
times what it would take at :data:`SLOWEST_MACS_PER_S`, when no run of it has been faster: a
machine loaded from the start), is suspect; its next run is timed by the calling thread's CPU
clock too, and is a stall if it takes that long again while the calling thread was on a core for
a tenth of it or more (:data:`SPINNING`: it spun waiting for the BLAS's threads, where a thread
that waited for the GIL slept).  A collapse stalls product after product, so it is seen one
product later; the CPU clock, a system call, is read only then.  When the time stalls lost lately passes
:data:`LOST_LIMIT_S` (each stall's share fading over :data:`LOST_FADE_S`, so a rare hiccup
never adds up), the BLAS runs on one thread for a while, :data:`FIRST_BACKOFF_S` at first; then the next product tries its threads
again.  A stall within :data:`CLEAN_S` of that try doubles the while (up to
:data:`MAX_BACKOFF_S`); a longer clean spell on the BLAS's threads starts it over.  A quiet machine never stalls: the
products keep the BLAS's threads and pay two clock reads each.

lazynd sets the threads only where the user has not: :func:`lazynd.backend.blas.thread_governor`
gives no governor when ``OPENBLAS_NUM_THREADS`` or another BLAS thread variable is set, when the
BLAS has one thread anyway, or with ``LAZYND_HOST_THREADS=fixed``.  The thread count is the BLAS
library's, so while it is one NumPy's own products in the process run on one thread too.  OpenBLAS's
products on one thread may differ from those on several in the last bits: runs that must repeat
bit for bit set the threads themselves (``fixed``).
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable
from time import perf_counter, thread_time
from typing import Any

# OpenBLAS runs a product of fewer multiply-adds on the calling thread (its interface's
# SMP_THRESHOLD_MIN * GEMM_MULTITHREAD_THRESHOLD): it cannot stall on the BLAS's threads
STALL_MIN_MACS = 1 << 18
# a stall: more than STALL_FACTOR times the best time of the same product, plus STALL_MIN_S
STALL_FACTOR = 3.0
STALL_MIN_S = 0.5e-3
# ... while the calling thread was on a core for this fraction of it: spinning, as a thread
# waiting for the BLAS's does (its share of a core that other processes use too), where one
# that waited for the GIL slept (no GIL wait is the BLAS's stall)
SPINNING = 0.1
# the best time of a product is its time on this machine, unless every run of it so far has
# stalled (a loaded machine from the start): then this rate, far below any BLAS's on one core
# (a float32 product runs at 20-50 G multiply-adds a second on a core of the development
# machine), bounds what it should have taken
SLOWEST_MACS_PER_S = 4e9
_BLAS_TYPES = "fdFD"  # the dtypes (float32/64, complex64/128) whose products BLAS computes
FIRST_BACKOFF_S = 1.0
MAX_BACKOFF_S = 64.0
# the BLAS goes to one thread when the time stalls lost, each fading out over LOST_FADE_S,
# passes LOST_LIMIT_S, that is while stalls lose about 15% of the time: one thread costs an
# MLP's products about a third more (370 against 270 us a batch on the 2-core machine), a
# training step about 15%.  A collapse passes it in a batch or two; the stalls of a quiet
# machine (1-4 ms now and then, 20 ms at worst seen) do not
LOST_FADE_S = 1.0
LOST_LIMIT_S = 0.15
# a stall after this long on the BLAS's threads starts the backoff over
CLEAN_S = 10.0
_MAX_SHAPES = 256  # best times kept (a program of ever-new shapes starts the table again)

Product = Callable[[Any, Any, Any], None]


class BlasThreads:
    """Runs host products, and sets the BLAS to one thread for a while when they stall.

    ``threads`` is the BLAS's own thread count; ``set_threads(n)`` gives the BLAS ``n`` threads.
    """

    def __init__(self, threads: int, set_threads: Callable[[int], None]) -> None:
        self.threads = threads
        self._set_threads = set_threads
        self._best: dict[tuple, float] = {}
        self._suspects: set[tuple] = set()  # products whose last run took too long (see run)
        self._single_until = 0.0  # while perf_counter() is below this, the BLAS has one thread
        self._backoff = FIRST_BACKOFF_S
        self._threaded_since = -CLEAN_S  # when the BLAS last got its threads back
        self._lock = threading.Lock()
        self._lost = 0.0  # see _stalled
        self._lost_at = 0.0
        self.stalls = 0  # stalls seen
        self.switches = 0  # times the stalls set the BLAS to one thread

    @property
    def single(self) -> bool:
        """Whether the BLAS runs on one thread now (after a stall)."""
        return self._single_until != 0.0

    def run(self, a: Any, b: Any, out: Any, product: Product) -> None:
        """``product(a, b, out)``, timed when the BLAS may split it across its threads."""
        macs = a.shape[-2] * a.shape[-1] * b.shape[-1]
        if macs < STALL_MIN_MACS or out.dtype.char not in _BLAS_TYPES:
            product(a, b, out)
            return
        if self._single_until:
            if perf_counter() < self._single_until:
                product(a, b, out)
                return
            self._back_to_threads()
        key = (a.shape, b.shape, a.strides, b.strides, out.strides, out.dtype.char)
        # the calling thread's CPU clock is a system call (0.8 us, where the wall clock's two reads
        # cost 0.1): read only for a product whose last run took too long (see the module docstring)
        watched = key in self._suspects
        cpu = thread_time() if watched else 0.0
        start = perf_counter()
        product(a, b, out)
        took = perf_counter() - start
        best = self._best.get(key)
        if best is None or took < best:
            if best is None and len(self._best) >= _MAX_SHAPES:
                self._best.clear()
            self._best[key] = took
        slowest = macs / SLOWEST_MACS_PER_S  # what even a stalled best time cannot exceed
        expected = slowest if best is None or best > slowest else best
        if took <= STALL_FACTOR * expected + STALL_MIN_S:
            if watched:
                self._suspects.discard(key)
        elif not watched:
            if len(self._suspects) >= _MAX_SHAPES:
                self._suspects.clear()
            self._suspects.add(key)  # its next run says whether the calling thread spun
        elif thread_time() - cpu > SPINNING * took:
            self._stalled(took - expected)

    def _stalled(self, lost: float) -> None:
        with self._lock:
            if self._single_until:
                return  # another thread's product stalled too
            now = perf_counter()
            self.stalls += 1
            # the time stalls lost lately: each one's share fades out over LOST_FADE_S
            self._lost = self._lost * math.exp((self._lost_at - now) / LOST_FADE_S) + lost
            self._lost_at = now
            if self._lost < LOST_LIMIT_S:
                return  # a hiccup (another process woke for a moment): one thread would cost more
            self._lost = 0.0
            clean = now - self._threaded_since > CLEAN_S
            self._backoff = FIRST_BACKOFF_S if clean else min(2 * self._backoff, MAX_BACKOFF_S)
            self.switches += 1
            self._set_threads(1)
            self._single_until = now + self._backoff

    def _back_to_threads(self) -> None:
        with self._lock:
            if self._single_until and perf_counter() >= self._single_until:
                self._set_threads(self.threads)
                self._single_until = 0.0
                self._threaded_since = perf_counter()
