"""One failing worker ends the whole MPI job.

When a worker of a ``dist_sync`` job raises and exits, the others do not know: they
wait in their next collective until the watchdog's timeout (``LAZYND_KV_TIMEOUT``,
300 s by default).  So the first distributed store of a job of two or more workers
replaces ``sys.excepthook``: an uncaught exception is printed as before (by the hook
it replaces), followed by a line naming the rank, and then ``MPI_Abort`` on
``COMM_WORLD`` ends every process of the job at once, with a non-zero exit status.

Only uncaught exceptions of the main thread pass through ``sys.excepthook``; a
``sys.exit()`` with an error status does not, and is left to ``mpiexec``.
"""

from __future__ import annotations

import sys
import time
from types import TracebackType
from typing import Any

_installed = False
ABORT_GRACE_S = 0.5  # between printing the error and aborting the job


def abort_job_on_uncaught_exception(world: Any) -> None:
    """Make an uncaught exception in this process abort the MPI job ``world`` (``COMM_WORLD``).

    Does nothing for a job of one process, and installs the hook once per process.
    """
    global _installed
    size = world.Get_size()
    if _installed or size == 1:
        return
    rank = world.Get_rank()
    previous = sys.excepthook

    def abort_hook(kind: type[BaseException], error: BaseException, traceback: TracebackType | None) -> None:
        try:
            previous(kind, error, traceback)
            sys.stderr.write(
                f"lazynd_kv: rank {rank} of {size} stopped on an uncaught {kind.__name__}; "
                "aborting the MPI job so that the other workers do not wait for this one\n"
            )
            sys.stdout.flush()
            sys.stderr.flush()
            # mpiexec forwards a process's output through a pipe it reads on its own time, and stops
            # reading once the abort kills the job: give it a moment so the traceback is not lost
            time.sleep(ABORT_GRACE_S)
        finally:
            world.Abort(1)

    sys.excepthook = abort_hook
    _installed = True
