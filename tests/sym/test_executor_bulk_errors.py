"""Bulk execution and errors: an operator failing inside a pass is named, and later steps do not clear its error."""

from __future__ import annotations

import numpy as np
import pytest
from executor_bulk_nets import MLP_SHAPES, bind_net, failing_net

import lazynd as mx
import lazynd_sym as sym
from lazynd.errors import EngineError


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
