"""The profiler: Chrome trace structure, coverage of a known program, the summary table."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import defaultdict

import numpy as np
import pytest

import lazynd as mx
from lazynd import profiler, profiler_trace
from lazynd.engine import get_engine

pytestmark = pytest.mark.usefixtures("stopped_profiler")  # tests/conftest.py


def _known_program() -> np.ndarray:
    # 256x256 is above the inline limit: these ops run on the engine's worker threads
    a = mx.nd.ones((256, 256))
    b = a + a
    c = mx.nd.dot(b, a)
    d = c.copyto(mx.cpu())
    return d.asnumpy()


def _run_profiled(tmp_path, mode="all"):
    path = tmp_path / "trace.json"
    profiler.set_config(mode=mode, filename=str(path))
    profiler.set_state("run")
    result = _known_program()
    written = profiler.dump()
    assert written == str(path)
    with open(path) as f:
        return json.load(f), result


def test_stopped_profiler_leaves_no_hook():
    profiler.set_state("run")
    assert get_engine().profiler_hook is not None
    profiler.set_state("stop")
    assert get_engine().profiler_hook is None


def test_trace_events_have_chrome_keys_and_types(tmp_path):
    doc, _ = _run_profiled(tmp_path)
    events = doc["traceEvents"]
    assert isinstance(events, list) and events
    complete = [e for e in events if e["ph"] == "X"]
    meta = [e for e in events if e["ph"] == "M"]
    assert len(complete) + len(meta) == len(events)
    assert all({"ph", "ts", "pid", "tid"} <= set(e) for e in events), [e for e in events if "ts" not in e]
    for e in complete:
        assert set(e) == {"name", "cat", "ph", "ts", "dur", "pid", "tid"}
        assert isinstance(e["name"], str)
        assert isinstance(e["ts"], (int, float)) and isinstance(e["dur"], (int, float))
        assert isinstance(e["pid"], int) and isinstance(e["tid"], int)
    process_names = {e["pid"]: e["args"]["name"] for e in meta if e["name"] == "process_name"}
    thread_names = {(e["pid"], e["tid"]): e["args"]["name"] for e in meta if e["name"] == "thread_name"}
    for e in complete:
        assert e["pid"] in process_names
        assert (e["pid"], e["tid"]) in thread_names
    assert "cpu/0" in process_names.values()  # MXNet's name of the row
    # operations run on the engine's workers or on a thread that waits for them (it helps meanwhile)
    assert all(name.startswith("lazynd-cpu") or name == "MainThread" for name in thread_names.values() if name)


def test_every_op_of_known_program_appears(tmp_path):
    doc, result = _run_profiled(tmp_path)
    np.testing.assert_allclose(result, np.full((256, 256), 512.0))
    names = [e["name"] for e in doc["traceEvents"] if e["ph"] == "X"]
    assert any("plus" in n or "add" in n for n in names), names
    assert any("dot" in n for n in names), names
    assert any("copyto" in n for n in names), names


def test_copies_get_copy_category(tmp_path):
    doc, _ = _run_profiled(tmp_path)
    cats = {e["name"]: e["cat"] for e in doc["traceEvents"] if e["ph"] == "X"}
    for name, cat in cats.items():
        assert cat == ("copy" if "copyto" in name else "operator")


def test_times_are_sane_and_do_not_overlap_per_thread(tmp_path):
    doc, _ = _run_profiled(tmp_path)
    per_thread = defaultdict(list)
    for e in doc["traceEvents"]:
        if e["ph"] == "X":
            assert e["ts"] >= 0 and e["dur"] >= 0
            assert e["dur"] < 60e6  # under a minute: the program takes milliseconds
            per_thread[e["tid"]].append((e["ts"], e["ts"] + e["dur"]))
    for spans in per_thread.values():
        spans.sort()
        for (_, end), (start, _) in zip(spans, spans[1:], strict=False):
            assert start >= end - 1e-3  # µs values are rounded to 3 decimals


def test_symbolic_mode_records_only_executor_ops(tmp_path):
    path = tmp_path / "sym.json"
    profiler.set_config(mode="symbolic", filename=str(path))
    profiler.set_state("run")
    _known_program()
    engine = get_engine()
    engine.push(lambda: None, (), [], [], name="executor_forward")
    engine.waitall()
    profiler.dump()
    names = [e["name"] for e in json.loads(path.read_text())["traceEvents"] if e["ph"] == "X"]
    assert names == ["executor_forward"]


def test_dumps_json_has_mxnets_sections_with_memory_empty(tmp_path):
    profiler.set_config(mode="all", filename=str(tmp_path / "t.json"), profile_memory=True, aggregate_stats=True)
    profiler.set_state("run")
    mx.nd.sqrt(mx.nd.ones((4,))).asnumpy()
    profiler.set_state("stop")
    document = json.loads(profiler.dumps(format="json"))
    assert list(document) == ["Time", "Memory", "Unit"]
    assert document["Memory"] == {}  # memory use is not recorded; MXNet code reading the section finds it
    assert document["Unit"] == {"Time": "ms", "Memory": "kB"}
    assert document["Time"]["operator"]["sqrt"]["Count"] == 1


def test_dumps_table_counts_each_op(tmp_path):
    profiler.set_config(mode="all", filename=str(tmp_path / "t.json"))
    profiler.set_state("run")
    x = mx.nd.ones((8,))
    for _ in range(5):
        x = mx.nd.exp(x * 0)
    x.asnumpy()
    mx.waitall()
    table = profiler.dumps()
    lines = table.splitlines()
    assert lines[3:6] == [
        "operator",
        "=" * 17,
        "Name"
        + " " * 26
        + "Total Count"
        + "".join(f"{title:>17}" for title in ("Time (ms)", "Min Time (ms)", "Max Time (ms)", "Avg Time (ms)")),
    ]
    exp_rows = [r.split() for r in lines if r.split()[:1] == ["exp"]]
    assert len(exp_rows) == 1
    count, total, low, high, mean = exp_rows[0][1:]
    assert int(count) == 5
    assert float(low) <= float(mean) <= float(high) <= float(total)


def test_bad_mode_and_state_raise_clear_errors():
    with pytest.raises(mx.LazyNDError, match="mode 'fast'"):
        profiler.set_config(mode="fast")
    with pytest.raises(mx.LazyNDError, match="state 'go'"):
        profiler.set_state("go")


def test_mxnet_aliases_exist():
    assert profiler.profiler_set_config is profiler.set_config
    assert profiler.profiler_set_state is profiler.set_state
    assert mx.profiler is profiler


def test_hook_follows_engine_switch(tmp_path):
    from lazynd.engine import set_engine

    profiler.set_config(mode="all", filename=str(tmp_path / "s.json"))
    profiler.set_state("run")
    old = get_engine().name
    try:
        set_engine("naive")
        mx.nd.ones((4,)).asnumpy()
        profiler.dumps()  # notices the new engine
        assert get_engine().profiler_hook is not None
    finally:
        set_engine(old)  # hands the hook on again
        profiler.set_state("stop")
    # stopping removes the hook from the engine in use, not only from the one it was installed on
    assert get_engine().profiler_hook is None
    assert get_engine().run_now(lambda v: v + 1, (41,), []) == 42


def _trace_names(path) -> list[str]:
    with open(path) as f:
        return [e["name"] for e in json.load(f)["traceEvents"] if e["ph"] == "X"]


def test_mxnet_recipe_writes_the_trace_at_stop_without_dump(tmp_path):
    path = tmp_path / "recipe.json"
    profiler.profiler_set_config(mode="all", filename=str(path))
    profiler.profiler_set_state("run")
    _known_program()
    assert not path.exists()
    profiler.profiler_set_state("stop")
    assert "dot" in _trace_names(path)
    # a second run adds to the same trace, as MXNet's one file per process holds everything
    profiler.profiler_set_state("run")
    (mx.nd.ones((4,)) * 3).wait_to_read()
    profiler.profiler_set_state("stop")
    names = _trace_names(path)
    assert "dot" in names and len(names) > 1


def test_stop_waits_for_pending_operations_before_writing(tmp_path):
    path = tmp_path / "pending.json"
    profiler.set_config(mode="all", filename=str(path))
    profiler.set_state("run")
    a = mx.nd.ones((256, 256))
    mx.nd.dot(a, a)  # pushed, maybe not yet run
    profiler.set_state("stop")
    assert "dot" in _trace_names(path)


def test_mxnet_recipe_writes_the_trace_at_exit_when_never_stopped(tmp_path):
    path = tmp_path / "exit.json"
    script = (
        "import lazynd as mx\n"
        f"mx.profiler.profiler_set_config(mode='all', filename={str(path)!r})\n"
        "mx.profiler.profiler_set_state('run')\n"
        "a = mx.nd.ones((64, 64))\n"
        "mx.nd.dot(a, a).wait_to_read()\n"
    )
    subprocess.run([sys.executable, "-c", script], check=True, timeout=120)
    assert "dot" in _trace_names(path)


@pytest.mark.gpu
@pytest.mark.skipif(mx.num_gpus() == 0, reason="needs an NVIDIA GPU with CuPy (none visible)")
def test_gpu_operations_sit_on_one_row_per_stream():
    """A trace shows a host->device copy and the kernels on their own streams' rows, as
    chrome://tracing needs to show them overlapping."""

    def run():
        batch = mx.nd.array(np.ones((64, 64), np.float32), ctx=mx.gpu(0))
        return mx.nd.dot(batch, batch) + 1

    events = profiler.trace_of(run)
    rows = {(e["pid"], e["tid"]): e["args"]["name"] for e in events if e["name"] == "thread_name"}
    placed = {e["name"]: rows[(e["pid"], e["tid"])] for e in events if e["ph"] == "X"}
    assert placed["dot"] == "stream compute" and placed["_plus_scalar"] == "stream compute", placed
    assert any(name.startswith("_copyto") and row == "stream h2d" for name, row in placed.items()), placed


def test_a_gpu_pass_starts_with_its_first_operator_not_after_its_last(monkeypatch):
    """The operators of a bulked GPU pass are recorded (each with its event) before the pass that
    holds them; the pass's device start is its launch or the end of the work launched before it,
    so it encloses its operators in the trace."""
    import types

    import lazynd.backend

    stream = object()
    backend = types.SimpleNamespace(streams={"compute": stream}, event_time_ns=lambda event: event.end)
    monkeypatch.setattr(lazynd.backend, "get_backend", lambda device: backend)
    gpu = types.SimpleNamespace(is_gpu=True)

    def event(end):
        return types.SimpleNamespace(stream=stream, end=end)

    records = [
        ("executor_forward", gpu, 1, 0, 10, event(100)),  # (name, device, thread, host start, end, event)
        ("executor:fc1", gpu, 1, 20, 22, event(130)),
        ("executor:fc2", gpu, 1, 23, 25, event(160)),
        ("executor_backward", gpu, 1, 15, 30, event(160)),
    ]
    times, lanes = profiler_trace.gpu_times(records)
    assert lanes == ["compute"] * 4
    assert times[1] == (100, 130) and times[2] == (130, 160), times
    assert times[3] == (100, 160), "the pass does not enclose its operators"


@pytest.mark.gpu
@pytest.mark.skipif(mx.num_gpus() == 0, reason="needs an NVIDIA GPU with CuPy (none visible)")
def test_the_operators_of_a_bulked_gpu_pass_sit_on_its_stream_row():
    import lazynd_sym as sym

    net = sym.SoftmaxOutput(sym.FullyConnected(sym.Variable("data"), num_hidden=4, name="fc1"), name="softmax")
    ex = net.simple_bind(mx.gpu(0), data=(8, 6), softmax_label=(8,))
    mx.nd.waitall()
    events = [
        e
        for e in profiler.trace_of(lambda: (ex.forward(is_train=True), ex.backward()), mode="symbolic")
        if e["ph"] == "X"
    ]
    rows = {e["name"]: (e["pid"], e["tid"]) for e in events}
    steps = [name for name in rows if name.startswith("executor:")]
    assert steps, rows
    assert {rows[name] for name in steps} == {rows["executor_forward"]} == {rows["executor_backward"]}, rows


def test_trace_of_writes_nothing_and_leaves_the_configuration_as_it_was(tmp_path):
    path = tmp_path / "named.json"
    profiler.set_config(mode="all", filename=str(path))
    events = profiler.trace_of(lambda: mx.nd.ones((3,)) * 2, mode="all")
    assert "_mul_scalar" in {e["name"] for e in events if e["ph"] == "X"}
    profiler.trace_of(lambda: mx.nd.ones((3,)) * 2, mode="symbolic")
    assert list(tmp_path.iterdir()) == [], "trace_of wrote a file"
    # the named file and mode 'all' are back: a run now is written there, without trace_of's operations
    profiler.set_state("run")
    (mx.nd.ones((3,)) + 1).wait_to_read()
    profiler.set_state("stop")
    profiler.reset()
    names = set(_trace_names(path))
    assert "_plus_scalar" in names and "_mul_scalar" not in names, names


def test_trace_of_refuses_a_recording_profiler():
    profiler.set_state("run")
    try:
        with pytest.raises(mx.LazyNDError, match="already recording"):
            profiler.trace_of(lambda: None)
    finally:
        profiler.set_state("stop")
        profiler.reset()


def test_trace_of_holds_only_its_own_operations_and_keeps_earlier_records(tmp_path):
    profiler.set_config(mode="all", filename=str(tmp_path / "trace.json"))
    profiler.set_state("run")
    mx.nd.dot(mx.nd.ones((3, 3)), mx.nd.ones((3, 3))).wait_to_read()
    profiler.pause()
    events = profiler.trace_of(lambda: mx.nd.ones((3,)) * 2)
    names = {e["name"] for e in events if e["ph"] == "X"}
    assert "_mul_scalar" in names and "dot" not in names, names
    # the earlier (paused) profile goes on as it was
    profiler.resume()
    assert profiler.get_state() == "run"
    profiler.set_state("stop")
    names = set(_trace_names(tmp_path / "trace.json"))
    assert "dot" in names and "_mul_scalar" not in names, names


@pytest.mark.parametrize("key", ["profile_all", "profile_imperative", "profile_symbolic", "profile_memory"])
@pytest.mark.parametrize("value", ["yes", None, 1.5, 2, np.ones(2)], ids=["'yes'", "None", "1.5", "2", "array"])
def test_set_config_refuses_a_flag_that_is_no_boolean_by_name(key, value, tmp_path):
    # MXNet's parser refuses these; 'yes' read by its truth would turn on what it names
    with pytest.raises(mx.LazyNDError, match=f"profiler.set_config: {key} must be True or False, got "):
        profiler.set_config(filename=str(tmp_path / "trace.json"), **{key: value})


def test_set_config_takes_mxnet_1x_keywords(tmp_path):
    path = tmp_path / "trace.json"
    # MXNet 1.x's recipe: every operation, imperative ones included
    profiler.set_config(profile_all=True, aggregate_stats=True, continuous_dump=False, filename=str(path))
    profiler.set_state("run")
    (mx.nd.ones((3,)) + 1).wait_to_read()
    profiler.set_state("stop")
    assert "_plus_scalar" in _trace_names(path)
    profiler.reset()
    profiler.set_config(profile_symbolic=True, profile_imperative=False, profile_memory=False, filename=str(path))
    profiler.set_state("run")
    (mx.nd.ones((3,)) * 2).wait_to_read()
    profiler.set_state("stop")
    assert "_mul_scalar" not in _trace_names(path)
    with pytest.raises(mx.LazyNDError, match=r"unknown argument\(s\) \['bogus'\]"):
        profiler.set_config(bogus=1)
