"""The dependency engine: ``push`` operations with the vars they read and write."""

from __future__ import annotations

import os
import threading

from ..errors import LazyNDError
from .base import Engine, Operation, StepFailure
from .naive import NaiveEngine
from .threaded import ThreadedEngine
from .var import Var

__all__ = [
    "Engine",
    "Operation",
    "StepFailure",
    "Var",
    "NaiveEngine",
    "ThreadedEngine",
    "get_engine",
    "set_engine",
    "waitall",
]

_ENGINES = {"threaded": ThreadedEngine, "threadedengine": ThreadedEngine, "naive": NaiveEngine, "naiveengine": NaiveEngine}
_engine: Engine | None = None
# guards creating and replacing ``_engine``: threads racing on first use must all get one engine
# (several would each own some vars' pending work, and a wait on one never sees the others finish)
_engine_lock = threading.Lock()
# True while the profiler's hook is installed: every op must then go through the engine to be
# timed, so the arithmetic fast path (lazynd.ndarray.arithmetic.binary_method) stands aside
recording = False


def _create(name: str) -> Engine:
    if not isinstance(name, str):
        raise LazyNDError(f"engine: expected an engine name, 'threaded' or 'naive', got {type(name).__name__}")
    key = name.strip().lower()
    if key not in _ENGINES:
        raise LazyNDError(f"unknown engine {name!r} (LAZYND_ENGINE); choose 'threaded' or 'naive'")
    return _ENGINES[key]()


def get_engine() -> Engine:
    """The process-wide engine (created on first use from ``LAZYND_ENGINE``, default threaded)."""
    global _engine
    engine = _engine
    if engine is None:
        with _engine_lock:
            engine = _engine
            if engine is None:  # no other thread created it while this one waited for the lock
                engine = _engine = _create(os.environ.get("LAZYND_ENGINE", "threaded"))
    return engine


def set_engine(name: str) -> Engine:
    """Switch engines ('threaded' or 'naive') after waiting for all pending work.

    The old engine finishes what was pushed to it and its worker threads exit.
    """
    global _engine
    with _engine_lock:
        old = _engine
        if old is not None:
            old.waitall()  # raises the old engine's unreported errors before anything changes
        new = _create(name)
        if old is not None:
            new.profiler_hook = old.profiler_hook  # a running profiler keeps recording
            old.shutdown()
        _engine = new
    return new


def waitall() -> None:
    """Wait for every pushed operation; raise the first error not yet reported."""
    get_engine().waitall()
