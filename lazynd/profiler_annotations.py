"""MXNet 1.x's profiler objects: annotations a program adds to the profiler's trace.

A :class:`Domain` groups them and names their category.  :class:`Task`, :class:`Frame` and
:class:`Event` time a region between ``start()`` and ``stop()`` (or a ``with`` block) and
become complete (``"ph": "X"``) events; a :class:`Counter` is a value whose every change
becomes a counter (``"C"``) event; :class:`Marker.mark` puts an instant (``"i"``) event.
Categories are MXNet's: a task's and a counter's is its domain's name, a frame's
``"<domain>,frame"``, a marker's ``"<domain>,instant_marker"``, an event's ``"event"``; each
category gets its own process row in the trace, named after it, as in MXNet's traces.

While the profiler is stopped (or paused) they record nothing and cost one global read: the
profiler hands this module its recording function, :data:`_sink`, when it starts and takes it
back when it stops.  A region started while the profiler was stopped is not recorded when it
stops.  Each thread times its own regions (one object may time regions of several threads at
once, and nest), and a counter's changes are atomic: a lock orders each change and its record.
The Python code of custom operators is timed the same way, in MXNet's ``"Custom Operator"``
category (:func:`custom_operator`).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from numbers import Integral
from typing import Any, NamedTuple

from .errors import LazyNDError

__all__ = ["Domain", "Task", "Frame", "Event", "Counter", "Marker"]


class Annotation(NamedTuple):
    """What one annotation record holds where an operation's record holds its device."""

    category: str
    phase: str  # "X": a timed region, "C": a counter's new value, "i": an instant
    value: int | None = None  # a counter's value
    scope: str | None = None  # an instant's scope letter: "g", "p" or "t"

    def trace_event(self, name: str, ts: float, dur: float, pid: int, tid: int) -> dict[str, Any]:
        """The Chrome trace event of this record (``ts``, ``dur`` in microseconds)."""
        event: dict[str, Any] = {"name": name, "cat": self.category, "ph": self.phase, "ts": ts, "pid": pid, "tid": tid}
        if self.phase == "X":
            event["dur"] = dur
        elif self.phase == "C":
            event["args"] = {name: self.value}
        else:
            event["s"] = self.scope
        return event


# the profiler's recording function while it runs: sink(name, annotation, start_ns, end_ns)
_sink: Callable[[str, Annotation, int, int], None] | None = None


def set_sink(sink: Callable[[str, Annotation, int, int], None] | None) -> None:
    """Called by the profiler: record through ``sink`` from now on (``None``: record nothing)."""
    global _sink
    _sink = sink


# MXNet's category of a custom operator's Python code and of the operations that code runs
CUSTOM_OPERATOR = Annotation("Custom Operator", "X")
_custom = threading.local()


@contextmanager
def custom_operator(name: str, op_type: str) -> Iterator[None]:
    """Time a custom operator's Python ``forward``/``backward`` on this thread as MXNet names it
    (``name``: ``<op_type>`` or ``_backward_<op_type>``): ``<name>::pure_python`` in the
    ``"Custom Operator"`` category, where the operations it runs on this thread go too, as
    ``<op_type>::<operation>`` (see :func:`custom_operator_running`)."""
    if _sink is None:
        yield
        return
    outer = getattr(_custom, "op_type", None)
    _custom.op_type = op_type
    begin = time.perf_counter_ns()
    try:
        yield
    finally:
        _custom.op_type = outer
        sink = _sink
        if sink is not None:
            sink(f"{name}::pure_python", CUSTOM_OPERATOR, begin, time.perf_counter_ns())


def custom_operator_running() -> str | None:
    """The op_type of the custom operator whose Python code runs on this thread, if any."""
    return getattr(_custom, "op_type", None)


def _checked_name(kind: str, name: Any) -> str:
    if not isinstance(name, str) or not name:
        raise LazyNDError(f"profiler.{kind}: name must be a non-empty string, got {name!r}")
    return name


def _checked_domain(kind: str, domain: Any) -> Domain:
    if not isinstance(domain, Domain):
        raise LazyNDError(f"profiler.{kind}: domain must be a profiler.Domain, got {type(domain).__name__}")
    return domain


class Domain:
    """A group of annotations; its name is their category in the trace.

    Examples
    --------
    >>> import lazynd as mx
    >>> domain = mx.profiler.Domain('training')
    >>> with domain.new_task('load batch'):
    ...     pass
    >>> str(domain), str(domain.new_counter('batches', 0))
    ('training', 'batches')
    """

    def __init__(self, name: str) -> None:
        self.name = _checked_name("Domain", name)

    def __str__(self) -> str:
        return self.name

    def __repr__(self) -> str:
        return f"Domain({self.name!r})"

    def new_task(self, name: str) -> Task:
        """A :class:`Task` of this domain."""
        return Task(self, name)

    def new_frame(self, name: str) -> Frame:
        """A :class:`Frame` of this domain."""
        return Frame(self, name)

    def new_counter(self, name: str, value: int | None = None) -> Counter:
        """A :class:`Counter` of this domain, starting at ``value`` (0 if not given)."""
        return Counter(self, name, value)

    def new_marker(self, name: str) -> Marker:
        """A :class:`Marker` of this domain."""
        return Marker(self, name)


class _Region:
    """A named region timed from ``start()`` to ``stop()``, or over a ``with`` block."""

    __slots__ = ("name", "_annotation", "_starts")

    def __init__(self, name: str, category: str) -> None:
        self.name = name
        self._annotation = Annotation(category, "X")
        self._starts: dict[int, list[int]] = {}  # per thread, the start times of its open regions

    def start(self) -> None:
        """Start timing (nothing while the profiler is stopped)."""
        if _sink is not None:
            self._starts.setdefault(threading.get_ident(), []).append(time.perf_counter_ns())

    def stop(self) -> None:
        """Stop timing the region this thread started last; it goes in the trace if the profiler runs."""
        open_regions = self._starts.get(threading.get_ident())
        if not open_regions:
            return  # started while the profiler was stopped (or not started): nothing to record
        begin = open_regions.pop()
        sink = _sink
        if sink is not None:
            sink(self.name, self._annotation, begin, time.perf_counter_ns())

    def __enter__(self) -> _Region:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def __str__(self) -> str:
        return self.name

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._annotation.category!r}, {self.name!r})"


class Task(_Region):
    """A unit of work of one thread, timed by ``start()``/``stop()`` or ``with``; nests.

    Examples
    --------
    >>> import lazynd as mx
    >>> task = mx.profiler.Task(mx.profiler.Domain('io'), 'decode')
    >>> task.start(); task.stop()
    """

    __slots__ = ()

    def __init__(self, domain: Domain, name: str) -> None:
        super().__init__(_checked_name("Task", name), _checked_domain("Task", domain).name)


class Frame(_Region):
    """A period such as one training iteration, timed by ``start()``/``stop()`` or ``with``
    (category ``"<domain>,frame"``)."""

    __slots__ = ()

    def __init__(self, domain: Domain, name: str) -> None:
        super().__init__(_checked_name("Frame", name), f"{_checked_domain('Frame', domain).name},frame")


class Event(_Region):
    """A timed region of no domain (category ``"event"``), by ``start()``/``stop()`` or ``with``."""

    __slots__ = ()

    def __init__(self, name: str) -> None:
        super().__init__(_checked_name("Event", name), "event")


class Counter:
    """A value tracked over time: each change is a counter event of the trace (while the profiler runs).

    Examples
    --------
    >>> import lazynd as mx
    >>> counter = mx.profiler.Domain('data').new_counter('queued', 2)
    >>> counter += 3
    >>> counter.decrement()
    >>> counter.value
    4
    """

    __slots__ = ("name", "_category", "_value", "_lock")

    def __init__(self, domain: Domain, name: str, value: int | None = None) -> None:
        self.name = _checked_name("Counter", name)
        self._category = _checked_domain("Counter", domain).name
        self._lock = threading.Lock()
        self._value = 0
        if value is not None:
            self.set_value(value)

    @property
    def value(self) -> int:
        """The current value (a lazynd addition)."""
        return self._value

    def set_value(self, value: int) -> None:
        """Set the value."""
        value = self._checked(value, "set_value", "value")
        with self._lock:
            self._value = value
            self._record()

    def increment(self, delta: int = 1) -> None:
        """Add ``delta``."""
        delta = self._checked(delta, "increment", "delta")
        with self._lock:
            self._value += delta
            self._record()

    def decrement(self, delta: int = 1) -> None:
        """Subtract ``delta``."""
        delta = self._checked(delta, "decrement", "delta")
        with self._lock:
            self._value -= delta
            self._record()

    def __iadd__(self, delta: int) -> Counter:
        self.increment(delta)
        return self

    def __isub__(self, delta: int) -> Counter:
        self.decrement(delta)
        return self

    def _record(self) -> None:
        sink = _sink
        if sink is not None:
            now = time.perf_counter_ns()
            sink(self.name, Annotation(self._category, "C", value=self._value), now, now)

    def _checked(self, number: Any, method: str, what: str) -> int:
        if not isinstance(number, Integral) or isinstance(number, bool):
            raise LazyNDError(f"profiler.Counter.{method}: {what} must be an integer, got {number!r}")
        return int(number)

    def __str__(self) -> str:
        return self.name

    def __repr__(self) -> str:
        return f"Counter({self._category!r}, {self.name!r}, value={self._value})"


# MXNet's marker scopes and the Chrome instant-event scope each is written as
MARKER_SCOPES = {"global": "g", "process": "p", "thread": "t", "task": "t", "marker": "p"}


class Marker:
    """An instant of interest: each ``mark()`` is an instant event of the trace (while the profiler runs).

    Examples
    --------
    >>> import lazynd as mx
    >>> mx.profiler.Domain('train').new_marker('epoch end').mark('process')
    """

    __slots__ = ("name", "_category")

    def __init__(self, domain: Domain, name: str) -> None:
        self.name = _checked_name("Marker", name)
        self._category = f"{_checked_domain('Marker', domain).name},instant_marker"

    def mark(self, scope: str = "process") -> None:
        """Mark this instant; ``scope`` is ``'process'``, ``'thread'``, ``'global'``, ``'task'`` or ``'marker'``."""
        letter = MARKER_SCOPES.get(scope) if isinstance(scope, str) else None
        if letter is None:
            raise LazyNDError(f"profiler.Marker.mark: scope {scope!r} is not one of {list(MARKER_SCOPES)}")
        sink = _sink
        if sink is not None:
            now = time.perf_counter_ns()
            sink(self.name, Annotation(self._category, "i", scope=letter), now, now)

    def __str__(self) -> str:
        return self.name

    def __repr__(self) -> str:
        return f"Marker({self._category!r}, {self.name!r})"
