"""The profiler next to MXNet 1.9.1's, as a program sees it: the names its trace gives creation
operators, the values ``set_config`` and ``dumps`` take, and the layout of ``dumps()``'s tables."""

from __future__ import annotations

import json

import numpy as np
import pytest

import lazynd as mx
from lazynd import profiler

pytestmark = pytest.mark.usefixtures("stopped_profiler")  # tests/conftest.py


def _operator_names(run) -> list[str]:
    return [event["name"] for event in profiler.trace_of(run) if event["ph"] == "X"]


def test_creation_operators_are_named_as_mxnets():
    # MXNet's trace and dumps() show nd.ones as _ones, nd.zeros(out=) as _zeros, nd.full as _full
    out = mx.nd.empty((2,))
    names = _operator_names(lambda: (mx.nd.ones((2,)), mx.nd.zeros((2,), out=out), mx.nd.full((2,), 3.0)))
    assert names == ["_ones", "_zeros", "_full"]


@pytest.mark.parametrize(
    ("value", "records"), [("True", True), ("TRUE", True), ("1", True), ("false", False), ("0", False)]
)
def test_set_config_reads_mxnets_flag_strings_by_their_meaning(value, records, tmp_path):
    # MXNet hands every value to its parser as a string: 'false' is false there, so here
    profiler.set_config(profile_all=value, filename=str(tmp_path / "trace.json"))
    profiler.set_state("run")
    (mx.nd.ones((2,)) + 1).wait_to_read()
    profiler.set_state("stop")
    assert ("_plus_scalar" in profiler.dumps()) is records


@pytest.mark.parametrize("key", ["continuous_dump", "aggregate_stats", "profile_api"])
@pytest.mark.parametrize("value", [3, "x", 1.0])
def test_set_config_refuses_a_tuning_flag_that_is_no_boolean(key, value, tmp_path):
    with pytest.raises(mx.LazyNDError, match=f"profiler.set_config: {key} must be True or False, got "):
        profiler.set_config(filename=str(tmp_path / "trace.json"), **{key: value})


@pytest.mark.parametrize("period", ["abc", True, None, float("nan")])
def test_set_config_refuses_a_dump_period_that_is_no_number(period, tmp_path):
    with pytest.raises(mx.LazyNDError, match="profiler.set_config: dump_period must be a number of seconds, got "):
        profiler.set_config(filename=str(tmp_path / "trace.json"), dump_period=period)


def test_set_config_takes_a_dump_period_above_zero_or_with_continuous_dump_off(tmp_path):
    path = str(tmp_path / "trace.json")
    profiler.set_config(filename=path, dump_period="2")
    profiler.set_config(filename=path, dump_period=0.5, continuous_dump=True)
    profiler.set_config(filename=path, dump_period=-1, continuous_dump=False)  # no periodic dump: unused
    for period in (0, -1):  # continuous_dump is on unless turned off, as in MXNet
        with pytest.raises(mx.LazyNDError, match="dump_period must be above 0 while continuous_dump is on, got "):
            profiler.set_config(filename=path, dump_period=period)


@pytest.mark.parametrize("argument", ["reset", "ascending"])
@pytest.mark.parametrize("value", ["x", 2, None, "False"])
def test_dumps_refuses_a_flag_mxnet_refuses(argument, value):
    with pytest.raises(mx.LazyNDError, match=f"profiler.dumps: {argument} must be True or False, got "):
        profiler.dumps(**{argument: value})


@pytest.mark.parametrize("value", [True, False, 1, 0, np.bool_(True)])
def test_dumps_takes_the_flags_mxnet_takes(value):
    profiler.dumps(reset=value, ascending=value)


def test_dumps_table_is_laid_out_as_mxnets(tmp_path):
    profiler.set_config(profile_all=True, aggregate_stats=True, filename=str(tmp_path / "trace.json"))
    profiler.set_state("run")
    with profiler.Domain("data").new_task("a task name longer than twenty-five"):
        ones = mx.nd.ones((2,))
        for _ in range(3):
            (ones + 1).wait_to_read()
    profiler.set_state("stop")
    lines = profiler.dumps(sort_by="count").splitlines()
    assert lines[:3] == ["", "Profile Statistics:", "\tNote the difference in units for different entries."]
    header = "Name" + " " * 26 + "Total Count        Time (ms)    Min Time (ms)    Max Time (ms)    Avg Time (ms)"
    dashes = "----" + " " * 26 + "-----------        ---------    -------------    -------------    -------------"
    # categories in name order, each: title, rule, header, dashes, rows, blank line
    assert lines[3:7] == ["data", "=" * 17, header, dashes]
    assert lines[7].startswith("a task name longer than twenty-five" + " " * 15 + "1" + " " * 11)
    assert lines[8:12] == ["", "operator", "=" * 17, header]
    assert lines[13].startswith("_plus_scalar" + " " * 28 + "3" + " " * 11)  # sort_by='count': most first
    assert lines[-1] == "" and lines[-2].split()[0] == "_ones"


def test_dumps_of_nothing_recorded_is_mxnets_preface_and_no_table():
    assert profiler.dumps() == "\nProfile Statistics:\n\tNote the difference in units for different entries.\n"
    assert json.loads(profiler.dumps(format="json"))["Time"] == {}


def test_device_rows_of_the_trace_are_named_as_mxnets():
    # MXNet names a device's process row "cpu/0" (scripts pick the row by it), not "cpu(0)"
    events = profiler.trace_of(lambda: (mx.nd.ones((2,)) + 1, mx.nd.ones((2,), ctx=mx.cpu(1)) + 1))
    rows = [event["args"]["name"] for event in events if event["name"] == "process_name"]
    assert rows == ["cpu/0", "cpu/1"]


@pytest.mark.gpu
@pytest.mark.skipif(mx.num_gpus() == 0, reason="needs an NVIDIA GPU with CuPy (none visible)")
def test_gpu_rows_of_the_trace_are_named_as_mxnets():
    # a GPU operation's row is its device's ("gpu/0"), timed by its CUDA event on its stream's lane;
    # the host's work beside it stays on "cpu/0"
    def run():
        return mx.nd.ones((4,), ctx=mx.gpu(0)) * 2, mx.nd.ones((2,)) + 1

    events = profiler.trace_of(run)
    rows = {event["pid"]: event["args"]["name"] for event in events if event["name"] == "process_name"}
    placed = {event["name"]: rows[event["pid"]] for event in events if event["ph"] == "X"}
    assert placed["_mul_scalar"] == "gpu/0" and placed["_plus_scalar"] == "cpu/0", placed
    assert sorted(rows.values()) == ["cpu/0", "gpu/0"], rows


def test_dumps_still_counts_what_a_finishing_dump_wrote(tmp_path):
    # MXNet's statistics outlive dump(finished=True); before, dump() forgot them with the trace
    path = tmp_path / "trace.json"
    profiler.set_config(profile_all=True, aggregate_stats=True, filename=str(path))
    profiler.set_state("run")
    mx.nd.dot(mx.nd.ones((2, 2)), mx.nd.ones((2, 2))).wait_to_read()
    profiler.dump()
    assert json.loads(profiler.dumps(format="json"))["Time"]["operator"]["dot"]["Count"] == 1
    profiler.set_state("run")
    mx.nd.dot(mx.nd.ones((2, 2)), mx.nd.ones((2, 2))).wait_to_read()
    profiler.dump()
    names = [event["name"] for event in json.loads(path.read_text())["traceEvents"] if event["ph"] == "X"]
    assert names.count("dot") == 1  # the trace holds the second run only
    assert json.loads(profiler.dumps(format="json", reset=True))["Time"]["operator"]["dot"]["Count"] == 2
    assert json.loads(profiler.dumps(format="json"))["Time"] == {}
