"""The statistics of ``profiler.dumps``: recorded operations (an executor's steps under their
operators' names, its passes in an ``executor`` table) and timed annotations per category and
name (count, total, min, max, mean in ms), counters (count of changes, last, min, max value) and
markers (count), as text tables or MXNet's JSON document."""

from __future__ import annotations

import json
from typing import Any

from .profiler_annotations import Annotation

SORT_KEYS = {"total": 1, "avg": 4, "min": 2, "max": 3, "count": 0}

Times = dict[str, dict[str, list[float]]]  # per category, per name: count, total, min, max (ms)
Values = dict[str, dict[tuple[str, str], list[Any]]]  # per phase ('C', 'i'), per (category, name)


def gather(records: list[tuple[Any, ...]], spans: list[tuple[int, int]]) -> tuple[Times, Values]:
    """Sum ``records`` (the profiler's, with their ``(start, end)`` ns ``spans``) per category and name."""
    times: Times = {"operator": {}}
    values: Values = {"C": {}, "i": {}}
    for (name, source, *_), (start, end) in zip(records, spans, strict=False):
        if isinstance(source, Annotation) and source.phase != "X":
            _add_value(values[source.phase], (source.category, name), source.value)
        elif isinstance(source, Annotation):
            _add_time(times.setdefault(source.category, {}), name, (end - start) / 1e6)
        else:  # an executor's step counts under its operator, its pass in a table of its own
            category, row = getattr(name, "category", "operator"), getattr(name, "operator", name)
            _add_time(times.setdefault(category, {}), row, (end - start) / 1e6)
    return times, values


def render(times: Times, values: Values, format: str, sort_by: str, ascending: bool) -> str:  # noqa: A002 - MXNet's name
    """The tables of :func:`gather`'s sums, ``format`` 'table' or 'json', rows sorted by ``sort_by``;
    categories in name order, as MXNet lists them."""
    tables = {
        category: _time_rows(times[category], sort_by, ascending) for category in sorted(times) if times[category]
    }
    if format == "json":
        # lazynd does not record memory use: the section MXNet always writes is there, empty (as
        # MXNet's is without profile_memory), so programs that read it find it
        document: dict[str, Any] = {"Time": {}, "Memory": {}, "Unit": {"Time": "ms", "Memory": "kB"}}
        for category, rows in tables.items():
            document["Time"][category] = {
                name: {"Count": int(count), "Total": total, "Min": low, "Max": high, "Avg": avg}
                for name, count, total, low, high, avg in rows
            }
        for key, phase, fields in (("Counter", "C", ("Count", "Last", "Min", "Max")), ("Marker", "i", ("Count",))):
            for (category, name), row in sorted(values[phase].items()):
                document.setdefault(key, {}).setdefault(category, {})[name] = dict(zip(fields, row, strict=False))
        return json.dumps(document, indent=4)
    sections = [_time_table(category, rows) for category, rows in tables.items()]
    if values["C"] or values["i"]:
        sections.append(_value_table(values))
    return _PREFACE + "".join(sections)


def _add_time(stats: dict[str, list[float]], name: str, ms: float) -> None:
    row = stats.get(name)
    if row is None:
        stats[name] = [1, ms, ms, ms]
    else:
        row[0] += 1
        row[1] += ms
        row[2] = min(row[2], ms)
        row[3] = max(row[3], ms)


def _add_value(stats: dict[tuple[str, str], list[Any]], key: tuple[str, str], value: int | None) -> None:
    row = stats.get(key)
    if row is None:
        stats[key] = [1, value, value, value]
    else:
        row[0] += 1
        row[1] = value
        if value is not None:
            row[2], row[3] = min(row[2], value), max(row[3], value)


def _time_rows(stats: dict[str, list[float]], sort_by: str, ascending: bool) -> list[tuple[Any, ...]]:
    """(name, count, total, min, max, avg) per name, sorted as :func:`dumps` was asked."""
    return sorted(
        ((name, count, total, low, high, total / count) for name, (count, total, low, high) in stats.items()),
        key=lambda row: row[1 + SORT_KEYS[sort_by]],
        reverse=not ascending,
    )


# MXNet's table layout: a preface, then per category its name, a rule, a header, dashes, one row
# per name and a blank line; names left in 25 columns (a longer one pushes its row right), the
# count in 16, each time in 17 with 4 decimals
_PREFACE = "\nProfile Statistics:\n\tNote the difference in units for different entries.\n"
_TIME_COLUMNS = ("Time (ms)", "Min Time (ms)", "Max Time (ms)", "Avg Time (ms)")


def _section(category: str, columns: tuple[str, ...], rows: list[tuple[str, int, list[str]]]) -> str:
    """One category's table: ``rows`` of (name, count, the other columns' text)."""
    lines = [
        category,
        "=" * 17,
        _line("Name", "Total Count", columns),
        _line("----", "-----------", ["-" * len(c) for c in columns]),
    ]
    lines += [_line(name, str(count), cells) for name, count, cells in rows]
    return "\n".join(lines) + "\n\n"


def _line(name: str, count: str, cells: Any) -> str:
    return f"{name:<25}{count:>16}" + "".join(f"{cell:>17}" for cell in cells)


def _time_table(category: str, rows: list[tuple[Any, ...]]) -> str:
    return _section(
        category,
        _TIME_COLUMNS,
        [
            (name, int(count), [f"{v:.4f}" for v in (total, low, high, avg)])
            for name, count, total, low, high, avg in rows
        ],
    )


def _value_table(values: dict[str, dict[tuple[str, str], list[Any]]]) -> str:
    """Counters (count of changes, last, min and max value) and markers (count), named
    ``category: name``: a lazynd table (MXNet puts counters among its time rows, with times)."""
    rows = [
        (f"{c}: {n}", count, ["-" if v is None else str(v) for v in (last, low, high)])
        for phase in ("C", "i")
        for (c, n), (count, last, low, high) in sorted(values[phase].items())
    ]
    return _section("counter / marker", ("Last", "Min", "Max"), rows)
