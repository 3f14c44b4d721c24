"""Monitor rows named, ordered and valued as MXNet 1.9.1 prints them, for an MLP and a small conv net.

The expected rows were printed by MXNet 1.9.1 (``MXNET_SUBGRAPH_BACKEND=NONE``) for the same
nets, data and weights.  MXNet rows lazynd does not print, and why (see README, "Monitor"):
``softmax_backward_output1`` (the label's gradient, always zero: lazynd computes none),
``pool1_workspace`` and ``zeros_without_dtype_output`` (MXNet internals).
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import lazynd as mx

MLP_TRAIN = [
    "fc1_output", "relu1_output", "fc2_output", "softmax_output",
    "softmax_backward_output0",
    "fc2_backward_output0", "fc2_backward_output1", "fc2_backward_output2",
    "relu1_backward_output",
    "fc1_backward_output0", "fc1_backward_output1", "fc1_backward_output2",
    "data", "fc1_weight", "fc1_bias", "fc2_weight", "fc2_bias", "softmax_label",
]  # fmt: skip
MLP_INFER = ["fc1_output", "relu1_output", "fc2_output", "softmax_output"] + MLP_TRAIN[-6:]
CONV_TRAIN = [
    "conv1_output", "relu1_output", "pool1_output", "flat_output", "fc1_output", "softmax_output",
    "softmax_backward_output0",
    "fc1_backward_output0", "fc1_backward_output1", "fc1_backward_output2",
    "flat_backward_output", "pool1_backward_output", "relu1_backward_output",
    "conv1_backward_output0", "conv1_backward_output1", "conv1_backward_output2",
    "data", "conv1_weight", "conv1_bias", "fc1_weight", "fc1_bias", "softmax_label",
]  # fmt: skip
CONV_INFER = CONV_TRAIN[:6] + CONV_TRAIN[-6:]
# MXNet 1.9.1's statistic (norm / sqrt(size)) of each MLP_TRAIN row
MLP_TRAIN_STATS = [
    0.18828171, 0.06373775, 0.16991419, 0.33464348, 0.47267285, 0.12822121, 0.041856747, 0.4759745,
    0.03364012, 0.018506322, 0.010030759, 0.047574315, 0.20493902, 0.26739484, 0.12247449,
    0.4031129, 0.12909946, 1.4142135,
]  # fmt: skip
MLP_INFER_ALL = [
    "data", "fc1_data", "fc1_weight", "fc1_weight", "fc1_bias", "fc1_bias", "fc1_output",
    "relu1_input0", "relu1_output",
    "fc2_data", "fc2_weight", "fc2_weight", "fc2_bias", "fc2_bias", "fc2_output",
    "softmax_data", "softmax_label", "softmax_label", "softmax_output",
]  # fmt: skip
MLP_TRAIN_ALL = MLP_INFER_ALL + [
    "softmax_backward_input0", "softmax_label", "softmax_backward_input1", "softmax_backward_output0",
    "fc2_backward_input0", "fc2_backward_input1", "fc2_weight", "fc2_backward_input2",
    "fc2_backward_output0", "fc2_backward_output1", "fc2_backward_output2",
    "relu1_backward_input0", "relu1_backward_input1", "relu1_backward_output",
    "fc1_backward_input0", "data", "fc1_backward_input1", "fc1_weight", "fc1_backward_input2",
    "fc1_backward_output0", "fc1_backward_output1", "fc1_backward_output2",
] + MLP_TRAIN[-6:]  # fmt: skip
CONV_INFER_ALL = [
    "data", "conv1_data", "conv1_weight", "conv1_weight", "conv1_bias", "conv1_bias", "conv1_output",
    "relu1_input0", "relu1_output", "pool1_data", "pool1_output", "flat_input0", "flat_output",
    "fc1_data", "fc1_weight", "fc1_weight", "fc1_bias", "fc1_bias", "fc1_output",
    "softmax_data", "softmax_label", "softmax_label", "softmax_output",
] + CONV_INFER[-6:]  # fmt: skip


def _mlp() -> tuple[mx.sym.Symbol, tuple[int, ...]]:
    net = mx.sym.FullyConnected(mx.sym.Variable("data"), num_hidden=4, name="fc1")
    net = mx.sym.Activation(net, act_type="relu", name="relu1")
    net = mx.sym.FullyConnected(net, num_hidden=3, name="fc2")
    return mx.sym.SoftmaxOutput(net, name="softmax"), (2, 5)


def _conv() -> tuple[mx.sym.Symbol, tuple[int, ...]]:
    net = mx.sym.Convolution(mx.sym.Variable("data"), kernel=(3, 3), num_filter=2, name="conv1")
    net = mx.sym.Activation(net, act_type="relu", name="relu1")
    net = mx.sym.Pooling(net, kernel=(2, 2), stride=(2, 2), pool_type="max", name="pool1")
    net = mx.sym.FullyConnected(mx.sym.Flatten(net, name="flat"), num_hidden=3, name="fc1")
    return mx.sym.SoftmaxOutput(net, name="softmax"), (2, 1, 6, 6)


NETS = {"mlp": _mlp, "conv": _conv}


def _fill(arrays: dict) -> None:
    """The arguments the reference rows were printed with, in name order."""
    for i, (name, array) in enumerate(sorted(arrays.items())):
        if name == "softmax_label":
            array[:] = np.array([0, 2])
        else:
            values = np.arange(array.size, dtype=np.float32).reshape(array.shape) % 7
            array[:] = (values - 3 + i) / 10.0


def _stat(x: mx.nd.NDArray) -> mx.nd.NDArray:
    return mx.nd.norm(x) / np.sqrt(x.size)


def _bound_rows(net: str, train: bool, **monitor_args) -> list[tuple[str, float]]:
    symbol, shape = NETS[net]()
    exe = symbol.simple_bind(mx.cpu(), data=shape, grad_req="write" if train else "null")
    _fill(exe.arg_dict)
    mon = mx.mon.Monitor(1, _stat, **monitor_args)
    mon.install(exe)
    mon.tic()
    exe.forward(is_train=train)
    if train:
        exe.backward()
    return [(name, float(text)) for _, name, text in mon.toc()]


def _module_rows(net: str, train: bool, **monitor_args) -> list[str]:
    symbol, shape = NETS[net]()
    mod = mx.mod.Module(symbol, context=mx.cpu())
    mod.bind(data_shapes=[("data", shape)], label_shapes=[("softmax_label", (shape[0],))], for_training=train)
    mod.init_params()
    args, auxs = mod.get_params()
    _fill(args)
    mod.set_params(args, auxs)
    mon = mx.mon.Monitor(1, _stat, **monitor_args)
    mod.install_monitor(mon)
    data = mx.nd.array((np.arange(np.prod(shape)).reshape(shape) % 5) / 5.0)
    mon.tic()
    mod.forward(mx.io.DataBatch([data], [mx.nd.array([0, 2])]), is_train=train)
    if train:
        mod.backward()
    return [name for _, name, _ in mon.toc()]


def _names(rows: list[tuple[str, float]]) -> list[str]:
    return [name for name, _ in rows]


@pytest.mark.parametrize(
    ("net", "train", "expected"),
    [("mlp", True, MLP_TRAIN), ("mlp", False, MLP_INFER), ("conv", True, CONV_TRAIN), ("conv", False, CONV_INFER)],
)
def test_rows_are_outputs_then_backward_outputs_then_arguments(net, train, expected) -> None:
    assert _names(_bound_rows(net, train)) == expected


def test_a_weight_pattern_gives_the_weights_only() -> None:
    assert _names(_bound_rows("mlp", True, pattern=".*weight")) == ["fc1_weight", "fc2_weight"]
    assert _module_rows("conv", True, pattern=".*weight") == ["conv1_weight", "fc1_weight"]


@pytest.mark.parametrize("pattern", [".*output", ".*backward.*", "fc2"])
@pytest.mark.parametrize("sort", [False, True])
def test_pattern_and_sort_select_and_order_rows_as_mxnet(pattern, sort) -> None:
    expected = [name for name in MLP_TRAIN if re.match(pattern, name)]
    assert _names(_bound_rows("mlp", True, pattern=pattern, sort=sort)) == (sorted(expected) if sort else expected)


def test_backward_rows_hold_the_gradient_of_each_input() -> None:
    rows = _bound_rows("mlp", True, pattern=".*backward.*")
    assert _names(rows)[-3:] == ["fc1_backward_output0", "fc1_backward_output1", "fc1_backward_output2"]


def test_statistics_equal_mxnet_191s_for_the_same_data_and_weights() -> None:
    rows = _bound_rows("mlp", True)
    assert _names(rows) == MLP_TRAIN
    np.testing.assert_allclose([value for _, value in rows], MLP_TRAIN_STATS, rtol=2e-5, atol=1e-7)


def test_a_module_in_training_shows_no_gradient_of_its_data() -> None:
    # Module binds data without a gradient: MXNet still prints fc1_backward_output0, lazynd computes none
    assert _module_rows("mlp", True) == [name for name in MLP_TRAIN if name != "fc1_backward_output0"]
    assert _module_rows("conv", False, sort=True) == sorted(CONV_INFER)


@pytest.mark.parametrize(
    ("net", "train", "expected"),
    [("mlp", True, MLP_TRAIN_ALL), ("mlp", False, MLP_INFER_ALL + MLP_INFER[-6:]), ("conv", False, CONV_INFER_ALL)],
)
def test_monitor_all_adds_each_operators_inputs_before_its_outputs(net, train, expected) -> None:
    assert _names(_bound_rows(net, train, monitor_all=True)) == expected


def test_monitor_all_through_a_module_sorted() -> None:
    assert _module_rows("mlp", False, monitor_all=True, sort=True) == sorted(MLP_INFER_ALL + MLP_INFER[-6:])
