"""The profiler's records and the Chrome Trace Event JSON made of them.

While :mod:`lazynd.profiler` runs, the engine hook of :func:`make_hook` appends one tuple to
:data:`recorded` per operation and :func:`record_annotation` one per annotation of a profiler
object; :func:`trace_events` turns them into the events the profiler writes, with the times of
GPU operations taken from their CUDA events (:func:`gpu_times`).

Events
------
``dump()`` writes complete (``"ph": "X"``) events with ``ts``/``dur`` in
microseconds since the profiler started, one ``pid`` per device (named as MXNet names it:
``cpu/0``, ``gpu/0``) and one ``tid`` per
worker thread (per CUDA stream for GPU operations, named ``stream compute``, ``stream h2d``...), plus ``process_name``/``thread_name`` metadata events (``ts`` 0: every event has ``ph``, ``ts``,
``pid`` and ``tid``, which trace readers index without checking), which
chrome://tracing and Perfetto load.  Operations whose name contains ``copyto``
get the category ``copy``, the others ``operator``.  GPU operations are timed
with the CUDA event their launch recorded on the stream: such an operation ends
when its event fires and starts at its launch or when the previous operation on
the same stream ended, whichever is later.  "Previous" counts only operations whose
launch was over before this one's began: the operators of a bulked executor pass
(``executor:<node>``, each with its own event) are recorded before the pass that holds
them, and the pass starts with its first operator, not after its last.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any

from .profiler_annotations import CUSTOM_OPERATOR, Annotation, custom_operator_running

# (name, device, thread ident, start_ns, end_ns, device event of the first written var or None);
# an annotation's record holds its Annotation where an operation's holds its device, and no event.
# Recording is one tuple and one list.append per operation (atomic under the GIL, so no lock);
# everything else -- GPU event times, names, JSON -- waits for dump()/dumps().
recorded: list[tuple[Any, ...]] = []
thread_names: dict[int, str] = {}


def make_hook(symbolic: bool) -> Callable[[str, Any, Sequence[Any], int, int], None]:
    """The engine hook: ``hook(name, device, writes, start_ns, end_ns)`` after each operation."""
    append = recorded.append
    names = thread_names
    get_ident = threading.get_ident

    def record(name: str, device: Any, writes: Sequence[Any], start: int, end: int) -> None:
        if symbolic and not name.startswith("executor"):
            return
        ident = get_ident()
        if ident not in names:
            names[ident] = threading.current_thread().name
        custom = custom_operator_running()
        if custom is not None:  # run by a custom operator's Python code: MXNet's category and name
            append((f"{custom}::{name}", CUSTOM_OPERATOR, ident, start, end, None))
            return
        # CPU vars never carry an event; a GPU write's event is read now, before a later write replaces it
        append((name, device, ident, start, end, writes[0].event if writes else None))

    return record


def record_annotation(name: str, annotation: Annotation, start: int, end: int) -> None:
    """Record one annotation (a profiler object's region, counter value or instant) of this thread."""
    ident = threading.get_ident()
    if ident not in thread_names:
        thread_names[ident] = threading.current_thread().name
    recorded.append((name, annotation, ident, start, end, None))


def gpu_times(records: list[tuple[Any, ...]]) -> tuple[list[tuple[int, int]], list[str | None]]:
    """(start, end) in perf_counter_ns per record, GPU records from their CUDA events, and each
    GPU record's stream name (``'compute'``, ``'h2d'``...; ``None`` for host records)."""
    times = [(r[3], r[4]) for r in records]
    lanes: list[str | None] = [None] * len(records)
    if not any(r[5] is not None for r in records):
        return times, lanes
    from .backend import get_backend

    # per stream, (host end, GPU end) of its operations in record order; records are appended as
    # their launches end, so host ends do not decrease along a stream's list
    done: dict[Any, list[tuple[int, int]]] = {}
    for i, (_, device, _, start, end, event) in enumerate(records):
        if event is None or not getattr(device, "is_gpu", False):
            continue
        try:
            backend: Any = get_backend(device)
            gpu_end = backend.event_time_ns(event)
        except Exception:  # noqa: BLE001 - keep the host times when the events cannot be read
            continue
        earlier = done.setdefault(id(event.stream), [])
        gpu_start = max(start, _previous_end(earlier, start))
        gpu_end = max(gpu_end, gpu_start)
        earlier.append((end, gpu_end))
        times[i] = (gpu_start, gpu_end)
        lanes[i] = next((kind for kind, s in backend.streams.items() if s is event.stream), "other")
    return times, lanes


def _previous_end(earlier: list[tuple[int, int]], start: int) -> int:
    """The GPU end of the last operation in ``earlier`` (one stream's ``(host end, GPU end)``)
    whose launch was over by ``start``; those launched inside this operation (the operators of a
    bulked pass) are skipped."""
    for host_end, gpu_end in reversed(earlier):
        if host_end <= start:
            return gpu_end
    return start


# MXNet's names of its devices' process rows: "cpu/0", "gpu/1"; page-locked memory "cpu pinned/"
_DEVICE_ROWS = {"cpu": "cpu/{}", "gpu": "gpu/{}", "cpu_pinned": "cpu pinned/"}


def _device_label(device: Any) -> str:
    """The name of a device's process row, as MXNet's traces name it (scripts pick rows by it)."""
    if device is None:
        return "cpu/0"
    row = _DEVICE_ROWS.get(getattr(device, "device_type", None) or "")
    return str(device) if row is None else row.format(device.device_id)


def trace_events(records: list[tuple[Any, ...]], origin: int) -> list[dict[str, Any]]:
    """``records`` (a copy of :data:`recorded`) as a list of Chrome Trace Event dicts (metadata
    first), timed in microseconds since ``origin`` (a ``perf_counter_ns``)."""
    times, lanes = gpu_times(records)
    pids: dict[tuple[str, bool], int] = {}
    tids: dict[Any, int] = {}
    events: list[dict[str, Any]] = []
    meta: list[dict[str, Any]] = []
    seen_threads: set[tuple[int, int]] = set()
    for (name, device, ident, _, _, _), (start, end), lane in zip(records, times, lanes, strict=False):
        annotation = device if isinstance(device, Annotation) else None
        # an annotation's row is its category's (a process of its own, as in MXNet's traces)
        label = annotation.category if annotation is not None else _device_label(device)
        process = (label, annotation is not None)  # a device and a category of one name stay apart
        if lane is not None:  # a GPU operation: its row is its stream's, where its kernels ran
            ident = (label, lane)
        pid = pids.get(process)
        if pid is None:
            pid = pids[process] = len(pids)
            meta.append({"name": "process_name", "ph": "M", "ts": 0, "pid": pid, "tid": 0, "args": {"name": label}})
        tid = tids.get(ident)
        if tid is None:
            tid = tids[ident] = len(tids)
        if (pid, tid) not in seen_threads:
            seen_threads.add((pid, tid))
            thread = f"stream {lane}" if lane is not None else thread_names.get(ident, f"thread-{ident}")
            meta.append({"name": "thread_name", "ph": "M", "ts": 0, "pid": pid, "tid": tid, "args": {"name": thread}})
        # integer nanoseconds until here: ts + dur of one event never passes the next event's ts
        ts = (start - origin) / 1e3
        if annotation is not None:
            events.append(annotation.trace_event(name, ts, max(end - start, 0) / 1e3, pid, tid))
            continue
        category = "copy" if "copyto" in name else "operator"
        events.append(
            {
                "name": name,
                "cat": category,
                "ph": "X",
                "ts": ts,
                "dur": max(end - start, 0) / 1e3,
                "pid": pid,
                "tid": tid,
            }
        )
    return meta + events
