"""The profiler's tables name an executor's steps by operator, as MXNet 1.9.1's aggregate table does
(``FullyConnected``, ``_backward_FullyConnected``: one row per operator, its nodes counted together),
with the passes that hold them (``executor_forward``, ``executor_backward``) and the copies in front
in an ``executor`` table of their own, so the operator rows add up; the trace keeps
``executor:<node>``.  MXNet 1.9.1's rows for this network were recorded with the oracle."""

from __future__ import annotations

import json

import pytest

import lazynd as mx
from lazynd import profiler

pytestmark = pytest.mark.usefixtures("stopped_profiler")  # tests/conftest.py

# MXNet 1.9.1's 'operator' rows for _mlp()'s forward and backward, profile_symbolic=True
MXNET_ROWS = {
    "FullyConnected": 2,
    "Activation": 1,
    "SoftmaxOutput": 1,
    "_backward_FullyConnected": 2,
    "_backward_Activation": 1,
    "_backward_SoftmaxOutput": 1,
}


def _mlp(bulk: bool, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("LAZYND_EXEC_BULK", "1" if bulk else "0")  # read at bind
    data = mx.sym.Variable("data")
    hidden = mx.sym.Activation(mx.sym.FullyConnected(data, num_hidden=4, name="fc1"), act_type="relu", name="relu1")
    net = mx.sym.SoftmaxOutput(mx.sym.FullyConnected(hidden, num_hidden=3, name="fc2"), name="softmax")
    executor = net.simple_bind(mx.cpu(), data=(2, 3))
    mx.nd.waitall()
    return executor


def _profile(executor, tmp_path, **config) -> dict:
    profiler.set_config(filename=str(tmp_path / "trace.json"), aggregate_stats=True, **config)
    profiler.set_state("run")
    executor.forward(is_train=True, data=mx.nd.ones((2, 3)))
    executor.backward()
    (mx.nd.dot(mx.nd.ones((2, 2)), mx.nd.ones((2, 2))) + 1).wait_to_read()
    profiler.set_state("stop")
    return json.loads(profiler.dumps(format="json"))["Time"]


@pytest.mark.parametrize("bulk", [True, False], ids=["bulked pass", "operator by operator"])
def test_symbolic_rows_are_mxnets_operator_names(tmp_path, monkeypatch, bulk):
    tables = _profile(_mlp(bulk, monkeypatch), tmp_path, profile_symbolic=True, profile_imperative=False)
    assert {name: row["Count"] for name, row in tables["operator"].items()} == MXNET_ROWS
    passes = {"executor_forward", "executor_backward"} if bulk else {"executor_backward_grads"}  # the tail
    assert passes <= set(tables["executor"])
    assert not any(name.startswith("executor") for name in tables["operator"])


def test_imperative_operators_share_the_operator_table(tmp_path, monkeypatch):
    tables = _profile(_mlp(True, monkeypatch), tmp_path, profile_symbolic=True, profile_imperative=True)
    counts = {name: row["Count"] for name, row in tables["operator"].items()}
    assert {name: counts[name] for name in MXNET_ROWS} == MXNET_ROWS
    assert counts["dot"] == 1 and counts["_plus_scalar"] == 1  # as in MXNet's table


def test_the_text_table_names_operators_and_the_passes_apart(tmp_path, monkeypatch):
    _profile(_mlp(True, monkeypatch), tmp_path, profile_symbolic=True)
    executor, operators = profiler.dumps().split("\n\n")[:2]  # in name order, as MXNet's tables
    executor = executor.split("entries.\n")[1]
    assert "_backward_FullyConnected" in operators and "executor" not in operators
    assert executor.startswith("executor") and "executor_forward" in executor


def test_the_trace_keeps_each_node_by_name(tmp_path, monkeypatch):
    _profile(_mlp(True, monkeypatch), tmp_path, profile_symbolic=True)
    profiler.dump()
    events = json.loads((tmp_path / "trace.json").read_text())["traceEvents"]
    names = {event["name"] for event in events if event["ph"] == "X"}
    assert {"executor:fc1", "executor:fc2", "executor:relu1", "executor_forward", "executor_backward"} <= names
