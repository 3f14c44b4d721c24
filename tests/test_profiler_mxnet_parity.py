"""The profiler next to MXNet 1.9.1's, as a program sees it: the names its trace gives creation
operators, the values ``set_config`` and ``dumps`` take, and the layout of ``dumps()``'s tables."""

from __future__ import annotations

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
