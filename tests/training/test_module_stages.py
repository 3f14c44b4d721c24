"""Module stages by hand: names and shapes, forward, backward and update against FeedForward and MXNet 1.9.1."""

from __future__ import annotations

import numpy as np
import pytest
from blob_problem import two_class_blobs, two_class_net
from module_by_hand import host_values, start_params, trained_by_hand

import lazynd as mx
import lazynd_sym as sym
from lazynd_sym.model import FeedForward


def test_forward_backward_update_by_hand_equals_feedforward_fit() -> None:
    data, label = two_class_blobs(240)
    mod = trained_by_hand(mx.cpu())
    ff = FeedForward(
        two_class_net(), num_epoch=1, learning_rate=0.1, momentum=0.9, arg_params=start_params(), progress_bar=False
    )
    ff.fit(mx.io.NDArrayIter(data, label, batch_size=40, shuffle=False))
    ours = host_values(mod.get_params()[0])
    for name, value in host_values(ff.arg_params).items():
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
    params = host_values(mod.get_params()[0])
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
    mod = mx.mod.Module(two_class_net())
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
    data, label = two_class_blobs(8)
    mod = mx.mod.Module(two_class_net())
    mod.bind([("data", (8, 5))], [("softmax_label", (8,))], inputs_need_grad=True)
    mod.init_params(arg_params=start_params())
    mod.forward(mx.io.DataBatch([mx.nd.array(data)], [mx.nd.array(label)]), is_train=True)
    mod.backward()
    exe = two_class_net().simple_bind(mx.cpu(), data=(8, 5))
    exe.copy_params_from(start_params())
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


def test_fixed_params_stay_fixed_and_the_others_learn() -> None:
    mod = trained_by_hand(mx.cpu(), fixed_param_names=["fc1_weight"])
    start, now = host_values(start_params()), host_values(mod.get_params()[0])
    np.testing.assert_array_equal(now["fc1_weight"], start["fc1_weight"])
    for name in ("fc1_bias", "fc2_weight", "fc2_bias"):
        assert not np.allclose(now[name], start[name]), name
    assert mod._exec_group.execs[0].grad_dict.get("fc1_weight") is None


def test_fixed_param_names_may_name_every_argument_inputs_included() -> None:
    # MXNet-SSD's evaluate_net.py: Module(net, fixed_param_names=net.list_arguments()), data and label too
    net = two_class_net()
    mod = trained_by_hand(mx.cpu(), fixed_param_names=net.list_arguments())
    np.testing.assert_array_equal(
        host_values(mod.get_params()[0])["fc2_weight"], host_values(start_params())["fc2_weight"]
    )


def test_install_monitor_records_outputs() -> None:
    mod = mx.mod.Module(two_class_net())
    mod.bind([("data", (4, 5))], [("softmax_label", (4,))])
    mod.init_params()
    mon = mx.mon.Monitor(1, pattern="fc1_output")
    mod.install_monitor(mon)
    mon.tic()
    mod.forward(mx.io.DataBatch([mx.nd.ones((4, 5))], [mx.nd.zeros((4,))]), is_train=False)
    assert [name for _, name, _ in mon.toc()] == ["fc1_output"]


def test_a_batch_of_another_size_runs_on_the_same_parameters() -> None:
    mod = trained_by_hand(mx.cpu(), steps=2)
    data, _ = two_class_blobs(7, seed=5)
    mod.forward(mx.io.DataBatch([mx.nd.array(data)]), is_train=False)
    assert mod.get_outputs()[0].shape == (7, 2) and mod.output_shapes == [("softmax_output", (7, 2))]
    exe = two_class_net().simple_bind(mx.cpu(), data=(7, 5))
    exe.copy_params_from(mod.get_params()[0])
    np.testing.assert_allclose(
        mod.get_outputs()[0].asnumpy(), exe.forward(data=mx.nd.array(data))[0].asnumpy(), rtol=1e-6
    )
    assert mod._exec_group.param_arrays[0][0] is mod._groups[next(iter(mod._groups))].param_arrays[0][0]


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
