"""``mx.profiler.pause()`` / ``resume()``: recording stops and goes on, the trace is written once at stop."""

from __future__ import annotations

import json

import pytest

import lazynd as mx
from lazynd import profiler

pytestmark = pytest.mark.usefixtures("stopped_profiler")  # tests/conftest.py


def _names(events: list[dict]) -> list[str]:
    return [e["name"] for e in events if e["ph"] == "X"]


def test_operations_while_paused_are_not_recorded(tmp_path) -> None:
    path = tmp_path / "trace.json"
    profiler.set_config(mode="all", filename=str(path))
    profiler.set_state("run")
    (mx.nd.ones((4,)) + 1).wait_to_read()
    profiler.pause()
    assert profiler.get_state() == "stop"
    mx.nd.dot(mx.nd.ones((2, 2)), mx.nd.ones((2, 2))).wait_to_read()
    assert not path.exists()  # pausing writes nothing
    profiler.resume()
    assert profiler.get_state() == "run"
    (mx.nd.ones((4,)) * 3).wait_to_read()
    profiler.set_state("stop")  # a stop after a resume writes the trace
    names = _names(json.loads(path.read_text())["traceEvents"])
    assert any("plus" in n for n in names) and any("mul" in n for n in names), names
    assert not any("dot" in n for n in names), names


def test_stop_while_paused_still_writes_the_trace(tmp_path) -> None:
    path = tmp_path / "trace.json"
    profiler.set_config(mode="all", filename=str(path))
    profiler.set_state("run")
    (mx.nd.ones((4,)) + 1).wait_to_read()
    profiler.pause()
    profiler.set_state("stop")
    assert path.exists()
    profiler.resume()  # nothing to resume after a stop
    assert profiler.get_state() == "stop"


def test_pause_and_resume_without_a_run_do_nothing() -> None:
    profiler.pause()
    profiler.resume()
    assert profiler.get_state() == "stop"


def test_server_profiling_is_refused_by_name() -> None:
    with pytest.raises(mx.LazyNDError, match="profile_process 'server'"):
        profiler.pause(profile_process="server")


def test_set_state_and_dump_take_profile_process(tmp_path) -> None:
    path = tmp_path / "trace.json"
    profiler.set_config(mode="all", filename=str(path))
    profiler.set_state("run", profile_process="worker")
    (mx.nd.ones((4,)) + 1).wait_to_read()
    assert profiler.dump(profile_process="worker") == str(path)
    with pytest.raises(mx.LazyNDError, match="set_state: profile_process 'server'"):
        profiler.set_state("run", profile_process="server")


def test_dumps_json_sorted_by_count() -> None:
    profiler.set_state("run")
    a = mx.nd.ones((4,))
    for _ in range(3):
        a = a + 1
    (a * 2).wait_to_read()
    profiler.pause()  # stops recording, writes nothing
    stats = json.loads(profiler.dumps(format="json", sort_by="count", ascending=True))
    assert stats["Unit"] == {"Time": "ms", "Memory": "kB"}  # MXNet 1.9.1's layout
    table = stats["Time"]["operator"]
    counts = [row["Count"] for row in table.values()]
    assert counts == sorted(counts) and max(counts) == 3
    assert set(next(iter(table.values()))) == {"Count", "Total", "Min", "Max", "Avg"}
    text = profiler.dumps(sort_by="count")
    assert text.splitlines()[7].split()[1] == "3"  # descending: the three additions first
    with pytest.raises(mx.LazyNDError, match="sort_by must be one of"):
        profiler.dumps(sort_by="median")


def test_resume_after_a_finishing_dump_while_paused_does_not_record(tmp_path) -> None:
    profiler.set_config(mode="all", filename=str(tmp_path / "trace.json"))
    profiler.set_state("run")
    profiler.pause()
    profiler.dump(finished=True)  # stops the profiler: the pause is over with it
    profiler.resume()
    assert profiler.get_state() == "stop"


def test_dumps_reset_forgets_the_statistics_but_not_the_trace(tmp_path) -> None:
    # MXNet's dumps(reset=True) clears the aggregate statistics only: the trace file keeps every event
    path = tmp_path / "trace.json"
    profiler.set_config(mode="all", filename=str(path))
    profiler.set_state("run")
    mx.nd.dot(mx.nd.ones((2, 2)), mx.nd.ones((2, 2))).wait_to_read()
    profiler.set_state("stop")
    assert "dot" in profiler.dumps(reset=True)
    profiler.set_state("run")
    mx.nd.sum(mx.nd.ones((3,))).wait_to_read()
    profiler.set_state("stop")
    later = json.loads(profiler.dumps(format="json"))["Time"]["operator"]
    assert "sum" in later and "dot" not in later
    profiler.dump()
    with open(path) as f:
        names = {event["name"] for event in json.load(f)["traceEvents"]}
    assert {"dot", "sum"} <= names
    profiler.reset()  # reset() itself still forgets everything
    assert json.loads(profiler.dumps(format="json"))["Time"] == {}  # no table at all, as MXNet's
