"""Bulk execution: a CPU executor pushes a whole pass as one engine operation, and nothing else changes.

Each behaviour is checked with bulking on (the default) and off (``LAZYND_EXEC_BULK=0``,
read when the executor is bound), under both engines where the engine matters.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

import lazynd as mx
import lazynd_sym as sym
from lazynd import engine, profiler
from lazynd.engine import NaiveEngine
from lazynd.errors import EngineError
from lazynd.ops import registry
from lazynd.ops.registry import OpDef

MLP_SHAPES = {"data": (8, 12), "softmax_label": (8,)}
CONV_SHAPES = {"data": (4, 2, 8, 8), "softmax_label": (4,)}


def _fail_on_negative(kctx, attrs, inputs, outputs, aux):
    if (inputs[0] < 0).any():
        raise ValueError("negative input")
    outputs[0][...] = inputs[0]


if not registry.exists("_test_fail_on_negative"):
    registry.register(
        OpDef(
            "_test_fail_on_negative",
            _fail_on_negative,
            gradient=lambda F, attrs, inputs, outputs, out_grads: [out_grads[0]],
            doc="Identity that raises on a negative input (executor error tests).",
        )
    )


def _mlp():
    x = sym.FullyConnected(sym.Variable("data"), num_hidden=6, name="fc1")
    x = sym.FullyConnected(sym.relu(x, name="relu1"), num_hidden=4, name="fc2")
    return sym.SoftmaxOutput(x, name="softmax")


def _conv_net():
    x = sym.Convolution(sym.Variable("data"), kernel=(3, 3), num_filter=3, pad=(1, 1), name="conv1")
    x = sym.BatchNorm(x, fix_gamma=False, name="bn1")
    x = sym.Pooling(sym.relu(x), kernel=(2, 2), stride=(2, 2), pool_type="max", name="pool1")
    x = sym.FullyConnected(sym.Flatten(x), num_hidden=5, name="fc1")
    return sym.SoftmaxOutput(x, name="softmax")


def _bind(net, shapes, bulk, monkeypatch, **kwargs):
    monkeypatch.setenv("LAZYND_EXEC_BULK", "1" if bulk else "0")
    grad_req = {name: "write" for name in net.list_arguments() if name != "softmax_label"}
    ex = net.simple_bind(mx.cpu(), grad_req=grad_req, **shapes, **kwargs)
    rng = np.random.default_rng(5)
    for name, arr in ex.arg_dict.items():
        if name == "softmax_label":
            arr[:] = rng.integers(0, 4, arr.shape).astype(np.float32)
        else:
            arr[:] = rng.standard_normal(arr.shape).astype(np.float32)
    for arr in ex.aux_arrays:
        arr[:] = np.abs(rng.standard_normal(arr.shape)).astype(np.float32)
    return ex


class _RecordingEngine(NaiveEngine):
    """The naive engine, remembering the name of every operation pushed."""

    def __init__(self):
        super().__init__()
        self.names = []

    def push(self, fn, args, reads, writes, name="op", device=None, inline_ok=False):
        self.names.append(name)
        super().push(fn, args, reads, writes, name, device, inline_ok)


@pytest.fixture
def recording_engine():
    engine.set_engine("naive")
    recorder = _RecordingEngine()
    engine._engine = recorder
    yield recorder
    engine.set_engine("threaded")


@pytest.mark.parametrize(("net", "shapes"), [(_mlp, MLP_SHAPES), (_conv_net, CONV_SHAPES)], ids=["mlp", "conv"])
def test_bulk_and_per_operator_executors_give_identical_outputs_and_gradients(net, shapes, engine_name, monkeypatch):
    bulk, single = _bind(net(), shapes, True, monkeypatch), _bind(net(), shapes, False, monkeypatch)
    assert bulk._bulk and not single._bulk
    for ex in (bulk, single):
        for _ in range(2):  # the second step sees the aux states (moving mean/var) the first wrote
            ex.forward(is_train=True)
            ex.backward()
    for a, b in zip(bulk.outputs + bulk.aux_arrays, single.outputs + single.aux_arrays, strict=True):
        np.testing.assert_array_equal(a.asnumpy(), b.asnumpy())
    for name, grad in bulk.grad_dict.items():
        assert np.abs(grad.asnumpy()).sum() > 0, name
        np.testing.assert_array_equal(grad.asnumpy(), single.grad_dict[name].asnumpy(), err_msg=name)
    inference = [ex.forward(is_train=False)[0].asnumpy() for ex in (bulk, single)]
    np.testing.assert_array_equal(*inference)


def test_a_bulked_pass_is_one_engine_operation(recording_engine, monkeypatch):
    ex = _bind(_mlp(), MLP_SHAPES, True, monkeypatch)
    recording_engine.names.clear()
    ex.forward(is_train=True)
    ex.backward()
    assert recording_engine.names == ["executor_forward", "executor_backward"]


def test_without_bulk_every_operator_is_its_own_operation(recording_engine, monkeypatch):
    ex = _bind(_mlp(), MLP_SHAPES, False, monkeypatch)
    recording_engine.names.clear()
    ex.forward(is_train=True)
    assert recording_engine.names == ["executor:fc1", "executor:relu1", "executor:fc2", "executor:softmax"]


@pytest.mark.parametrize("value", ["0", "false", "off"])
def test_bulk_switch_is_read_at_bind(value, monkeypatch):
    monkeypatch.setenv("LAZYND_EXEC_BULK", value)
    off = _mlp().simple_bind(mx.cpu(), **MLP_SHAPES)
    monkeypatch.setenv("LAZYND_EXEC_BULK", "1")
    assert not off._bulk and _mlp().simple_bind(mx.cpu(), **MLP_SHAPES)._bulk


def _failing_net():
    x = sym.FullyConnected(sym.Variable("data"), num_hidden=6, name="fc1")
    x = sym._test_fail_on_negative(x, name="guard")
    return sym.SoftmaxOutput(sym.FullyConnected(x, num_hidden=3, name="fc2"), name="softmax")


@pytest.mark.parametrize("bulk", [True, False], ids=["bulk", "per-op"])
def test_an_error_inside_a_pass_names_the_failing_operator(bulk, engine_name, monkeypatch):
    ex = _bind(_failing_net(), MLP_SHAPES, bulk, monkeypatch)
    ex.arg_dict["fc1_weight"][:] = -1.0
    ex.arg_dict["fc1_bias"][:] = -1.0
    ex.arg_dict["data"][:] = 1.0  # every fc1 output is negative: 'guard' raises
    ex.forward(is_train=True)
    with pytest.raises(EngineError, match=r"operator 'guard' \(_test_fail_on_negative, in 'executor") as info:
        ex.outputs[0].asnumpy()
    assert info.value.op_name == "guard"
    assert isinstance(info.value.__cause__, ValueError) and "negative input" in str(info.value.__cause__)
    ex.backward()  # reads the failed outputs: skipped, inheriting the error
    with pytest.raises(EngineError, match="guard"):
        ex.grad_dict["fc1_weight"].asnumpy()
    mx.nd.waitall()  # the error was reported: once is enough
    # the executor is not broken: good data runs again
    ex.arg_dict["fc1_weight"][:] = 0.5
    ex.arg_dict["fc1_bias"][:] = 0.0
    probs = ex.forward(is_train=True)[0].asnumpy()
    np.testing.assert_allclose(probs.sum(axis=1), 1.0, rtol=1e-5)
    ex.backward()
    assert np.isfinite(ex.grad_dict["fc1_weight"].asnumpy()).all()


@pytest.mark.parametrize("bulk", [True, False], ids=["bulk", "per-op"])
def test_monitor_sees_every_operator_in_order(bulk, engine_name, monkeypatch):
    ex = _bind(_mlp(), MLP_SHAPES, bulk, monkeypatch)
    seen = []
    ex.set_monitor_callback(lambda name, arr: seen.append((name, arr.asnumpy().copy())))
    ex.forward(is_train=True)
    ex.backward()
    mx.nd.waitall()
    names = [name for name, _ in seen]
    assert names[:4] == ["fc1_output", "relu1_output", "fc2_output", "softmax_output"]
    backward_nodes = {name.split("_output")[0].rsplit("_", 1)[0] for name in names[4:]}
    assert len(names) > 4 and all(n.startswith("_grad__backward") for n in names[4:]), backward_nodes
    np.testing.assert_array_equal(seen[3][1], ex.outputs[0].asnumpy())


def test_a_monitored_bulked_pass_is_still_one_engine_operation(recording_engine, monkeypatch):
    ex = _bind(_mlp(), MLP_SHAPES, True, monkeypatch)
    seen = []
    ex.set_monitor_callback(lambda name, arr: seen.append(name))
    recording_engine.names.clear()
    ex.forward(is_train=True)
    assert recording_engine.names == ["executor_forward"]
    assert seen == ["fc1_output", "relu1_output", "fc2_output", "softmax_output"]


@pytest.mark.parametrize("bulk", [True, False], ids=["bulk", "per-op"])
def test_an_inactive_monitor_gets_no_outputs_and_no_copies(bulk, monkeypatch):
    ex = _bind(_mlp(), MLP_SHAPES, bulk, monkeypatch)
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
    ex = _bind(_mlp(), MLP_SHAPES, True, monkeypatch)
    with pytest.raises(mx.LazyNDError, match="callback must be callable, got int"):
        ex.set_monitor_callback(3)
    with pytest.raises(mx.LazyNDError, match="active must be callable, got bool"):
        ex.set_monitor_callback(print, active=True)


@pytest.mark.parametrize("engine_kind", ["threaded", "naive"])
def test_profiler_sees_every_operator_of_a_bulked_pass_nested_in_the_pass(tmp_path, monkeypatch, engine_kind):
    engine.set_engine(engine_kind)
    try:
        ex = _bind(_mlp(), MLP_SHAPES, True, monkeypatch)
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
    ex = _bind(_mlp(), MLP_SHAPES, True, monkeypatch)
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


def _train_and_test(shared_bulk, monkeypatch, steps=3, lr=0.1):
    """A training executor and a test executor binding its arg arrays, with imperative SGD in between."""
    train = _bind(_mlp(), MLP_SHAPES, shared_bulk, monkeypatch)
    test = _mlp().bind(
        mx.cpu(),
        {**train.arg_dict, "data": mx.nd.zeros((3, 12)), "softmax_label": mx.nd.zeros((3,))},
    )
    rng = np.random.default_rng(9)
    test_data = rng.standard_normal((3, 12)).astype(np.float32)
    results, snapshots = [], []
    names = ("fc1_weight", "fc1_bias", "fc2_weight", "fc2_bias")
    for _ in range(steps):
        batch = rng.standard_normal(MLP_SHAPES["data"]).astype(np.float32)
        train.forward(is_train=True, data=mx.nd.array(batch))
        train.backward()
        for name in names:
            w, g = train.arg_dict[name], train.grad_dict[name]
            w[:] = w - g * lr
        # pushed right after the updates, with no wait: must read the updated weights; the
        # copies (lazy too) keep this step's values from the next step's writes
        results.append(test.forward(data=mx.nd.array(test_data))[0].copy())
        snapshots.append({name: train.arg_dict[name].copy() for name in names})
    snapshots = [{name: arr.asnumpy() for name, arr in snap.items()} for snap in snapshots]
    return [r.asnumpy() for r in results], snapshots, test_data


def _numpy_probs(train_weights, data):
    h = np.maximum(data @ train_weights["fc1_weight"].T + train_weights["fc1_bias"], 0)
    z = h @ train_weights["fc2_weight"].T + train_weights["fc2_bias"]
    p = np.exp(z - z.max(axis=1, keepdims=True))
    return p / p.sum(axis=1, keepdims=True)


@pytest.mark.parametrize("bulk", [True, False], ids=["bulk", "per-op"])
def test_executors_sharing_weights_see_imperative_updates_in_order(bulk, engine_name, monkeypatch):
    results, snapshots, test_data = _train_and_test(bulk, monkeypatch)
    for step, (result, weights) in enumerate(zip(results, snapshots, strict=True)):
        np.testing.assert_allclose(result, _numpy_probs(weights, test_data), rtol=1e-5, atol=1e-6, err_msg=str(step))
    # every step changed the weights, so every test forward saw a different network
    assert all(not np.allclose(a, b) for a, b in zip(results, results[1:], strict=False))


def test_shared_weight_training_is_the_same_with_and_without_bulk(engine_name, monkeypatch):
    bulk_results, bulk_weights, _ = _train_and_test(True, monkeypatch)
    single_results, single_weights, _ = _train_and_test(False, monkeypatch)
    for a, b in zip(bulk_results, single_results, strict=True):
        np.testing.assert_array_equal(a, b)
    for name, arr in bulk_weights[-1].items():
        np.testing.assert_array_equal(arr, single_weights[-1][name])


def test_argument_copies_of_a_bulked_forward_are_part_of_the_pass(recording_engine, monkeypatch):
    ex = _bind(_mlp(), MLP_SHAPES, True, monkeypatch)
    data, label = mx.nd.ones(MLP_SHAPES["data"]), mx.nd.zeros(MLP_SHAPES["softmax_label"])
    recording_engine.names.clear()
    ex.forward(is_train=True, data=data, softmax_label=label)
    assert recording_engine.names == ["executor_forward"]
    np.testing.assert_array_equal(ex.arg_dict["data"].asnumpy(), data.asnumpy())


@pytest.mark.parametrize("bulk", [True, False], ids=["bulk", "per-op"])
def test_forward_with_arguments_matches_copying_them_first(bulk, engine_name, monkeypatch):
    rng = np.random.default_rng(12)
    batches = [rng.standard_normal(MLP_SHAPES["data"]).astype(np.float32) for _ in range(3)]
    given, copied = _bind(_mlp(), MLP_SHAPES, bulk, monkeypatch), _bind(_mlp(), MLP_SHAPES, bulk, monkeypatch)
    for batch in batches:
        source = mx.nd.array(batch)
        given.forward(is_train=True, data=source, softmax_label=mx.nd.array(np.arange(8) % 4, dtype="float64"))
        # written right after the push, with no wait: the pass must have read the old values
        source[:] = 0.0
        copied.arg_dict["data"][:] = batch
        copied.arg_dict["softmax_label"][:] = np.arange(8) % 4
        copied.forward(is_train=True)
        for ex in (given, copied):
            ex.backward()
        np.testing.assert_array_equal(given.outputs[0].asnumpy(), copied.outputs[0].asnumpy())
        np.testing.assert_array_equal(given.grad_dict["fc1_weight"].asnumpy(), copied.grad_dict["fc1_weight"].asnumpy())
    assert given.arg_dict["softmax_label"].dtype == np.float32


def test_forward_with_an_argument_of_the_wrong_shape_is_an_error(monkeypatch):
    ex = _bind(_mlp(), MLP_SHAPES, True, monkeypatch)
    with pytest.raises(mx.LazyNDError, match=r"forward: 'data' has shape \(2, 12\).*\(8, 12\)"):
        ex.forward(data=mx.nd.ones((2, 12)))
    with pytest.raises(mx.LazyNDError, match="'weights' is not an argument"):
        ex.forward(weights=mx.nd.ones((2, 12)))


def _failing_placed_net():
    with sym.AttrScope(ctx_group="host"):
        x = sym.FullyConnected(sym.Variable("data"), num_hidden=6, name="fc1")
    with sym.AttrScope(ctx_group="device"):
        x = sym._test_fail_on_negative(x, name="guard")
        x = sym.FullyConnected(x, num_hidden=3, name="fc2")
    return sym.SoftmaxOutput(x, name="softmax")


@pytest.mark.gpu
@pytest.mark.skipif(mx.num_gpus() == 0, reason="needs an NVIDIA GPU with CuPy (none visible)")
@pytest.mark.parametrize("placed", [False, True], ids=["gpu", "cpu+gpu"])
def test_a_failed_step_of_a_gpu_pass_is_not_cleared_by_the_next_steps(placed):
    # one GPU bulks a pass into one operation, a placed executor pushes each operator on its own:
    # either way the steps after the failed one must not clear its error with their own success
    if placed:
        net = _failing_placed_net()
        ex = net.simple_bind(mx.cpu(), group2ctx={"host": mx.cpu(), "device": mx.gpu(0)}, **MLP_SHAPES)
    else:
        ex = _failing_net().simple_bind(mx.gpu(0), **MLP_SHAPES)
    ex.arg_dict["fc1_weight"][:] = -1.0
    ex.arg_dict["fc1_bias"][:] = -1.0
    ex.arg_dict["data"][:] = 1.0  # every fc1 output is negative: 'guard' raises
    ex.forward(is_train=True)
    with pytest.raises(EngineError, match="guard"):
        ex.outputs[0].asnumpy()
    mx.nd.waitall()


def _gpu_mlp(placed: bool):
    """The MLP bound on gpu(0), or (``placed``) its first layer on the host and the rest on gpu(0)."""
    if not placed:
        return _mlp().simple_bind(mx.gpu(0), **MLP_SHAPES)
    with sym.AttrScope(ctx_group="host"):
        x = sym.FullyConnected(sym.Variable("data"), num_hidden=6, name="fc1")
    with sym.AttrScope(ctx_group="device"):
        x = sym.FullyConnected(sym.relu(x, name="relu1"), num_hidden=3, name="fc2")
    net = sym.SoftmaxOutput(x, name="softmax")
    return net.simple_bind(mx.cpu(), group2ctx={"host": mx.cpu(), "device": mx.gpu(0)}, **MLP_SHAPES)


@pytest.mark.gpu
@pytest.mark.skipif(mx.num_gpus() == 0, reason="needs an NVIDIA GPU with CuPy (none visible)")
def test_a_gpu_pass_is_one_engine_operation():
    ex = _mlp().simple_bind(mx.gpu(0), **MLP_SHAPES)
    data = mx.nd.ones(MLP_SHAPES["data"], ctx=mx.gpu(0))
    events = profiler.trace_of(lambda: (ex.forward(is_train=True, data=data), ex.backward()))
    names = [e["name"] for e in events if e["ph"] == "X"]
    passes = [n for n in names if not n.startswith("executor:")]
    assert passes == ["executor_forward", "executor_backward"], names
    assert any(n.startswith("executor:") for n in names), "the pass's operators are not in the trace"


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
