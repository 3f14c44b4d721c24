"""MXNet's environment variables (its env_var and perf guides) under ``import lazynd as mx``."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from fresh_interpreter import run_fresh

import lazynd as mx
import lazynd_sym as sym
from lazynd.engine.workers import default_cpu_workers
from lazynd.environment import MXNET_VARIABLES
from lazynd.test_utils import environment
from lazynd_sym.executor import bulk_enabled

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run_program(code: str, cwd: str, **variables: str) -> str:
    """Run ``code`` in a fresh interpreter with ``variables`` set; return its stdout."""
    env = {**os.environ, "PYTHONPATH": ROOT, **variables}
    for name in ("LAZYND_ENGINE", "LAZYND_CPU_WORKERS", "LAZYND_EXEC_BULK"):
        env.pop(name, None)
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=cwd, env=env, capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.parametrize(
    ("value", "engine"),
    [
        ("NaiveEngine", "NaiveEngine"),
        ("ThreadedEngine", "ThreadedEngine"),
        ("ThreadedEnginePerDevice", "ThreadedEngine"),
    ],
)
def test_engine_type_set_before_import_takes_effect(tmp_path, value, engine):
    code = "import lazynd as mx; print(type(mx.engine.get_engine()).__name__)"
    assert run_program(code, str(tmp_path), MXNET_ENGINE_TYPE=value).strip() == engine


def test_cpu_worker_nthreads_sets_the_worker_pool():
    with environment({"LAZYND_CPU_WORKERS": None, "MXNET_CPU_WORKER_NTHREADS": "3"}):
        assert default_cpu_workers() == 3


def test_lazynd_cpu_workers_wins_over_mxnet_nthreads():
    with environment({"LAZYND_CPU_WORKERS": "2", "MXNET_CPU_WORKER_NTHREADS": "5"}):
        assert default_cpu_workers() == 2


@pytest.mark.parametrize("name", ["MXNET_CPU_WORKER_NTHREADS", "LAZYND_CPU_WORKERS"])
@pytest.mark.parametrize("value", ["many", "0"])
def test_worker_count_that_means_nothing_is_refused_naming_the_variable(name, value):
    other = "LAZYND_CPU_WORKERS" if name != "LAZYND_CPU_WORKERS" else "MXNET_CPU_WORKER_NTHREADS"
    with environment({other: None, name: value}):
        with pytest.raises(mx.LazyNDError, match=rf"{name}: expected an integer >= 1, got '{value}'"):
            default_cpu_workers()


def test_bulk_exec_train_off_turns_bulking_off_for_training_executors_only():
    with environment({"LAZYND_EXEC_BULK": None, "MXNET_EXEC_BULK_EXEC_TRAIN": "0"}):
        assert not bulk_enabled(training=True)
        assert bulk_enabled(training=False)


def test_bulk_exec_inference_off_turns_bulking_off_for_inference_executors_only():
    with environment({"LAZYND_EXEC_BULK": None, "MXNET_EXEC_BULK_EXEC_INFERENCE": "0"}):
        assert bulk_enabled(training=True)
        assert not bulk_enabled(training=False)


def test_bulk_exec_train_off_still_trains_the_same():
    net = sym.FullyConnected(sym.Variable("data"), num_hidden=3, name="fc")
    grads = []
    for bulk in ("1", "0"):
        with environment({"LAZYND_EXEC_BULK": None, "MXNET_EXEC_BULK_EXEC_TRAIN": bulk}):
            ex = net.simple_bind(mx.cpu(), data=(2, 4))
        ex.arg_dict["data"][:] = 1.0
        ex.arg_dict["fc_weight"][:] = 0.5
        ex.forward(is_train=True)
        ex.backward(mx.nd.ones((2, 3)))
        grads.append(ex.grad_dict["fc_weight"].asnumpy())
    assert (grads[0] == grads[1]).all()


def test_bulk_flag_that_means_nothing_is_refused():
    with environment({"LAZYND_EXEC_BULK": None, "MXNET_EXEC_BULK_EXEC_TRAIN": "sometimes"}):
        with pytest.raises(mx.LazyNDError, match="MXNET_EXEC_BULK_EXEC_TRAIN: expected 1 or 0"):
            bulk_enabled(training=True)


@pytest.mark.parametrize("name", ["LAZYND_SYM_FUSION", "LAZYND_CUDA_GRAPHS"])
def test_lazynd_switches_read_like_every_other_flag(name):
    """lazynd's own on/off switches take the same words as MXNet's flags, and refuse others by name."""
    from lazynd_sym.executor.run import graphs_enabled
    from lazynd_sym.passes.fuse_elemwise import fusion_enabled

    read = fusion_enabled if name == "LAZYND_SYM_FUSION" else graphs_enabled
    for value, expected in (("off", False), ("No", False), ("1", True), ("", True)):
        with environment(name, value):
            assert read() is expected
    with environment(name, "fast"):
        with pytest.raises(mx.LazyNDError, match=f"{name}: expected 1 or 0"):
            read()


def test_autograd_replay_switch_that_means_nothing_is_refused_when_autograd_runs():
    program = """
        import lazynd as mx
        x = mx.nd.ones((2,))
        x.attach_grad()
        with mx.autograd.record():
            y = x * 2
        y.backward()
        """
    done = run_fresh(program, env={"LAZYND_AUTOGRAD_REPLAY": "sometimes"})
    assert done.returncode != 0
    assert "LAZYND_AUTOGRAD_REPLAY: expected 1 or 0" in done.stderr
    done = run_fresh("import lazynd.autograd.replay as r; print(r.ENABLED)", env={"LAZYND_AUTOGRAD_REPLAY": "off"})
    assert done.stdout.strip() == "False", done.stderr


def _traced_names(tmp_path) -> set[str]:
    with open(tmp_path / "profile.json") as trace:
        return {event["name"] for event in json.load(trace)["traceEvents"]}


EXECUTOR_AND_IMPERATIVE = (
    "import lazynd as mx\n"
    "ex = mx.sym.FullyConnected(mx.sym.Variable('data'), num_hidden=2, name='fc').simple_bind(mx.cpu(), data=(1, 3))\n"
    "ex.forward()[0].wait_to_read()\n"
    "mx.nd.sqrt(mx.nd.ones((3, 3))).wait_to_read()\n"
    "print(mx.profiler.get_state())\n"
)


def test_profiler_autostart_writes_profile_json_of_executor_operators_at_exit(tmp_path):
    # MXNet's guide: MXNET_PROFILER_MODE=0, the default, records the symbolic operators
    assert run_program(EXECUTOR_AND_IMPERATIVE, str(tmp_path), MXNET_PROFILER_AUTOSTART="1").strip() == "run"
    names = _traced_names(tmp_path)
    assert "executor:fc" in names and "sqrt" not in names


@pytest.mark.parametrize("mode", ["1", "15"])
def test_profiler_mode_all_records_imperative_operators_too(tmp_path, mode):
    run_program(EXECUTOR_AND_IMPERATIVE, str(tmp_path), MXNET_PROFILER_AUTOSTART="1", MXNET_PROFILER_MODE=mode)
    names = _traced_names(tmp_path)
    assert "executor:fc" in names and "sqrt" in names


def test_profiler_autostart_off_starts_nothing(tmp_path):
    code = "import lazynd as mx; (mx.nd.ones((3, 3)) + 1).wait_to_read(); print(mx.profiler.get_state())"
    assert run_program(code, str(tmp_path), MXNET_PROFILER_AUTOSTART="0").strip() == "stop"
    assert not (tmp_path / "profile.json").exists()


@pytest.mark.parametrize(
    "name", ["MXNET_BACKWARD_DO_MIRROR", "MXNET_KVSTORE_REDUCTION_NTHREADS", "MXNET_KVSTORE_BIGARRAY_BOUND"]
)
def test_tuning_variables_lazynd_does_another_way_are_documented_as_ignored(name):
    assert MXNET_VARIABLES[name].startswith("ignored: ")


def test_every_listed_variable_is_honoured_or_ignored_with_a_reason():
    for name, what in MXNET_VARIABLES.items():
        assert name.startswith("MXNET_")
        assert what.split(": ", 1)[0] in ("honoured", "ignored") and what.split(": ", 1)[1], name
