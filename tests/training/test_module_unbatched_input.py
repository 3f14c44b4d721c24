"""A Module input without a batch axis (a layout with no 'N', such as a channel mask): MXNet 1.9.1
gives it batch axis -1 and copies it whole to every device instead of splitting it."""

from __future__ import annotations

import numpy as np

import lazynd as mx
import lazynd_sym as sym
from lazynd.io import DataBatch, DataDesc


def _module(contexts):
    masked = sym.broadcast_mul(sym.Variable("data"), sym.Variable("mask"))
    net = sym.SoftmaxOutput(sym.FullyConnected(masked, num_hidden=3, name="fc"), name="softmax")
    mod = mx.mod.Module(net, data_names=["data", "mask"], label_names=["softmax_label"], context=contexts)
    mod.bind(
        data_shapes=[DataDesc("data", (8, 4), layout="NC"), DataDesc("mask", (1, 4), layout="CW")],
        label_shapes=[DataDesc("softmax_label", (8,), layout="N")],
    )
    rng = np.random.default_rng(0)
    mod.init_params(
        arg_params={"fc_weight": mx.nd.array(rng.standard_normal((3, 4))), "fc_bias": mx.nd.zeros((3,))},
        aux_params={},
    )
    mod.init_optimizer(optimizer="sgd", optimizer_params={"learning_rate": 0.1})
    return mod


def test_an_input_without_a_batch_axis_reaches_every_device_whole():
    rng = np.random.default_rng(1)
    data = rng.standard_normal((8, 4)).astype(np.float32)
    mask = np.array([[1, 0, 1, 0]], np.float32)
    label = rng.integers(0, 3, 8).astype(np.float32)
    batch = DataBatch(data=[mx.nd.array(data), mx.nd.array(mask)], label=[mx.nd.array(label)])
    results = []
    for contexts in ([mx.cpu(0)], [mx.cpu(0), mx.cpu(1)]):
        mod = _module(contexts)
        mod.forward(batch, is_train=True)
        mod.backward()
        mod.update()
        outputs = mod.get_outputs()[0].asnumpy()
        weight = mod.get_params()[0]["fc_weight"].asnumpy()
        for exe in mod._exec_group.execs:  # every device holds the whole mask
            np.testing.assert_array_equal(exe.arg_dict["mask"].asnumpy(), mask)
        results.append((outputs, weight))
    (one_out, one_w), (two_out, two_w) = results
    np.testing.assert_allclose(two_out, one_out, rtol=1e-6)
    np.testing.assert_allclose(two_w, one_w, rtol=1e-5, atol=1e-7)
    assert one_out.shape == (8, 3)
