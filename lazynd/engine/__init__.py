"""The dependency engine: ``push`` operations with the vars they read and write."""

from __future__ import annotations

import atexit
import os
import signal
import sys
import threading
import traceback

from ..errors import LazyNDError
from . import interrupts
from .backlog import Backlog
from .base import Engine, OperationName, StepFailure, register_device_sync
from .bulk import bulk, set_bulk_size
from .completion import Completion
from .naive import NaiveEngine
from .operation import Operation
from .policy import DeferringPolicy, PlainPolicy, SchedulingPolicy
from .threaded import ThreadedEngine
from .var import Var

__all__ = [
    "Completion",
    "Engine",
    "Operation",
    "OperationName",
    "StepFailure",
    "Var",
    "NaiveEngine",
    "ThreadedEngine",
    "SchedulingPolicy",
    "DeferringPolicy",
    "PlainPolicy",
    "register_device_sync",
    "get_engine",
    "set_engine",
    "waitall",
    "bulk",
    "set_bulk_size",
]

_ENGINES = {
    "threaded": ThreadedEngine,
    "threadedengine": ThreadedEngine,
    "naive": NaiveEngine,
    "naiveengine": NaiveEngine,
    # MXNet's other names for its threaded engines (MXNET_ENGINE_TYPE): one engine here
    "threadedengineperdevice": ThreadedEngine,
    "threadedenginepooled": ThreadedEngine,
}
_engine: Engine | None = None
# guards creating and replacing ``_engine``: threads racing on first use must all get one engine
# (several would each own some vars' pending work, and a wait on one never sees the others finish)
_engine_lock = threading.Lock()
# True while the profiler's hook is installed: every op must then go through the engine to be
# timed, so the arithmetic fast path (lazynd.ndarray.arithmetic.binary_method) stands aside
recording = False


def _create(name: str, policy: str | SchedulingPolicy | None = None) -> Engine:
    if not isinstance(name, str):
        raise LazyNDError(f"engine: expected an engine name, 'threaded' or 'naive', got {type(name).__name__}")
    key = name.strip().lower()
    if key not in _ENGINES:
        raise LazyNDError(f"unknown engine {name!r} (LAZYND_ENGINE or MXNET_ENGINE_TYPE); choose 'threaded' or 'naive'")
    engine_class = _ENGINES[key]
    if engine_class is ThreadedEngine:
        return ThreadedEngine(policy=policy)
    if policy is not None:
        raise LazyNDError(
            f"engine {name!r} runs every operation at push: it takes no scheduling policy, got {policy!r}"
        )
    return engine_class()


def get_engine() -> Engine:
    """The process-wide engine (created on first use from ``LAZYND_ENGINE``, else MXNet's
    ``MXNET_ENGINE_TYPE`` (``NaiveEngine``, ``ThreadedEngine``, ``ThreadedEnginePerDevice``), default
    threaded, with the scheduling policy ``LAZYND_ENGINE_POLICY``, default deferring)."""
    global _engine
    engine = _engine
    if engine is None:
        with _engine_lock:
            engine = _engine
            if engine is None:  # no other thread created it while this one waited for the lock
                name = os.environ.get("LAZYND_ENGINE") or os.environ.get("MXNET_ENGINE_TYPE") or "threaded"
                engine = _engine = _create(name)
    return engine


def set_engine(name: str, policy: str | SchedulingPolicy | None = None) -> Engine:
    """Switch engines ('threaded' or 'naive') after waiting for all pending work.

    ``policy`` is the threaded engine's scheduling policy, 'deferring' or 'plain' (default
    ``LAZYND_ENGINE_POLICY``, else 'deferring'; see :mod:`lazynd.engine.policy`).  The old
    engine finishes what was pushed to it and its worker threads exit.
    """
    global _engine
    with _engine_lock:
        old = _engine
        if old is not None:
            old.waitall()  # raises the old engine's unreported errors before anything changes
        new = _create(name, policy)
        if old is not None:
            new.profiler_hook = old.profiler_hook  # a running profiler keeps recording
            old.shutdown()
        _engine = new
    return new


def waitall() -> None:
    """Wait for every pushed operation; raise the first error not yet reported."""
    get_engine().waitall()


# errors printed in full at exit; the rest are counted
EXIT_REPORT_MAX = 10
# at exit and before a fork, pending work is finished, unless none of it completes for this long
# (an operation blocked for ever: on a queue the main thread no longer feeds, say)
STALLED_WORK_S = 10.0


def report_unreported_at_exit() -> None:
    """Print to stderr the errors that no wait reported before the interpreter exits.

    Registered with :mod:`atexit`: pending operations are finished first (those that none
    completes for ``STALLED_WORK_S`` seconds are counted and left: the process exits), then
    each error still unreported is printed with its traceback (the first ``EXIT_REPORT_MAX``
    in full), under a line that says how many there are.  The exit status is left as it is.
    """
    engine = _engine
    if engine is None:
        return
    if not engine.wait_for_pushed(STALLED_WORK_S):
        sys.stderr.write(
            f"lazynd: {engine.num_pending()} operation(s) still pending at exit made no progress for "
            f"{STALLED_WORK_S:g} s (blocked for ever?); exiting without them\n"
        )
    errors, let_go = engine.take_unreported()
    if not errors:
        return
    count = len(errors) + let_go
    lines = [
        f"lazynd: {count} operator error{'s were' if count > 1 else ' was'} never reported by a wait "
        "(wait_to_read, asnumpy, waitall) before exit:\n"
    ]
    shown = errors[:EXIT_REPORT_MAX]
    for err in shown:
        lines.extend(traceback.format_exception(err))
    if count > len(shown):
        lines.append(f"lazynd: ... and {count - len(shown)} more\n")
    sys.stderr.write("".join(lines))
    sys.stderr.flush()


atexit.register(report_unreported_at_exit)


# -- fork -------------------------------------------------------------------------------------------
# A child made by fork (multiprocessing's default start method on Linux, DataLoader-style worker
# pools) has only the thread that forked: the engine's workers and watcher stay in the parent.
# Left as it is, the child's engine would queue work no thread ever runs, and wait for operations
# that were running in the parent, forever.  So, as MXNet does around fork: the parent finishes
# its pending work first (the child's arrays then hold their values and no var is busy), and the
# child starts an engine of its own.  Work pushed by another thread while the process forks, or
# an operation that forks, leaves what it was running to the parent alone: a wait in the child
# for an array that work writes does not return.


def _before_fork() -> None:
    """Finish the pending work, then hold the engine slot across the fork (see above)."""
    engine = _engine
    if engine is not None:
        try:
            engine.wait_for_pushed(STALLED_WORK_S)  # not wait_idle: a thread pushing on would hold the fork
        except LazyNDError:  # the fork is made inside an operation, which waits for nothing
            pass
    _engine_lock.acquire()


def _after_fork_in_parent() -> None:
    _engine_lock.release()


def _after_fork_in_child() -> None:
    """Give the child an engine of its own, of the parent's kind and settings (see above)."""
    global _engine, _engine_lock
    _engine_lock = threading.Lock()  # the forking thread held it: a fresh one is free
    if signal.getsignal(signal.SIGINT) is interrupts.on_ctrl_c:
        interrupts.start_redelivery()  # its thread stayed in the parent
    old = _engine
    if old is None:
        return
    try:
        if isinstance(old, ThreadedEngine):  # as many workers, a fresh policy of the same kind
            _engine = ThreadedEngine(old.num_workers, policy=type(old.policy)())
        else:
            _engine = type(old)()
    except Exception:  # noqa: BLE001 - a policy that cannot be made again: the default engine on first use
        _engine = None
        return
    _engine.profiler_hook = old.profiler_hook  # a running profiler goes on recording


# a Ctrl-C never leaves the engine half way through its bookkeeping (see .interrupts)
interrupts.guard_ctrl_c(
    interruptible=[ThreadedEngine._help_until, ThreadedEngine.wait_idle, Engine.wait_for_pushed, Backlog.wait_drained],
    operation_runners=[Engine._run_call, Engine.run_now],
)

if hasattr(os, "register_at_fork"):
    os.register_at_fork(before=_before_fork, after_in_parent=_after_fork_in_parent, after_in_child=_after_fork_in_child)
