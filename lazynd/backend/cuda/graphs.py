"""CUDA graphs of launch sequences that repeat: an executor's passes on a GPU.

A bound executor's forward or backward pass launches the same kernels on the same buffers at
every step, and on a GPU its time is mostly the host's: each launch costs a few microseconds
of Python and CUDA calls while the kernels themselves, at the batch sizes people train with,
take less (a LeNet step on an H100: 3.2 ms of host time, the kernels far less).  Captured once
into a CUDA graph, the whole pass is one launch.

How a sequence is captured (:meth:`LaunchGraphs.run`):

- the first :data:`CAPTURE_AFTER` runs are eager: they compile the kernels and fill the host's
  caches, so that the capture makes no such calls;
- the next run is captured on a stream of its own (never the compute stream: another thread may
  launch there meanwhile, and whatever a capturing stream is given becomes part of the graph), in
  relaxed mode, with a memory pool of its own: the temporaries the kernels allocate are that
  pool's, which the graph keeps for as long as it lives, so no later allocation can take memory
  the graph's kernels still write;
- the graph is then launched on the compute stream, for this run and every later one.

What a graph holds: the addresses of every buffer its kernels read and write (an executor's bound
arrays and planned storage, which live as long as it does; the temporaries, in the graph's own
pool; cached constants such as :mod:`.gemm`'s rows of ones, which are never freed) and cuBLAS's
workspace of the capturing thread's handle, which it shares with that thread's later products:
they all run on the device's compute stream, in order with the graph's replays, never beside them.
A graph destroyed while the device still runs it is freed when it completes (CUDA's rule), and its
pool's memory returns to the driver through ``cudaFree``, which waits for the device.

A sequence that cannot be captured (a device-to-host read, a synchronisation, a library that
refuses capture) raises inside the capture; it then runs eagerly, now and from then on, and
:attr:`LaunchGraphs.failures` says why.  What a graph cannot see is the host: a sequence whose
launches depend on host values that change between runs (random draws, a host array uploaded
at every call, a Python callback) must not be captured; the executor decides which passes may
be (:mod:`lazynd_sym.executor.bulking`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Hashable
from typing import Any

# eager runs of a sequence before it is captured
CAPTURE_AFTER = 1
# cudaStreamCaptureModeRelaxed's value: the capturing thread may still call what CUDA calls unsafe
# during a capture (an allocation by the graph's own pool, a library's lazy set-up)
_RELAXED = 2


def capture_supported(cupy: Any) -> bool:
    """Whether this CuPy can capture streams into graphs (CuPy 9 and later; not the CPU emulator's)."""
    return hasattr(cupy.cuda.Stream, "begin_capture") and hasattr(cupy.cuda, "MemoryPool")


class LaunchGraphs:
    """The CUDA graphs of one owner's launch sequences, one per key (an executor: its forward in
    training and inference mode, its backward)."""

    def __init__(self, backend: Any) -> None:
        self._backend = backend
        self._runs: dict[Hashable, int] = {}
        self._graphs: dict[Hashable, Any] = {}
        self._pools: dict[Hashable, Any] = {}
        self.failures: dict[Hashable, str] = {}

    def captured(self, key: Hashable) -> bool:
        """Whether the sequence ``key`` runs as a graph now."""
        return key in self._graphs

    def run(self, key: Hashable, launch: Callable[[], None]) -> None:
        """Run ``launch()`` (which launches on the current stream, the device's compute stream):
        eagerly the first :data:`CAPTURE_AFTER` times, then captured into a graph, which this
        and every later run launches instead."""
        graph = self._graphs.get(key)
        if graph is None:
            runs = self._runs.get(key, 0)
            if runs < CAPTURE_AFTER or key in self.failures:
                self._runs[key] = runs + 1
                launch()
                return
            graph = self._capture(key, launch)
            if graph is None:
                launch()
                return
        graph.launch(self._backend.compute_stream)

    def _capture(self, key: Hashable, launch: Callable[[], None]) -> Any:
        """``launch()`` captured into a graph (None, with the reason in :attr:`failures`, where it
        cannot be: nothing it launched ran, and the caller runs it eagerly)."""
        cupy = self._backend.cupy
        stream = self._backend.capture_stream()
        pool = cupy.cuda.MemoryPool()
        try:
            with cupy.cuda.using_allocator(pool.malloc), stream:
                stream.begin_capture(getattr(cupy.cuda.runtime, "streamCaptureModeRelaxed", _RELAXED))
                try:
                    launch()
                except BaseException:
                    with contextlib.suppress(Exception):
                        stream.end_capture()
                    raise
                graph = stream.end_capture()
        except Exception as err:  # noqa: BLE001 - any refusal: the sequence stays eager
            self.failures[key] = f"{type(err).__name__}: {err}"
            return None
        self._graphs[key] = graph
        self._pools[key] = pool
        return graph
