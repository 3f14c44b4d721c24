"""The profiler: times every engine operation and writes Chrome Trace Event JSON.

While it runs, the engine calls its ``profiler_hook`` after each operation with the operation's name,
device, written vars and start and end (``time.perf_counter_ns``); the hook appends one tuple to a list.
When stopped the hook is ``None``, so profiling costs one attribute test per operation.  The records,
the hook and the trace events made of them are :mod:`lazynd.profiler_trace`.

Modes
-----
``'all'``
    every operation the engine runs.
``'symbolic'``
    only operations pushed by symbolic executors, recognised by their name:
    executors name their operations ``executor_forward``, ``executor_backward`` or
    ``executor:<node>``, i.e. every name starting with ``"executor"``.

Output
------
As in MXNet 0.9, the trace is written without a ``dump()`` call once
:func:`set_config` has named the file: when :func:`set_state` stops a running
profiler, and at interpreter exit if operations were recorded since the last
write.  Records are kept until :func:`dump` or :func:`reset`, so each write
holds everything recorded so far.  Every write goes through
:func:`lazynd.formats.fileio.write_atomic`: the filename may be a URL (``s3://``,
``memory://``...) when fsspec is installed.

Annotations
-----------
MXNet 1.x's profiler objects (:class:`Domain`, :class:`Task`, :class:`Frame`, :class:`Event`,
:class:`Counter`, :class:`Marker`, from :mod:`lazynd.profiler_annotations`) add the program's own
events while the profiler runs, in either mode: timed regions, counter values and instants, with
their domain as category, one process row per category.  :func:`dumps` adds a table per category
of timed regions, and one of the counters and markers.
"""

from __future__ import annotations

import atexit
import json
import time
from collections.abc import Callable
from typing import Any

from . import profiler_annotations, profiler_tables, profiler_trace
from .arguments import flag, is_choice
from .errors import LazyNDError
from .formats.fileio import write_atomic
from .profiler_annotations import Counter, Domain, Event, Frame, Marker, Task
from .profiler_config import MODES, check_process, config_from

__all__ = [
    "set_config",
    "set_state",
    "dump",
    "dumps",
    "reset",
    "profiler_set_config",
    "profiler_set_state",
    "dump_profile",
    "trace_of",
    "pause",
    "resume",
    "Domain",
    "Task",
    "Frame",
    "Event",
    "Counter",
    "Marker",
]

_STATES = ("run", "stop")

_config = {"mode": "symbolic", "filename": "profile.json"}
_state = "stop"
_paused = False  # recording stopped by pause(), to go on at resume()
_output_named = False  # set_config was called: stopping and exiting write the trace
_written = 0  # how many records the last write held
_exit_hook_registered = False
_origin = 0  # perf_counter_ns at the first run: trace time zero
_engine: Any = None  # the engine the hook is installed on
_records = profiler_trace.recorded  # (changed in place, never rebound: profiler_trace's hook appends to it)
_stats_start = 0  # dumps() counts the records from here: dumps(reset=True) forgets statistics, not the trace
# records a finishing dump() took out of the trace that dumps() still counts, as MXNet's statistics outlive its dump
_stats_kept: list[tuple[Any, ...]] = []


def set_config(mode: str | None = None, filename: str = "profile.json", **kwargs: Any) -> None:
    """Choose what to record and where :func:`dump` writes.

    Parameters
    ----------
    mode : {'symbolic', 'all'}, optional
        'all' records every engine operation; 'symbolic' (the default) only executor operations.
    filename : str
        Where the trace is written (by :func:`dump`, at stop and at exit): a
        path, or a URL when fsspec is installed.
    **kwargs
        MXNet 1.x's keywords: ``profile_all=True`` or ``profile_imperative=True`` mean
        ``mode='all'`` (when ``mode`` is not given), ``profile_symbolic`` alone 'symbolic';
        ``profile_process`` must be ``'worker'``; ``profile_memory``, ``profile_api``,
        ``continuous_dump``, ``dump_period`` and ``aggregate_stats`` are checked as MXNet checks them
        and change nothing.  Flags take what MXNet's parser takes: booleans, 0 and 1, and their
        strings (``'True'``, ``'false'``, ``'1'``...), read by their meaning.

    Examples
    --------
    >>> import lazynd as mx, os, tempfile
    >>> mx.profiler.set_config(mode='all', filename=os.path.join(tempfile.mkdtemp(), 'profile.json'))
    >>> mx.profiler.set_config(profile_all=True, aggregate_stats=True, filename=os.path.join(tempfile.mkdtemp(), 'p.json'))
    """
    global _output_named
    mode, filename = config_from(mode, filename, kwargs)
    _config["mode"] = mode
    _config["filename"] = filename
    _output_named = True
    if _state == "run":
        _install()


def _install() -> None:
    global _engine
    from . import engine as engine_mod
    from .engine import get_engine

    engine = get_engine()
    if _engine is not None and _engine is not engine:
        _engine.profiler_hook = None
    engine.profiler_hook = profiler_trace.make_hook(symbolic=_config["mode"] == "symbolic")
    _engine = engine
    engine_mod.recording = True
    profiler_annotations.set_sink(profiler_trace.record_annotation)


def _uninstall() -> None:
    global _engine
    from . import engine as engine_mod

    if _engine is not None:
        _engine.profiler_hook = None
    # set_engine hands the hook on to a new engine: that one must stop recording too
    if engine_mod._engine is not None:
        engine_mod._engine.profiler_hook = None
    _engine = None
    engine_mod.recording = False
    profiler_annotations.set_sink(None)


def _follow_engine() -> None:
    """Move the hook onto the current engine if ``lazynd.engine.set_engine`` replaced it."""
    if _state == "run":
        from .engine import get_engine

        if get_engine() is not _engine:
            _install()


def set_state(state: str = "stop", profile_process: str = "worker") -> None:
    """Start ('run') or stop ('stop') recording.

    Stopping a running profiler writes the trace to the configured filename
    once :func:`set_config` has named one (waiting for pending operations
    first), as does interpreter exit; see the module docstring.

    Examples
    --------
    >>> import lazynd as mx, os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), 'profile.json')
    >>> mx.profiler.set_config(mode='all', filename=path)
    >>> mx.profiler.set_state('run')
    >>> (mx.nd.ones((2,)) + 1).wait_to_read()
    >>> mx.profiler.set_state('stop')
    >>> os.path.exists(path)
    True
    >>> mx.profiler.reset()  # forget the records
    """
    global _state, _origin, _exit_hook_registered, _paused
    check_process(profile_process, "set_state")
    if not is_choice(state, _STATES):
        raise LazyNDError(f"profiler.set_state: state {state!r} is not one of {list(_STATES)}")
    was_running = _state == "run" or _paused
    _paused = False
    if state == "run":
        if not _records:
            _origin = time.perf_counter_ns()
        from .backend import set_event_timing

        set_event_timing(True)  # GPU operations' events carry the timestamps of the trace
        _install()
        _state = state
        if not _exit_hook_registered:
            atexit.register(_write_at_exit)
            _exit_hook_registered = True
        return
    writes = was_running and _output_named
    if writes:
        from .engine import get_engine

        _follow_engine()
        get_engine().waitall()  # operations still pending belong in the trace
    _stop_recording()
    if writes:
        _write_trace()


def _stop_recording() -> None:
    """Stop recording; a pause ends too (:func:`pause` sets it again after calling this)."""
    global _state, _paused
    from .backend import set_event_timing

    set_event_timing(False)
    _uninstall()
    _state = "stop"
    _paused = False


def pause(profile_process: str = "worker") -> None:
    """Stop recording until :func:`resume`, without writing the trace (a no-op unless running).

    Examples
    --------
    >>> import lazynd as mx
    >>> mx.profiler.set_state('run')
    >>> mx.profiler.pause()
    >>> mx.profiler.get_state()
    'stop'
    >>> mx.profiler.resume()
    >>> mx.profiler.get_state()
    'run'
    >>> mx.profiler.set_state('stop'); mx.profiler.reset()
    """
    global _paused
    check_process(profile_process, "pause")
    if _state == "run":
        _stop_recording()
        _paused = True


def resume(profile_process: str = "worker") -> None:
    """Go on recording after :func:`pause` (a no-op unless paused)."""
    check_process(profile_process, "resume")
    if _paused:
        set_state("run")


def get_state() -> str:
    """'run' or 'stop'."""
    return _state


def reset() -> None:
    """Forget every recorded operation."""
    global _origin, _written, _stats_start
    _records.clear()
    _stats_kept.clear()
    _written = _stats_start = 0
    _origin = time.perf_counter_ns()


def trace_events() -> list[dict[str, Any]]:
    """The recorded operations as a list of Chrome Trace Event dicts (metadata first)."""
    return profiler_trace.trace_events(list(_records), _origin)


def trace_of(run: Callable[[], object], mode: str = "all") -> list[dict[str, Any]]:
    """The trace events (metadata included) of what ``run()`` pushes, waited for: a lazynd
    addition for tests and benchmarks.

    The profiler records only during the call and writes no file; afterwards it is stopped, the
    call's records are forgotten and its configuration (mode, filename), earlier records and
    pause are as they were, whatever ``run`` raises.  It must not be recording already.

    Examples
    --------
    >>> import lazynd as mx
    >>> events = mx.profiler.trace_of(lambda: mx.nd.ones((2,)) + 1)
    >>> "_plus_scalar" in {e["name"] for e in events if e["ph"] == "X"}
    True
    """
    global _output_named, _origin, _written, _paused, _stats_start
    from .engine import get_engine

    if mode not in MODES:
        raise LazyNDError(f"profiler.trace_of: mode {mode!r} is not one of {list(MODES)}")
    if _state == "run":
        raise LazyNDError("profiler.trace_of: the profiler is already recording; stop it first")
    saved, named = dict(_config), _output_named
    # what was recorded before (a stopped or paused profile) is not part of run's trace
    earlier, origin, written, paused, stats_start = list(_records), _origin, _written, _paused, _stats_start
    kept = list(_stats_kept)
    _records.clear()
    _config["mode"], _output_named, _paused, _stats_start = mode, False, False, 0  # stopping writes no file
    try:
        set_state("run")
        run()
        get_engine().waitall()
        return trace_events()
    finally:
        set_state("stop")
        _records[:] = earlier
        _stats_kept[:] = kept
        _origin, _written, _paused, _stats_start = origin, written, paused, stats_start
        _config.update(saved)
        _output_named = named


def dump(finished: bool = True, profile_process: str = "worker") -> str:
    """Write the trace to the configured filename (atomically) and return the path.

    Parameters
    ----------
    finished : bool
        Also stop the profiler and start the next trace afresh (:func:`dumps` still counts all).
    profile_process : str
        ``'worker'`` only (MXNet's kvstore server profiling is not supported).

    Examples
    --------
    >>> import lazynd as mx, os, tempfile
    >>> mx.profiler.set_config(filename=os.path.join(tempfile.mkdtemp(), 'profile.json'))
    >>> path = mx.profiler.dump()
    """
    check_process(profile_process, "dump")
    finished = flag("profiler.dump", "finished", finished)
    _follow_engine()
    path = _write_trace()
    if finished:
        counted = _stats_kept + list(_records)[_stats_start:]
        _stop_recording()
        reset()
        _stats_kept[:] = counted  # the next trace starts afresh; dumps() still counts what was recorded
    return path


def _write_trace() -> str:
    """Wait for pending operations, then write every record so far to the configured filename."""
    global _written
    from .engine import get_engine

    get_engine().waitall()
    count = len(_records)
    document = {"traceEvents": trace_events(), "displayTimeUnit": "ms"}
    path = _config["filename"]
    try:
        write_atomic(path, json.dumps(document).encode("utf-8"))
    except OSError as err:
        raise LazyNDError(f"profiler: cannot write the trace to {path!r}: {err}") from err
    _written = count
    return path


def _write_at_exit() -> None:
    """MXNet writes the trace when the process ends; so do we, if something is left unwritten."""
    if _output_named and len(_records) > _written:
        _write_trace()


def dumps(reset: bool = False, format: str = "table", sort_by: str = "total", ascending: bool = False) -> str:  # noqa: A002 - MXNet's name
    """The recorded operations per name: count and total/min/max/avg time in ms, in MXNet's layout.

    The text is MXNet 1.9.1's: a ``Profile Statistics:`` preface, then one table per category
    in name order (title, a rule, ``Name  Total Count  Time (ms)  Min Time (ms)  Max Time (ms)
    Avg Time (ms)``, dashes, rows, a blank line), so that scripts reading MXNet's tables read these.

    ``format``: ``'table'`` (text) or ``'json'`` (MXNet's ``{"Time": {"operator": {name:
    {"Count", "Total", "Min", "Max", "Avg"}}}, "Memory": {}, "Unit": {"Time": "ms", "Memory": "kB"}}``,
    ``"Memory"`` empty: memory use is not recorded); rows sorted by ``sort_by`` (``'total'``, ``'avg'``,
    ``'min'``, ``'max'`` or ``'count'``), descending unless ``ascending``.  Executor steps are rows of
    their operators, as MXNet's, passes an ``executor`` table; timed annotations (tasks, frames,
    events) a table per category after the operators'; counters (count, last, min and max value)
    and markers (count) one each at the end, in JSON under ``"Counter"`` and ``"Marker"``, per category.  ``reset`` starts the statistics afresh, as MXNet's: the trace keeps every record.

    Examples
    --------
    >>> import lazynd as mx
    >>> print(mx.profiler.dumps())  # doctest: +SKIP
    """
    global _stats_start
    for name, value in (("reset", reset), ("ascending", ascending)):
        # MXNet asserts a flag here (True, False, 1 or 0): 'no' or 2 is refused, not read as true
        if not is_choice(value, (False, True)):
            raise LazyNDError(f"profiler.dumps: {name} must be True or False, got {value!r}")
    reset, ascending = bool(reset), bool(ascending)
    if not is_choice(format, ("table", "json")):
        raise LazyNDError(f"profiler.dumps: format must be 'table' or 'json', got {format!r}")
    if not is_choice(sort_by, profiler_tables.SORT_KEYS):
        raise LazyNDError(f"profiler.dumps: sort_by must be one of {list(profiler_tables.SORT_KEYS)}, got {sort_by!r}")
    _follow_engine()
    recent = list(_records)[_stats_start:]
    records = _stats_kept + recent
    times, values = profiler_tables.gather(records, profiler_trace.gpu_times(records)[0])
    if reset:
        _stats_kept.clear()
        _stats_start += len(recent)
    return profiler_tables.render(times, values, format, sort_by, ascending)


# MXNet 0.9 names
profiler_set_config = set_config
profiler_set_state = set_state
dump_profile = dump
