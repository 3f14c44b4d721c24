"""MXNet 1.x's profiler objects (Domain, Task, Frame, Event, Counter, Marker) in the trace and in dumps()."""

from __future__ import annotations

import json
import threading

import pytest

import lazynd as mx
from lazynd import profiler

pytestmark = pytest.mark.usefixtures("stopped_profiler")  # tests/conftest.py


def _annotations(events: list[dict]) -> list[dict]:
    return [e for e in events if e["ph"] != "M" and e.get("cat") not in ("operator", "copy")]


def _process_names(events: list[dict]) -> dict[int, str]:
    return {e["pid"]: e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "process_name"}


def test_regions_are_complete_events_with_their_domain_as_category() -> None:
    domain = profiler.Domain("train")
    task, frame, event = domain.new_task("step"), profiler.Frame(domain, "iteration"), profiler.Event("io")

    def run() -> None:
        with frame:
            task.start()
            (mx.nd.ones((4,)) + 1).wait_to_read()
            task.stop()
            with event:
                pass

    events = profiler.trace_of(run)
    found = {e["name"]: e for e in _annotations(events)}
    assert {name: (e["cat"], e["ph"]) for name, e in found.items()} == {
        "step": ("train", "X"),
        "iteration": ("train,frame", "X"),  # MXNet 1.9.1's categories
        "io": ("event", "X"),
    }
    outer, inner = found["iteration"], found["step"]
    assert outer["ts"] <= inner["ts"] and inner["ts"] + inner["dur"] <= outer["ts"] + outer["dur"]
    # each category is a process row of its own, named after it, as in MXNet's traces
    names = _process_names(events)
    assert {names[e["pid"]] for e in found.values()} == {"train", "train,frame", "event"}


def test_counter_changes_are_counter_events_of_its_value() -> None:
    counter = profiler.Domain("data").new_counter("queued", 5)

    def run() -> None:
        counter.set_value(7)
        counter.increment(3)
        counter.decrement(2)
        same = counter
        same += 5  # MXNet's += and -= change the counter itself
        same -= 1
        assert same is counter

    events = _annotations(profiler.trace_of(run))
    assert [(e["ph"], e["cat"], e["args"]) for e in events] == [
        ("C", "data", {"queued": value}) for value in (7, 10, 8, 13, 12)
    ]
    assert counter.value == 12


def test_marker_is_an_instant_event_of_its_scope() -> None:
    marker = profiler.Domain("train").new_marker("epoch")
    events = _annotations(profiler.trace_of(lambda: [marker.mark(s) for s in ("process", "thread", "global")]))
    assert [(e["ph"], e["cat"], e["s"]) for e in events] == [
        ("i", "train,instant_marker", scope) for scope in ("p", "t", "g")
    ]
    with pytest.raises(mx.LazyNDError, match=r"Marker.mark: scope 'bogus' is not one of \['global', 'process'"):
        marker.mark("bogus")


def test_nothing_is_recorded_while_the_profiler_is_stopped_or_paused() -> None:
    domain = profiler.Domain("quiet")
    task, counter, marker = domain.new_task("t"), domain.new_counter("c"), domain.new_marker("m")
    task.start()  # started while stopped: its stop while running records nothing
    counter.increment(2)
    marker.mark()
    profiler.set_state("run")
    task.stop()
    profiler.pause()
    with domain.new_task("paused"):
        counter.increment()
    profiler.resume()
    profiler.set_state("stop")
    assert not _annotations(profiler.trace_events())
    assert counter.value == 3  # the value is kept while nothing is recorded


def test_annotations_are_recorded_in_symbolic_mode_too() -> None:
    task = profiler.Domain("sym").new_task("bind")

    def run() -> None:
        with task:
            (mx.nd.ones((2,)) * 2).wait_to_read()

    events = profiler.trace_of(run, mode="symbolic")
    assert [e["name"] for e in events if e["ph"] == "X"] == ["bind"]  # imperative operators left out


def test_threads_time_their_own_regions_and_count_atomically() -> None:
    domain = profiler.Domain("workers")
    task, counter = domain.new_task("work"), domain.new_counter("done", 0)
    threads_count, repeats = 4, 200

    together = threading.Barrier(threads_count)  # all alive at once: no thread ident is reused

    def worker() -> None:
        together.wait()
        for _ in range(repeats):
            with task:
                counter.increment()
        together.wait()

    def run() -> None:
        threads = [threading.Thread(target=worker, name=f"worker-{i}") for i in range(threads_count)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()

    events = profiler.trace_of(run)
    regions = [e for e in events if e["ph"] == "X" and e["name"] == "work"]
    values = [e["args"]["done"] for e in events if e["ph"] == "C"]
    assert len(regions) == threads_count * repeats
    assert len({e["tid"] for e in regions}) == threads_count
    assert values == list(range(1, threads_count * repeats + 1))  # each change recorded with its value, in order
    assert counter.value == threads_count * repeats


def test_dumps_has_a_table_per_category_and_the_counters(tmp_path) -> None:
    domain = profiler.Domain("train")
    profiler.set_config(mode="all", filename=str(tmp_path / "trace.json"))
    profiler.set_state("run")
    for _ in range(3):
        with domain.new_task("step"):
            (mx.nd.ones((4,)) + 1).wait_to_read()
    counter = domain.new_counter("batches", 1)
    counter += 2
    domain.new_marker("end").mark()
    profiler.set_state("stop")
    stats = json.loads(profiler.dumps(format="json"))
    assert stats["Time"]["train"]["step"]["Count"] == 3
    assert "step" not in stats["Time"]["operator"]
    assert stats["Counter"] == {"train": {"batches": {"Count": 2, "Last": 3, "Min": 1, "Max": 3}}}
    assert stats["Marker"] == {"train,instant_marker": {"end": {"Count": 1}}}
    text = profiler.dumps()
    lines = text.splitlines()
    titles = [line for line, rule in zip(lines, lines[1:], strict=False) if rule == "=" * 17]
    assert titles == ["operator", "train", "counter / marker"]  # MXNet's name order, then lazynd's values
    assert any(line.split()[:2] == ["step", "3"] for line in text.splitlines())
    assert any(line.split()[:5] == ["train:", "batches", "2", "3", "1"] for line in text.splitlines())
    written = json.loads((tmp_path / "trace.json").read_text())["traceEvents"]
    assert {(e["name"], e["cat"]) for e in _annotations(written)} == {
        ("step", "train"),
        ("batches", "train"),
        ("end", "train,instant_marker"),
    }


def test_dumps_without_annotations_is_unchanged() -> None:
    profiler.set_state("run")
    (mx.nd.ones((4,)) + 1).wait_to_read()
    profiler.set_state("stop")
    assert profiler.dumps().count("=" * 17) == 1  # the operators' table only
    assert set(json.loads(profiler.dumps(format="json"))) == {"Time", "Memory", "Unit"}


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: profiler.Domain(""), "Domain: name must be a non-empty string, got ''"),
        (lambda: profiler.Task("train", "step"), "Task: domain must be a profiler.Domain, got str"),
        (lambda: profiler.Frame(profiler.Domain("d"), None), "Frame: name must be a non-empty string, got None"),
        (lambda: profiler.Counter(profiler.Domain("d"), "c", 1.5), "Counter.set_value: value must be an integer"),
        (lambda: profiler.Domain("d").new_counter("c").increment("1"), "Counter.increment: delta must be an integer"),
    ],
)
def test_bad_arguments_are_refused_by_name(make, message) -> None:
    with pytest.raises(mx.LazyNDError, match=message):
        make()


def test_str_is_the_name_as_in_mxnet() -> None:
    domain = profiler.Domain("d")
    assert [str(x) for x in (domain, domain.new_task("t"), domain.new_frame("f"), domain.new_counter("c"))] == [
        "d",
        "t",
        "f",
        "c",
    ]
