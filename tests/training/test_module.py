"""mx.mod.Module: the stages by hand, fit, inference, several contexts, fixed parameters, MXNet 1.9.1 numbers."""

from __future__ import annotations

import logging

import numpy as np
import pytest

import lazynd as mx
import lazynd_sym as sym
from lazynd.errors import ContextError, DataError, LazyNDError
from lazynd_sym.model import FeedForward


def _net(num_classes: int = 2) -> sym.Symbol:
    net = sym.FullyConnected(sym.Variable("data"), num_hidden=16, name="fc1")
    net = sym.Activation(net, act_type="relu", name="relu1")
    net = sym.FullyConnected(net, num_hidden=num_classes, name="fc2")
    return sym.SoftmaxOutput(net, name="softmax")


def _blobs(count: int = 400, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    label = rng.integers(0, 2, count)
    data = rng.normal(size=(count, 5)).astype(np.float32) + (label[:, None] * 2.0 - 1.0) * 1.5
    return data, label.astype(np.float32)


def _start_params(seed: int = 1) -> dict[str, mx.NDArray]:
    rng = np.random.default_rng(seed)
    shapes = {"fc1_weight": (16, 5), "fc1_bias": (16,), "fc2_weight": (2, 16), "fc2_bias": (2,)}
    return {name: mx.nd.array(rng.normal(scale=0.3, size=shape).astype(np.float32)) for name, shape in shapes.items()}


def _host(params: dict) -> dict[str, np.ndarray]:
    return {name: value.asnumpy() for name, value in params.items()}


def _trained_by_hand(context, work_load_list=None, kvstore="local", steps: int = 6, **module_kwargs) -> mx.mod.Module:
    data, label = _blobs(240)
    batches = mx.io.NDArrayIter(data, label, batch_size=40, shuffle=False)
    mod = mx.mod.Module(_net(), context=context, work_load_list=work_load_list, **module_kwargs)
    mod.bind(batches.provide_data, batches.provide_label)
    mod.init_params(arg_params=_start_params())
    mod.init_optimizer(kvstore=kvstore, optimizer="sgd", optimizer_params={"learning_rate": 0.1, "momentum": 0.9})
    for batch in list(batches)[:steps]:
        mod.forward(batch, is_train=True)
        mod.backward()
        mod.update()
    return mod


# -- the stages by hand --------------------------------------------------------------------------
def test_forward_backward_update_by_hand_equals_feedforward_fit() -> None:
    data, label = _blobs(240)
    mod = _trained_by_hand(mx.cpu())
    ff = FeedForward(
        _net(), num_epoch=1, learning_rate=0.1, momentum=0.9, arg_params=_start_params(), progress_bar=False
    )
    ff.fit(mx.io.NDArrayIter(data, label, batch_size=40, shuffle=False))
    ours = _host(mod.get_params()[0])
    for name, value in _host(ff.arg_params).items():
        np.testing.assert_allclose(ours[name], value, rtol=1e-5, atol=1e-6, err_msg=name)


def test_updates_equal_mxnet_1_9_1() -> None:
    # MXNet 1.9.1's Module on this net, data and starting point, after two epochs (four updates):
    # sgd, learning_rate 0.5, momentum 0.9, wd 0.01, batches of 4 (the last one padded)
    net = sym.FullyConnected(sym.Variable("data"), num_hidden=3, name="fc1")
    net = sym.Activation(net, act_type="relu", name="relu1")
    net = sym.SoftmaxOutput(sym.FullyConnected(net, num_hidden=2, name="fc2"), name="softmax")
    data = np.arange(24, dtype=np.float32).reshape(6, 4) / 10 - 1
    batches = mx.io.NDArrayIter(data, np.array([0, 1, 1, 0, 1, 0], np.float32), batch_size=4, last_batch_handle="pad")
    mod = mx.mod.Module(net)
    mod.bind(batches.provide_data, batches.provide_label)
    start = {
        "fc1_weight": (np.arange(12, dtype=np.float32).reshape(3, 4) % 5 - 2) / 4,
        "fc1_bias": np.array([0.1, -0.1, 0.2], np.float32),
        "fc2_weight": (np.arange(6, dtype=np.float32).reshape(2, 3) % 4 - 1.5) / 3,
        "fc2_bias": np.array([0.0, 0.05], np.float32),
    }
    mod.init_params(arg_params={k: mx.nd.array(v) for k, v in start.items()})
    mod.init_optimizer(optimizer_params={"learning_rate": 0.5, "momentum": 0.9, "wd": 0.01})
    for _ in range(2):
        batches.reset()
        for batch in batches:
            mod.forward_backward(batch)
            mod.update()
    params = _host(mod.get_params()[0])
    np.testing.assert_allclose(params["fc1_bias"], [-0.05748915, -0.00177349, 0.22578296], atol=1e-6)
    np.testing.assert_allclose(params["fc2_bias"], [0.13900387, -0.08900385], atol=1e-6)
    np.testing.assert_allclose(
        params["fc2_weight"], [[-0.35874516, -0.08991244, 0.16831182], [0.35874522, -0.5468208, -0.16831182]], atol=1e-6
    )
    np.testing.assert_allclose(params["fc1_weight"][0], [-0.2882144, -0.06495511, 0.15830415, 0.38156343], atol=1e-6)
    # score counts the padded examples, as MXNet's does; the format is get_name_value()
    assert mod.score(batches, ["acc", "ce"]) == [
        ("accuracy", 0.5),
        ("cross-entropy", pytest.approx(0.6987348, abs=1e-6)),
    ]
    probs = mod.predict(batches)
    assert isinstance(probs, mx.NDArray) and probs.shape == (6, 2)
    np.testing.assert_allclose(probs.asnumpy()[[0, 5]], [[0.64686835, 0.35313168], [0.5087779, 0.4912221]], atol=1e-6)


def test_names_and_shapes_are_mxnets() -> None:
    mod = mx.mod.Module(_net())
    assert (mod.data_names, mod.label_names, mod.output_names) == (["data"], ["softmax_label"], ["softmax_output"])
    mod.bind(data_shapes=[("data", (8, 5))], label_shapes=[("softmax_label", (8,))])
    assert [tuple(d) for d in mod.data_shapes] == [("data", (8, 5))]
    assert [tuple(d) for d in mod.label_shapes] == [("softmax_label", (8,))]
    assert mod.output_shapes == [("softmax_output", (8, 2))]
    mod.init_params()
    arg_params, aux_params = mod.get_params()
    assert sorted((k, v.shape) for k, v in arg_params.items()) == [
        ("fc1_bias", (16,)), ("fc1_weight", (16, 5)), ("fc2_bias", (2,)), ("fc2_weight", (2, 16)),
    ]  # fmt: skip
    assert aux_params == {}


def test_get_outputs_and_input_grads_equal_an_executor() -> None:
    data, label = _blobs(8)
    mod = mx.mod.Module(_net())
    mod.bind([("data", (8, 5))], [("softmax_label", (8,))], inputs_need_grad=True)
    mod.init_params(arg_params=_start_params())
    mod.forward(mx.io.DataBatch([mx.nd.array(data)], [mx.nd.array(label)]), is_train=True)
    mod.backward()
    exe = _net().simple_bind(mx.cpu(), data=(8, 5))
    exe.copy_params_from(_start_params())
    exe.forward(is_train=True, data=mx.nd.array(data), softmax_label=mx.nd.array(label))
    exe.backward()
    np.testing.assert_allclose(mod.get_outputs()[0].asnumpy(), exe.outputs[0].asnumpy(), rtol=1e-6)
    np.testing.assert_allclose(mod.get_input_grads()[0].asnumpy(), exe.grad_dict["data"].asnumpy(), rtol=1e-5)


def test_backward_takes_gradients_of_outputs_that_are_not_losses() -> None:
    net = sym.FullyConnected(sym.Variable("data"), num_hidden=2, name="fc")
    mod = mx.mod.Module(net, label_names=None, context=[mx.cpu(0), mx.cpu(1)])
    mod.bind([("data", (4, 3))], inputs_need_grad=True)
    mod.init_params(arg_params={"fc_weight": mx.nd.ones((2, 3)), "fc_bias": mx.nd.zeros((2,))})
    mod.forward(mx.io.DataBatch([mx.nd.ones((4, 3))]), is_train=True)
    mod.backward(out_grads=[mx.nd.array(np.arange(8, dtype=np.float32).reshape(4, 2))])
    expected = np.arange(8, dtype=np.float32).reshape(4, 2) @ np.ones((2, 3), np.float32)
    np.testing.assert_allclose(mod.get_input_grads()[0].asnumpy(), expected)


# -- fit ----------------------------------------------------------------------------------------
def test_fit_learns_and_logs_train_and_validation_metrics(caplog) -> None:
    mx.random.seed(0)
    data, label = _blobs()
    train = mx.io.NDArrayIter(data, label, batch_size=40, shuffle=True)
    val = mx.io.NDArrayIter(*_blobs(200, seed=1), batch_size=50)
    mod = mx.mod.Module(_net())
    with caplog.at_level(logging.INFO):
        mod.fit(
            train,
            eval_data=val,
            num_epoch=4,
            initializer=mx.init.Xavier(),
            optimizer_params={"learning_rate": 0.1, "momentum": 0.9},
        )
    messages = [r.getMessage() for r in caplog.records]
    assert any(m.startswith("Epoch[3] Train-accuracy=") for m in messages)
    assert any(m.startswith("Epoch[3] Validation-accuracy=") for m in messages)
    assert mod.score(val, "acc")[0][1] > 0.95


def test_fit_calls_callbacks_from_begin_epoch() -> None:
    data, label = _blobs(80)
    seen_batches, seen_epochs = [], []
    mx.mod.Module(_net()).fit(
        mx.io.NDArrayIter(data, label, batch_size=40),
        begin_epoch=2,
        num_epoch=4,
        batch_end_callback=lambda p: seen_batches.append((p.epoch, p.nbatch)),
        epoch_end_callback=lambda epoch, s, arg, aux: seen_epochs.append((epoch, sorted(arg), s.list_outputs())),
    )
    assert seen_batches == [(2, 0), (2, 1), (3, 0), (3, 1)]
    assert seen_epochs[-1] == (3, ["fc1_bias", "fc1_weight", "fc2_bias", "fc2_weight"], ["softmax_output"])


def test_fixed_params_stay_fixed_and_the_others_learn() -> None:
    mod = _trained_by_hand(mx.cpu(), fixed_param_names=["fc1_weight"])
    start, now = _host(_start_params()), _host(mod.get_params()[0])
    np.testing.assert_array_equal(now["fc1_weight"], start["fc1_weight"])
    for name in ("fc1_bias", "fc2_weight", "fc2_bias"):
        assert not np.allclose(now[name], start[name]), name
    assert mod._exec_group.execs[0].grad_dict.get("fc1_weight") is None


def test_two_cpu_contexts_with_a_work_load_list_train_as_one() -> None:
    one = _host(_trained_by_hand(mx.cpu()).get_params()[0])
    mod = _trained_by_hand([mx.cpu(0), mx.cpu(1)], work_load_list=[1, 3])
    assert [exe.arg_dict["data"].shape[0] for exe in mod._exec_group.execs] == [10, 30]
    two = _host(mod.get_params()[0])
    for name in one:
        np.testing.assert_allclose(two[name], one[name], rtol=1e-4, atol=1e-5, err_msg=name)


def test_two_contexts_with_the_updater_on_the_devices_train_as_one() -> None:
    one = _host(_trained_by_hand(mx.cpu()).get_params()[0])
    mod = _trained_by_hand([mx.cpu(0), mx.cpu(1)], kvstore=_SumOnlyStore())
    assert mod._updater is not None  # a store without set_optimizer only sums: each device updates its copy
    two = _host(mod.get_params()[0])
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


def test_install_monitor_records_outputs() -> None:
    mod = mx.mod.Module(_net())
    mod.bind([("data", (4, 5))], [("softmax_label", (4,))])
    mod.init_params()
    mon = mx.mon.Monitor(1, pattern="fc1_output")
    mod.install_monitor(mon)
    mon.tic()
    mod.forward(mx.io.DataBatch([mx.nd.ones((4, 5))], [mx.nd.zeros((4,))]), is_train=False)
    assert [name for _, name, _ in mon.toc()] == ["fc1_output"]


# -- inference ----------------------------------------------------------------------------------
def test_predict_and_iter_predict_remove_padding() -> None:
    mod = _trained_by_hand(mx.cpu(), steps=2)
    data, _ = _blobs(45, seed=3)
    batches = mx.io.NDArrayIter(data, batch_size=20, last_batch_handle="pad")
    probs = mod.predict(batches)
    assert probs.shape == (45, 2)
    np.testing.assert_allclose(probs.asnumpy().sum(axis=1), 1.0, rtol=1e-5)
    parts = [(outputs[0].asnumpy(), nbatch) for outputs, nbatch, _ in mod.iter_predict(batches)]
    assert [(p.shape[0], n) for p, n in parts] == [(20, 0), (20, 1), (5, 2)]
    np.testing.assert_allclose(np.concatenate([p for p, _ in parts]), probs.asnumpy())
    per_batch = mod.predict(batches, merge_batches=False)
    assert [[o.shape for o in outputs] for outputs in per_batch] == [[(20, 2)], [(20, 2)], [(5, 2)]]
    assert isinstance(mod.predict(batches, always_output_list=True), list)


def test_score_returns_name_value_pairs_of_the_metric() -> None:
    mod = _trained_by_hand(mx.cpu())
    data, label = _blobs(80, seed=4)
    batches = mx.io.NDArrayIter(data, label, batch_size=40)
    probs = mod.predict(batches).asnumpy()
    expected = float(np.mean(probs.argmax(axis=1) == label))
    assert mod.score(batches, "acc") == [("accuracy", pytest.approx(expected))]
    assert mod.score(batches, "acc", num_batch=1)[0][1] == pytest.approx(np.mean(probs[:40].argmax(1) == label[:40]))


# -- errors -------------------------------------------------------------------------------------
def test_stages_out_of_order_raise_clear_errors() -> None:
    mod = mx.mod.Module(_net())
    batch = mx.io.DataBatch([mx.nd.ones((4, 5))], [mx.nd.zeros((4,))])
    with pytest.raises(LazyNDError, match="forward: call bind\\(\\) first"):
        mod.forward(batch)
    mod.bind([("data", (4, 5))], [("softmax_label", (4,))])
    with pytest.raises(LazyNDError, match="call init_params\\(\\) first"):
        mod.forward(batch)
    mod.init_params()
    with pytest.raises(LazyNDError, match="update: call init_optimizer\\(\\) first"):
        mod.update()


def test_bad_arguments_raise_clear_errors() -> None:
    with pytest.raises(DataError, match="data_names \\['image'\\] are not arguments"):
        mx.mod.Module(_net(), data_names=["image"])
    with pytest.raises(DataError, match="fixed_param_names \\['fc9_weight'\\] are not parameters"):
        mx.mod.Module(_net(), fixed_param_names=["fc9_weight"])
    with pytest.raises(ContextError, match="context must be a Context"):
        mx.mod.Module(_net(), context="cpu")
    with pytest.raises(DataError, match="work_load_list has 1 entries for 2 contexts"):
        mx.mod.Module(_net(), context=[mx.cpu(0), mx.cpu(1)], work_load_list=[1])
    mod = mx.mod.Module(_net())
    with pytest.raises(DataError, match="data_shapes name \\['x'\\], the module's data_names are \\['data'\\]"):
        mod.bind([("x", (4, 5))])
    mod.bind([("data", (4, 5))], [("softmax_label", (4,))])
    with pytest.raises(DataError, match="'fc1_weight' is not in the given parameters"):
        mod.init_params(arg_params={"fc2_weight": mx.nd.zeros((2, 16))})
    with pytest.raises(LazyNDError, match="'fc1_weight' is given with shape \\(3, 3\\), the module needs \\(16, 5\\)"):
        mod.init_params(arg_params={"fc1_weight": mx.nd.zeros((3, 3))}, allow_missing=True)
    with pytest.raises(DataError, match="num_epoch is required"):
        mod.fit(mx.io.NDArrayIter(*_blobs(8), batch_size=4))


def test_forward_refuses_what_is_not_a_batch_of_all_its_inputs() -> None:
    # a list of arrays once failed inside with AttributeError; a batch short of an input left it stale
    mod = mx.mod.Module(_net())
    mod.bind([("data", (4, 5))], [("softmax_label", (4,))])
    mod.init_params()
    with pytest.raises(DataError, match="Module.forward: expected a DataBatch .*got list"):
        mod.forward([mx.nd.ones((4, 5))])
    two = mx.mod.Module(sym.Variable("a") + sym.Variable("b"), data_names=["a", "b"], label_names=None)
    two.bind([("a", (2,)), ("b", (2,))], for_training=False)
    two.init_params()
    with pytest.raises(DataError, match=r"the batch holds 1 data array\(s\), the module takes 2 \(\['a', 'b'\]\)"):
        two.forward(mx.io.DataBatch([mx.nd.ones((2,))]))


def test_set_params_takes_numpy_values_and_refuses_other_types_by_name() -> None:
    # a NumPy value once failed inside with AttributeError ('copyto')
    mod = mx.mod.Module(_net())
    mod.bind([("data", (4, 5))], [("softmax_label", (4,))])
    host = _host(_start_params())
    mod.set_params(host, {})
    np.testing.assert_array_equal(mod.get_params()[0]["fc2_weight"].asnumpy(), host["fc2_weight"])
    with pytest.raises(DataError, match="'fc1_bias' is given as list; expected an NDArray"):
        mod.set_params({**host, "fc1_bias": [0.0] * 16}, {})


def test_a_batch_of_another_size_runs_on_the_same_parameters() -> None:
    mod = _trained_by_hand(mx.cpu(), steps=2)
    data, _ = _blobs(7, seed=5)
    mod.forward(mx.io.DataBatch([mx.nd.array(data)]), is_train=False)
    assert mod.get_outputs()[0].shape == (7, 2) and mod.output_shapes == [("softmax_output", (7, 2))]
    exe = _net().simple_bind(mx.cpu(), data=(7, 5))
    exe.copy_params_from(mod.get_params()[0])
    np.testing.assert_allclose(
        mod.get_outputs()[0].asnumpy(), exe.forward(data=mx.nd.array(data))[0].asnumpy(), rtol=1e-6
    )
    assert mod._exec_group.param_arrays[0][0] is mod._groups[next(iter(mod._groups))].param_arrays[0][0]


def test_the_stages_on_each_context_give_the_cpu_numbers(ctx) -> None:
    expected = _host(_trained_by_hand(mx.cpu()).get_params()[0])
    mod = _trained_by_hand(ctx)
    assert mod._exec_group.execs[0].arg_dict["fc1_weight"].context == ctx
    for name, value in _host(mod.get_params()[0]).items():
        np.testing.assert_allclose(value, expected[name], rtol=1e-4, atol=1e-5, err_msg=name)


def test_data_names_in_another_order_than_the_iterator_s_bind_and_train_alike():
    # MXNet checks the names, not their order: batches follow the iterator's (bind's) order
    rng = np.random.default_rng(0)
    a, b = rng.uniform(-1, 1, (12, 3)), rng.uniform(-1, 1, (12, 2))
    label = (a[:, 0] > b[:, 0]).astype(np.float32)
    net = mx.sym.Concat(mx.sym.var("a"), mx.sym.var("b"), dim=1)
    net = mx.sym.SoftmaxOutput(mx.sym.FullyConnected(net, num_hidden=2, name="fc"), mx.sym.var("lab"), name="sm")
    weight = rng.uniform(-0.3, 0.3, (2, 5))
    trained = []
    for names in (["b", "a"], ["a", "b"]):
        it = mx.io.NDArrayIter({"a": a, "b": b}, {"lab": label}, batch_size=4)
        mod = mx.mod.Module(net, data_names=names, label_names=["lab"])
        params = {"fc_weight": mx.nd.array(weight), "fc_bias": mx.nd.zeros(2)}
        mod.fit(it, num_epoch=2, optimizer_params={"learning_rate": 0.3}, arg_params=params)
        trained.append(mod.get_params()[0]["fc_weight"].asnumpy())
    np.testing.assert_allclose(trained[0], trained[1], rtol=1e-6)
    with pytest.raises(mx.LazyNDError, match="data_names"):
        mx.mod.Module(net, data_names=["a", "b"], label_names=["lab"]).bind([("a", (4, 3))], [("lab", (4,))])


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
    data, label = _blobs(16)
    placed = mx.mod.Module(_two_stage_net(), context=[mx.cpu(0), mx.cpu(1)], group2ctxs=group2ctxs)
    plain = mx.mod.Module(_two_stage_net(), context=[mx.cpu(0), mx.cpu(1)])
    for mod in (placed, plain):
        mod.fit(mx.io.NDArrayIter(data, label, batch_size=8), num_epoch=2, arg_params=_start_params())
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


def test_an_optimizer_by_name_numbers_the_updater_as_feedforward_does() -> None:
    # Module and FeedForward make an optimizer named by a string with one function
    # (kvstore_setup.create_optimizer): copy k of parameter i is index i * copies + k
    from lazynd_sym.model.kvstore_setup import create_optimizer

    made = create_optimizer("sgd", {"learning_rate": 0.1}, None, ["w", "b"], copies=2, batch_size=4)
    assert made.idx2name == {0: "w", 1: "w", 2: "b", 3: "b"}
    assert made.rescale_grad == 0.25
    mod = mx.mod.Module(_net(), context=[mx.cpu(0), mx.cpu(1)])
    mod.bind(data_shapes=[("data", (8, 4))], label_shapes=[("softmax_label", (8,))])
    mod.init_params()
    mod.init_optimizer(kvstore="local_allreduce_cpu", optimizer="sgd", optimizer_params={"learning_rate": 0.1})
    names = mod._exec_group.param_names
    assert mod._optimizer.idx2name == {i * 2 + k: n for i, n in enumerate(names) for k in range(2)}
    assert mod._optimizer.rescale_grad == 1.0 / 8


def test_get_params_averages_the_devices_copies_when_each_updates_its_own() -> None:
    # kvstore=None on several devices: each device updates its copy from its own slice of the
    # batch, so the copies part; MXNet 1.9.1's get_params hands out their mean
    data, label = _blobs(count=8)
    mod = mx.mod.Module(_net(), context=[mx.cpu(0), mx.cpu(1)])
    mod.bind(data_shapes=[("data", (8, 5))], label_shapes=[("softmax_label", (8,))])
    mod.init_params(arg_params=_start_params())
    mod.init_optimizer(kvstore=None, optimizer_params={"learning_rate": 0.5})
    mod.forward(mx.io.DataBatch([mx.nd.array(data)], [mx.nd.array(label)]), is_train=True)
    mod.backward()
    mod.update()
    group = mod._exec_group
    copies = {
        name: [a.asnumpy() for a in arrays] for name, arrays in zip(group.param_names, group.param_arrays, strict=True)
    }
    assert not np.allclose(*copies["fc2_bias"])
    params = _host(mod.get_params()[0])
    for name, (first, second) in copies.items():
        np.testing.assert_allclose(params[name], (first + second) / 2, rtol=1e-6, atol=1e-7)


def _two_output_module(with_label: bool = True) -> tuple[mx.mod.Module, mx.io.NDArrayIter]:
    """A softmax head ``sa`` (labelled) and a loss head ``lb`` of known per-row sums 1.38."""
    data = sym.Variable("data")
    heads = [sym.MakeLoss(sym.sum(sym.FullyConnected(data, num_hidden=2, name="fb"), axis=1), name="lb")]
    if with_label:
        heads.insert(0, sym.SoftmaxOutput(sym.FullyConnected(data, num_hidden=3, name="fa"), name="sa"))
    mod = mx.mod.Module(sym.Group(heads), label_names=["sa_label"] if with_label else None)
    features = np.arange(24, dtype=np.float32).reshape(4, 6) / 10
    label = {"sa_label": np.array([0, 1, 2, 1], np.float32)} if with_label else None
    it = mx.io.NDArrayIter(features, label, batch_size=4)
    mod.bind(data_shapes=it.provide_data, label_shapes=it.provide_label)
    mod.init_params(mx.init.Constant(0.1))
    return mod, it


def test_metrics_pick_the_outputs_they_name() -> None:
    # MXNet 1.9.1 hands a metric every output by name; lazynd gave the first outputs, one per label
    mod, it = _two_output_module()
    loss = mx.metric.Loss(output_names=["lb_output"])
    assert mod.score(it, loss) == [("loss", pytest.approx(1.38, rel=1e-5))]
    both = mx.metric.create(
        [mx.metric.Accuracy(output_names=["sa_output"]), mx.metric.Loss(output_names=["lb_output"])]
    )
    assert mod.score(it, both) == [("accuracy", 0.25), ("loss", pytest.approx(1.38, rel=1e-5))]


def test_a_loss_metric_scores_a_module_without_labels() -> None:
    # MXNet 1.9.1 raises a TypeError here; lazynd gave NaN
    mod, it = _two_output_module(with_label=False)
    assert mod.score(it, "loss") == [("loss", pytest.approx(1.38, rel=1e-5))]


def test_a_metric_naming_an_output_the_module_lacks_is_refused_by_name() -> None:
    mod, it = _two_output_module()
    with pytest.raises(LazyNDError, match=r"output_names \['nope'\] not among"):
        mod.score(it, mx.metric.Accuracy(output_names=["nope"]))


def test_an_optimizer_object_gets_the_parameter_names_so_its_multipliers_apply() -> None:
    # MXNet 1.9.1 gives an Optimizer made outside the Module the index -> name map it builds, so
    # set_lr_mult({'fc1_weight': 0}) freezes fc1_weight; lazynd ignored the names
    data, label = _blobs(count=8)
    for contexts in ([mx.cpu()], [mx.cpu(0), mx.cpu(1)]):
        mod = mx.mod.Module(_net(), context=contexts)
        mod.bind(data_shapes=[("data", (8, 5))], label_shapes=[("softmax_label", (8,))])
        start = _start_params()
        mod.init_params(arg_params=start)
        opt = mx.optimizer.SGD(learning_rate=0.5, rescale_grad=1 / 8)
        opt.set_lr_mult({"fc1_weight": 0.0})
        mod.init_optimizer(kvstore="local", optimizer=opt)
        mod.forward(mx.io.DataBatch([mx.nd.array(data)], [mx.nd.array(label)]), is_train=True)
        mod.backward()
        mod.update()
        params = _host(mod.get_params()[0])
        np.testing.assert_array_equal(params["fc1_weight"], start["fc1_weight"].asnumpy())
        assert not np.allclose(params["fc2_weight"], start["fc2_weight"].asnumpy())


def test_an_optimizer_object_whose_rescale_grad_is_not_one_over_the_batch_is_warned_about() -> None:
    mod = mx.mod.Module(_net())
    mod.bind(data_shapes=[("data", (8, 5))], label_shapes=[("softmax_label", (8,))])
    mod.init_params()
    with pytest.warns(UserWarning, match=r"rescale_grad is 1.0, not 1/batch_size = 0.125"):
        mod.init_optimizer(optimizer=mx.optimizer.SGD())
