"""Bulk execution: a CPU executor pushes a whole pass as one engine operation, and nothing else changes:
the same outputs and gradients, and an error inside a pass still names its operator.

Each behaviour is checked with bulking on (the default) and off (``LAZYND_EXEC_BULK=0``,
read when the executor is bound), under both engines where the engine matters.
"""

from __future__ import annotations

import numpy as np
import pytest
from executor_bulk_nets import CONV_SHAPES, MLP_SHAPES, bind_net, conv_net, failing_net, mlp

import lazynd as mx
import lazynd_sym as sym
from lazynd import profiler
from lazynd.errors import EngineError


@pytest.mark.parametrize(("net", "shapes"), [(mlp, MLP_SHAPES), (conv_net, CONV_SHAPES)], ids=["mlp", "conv"])
def test_bulk_and_per_operator_executors_give_identical_outputs_and_gradients(net, shapes, engine_name, monkeypatch):
    bulk, single = bind_net(net(), shapes, True, monkeypatch), bind_net(net(), shapes, False, monkeypatch)
    assert bulk._bulk and not single._bulk
    for ex in (bulk, single):
        for _ in range(2):  # the second step sees the aux states (moving mean/var) the first wrote
            ex.forward(is_train=True)
            ex.backward()
    for a, b in zip(bulk.outputs + bulk.aux_arrays, single.outputs + single.aux_arrays, strict=True):
        np.testing.assert_array_equal(a.asnumpy(), b.asnumpy())
    for name, grad in bulk.grad_dict.items():
        if grad is None:  # an argument bound without a gradient (the label): None, as in MXNet
            continue
        assert np.abs(grad.asnumpy()).sum() > 0, name
        np.testing.assert_array_equal(grad.asnumpy(), single.grad_dict[name].asnumpy(), err_msg=name)
    inference = [ex.forward(is_train=False)[0].asnumpy() for ex in (bulk, single)]
    np.testing.assert_array_equal(*inference)


def test_a_bulked_pass_is_one_engine_operation(recording_engine, monkeypatch):
    ex = bind_net(mlp(), MLP_SHAPES, True, monkeypatch)
    recording_engine.names.clear()
    ex.forward(is_train=True)
    ex.backward()
    assert recording_engine.names == ["executor_forward", "executor_backward"]


def test_without_bulk_every_operator_is_its_own_operation(recording_engine, monkeypatch):
    ex = bind_net(mlp(), MLP_SHAPES, False, monkeypatch)
    recording_engine.names.clear()
    ex.forward(is_train=True)
    assert recording_engine.names == ["executor:fc1", "executor:relu1", "executor:fc2", "executor:softmax"]


@pytest.mark.parametrize("value", ["0", "false", "off"])
def test_bulk_switch_is_read_at_bind(value, monkeypatch):
    monkeypatch.setenv("LAZYND_EXEC_BULK", value)
    off = mlp().simple_bind(mx.cpu(), **MLP_SHAPES)
    monkeypatch.setenv("LAZYND_EXEC_BULK", "1")
    assert not off._bulk and mlp().simple_bind(mx.cpu(), **MLP_SHAPES)._bulk


@pytest.mark.gpu
@pytest.mark.skipif(mx.num_gpus() == 0, reason="needs an NVIDIA GPU with CuPy (none visible)")
def test_a_gpu_pass_is_one_engine_operation():
    ex = mlp().simple_bind(mx.gpu(0), **MLP_SHAPES)
    data = mx.nd.ones(MLP_SHAPES["data"], ctx=mx.gpu(0))
    events = profiler.trace_of(lambda: (ex.forward(is_train=True, data=data), ex.backward()))
    names = [e["name"] for e in events if e["ph"] == "X"]
    passes = [n for n in names if not n.startswith("executor:")]
    assert passes == ["executor_forward", "executor_backward"], names
    assert any(n.startswith("executor:") for n in names), "the pass's operators are not in the trace"


@pytest.mark.parametrize("bulk", [True, False], ids=["bulk", "per-op"])
def test_an_error_inside_a_pass_names_the_failing_operator(bulk, engine_name, monkeypatch):
    ex = bind_net(failing_net(), MLP_SHAPES, bulk, monkeypatch)
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
        ex = failing_net().simple_bind(mx.gpu(0), **MLP_SHAPES)
    ex.arg_dict["fc1_weight"][:] = -1.0
    ex.arg_dict["fc1_bias"][:] = -1.0
    ex.arg_dict["data"][:] = 1.0  # every fc1 output is negative: 'guard' raises
    ex.forward(is_train=True)
    with pytest.raises(EngineError, match="guard"):
        ex.outputs[0].asnumpy()
    mx.nd.waitall()
