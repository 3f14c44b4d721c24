"""Waiting for MPI requests without hanging for ever and without spinning a core.

A worker that dies or stops must not leave the others waiting: once a wait lasts
longer than ``LAZYND_KV_TIMEOUT`` seconds (default 300) the :class:`Watchdog` ends
the whole job with ``MPI_Abort`` and a message naming the collective.

Two kinds of wait:

- :meth:`Watchdog.wait_requests`, for the data of a collective that every worker has
  already joined: MPI's own blocking wait, at full speed (a thread watches the clock);
- :meth:`Watchdog.wait_patiently`, for a collective that other workers may join much
  later (they are still computing, or have failed): polled flat out for the first
  millisecond, as a well-balanced step needs, then with sleeps that double up to
  ``MAX_PAUSE_S``, so a worker left waiting costs next to no CPU.  (Not ``sleep(0)``
  while polling flat out: on a loaded machine it yields the core for a whole time
  slice, measured 80 us a poll against 2 us for a 16-byte Iallreduce.)
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

from lazynd.errors import LazyNDError

DEFAULT_TIMEOUT = 300.0
SPIN_S = 1e-3  # polled without sleeping this long: most waits of a balanced step end by then
FIRST_PAUSE_S = 50e-6
MAX_PAUSE_S = 2e-3  # the longest sleep between polls: what a late arrival may cost


def timeout_from_env() -> float:
    """``LAZYND_KV_TIMEOUT`` in seconds (default 300), or a clear error if it is not a positive number."""
    text = os.environ.get("LAZYND_KV_TIMEOUT", "")
    if not text:
        return DEFAULT_TIMEOUT
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value > 0:
        raise LazyNDError(f"LAZYND_KV_TIMEOUT must be a positive number of seconds, got {text!r}")
    return value


class Watchdog:
    """Waits for MPI requests; ends the job when one waits longer than ``timeout`` or fails."""

    def __init__(self, mpi: Any, comm: Any, timeout: float) -> None:
        self._mpi = mpi
        self._comm = comm
        self.timeout = timeout
        self._deadline: float | None = None
        self._what = ""
        # with THREAD_MULTIPLE a blocking Wait runs at full speed while this thread watches the clock
        self._threaded = mpi.Query_thread() == mpi.THREAD_MULTIPLE
        if self._threaded:
            threading.Thread(target=self._watch, name="lazynd-kv-watchdog", daemon=True).start()

    def wait(self, start: Callable[[], Any], what: str) -> None:
        """Start a request with ``start()`` and wait for it within the timeout."""
        self.run(lambda: self.wait_requests([start()], what), what)

    def run(self, body: Callable[[], None], what: str) -> None:
        """Run ``body`` (which waits with this watchdog), ending the job if an MPI call fails."""
        try:
            body()
        except self._mpi.Exception as err:
            self.fail(f"{what} failed: {err}")

    def wait_requests(self, requests: list[Any], what: str) -> None:
        """Wait at full speed for ``requests`` within the timeout (MPI errors propagate to :meth:`run`)."""
        if self._threaded:
            # measured: Wait and a Test loop with sleep(0) cost the same; a sleeping backoff costs ~20%
            self._what = what
            self._deadline = time.monotonic() + self.timeout
            try:
                self._mpi.Request.Waitall(requests)
            finally:
                self._deadline = None
            return
        deadline = time.monotonic() + self.timeout
        while not self._mpi.Request.Testall(requests):
            if time.monotonic() > deadline:
                self.fail(f"{what} did not complete within {self.timeout:g} s")
            time.sleep(0)

    def wait_patiently(self, requests: list[Any], what: str, bounded: bool = True) -> None:
        """Wait for ``requests`` that other workers may join late, sleeping more and more between polls.

        ``bounded=False`` waits without the timeout: for a worker that has finished, whose
        peers may still have any amount of work of their own to do.
        """
        test = self._mpi.Request.Testall
        start = time.monotonic()
        deadline = start + self.timeout if bounded else float("inf")
        pause = 0.0
        while not test(requests):
            now = time.monotonic()
            if now > deadline:
                self.fail(f"{what} did not complete within {self.timeout:g} s")
            if now - start > SPIN_S:  # (no sleep(0) before: on a busy machine it gives the core away)
                pause = min(max(2 * pause, FIRST_PAUSE_S), MAX_PAUSE_S)
                time.sleep(pause)

    def _watch(self) -> None:
        step = min(0.05, self.timeout / 20)
        while True:
            time.sleep(step)
            deadline = self._deadline
            if deadline is not None and time.monotonic() > deadline:
                self.fail(f"{self._what} did not complete within {self.timeout:g} s")

    def fail(self, reason: str) -> None:
        """Print ``reason`` with this worker's rank and end the whole MPI job."""
        comm = self._comm
        sys.stderr.write(
            f"lazynd_kv: rank {comm.Get_rank()} of {comm.Get_size()}: {reason}; a worker has died or stopped "
            f"responding (timeout LAZYND_KV_TIMEOUT={self.timeout:g} s). Aborting the MPI job.\n"
        )
        sys.stderr.flush()
        comm.Abort(1)
        os._exit(1)  # Abort does not return; this is for an MPI that lets it
