"""A Module's executor group under MXNet 1.x's name and signature, with MXNet's shared buffer of inputs."""

from __future__ import annotations

import lazynd as mx
import lazynd_sym as sym
from lazynd.test_utils import same_array
from lazynd_sym.module.executor_group import DataParallelExecutorGroup


def _net(layers: int) -> sym.Symbol:
    net = sym.Variable("data")
    for k in range(layers):
        net = sym.FullyConnected(net, num_hidden=3, name=f"fc{k}")
    return sym.LinearRegressionOutput(net, name="out")


def _group(layers: int, param_names: list[str], shared_group=None) -> DataParallelExecutorGroup:
    return DataParallelExecutorGroup(
        symbol=_net(layers),
        contexts=[mx.cpu(0), mx.cpu(1)],
        workload=[1, 1],
        data_shapes=[("data", (4, 3))],
        label_shapes=[("out_label", (4, 3))],
        param_names=param_names,
        for_training=True,
        inputs_need_grad=False,
        shared_group=shared_group,
    )


def test_the_mxnet_1x_signature_builds_a_module_group_from_name_shape_pairs() -> None:
    group = _group(1, ["fc0_weight", "fc0_bias"])
    assert [exe.arg_dict["data"].shape for exe in group.execs] == [(2, 3), (2, 3)]
    assert group.grad_req == {"data": "null", "fc0_weight": "write", "fc0_bias": "write", "out_label": "null"}


def test_inputs_live_in_shared_data_arrays_one_dict_per_device() -> None:
    group = _group(1, ["fc0_weight", "fc0_bias"])
    for exe, arrays in zip(group.execs, group.shared_data_arrays, strict=True):
        assert sorted(arrays) == ["data", "out_label"]
        assert same_array(arrays["data"], exe.arg_dict["data"])


def test_a_group_sharing_another_reuses_its_inputs_and_adds_its_other_arguments_to_the_same_buffer() -> None:
    params = ["fc0_weight", "fc0_bias"]
    first = _group(1, params)
    second = _group(2, params, shared_group=first)
    assert second.shared_data_arrays is first.shared_data_arrays
    for one, two, arrays in zip(first.execs, second.execs, first.shared_data_arrays, strict=True):
        assert same_array(one.arg_dict["data"], two.arg_dict["data"])
        assert same_array(one.arg_dict["fc0_weight"], two.arg_dict["fc0_weight"])
        assert same_array(one.grad_dict["fc0_weight"], two.grad_dict["fc0_weight"])
        assert sorted(arrays) == ["data", "fc1_bias", "fc1_weight", "out_label"]  # fc1 is not a parameter here
