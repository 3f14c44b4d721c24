"""The engine's threads: one pool for the CPU, one thread for each GPU device.

Each is fed through a ``queue.SimpleQueue`` (a put is well under a microsecond).  The CPU
pool shares one queue; a GPU device has a thread of its own, started on its first operation,
so that launches on its streams keep push order.  A worker hands each operation it takes to
the engine's ``serve``, which runs it and whatever its completion gives back to that worker.
Which thread runs what is otherwise the engine's and the policy's business: this module only
knows where an operation of a device belongs, and how the threads start and stop.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from queue import SimpleQueue
from typing import Any

from ..environment import integer_setting
from ..errors import LazyNDError
from . import interrupts
from .operation import Operation


def default_cpu_workers() -> int:
    """``LAZYND_CPU_WORKERS``, else MXNet's ``MXNET_CPU_WORKER_NTHREADS``, else the cores, between 2 and 8."""
    configured = integer_setting("LAZYND_CPU_WORKERS", "MXNET_CPU_WORKER_NTHREADS", minimum=1)
    if configured is not None:
        return configured
    return max(2, min(os.cpu_count() or 2, 8))


class Workers:
    """The worker threads of one engine and their queues.

    Parameters
    ----------
    serve : callable
        ``serve(op, queue)`` runs ``op`` on the calling worker, ``queue`` being that worker's.
    num_cpu : int
        Threads of the CPU pool.
    lock : threading.Lock
        The engine's lock, taken to start a device's thread only once.
    """

    def __init__(self, serve: Callable[[Operation, SimpleQueue], None], num_cpu: int, lock: threading.Lock) -> None:
        self._serve = serve
        self._lock = lock
        self.num_cpu = num_cpu
        self.cpu_queue: SimpleQueue[Operation | None] = SimpleQueue()
        self._device_queues: dict[Any, SimpleQueue[Operation | None]] = {}
        self.threads: list[threading.Thread] = []  # every thread of the engine, the policy's too
        for i in range(num_cpu):
            self.start_thread(self._work, (self.cpu_queue,), f"lazynd-cpu-{i}")

    def start_thread(self, target: Callable[..., None], args: tuple, name: str) -> None:
        """Start a daemon thread of this engine (joined by :meth:`stop`'s callers through ``threads``)."""
        thread = threading.Thread(target=target, args=args, name=name, daemon=True)
        thread.start()
        self.threads.append(thread)

    def refuse_wait_for_all(self) -> None:
        """Raise when the calling thread runs an operation: on one of these threads, or for a wait
        of its own (:func:`run_helping`). That operation (a CustomOp's forward that calls
        ``mx.nd.waitall()``, say) is pending until it returns, so a wait for every operation
        could never end (MXNet 1.9.1 hangs there)."""
        if _helping.depth or threading.current_thread() in self.threads:
            raise LazyNDError(
                "waitall() was called inside an operation the engine is running (a CustomOp's forward "
                "or backward, say): it would wait for that operation itself and never return; wait on "
                "the arrays the operation needs instead (x.wait_to_read(), x.asnumpy())"
            )

    def queue_for(self, device: Any) -> SimpleQueue:
        """The queue of ``device``'s thread (the CPU pool's for None or a CPU)."""
        if device is None or getattr(device, "device_type", None) != "gpu":
            return self.cpu_queue
        queue = self._device_queues.get(device)
        if queue is None:
            with self._lock:
                queue = self._device_queues.get(device)
                if queue is None:
                    queue = SimpleQueue()
                    self.start_thread(self._work, (queue,), f"lazynd-{device}")
                    self._device_queues[device] = queue
        return queue

    def dispatch(self, ready: list[Operation], keep_for: SimpleQueue | None = None) -> Operation | None:
        """Queue each of ``ready`` for its device; the first that belongs on ``keep_for`` is
        returned instead, for the calling thread to run next."""
        kept = None
        cpu_queue = self.cpu_queue
        for op in ready:
            target = cpu_queue if getattr(op.device, "device_type", None) != "gpu" else self.queue_for(op.device)
            if kept is None and target is keep_for:
                kept = op
            else:
                target.put(op)
        return kept

    def stop(self) -> None:
        """Send one stop signal per worker thread (call once, after the engine's last operation)."""
        for queue in [self.cpu_queue] * self.num_cpu + list(self._device_queues.values()):
            queue.put(None)

    def _work(self, queue: SimpleQueue) -> None:
        serve = self._serve
        while True:
            op = queue.get()
            if op is None:
                return
            serve(op, queue)
            # not kept while the thread waits for the next one: its arguments (arrays) are garbage
            del op
            if interrupts.noted:  # no user here to hand it to (see lazynd.engine.interrupts)
                interrupts.drop()


# how deep the calling thread is in operations it runs while it waits (see Workers.refuse_wait_for_all)
class _Helping(threading.local):
    depth = 0  # the default of every thread (read without raising inside, unlike getattr's default)


_helping = _Helping()


def run_helping(run: Callable[..., Any], *args: Any) -> Any:
    """``run(*args)``: operations a waiting thread runs meanwhile, marked as such on the thread."""
    _helping.depth += 1
    try:
        result = run(*args)
    finally:
        _helping.depth -= 1
    if interrupts.noted:  # a Ctrl-C in one of them: raised at the wait (see .interrupts)
        interrupts.raise_pending()
    return result
