"""A Module on several devices joins and splits each output along the batch axis its ``__layout__`` names."""

from __future__ import annotations

import numpy as np

import lazynd as mx
import lazynd_sym as sym


def _time_major_module() -> mx.mod.Module:
    """Doubles its (time, batch, feature) input; the output says it is laid out 'TNC'."""
    net = sym.Activation(sym.Variable("data") * 2, act_type="relu", name="act", __layout__="TNC")
    mod = mx.mod.Module(net, ("data",), None, context=[mx.cpu(0), mx.cpu(1)])
    mod.bind(data_shapes=[mx.io.DataDesc("data", (3, 4, 2), layout="TNC")], inputs_need_grad=True)
    mod.init_params()
    return mod


def test_outputs_of_a_tnc_layout_are_joined_along_the_batch_axis() -> None:
    mod = _time_major_module()
    data = np.arange(24, dtype=np.float32).reshape(3, 4, 2)
    mod.forward(mx.io.DataBatch(data=[mx.nd.array(data)], label=None), is_train=True)
    np.testing.assert_array_equal(mod.get_outputs()[0].asnumpy(), data * 2)
    assert [x.shape for x in mod.get_outputs(merge_multi_context=False)[0]] == [(3, 2, 2), (3, 2, 2)]


def test_output_gradients_of_a_tnc_layout_are_split_along_the_batch_axis() -> None:
    mod = _time_major_module()
    data = np.ones((3, 4, 2), dtype=np.float32)
    head = np.arange(24, dtype=np.float32).reshape(3, 4, 2)
    mod.forward(mx.io.DataBatch(data=[mx.nd.array(data)], label=None), is_train=True)
    mod.backward([mx.nd.array(head)])
    np.testing.assert_array_equal(mod.get_input_grads()[0].asnumpy(), head * 2)
