"""The bulk-execution tests' networks, and binding them with bulking on or off (an operator that fails on a negative input among them)."""

from __future__ import annotations

import numpy as np

import lazynd as mx
import lazynd_sym as sym
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


def mlp():
    """fc1 (6) -> relu1 -> fc2 (4) -> softmax, on ``MLP_SHAPES``."""
    x = sym.FullyConnected(sym.Variable("data"), num_hidden=6, name="fc1")
    x = sym.FullyConnected(sym.relu(x, name="relu1"), num_hidden=4, name="fc2")
    return sym.SoftmaxOutput(x, name="softmax")


def conv_net():
    """conv1 -> bn1 -> relu -> pool1 -> fc1 (5) -> softmax, on ``CONV_SHAPES``."""
    x = sym.Convolution(sym.Variable("data"), kernel=(3, 3), num_filter=3, pad=(1, 1), name="conv1")
    x = sym.BatchNorm(x, fix_gamma=False, name="bn1")
    x = sym.Pooling(sym.relu(x), kernel=(2, 2), stride=(2, 2), pool_type="max", name="pool1")
    x = sym.FullyConnected(sym.Flatten(x), num_hidden=5, name="fc1")
    return sym.SoftmaxOutput(x, name="softmax")


def failing_net():
    """fc1 -> guard (raises on a negative input) -> fc2 -> softmax, on ``MLP_SHAPES``."""
    x = sym.FullyConnected(sym.Variable("data"), num_hidden=6, name="fc1")
    x = sym._test_fail_on_negative(x, name="guard")
    return sym.SoftmaxOutput(sym.FullyConnected(x, num_hidden=3, name="fc2"), name="softmax")


def bind_net(net, shapes, bulk, monkeypatch, **kwargs):
    """``net`` bound on the CPU with bulking on or off, its arguments and aux states filled from a fixed seed."""
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
