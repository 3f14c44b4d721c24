"""Large host products split across lazynd's own threads, each part on a single-threaded BLAS.

:mod:`.blas` limits the host BLAS to one thread and sets :data:`~.blas.SPLIT_THREADS` (one per
core by default).  :func:`split_product` cuts a product of at least :data:`MIN_SPLIT_MACS`
multiply-adds into as many parts as there are threads: the output's rows when it has at least
as many rows as columns, else its columns, or the matrices of a batch.  The calling thread
offers the parts to the helper threads, then computes parts itself until none is left, and
sleeps until the helpers have finished the ones they took.  So a part never waits for a helper
that is not running (the caller takes it), and a wait never spins: on a machine whose cores
other processes use, a product takes its share of the cores instead of waiting in a spin for a
descheduled thread, as a product split by OpenBLAS's own threads does.

Each part is an independent product on views of the operands (a block of rows of ``a`` and of
the output, or of columns of ``b`` and of the output): every output element is computed by one
call with the same operands as in the whole product, and which thread computes a part changes
nothing in the result.  The helpers start at the first split; a forked child starts its own.
"""

from __future__ import annotations

import math
import os
import threading
from collections.abc import Callable
from queue import SimpleQueue
from time import perf_counter
from typing import Any

import numpy as np

# a product of fewer multiply-adds runs whole on the calling thread: handing a part to a helper
# (a wake-up, the GIL twice) costs more than the part saves
MIN_SPLIT_MACS = 1 << 21
# row blocks are cut at multiples of this many rows, column blocks of this many columns (whole
# SIMD registers and BLAS micro-tiles, so no part computes a ragged tile the whole would not)
_ROW_ALIGN, _COLUMN_ALIGN = 8, 16

# how long a caller whose parts are done yields before it sleeps until the helpers' are
JOIN_YIELD_S = 200e-6
sched_yield: Callable[[], None] = getattr(os, "sched_yield", lambda: None)

Product = Callable[[np.ndarray, np.ndarray, np.ndarray], None]


class _Job:
    """One split product: parts handed out one at a time to whichever thread asks next."""

    __slots__ = ("parts", "product", "next", "done", "error", "lock", "finished")

    def __init__(self, parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]], product: Product) -> None:
        self.parts = parts
        self.product = product
        self.next = 0  # the next part to hand out
        self.done = 0  # parts finished
        self.error: BaseException | None = None
        self.lock = threading.Lock()
        self.finished = threading.Condition(self.lock)

    def work(self) -> None:
        """Compute parts until none is left to take."""
        parts, lock = self.parts, self.lock
        while True:
            with lock:
                index = self.next
                if index >= len(parts):
                    return
                self.next = index + 1
            try:
                self.product(*parts[index])
            except BaseException as err:  # handed to the caller, which raises it
                self.error = err
            with lock:
                self.done += 1
                if self.done == len(parts):
                    self.finished.notify()

    def wait(self) -> None:
        """Return when every part is finished (the parts taken by helpers included).

        A helper's part most often ends within microseconds of the caller's: for up to
        :data:`JOIN_YIELD_S` the caller looks again, giving up the core and the GIL between
        looks (a descheduled helper gets the core: no spin holds it), then sleeps on the
        condition; a sleep and a wake-up cost more than the look.
        """
        count = len(self.parts)
        deadline = perf_counter() + JOIN_YIELD_S
        while self.done < count and perf_counter() < deadline:
            sched_yield()
        with self.lock:
            while self.done < count:
                self.finished.wait()


class _Helpers:
    """The helper threads: each takes a job from the queue and works on it until it is done."""

    def __init__(self) -> None:
        self.queue: SimpleQueue[_Job] = SimpleQueue()
        self.started = 0
        self.lock = threading.Lock()

    def offer(self, job: _Job, helpers: int) -> None:
        """Let up to ``helpers`` threads work on ``job`` (started the first time they are asked for)."""
        if self.started < helpers:
            with self.lock:
                while self.started < helpers:
                    self.started += 1
                    name = f"lazynd-gemm-{self.started}"
                    threading.Thread(target=self._run, args=(self.queue,), name=name, daemon=True).start()
        for _ in range(helpers):
            self.queue.put(job)

    @staticmethod
    def _run(queue: SimpleQueue[_Job]) -> None:
        while True:
            queue.get().work()


_helpers = _Helpers()


def _after_fork() -> None:
    # a forked child has only the forking thread: its helpers start again, with a queue of their own
    global _helpers
    _helpers = _Helpers()


os.register_at_fork(after_in_child=_after_fork)


def _cuts(length: int, parts: int, align: int) -> list[slice]:
    """``range(length)`` cut into at most ``parts`` slices of whole multiples of ``align`` (the last one ragged)."""
    step = -(-length // parts)
    step = -(-step // align) * align
    return [slice(start, min(start + step, length)) for start in range(0, length, step)]


def _parts(a: np.ndarray, b: np.ndarray, out: np.ndarray, count: int) -> list[tuple] | None:
    """The parts of ``out[...] = a @ b`` for ``count`` threads, or None when it is not split."""
    if out.ndim == 2 and a.ndim == 2 and b.ndim == 2:
        rows, columns = out.shape
        if rows >= columns and rows >= 2 * _ROW_ALIGN:
            return [(a[cut], b, out[cut]) for cut in _cuts(rows, count, _ROW_ALIGN)]
        if columns >= 2 * _COLUMN_ALIGN:
            return [(a, b[:, cut], out[:, cut]) for cut in _cuts(columns, count, _COLUMN_ALIGN)]
        return None
    if out.ndim >= 3 and a.shape[:-2] == b.shape[:-2] == out.shape[:-2] and out.shape[0] > 1:
        # a batch without broadcasting: whole matrices per part
        return [(a[cut], b[cut], out[cut]) for cut in _cuts(out.shape[0], count, 1)]
    return None


def split_product(a: Any, b: Any, out: Any, product: Product, threads: int) -> bool:
    """Compute ``out[...] = a @ b`` as parts on ``threads`` threads, each part by ``product``;
    False (nothing computed) when the product is too small for that, or not split here (shapes
    ``np.matmul`` would refuse, broadcast batches, an output that overlaps an operand)."""
    if threads < 2 or a.__class__ is not np.ndarray or b.__class__ is not np.ndarray or out.__class__ is not np.ndarray:
        return False
    if a.ndim < 2 or b.ndim < 2 or out.ndim < 2:
        return False
    m, k, n = a.shape[-2], a.shape[-1], b.shape[-1]
    if b.shape[-2] != k or out.shape[-2:] != (m, n):
        return False  # np.matmul raises its error
    if math.prod(out.shape) * k < MIN_SPLIT_MACS:
        return False
    if np.may_share_memory(out, a) or np.may_share_memory(out, b):
        return False
    parts = _parts(a, b, out, threads)
    if parts is None or len(parts) < 2:
        return False
    job = _Job(parts, product)
    _helpers.offer(job, min(threads, len(parts)) - 1)
    job.work()
    job.wait()
    if job.error is not None:
        raise job.error
    return True
