"""A Module on several contexts: work loads, updates on the devices, group2ctxs, averaged parameters."""

from __future__ import annotations

import numpy as np
import pytest
from blob_problem import two_class_blobs, two_class_net
from module_by_hand import host_values, start_params, trained_by_hand

import lazynd as mx
import lazynd_sym as sym
from lazynd.errors import DataError, LazyNDError


def test_two_cpu_contexts_with_a_work_load_list_train_as_one() -> None:
    one = host_values(trained_by_hand(mx.cpu()).get_params()[0])
    mod = trained_by_hand([mx.cpu(0), mx.cpu(1)], work_load_list=[1, 3])
    assert [exe.arg_dict["data"].shape[0] for exe in mod._exec_group.execs] == [10, 30]
    two = host_values(mod.get_params()[0])
    for name in one:
        np.testing.assert_allclose(two[name], one[name], rtol=1e-4, atol=1e-5, err_msg=name)


def test_two_contexts_with_the_updater_on_the_devices_train_as_one() -> None:
    one = host_values(trained_by_hand(mx.cpu()).get_params()[0])
    mod = trained_by_hand([mx.cpu(0), mx.cpu(1)], kvstore=_SumOnlyStore())
    assert mod._updater is not None  # a store without set_optimizer only sums: each device updates its copy
    two = host_values(mod.get_params()[0])
    for name in one:
        np.testing.assert_allclose(two[name], one[name], rtol=1e-4, atol=1e-5, err_msg=name)


class _SumOnlyStore:
    """A store that sums pushed gradients and hands the sum back: no optimizer of its own."""

    def __init__(self) -> None:
        self.values: dict = {}

    def init(self, keys, values) -> None:
        for key, value in zip(keys, values, strict=True):
            self.values[key] = value.copy()

    def push(self, keys, values) -> None:
        for key, per_device in zip(keys, values, strict=True):
            total = per_device[0].copyto(mx.cpu())
            for value in per_device[1:]:
                total += value.copyto(mx.cpu())
            self.values[key] = total

    def pull(self, keys, outs) -> None:
        for key, per_device in zip(keys, outs, strict=True):
            for out in per_device:
                self.values[key].copyto(out)


def test_the_stages_on_each_context_give_the_cpu_numbers(ctx) -> None:
    expected = host_values(trained_by_hand(mx.cpu()).get_params()[0])
    mod = trained_by_hand(ctx)
    assert mod._exec_group.execs[0].arg_dict["fc1_weight"].context == ctx
    for name, value in host_values(mod.get_params()[0]).items():
        np.testing.assert_allclose(value, expected[name], rtol=1e-4, atol=1e-5, err_msg=name)


def _two_stage_net() -> sym.Symbol:
    with sym.AttrScope(ctx_group="stage1"):
        net = sym.Activation(sym.FullyConnected(sym.Variable("data"), num_hidden=16, name="fc1"), act_type="relu")
    with sym.AttrScope(ctx_group="stage2"):
        return sym.SoftmaxOutput(sym.FullyConnected(net, num_hidden=2, name="fc2"), name="softmax")


@pytest.mark.parametrize(
    "group2ctxs",
    [
        {"stage1": mx.cpu(2), "stage2": mx.cpu(3)},
        {"stage1": [mx.cpu(2), mx.cpu(4)], "stage2": mx.cpu(3)},
        [{"stage1": mx.cpu(2), "stage2": mx.cpu(3)}, {"stage1": mx.cpu(4), "stage2": mx.cpu(5)}],
    ],
    ids=["one-context-each", "a-list-per-group", "a-dict-per-device"],
)
def test_group2ctxs_places_the_stages_and_trains_as_one_device(group2ctxs) -> None:
    # MXNet 1.x's Module(group2ctxs=): lazynd's Module did not take it
    data, label = two_class_blobs(16)
    placed = mx.mod.Module(_two_stage_net(), context=[mx.cpu(0), mx.cpu(1)], group2ctxs=group2ctxs)
    plain = mx.mod.Module(_two_stage_net(), context=[mx.cpu(0), mx.cpu(1)])
    for mod in (placed, plain):
        mod.fit(mx.io.NDArrayIter(data, label, batch_size=8), num_epoch=2, arg_params=start_params())
    first = placed._exec_group.execs[0]
    assert first.arg_dict["fc1_weight"].context == mx.cpu(2) and first.arg_dict["fc2_weight"].context == mx.cpu(3)
    for name, value in plain.get_params()[0].items():
        np.testing.assert_allclose(placed.get_params()[0][name].asnumpy(), value.asnumpy(), rtol=1e-5, err_msg=name)


def test_group2ctxs_of_the_wrong_length_and_compression_params_are_refused() -> None:
    with pytest.raises(DataError, match="group2ctxs has 1 entries for 2 contexts"):
        mx.mod.Module(_two_stage_net(), context=[mx.cpu(0), mx.cpu(1)], group2ctxs=[{}])
    with pytest.raises(DataError, match=r"group2ctxs\['stage1'\] has 3 contexts"):
        mx.mod.Module(_two_stage_net(), context=[mx.cpu(0), mx.cpu(1)], group2ctxs={"stage1": [mx.cpu(0)] * 3})
    with pytest.raises(LazyNDError, match="compression_params .* is not supported"):
        mx.mod.Module(_two_stage_net(), compression_params={"type": "2bit"})


def test_get_params_averages_the_devices_copies_when_each_updates_its_own() -> None:
    # kvstore=None on several devices: each device updates its copy from its own slice of the
    # batch, so the copies part; MXNet 1.9.1's get_params hands out their mean
    data, label = two_class_blobs(count=8)
    mod = mx.mod.Module(two_class_net(), context=[mx.cpu(0), mx.cpu(1)])
    mod.bind(data_shapes=[("data", (8, 5))], label_shapes=[("softmax_label", (8,))])
    mod.init_params(arg_params=start_params())
    mod.init_optimizer(kvstore=None, optimizer_params={"learning_rate": 0.5})
    mod.forward(mx.io.DataBatch([mx.nd.array(data)], [mx.nd.array(label)]), is_train=True)
    mod.backward()
    mod.update()
    group = mod._exec_group
    copies = {
        name: [a.asnumpy() for a in arrays] for name, arrays in zip(group.param_names, group.param_arrays, strict=True)
    }
    assert not np.allclose(*copies["fc2_bias"])
    params = host_values(mod.get_params()[0])
    for name, (first, second) in copies.items():
        np.testing.assert_allclose(params[name], (first + second) / 2, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("kvstore", ["local", "object"])
def test_init_optimizer_again_starts_the_store_from_the_trained_weights(kvstore) -> None:
    # MXNet 1.9.1 syncs the devices' parameters to the host before filling a new store; a store filled
    # from the host copy of before training pulls the untrained weights back into the devices
    data, label = two_class_blobs(8)
    batch = mx.io.DataBatch(data=[mx.nd.array(data)], label=[mx.nd.array(label)])
    mod = mx.mod.Module(two_class_net(), context=[mx.cpu(0), mx.cpu(1)])
    mod.bind(data_shapes=[("data", data.shape)], label_shapes=[("softmax_label", label.shape)])
    mod.init_params(arg_params=start_params(), aux_params={})

    def init_optimizer(**kwargs):
        store = mx.kv.create("local") if kvstore == "object" else kvstore
        mod.init_optimizer(kvstore=store, optimizer="sgd", optimizer_params={"learning_rate": 0.5}, **kwargs)

    init_optimizer()
    mod.forward_backward(batch)
    mod.update()
    group = mod._exec_group
    trained = [copies[0].asnumpy().copy() for copies in group.param_arrays]
    init_optimizer(force_init=True)
    for name, copies, value in zip(group.param_names, group.param_arrays, trained, strict=True):
        for copy in copies:
            np.testing.assert_array_equal(copy.asnumpy(), value, err_msg=name)
