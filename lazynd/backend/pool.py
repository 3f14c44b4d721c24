"""Size-bucketed pool of host buffers for temporaries.

Large NumPy allocations go to ``mmap`` and page-fault on first touch, so a
training loop that makes a fresh multi-megabyte temporary every step pays for
it every step.  The pool keeps freed buffers by size class and hands them out
again.

A buffer is free when nothing but the pool refers to it: every NumPy view
keeps its base alive, so ``sys.getrefcount`` on the base tells whether any
array (an NDArray, a pending operation, a user's view) still uses it.  No
finalizers are needed and a buffer can never be reused while still visible.
"""

from __future__ import annotations

import ctypes
import math
import sys
import threading

import numpy as np

from ..errors import DeviceMemoryError

# below this, malloc is faster than any Python-level bookkeeping
MIN_POOLED_BYTES = 1 << 16
# pooled buffers start on this boundary: a page.  Two reasons, both measured on 1M float32:
# - malloc gives large blocks 16-byte alignment (mmap'd pages plus its header), and OpenBLAS's
#   dot is 1.5x slower there: 60 against 41 us;
# - a kernel that streams an input into an output whose address is 64 or 128 bytes past the
#   input's, modulo 4096, runs into 4K aliasing (a load looks like it depends on an earlier
#   store to another page at the same offset): NumPy's tanh took 411 and 380 us there against
#   356 us at any other distance.  Buffers all starting on a page are always 0 apart modulo
#   4096.  (With 64-byte alignment, buffers made one after the other sit 64 bytes apart.)
# The cost: up to 4 KiB more per buffer of at least MIN_POOLED_BYTES (64 KiB), at most 6%.
ALIGN = 4096
# buffers per size class tried first, the most recently handed out first
RECENT_BUFFERS = 4


_char = ctypes.c_char
_address = ctypes.addressof


def size_class(nbytes: int) -> int:
    """Round up to 1/4 steps between powers of two (at most 25% waste)."""
    top = 1 << (nbytes - 1).bit_length()
    step = top >> 3
    return (nbytes + step - 1) // step * step


def aligned_block(nbytes: int, zero: bool = False) -> tuple[np.ndarray, int]:
    """A uint8 block owning its memory, and the offset in it where :data:`ALIGN`-aligned ``nbytes`` start.

    Every large host array is made here: NumPy's bare ``MemoryError`` becomes the
    :class:`~lazynd.errors.DeviceMemoryError` a GPU raises, naming the bytes asked for.
    """
    try:
        block = (np.zeros if zero else np.empty)(nbytes + ALIGN, np.uint8)
    except (MemoryError, ValueError) as err:
        # ValueError: more bytes than an address holds (``zeros((2**40, 2**40))``); NumPy says
        # "Maximum allowed dimension exceeded", naming neither the array nor its size
        raise DeviceMemoryError(
            f"out of memory on cpu: an array of {nbytes:,} bytes was asked for ({err})", ctx="cpu", nbytes=nbytes
        ) from None
    # the address through a ctypes view of the buffer: 0.26 us, against 1 us for ``block.ctypes.data``
    # (a cost per call of one_hot, whose 1M-element output is mostly this allocation)
    return block, -_address(_char.from_buffer(block)) % ALIGN  # type: ignore[arg-type]  # an ndarray is a buffer


def aligned_empty(shape: tuple[int, ...], dtype: np.dtype, nbytes: int) -> np.ndarray:
    """An uninitialised array of ``shape`` and ``dtype`` (``nbytes`` in all) starting on an :data:`ALIGN` boundary."""
    block, start = aligned_block(nbytes)
    return np.ndarray(shape, dtype, block, start)


def aligned_zeros(shape: tuple[int, ...], dtype: np.dtype, nbytes: int) -> np.ndarray:
    """A zero-filled array of ``shape`` and ``dtype`` (``nbytes`` in all) starting on an :data:`ALIGN` boundary.

    From calloc, which zeroes with memset (or gets fresh zero pages from the system): 41 us
    for 4 MB, against 70 us for ``fill(0)`` on a pooled buffer, so an output written sparsely
    (``one_hot``) costs less this way.

    Examples
    --------
    >>> a = aligned_zeros((3, 4), np.dtype(np.float32), 48)
    >>> a.ctypes.data % ALIGN, float(a.sum())
    (0, 0.0)
    """
    block, start = aligned_block(nbytes, zero=True)
    return np.ndarray(shape, dtype, block, start)


class HostPool:
    """Reuses host buffers of at least :data:`MIN_POOLED_BYTES` bytes."""

    def __init__(self, limit_bytes: int = 1 << 30) -> None:
        self.limit_bytes = limit_bytes
        # per size class: the buffers (each the owner of its memory, so that the arrays made on
        # it refer to it: NumPy collapses a view's base to the owner) and where in each the
        # aligned data starts
        self._buckets: dict[int, list[np.ndarray]] = {}
        self._starts: dict[int, list[int]] = {}
        self._cursor: dict[int, int] = {}  # size class -> where the next search starts
        self._recent: dict[int, list[int]] = {}  # size class -> buffers handed out last, newest last
        self._held = 0
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def empty(self, shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
        dtype = np.dtype(dtype)
        nbytes = math.prod(shape) * dtype.itemsize
        if nbytes < MIN_POOLED_BYTES:
            return np.empty(shape, dtype)
        return self.take(shape, dtype, size_class(nbytes))

    def take(self, shape: tuple[int, ...], dtype: np.dtype, size: int) -> np.ndarray:
        """A C-contiguous array of ``shape`` and ``dtype`` (a ``np.dtype``) in a buffer of ``size``.

        ``size`` is the size class of the array's bytes (see :func:`size_class`); callers
        that allocate the same shape again and again compute it once (``empty`` does it each
        time).
        """
        lock = self._lock
        lock.acquire()  # not ``with``: half the cost, on every large output of an operator
        try:
            bucket = self._buckets.get(size)
            if bucket is not None:
                # the buffers handed out last come first: one released since is likely still in
                # the CPU's cache, which makes the next write into it up to 3x faster than into
                # a buffer untouched for a while (a loop that keeps two results alive reuses two
                # buffers instead of cycling through every free one)
                recent = self._recent[size]
                for i in reversed(recent):
                    if sys.getrefcount(bucket[i]) <= 2:
                        recent.remove(i)
                        recent.append(i)
                        self.hits += 1
                        return np.ndarray(shape, dtype, bucket[i], self._starts[size][i])
                # then next fit: start after the buffer found last, so a loop holding many
                # buffers of one size (a batch of decoded images) finds a free one at once, not
                # after re-testing every buffer it already holds
                count = len(bucket)
                start = self._cursor.get(size, 0)
                for k in range(count):
                    i = (start + k) % count
                    # bucket[i] (list) + the call's argument = 2 references when free
                    if sys.getrefcount(bucket[i]) <= 2:
                        buf = bucket[i]
                        self._cursor[size] = i + 1
                        self._remember(recent, i)
                        self.hits += 1
                        return np.ndarray(shape, dtype, buf, self._starts[size][i])
            self.misses += 1
            buf, start = aligned_block(size)
            if self._held + size <= self.limit_bytes:
                bucket = self._buckets.setdefault(size, [])
                bucket.append(buf)
                self._starts.setdefault(size, []).append(start)
                self._remember(self._recent.setdefault(size, []), len(bucket) - 1)
                self._held += size
        finally:
            lock.release()
        return np.ndarray(shape, dtype, buf, start)

    @staticmethod
    def _remember(recent: list[int], index: int) -> None:
        recent.append(index)
        if len(recent) > RECENT_BUFFERS:
            del recent[0]

    def held_bytes(self) -> int:
        """Bytes the pool keeps (in use or free)."""
        return self._held

    def release_free(self) -> int:
        """Drop the buffers no array uses; return the bytes released."""
        released = 0
        with self._lock:
            for size, bucket in self._buckets.items():
                starts = self._starts[size]
                kept = [i for i in range(len(bucket)) if sys.getrefcount(bucket[i]) > 2]
                released += size * (len(bucket) - len(kept))
                bucket[:] = [bucket[i] for i in kept]
                starts[:] = [starts[i] for i in kept]
            self._held -= released
            # indexes into the buckets, which changed
            self._recent = {size: [] for size in self._buckets}
            self._cursor.clear()
        return released
