"""Bulk execution under observation: a monitor and the profiler see every operator of a pass, which stays one engine operation."""

from __future__ import annotations

import json

import numpy as np
import pytest
from executor_bulk_nets import MLP_SHAPES, bind_net, mlp

import lazynd as mx
import lazynd_sym as sym
from lazynd import engine, profiler


@pytest.mark.parametrize("bulk", [True, False], ids=["bulk", "per-op"])
def test_monitor_sees_every_operator_in_order(bulk, engine_name, monkeypatch):
    ex = bind_net(mlp(), MLP_SHAPES, bulk, monkeypatch)
    seen = []
    ex.set_monitor_callback(lambda name, arr: seen.append((name, arr.asnumpy().copy())))
    ex.forward(is_train=True)
    ex.backward()
    mx.nd.waitall()
    names = [name for name, _ in seen]
    assert names[:4] == ["fc1_output", "relu1_output", "fc2_output", "softmax_output"]
    # backward nodes are named after their forward node, as MXNet 1.9.1's monitor names them
    assert len(names) > 4 and all("_backward_output" in n for n in names[4:]), names[4:]
    np.testing.assert_array_equal(seen[3][1], ex.outputs[0].asnumpy())


def test_a_monitored_bulked_pass_is_still_one_engine_operation(recording_engine, monkeypatch):
    ex = bind_net(mlp(), MLP_SHAPES, True, monkeypatch)
    seen = []
    ex.set_monitor_callback(lambda name, arr: seen.append(name))
    recording_engine.names.clear()
    ex.forward(is_train=True)
    assert recording_engine.names == ["executor_forward"]
    assert seen == ["fc1_output", "relu1_output", "fc2_output", "softmax_output"]


@pytest.mark.parametrize("bulk", [True, False], ids=["bulk", "per-op"])
def test_an_inactive_monitor_gets_no_outputs_and_no_copies(bulk, monkeypatch):
    ex = bind_net(mlp(), MLP_SHAPES, bulk, monkeypatch)
    seen, state = [], {"on": False}
    ex.set_monitor_callback(lambda name, arr: seen.append(name), active=lambda: state["on"])
    copies = []
    real_array = mx.nd.NDArray
    monkeypatch.setattr(mx.nd, "NDArray", lambda *a: (copies.append(1), real_array(*a))[1])
    ex.forward(is_train=True)
    ex.backward()
    mx.nd.waitall()
    assert seen == [] and copies == []
    state["on"] = True
    ex.forward(is_train=True)
    mx.nd.waitall()
    assert seen == ["fc1_output", "relu1_output", "fc2_output", "softmax_output"] and len(copies) == 4
    ex.set_monitor_callback(None)  # removed: nothing is called any more
    ex.forward(is_train=True)
    mx.nd.waitall()
    assert len(seen) == 4


def test_set_monitor_callback_rejects_what_cannot_be_called(monkeypatch):
    ex = bind_net(mlp(), MLP_SHAPES, True, monkeypatch)
    with pytest.raises(mx.LazyNDError, match="callback must be callable, got int"):
        ex.set_monitor_callback(3)
    with pytest.raises(mx.LazyNDError, match="active must be callable, got bool"):
        ex.set_monitor_callback(print, active=True)


@pytest.mark.parametrize("engine_kind", ["threaded", "naive"])
def test_profiler_sees_every_operator_of_a_bulked_pass_nested_in_the_pass(tmp_path, monkeypatch, engine_kind):
    engine.set_engine(engine_kind)
    try:
        ex = bind_net(mlp(), MLP_SHAPES, True, monkeypatch)
        mx.nd.waitall()
        path = tmp_path / "trace.json"
        profiler.set_config(mode="symbolic", filename=str(path))
        profiler.set_state("run")
        try:
            assert ex._bulk_now()  # recording does not split a pass into an operation per operator
            ex.forward(is_train=True)
            ex.backward()
            mx.nd.waitall()
        finally:
            profiler.set_state("stop")
        profiler.dump()
        profiler.reset()
    finally:
        engine.set_engine("threaded")
    events = [e for e in json.loads(path.read_text())["traceEvents"] if e["ph"] == "X"]
    names = [e["name"] for e in events]
    assert names[:5] == ["executor:fc1", "executor:relu1", "executor:fc2", "executor:softmax", "executor_forward"]
    assert names.count("executor_forward") == names.count("executor_backward") == 1
    backward = names[5 : names.index("executor_backward")]
    assert backward and all(name.startswith("executor:_grad_") for name in backward), backward
    # every operator's event lies inside its pass's event, on the same thread
    for pass_name, members in (("executor_forward", names[:4]), ("executor_backward", backward)):
        outer = events[names.index(pass_name)]
        for member in members:
            inner = events[names.index(member)]
            assert inner["tid"] == outer["tid"]
            assert outer["ts"] <= inner["ts"] and inner["ts"] + inner["dur"] <= outer["ts"] + outer["dur"] + 1


def test_a_recorded_bulked_pass_is_still_one_engine_operation(recording_engine, monkeypatch):
    ex = bind_net(mlp(), MLP_SHAPES, True, monkeypatch)
    profiler.set_state("run")
    try:
        recording_engine.names.clear()
        ex.forward(is_train=True)
        ex.backward()
        mx.nd.waitall()
    finally:
        profiler.set_state("stop")
        profiler.reset()
    assert recording_engine.names == ["executor_forward", "executor_backward"]


def _gpu_mlp(placed: bool):
    """The MLP bound on gpu(0), or (``placed``) its first layer on the host and the rest on gpu(0)."""
    if not placed:
        return mlp().simple_bind(mx.gpu(0), **MLP_SHAPES)
    with sym.AttrScope(ctx_group="host"):
        x = sym.FullyConnected(sym.Variable("data"), num_hidden=6, name="fc1")
    with sym.AttrScope(ctx_group="device"):
        x = sym.FullyConnected(sym.relu(x, name="relu1"), num_hidden=3, name="fc2")
    net = sym.SoftmaxOutput(x, name="softmax")
    return net.simple_bind(mx.cpu(), group2ctx={"host": mx.cpu(), "device": mx.gpu(0)}, **MLP_SHAPES)


@pytest.mark.gpu
@pytest.mark.skipif(mx.num_gpus() == 0, reason="needs an NVIDIA GPU with CuPy (none visible)")
@pytest.mark.parametrize("placed", [False, True], ids=["gpu", "cpu+gpu"])
def test_a_gpu_monitor_copy_is_ordered_before_any_later_read(placed):
    # the monitor's copy is launched on a stream inside the pass; asnumpy reads on the
    # device->host copy stream, which waits only for the events on the array's var: without
    # the copy's event there, the read may run before the copy has happened
    from lazynd.backend import get_backend

    ex = _gpu_mlp(placed)
    seen = []
    ex.set_monitor_callback(lambda name, arr: seen.append((name, arr)))
    ex.forward(is_train=True, data=mx.nd.ones(MLP_SHAPES["data"], ctx=ex.arg_dict["data"].context))
    mx.nd.waitall()
    on_gpu = [(name, arr) for name, arr in seen if arr.context.device_type == "gpu"]
    assert on_gpu, "the monitor saw no GPU output"
    streams = get_backend(mx.gpu(0)).streams.values()
    for name, arr in on_gpu:
        event = arr.var.event
        assert event is not None, f"{name}: the monitor's copy has no event for its readers to wait on"
        assert any(event.stream is s for s in streams), f"{name}: its event is not on the device's streams"
    assert np.isfinite(on_gpu[-1][1].asnumpy()).all()


@pytest.mark.gpu
@pytest.mark.skipif(mx.num_gpus() == 0, reason="needs an NVIDIA GPU with CuPy (none visible)")
@pytest.mark.parametrize("placed", [False, True], ids=["gpu unbulked", "cpu+gpu"])
def test_gpu_operators_pushed_one_by_one_are_in_a_symbolic_trace(placed, monkeypatch):
    # the 'symbolic' profiler keeps the operations named executor...: an operator pushed on its
    # own is 'executor:<node>' on every device, as on the CPU
    monkeypatch.setenv("LAZYND_EXEC_BULK", "0")
    ex = _gpu_mlp(placed)
    mx.nd.waitall()
    events = profiler.trace_of(lambda: (ex.forward(is_train=True), ex.backward()), mode="symbolic")
    names = {e["name"] for e in events if e["ph"] == "X"}
    assert {"executor:fc1", "executor:fc2"} <= names, names
