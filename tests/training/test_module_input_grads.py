"""Module.get_input_grads for every grad_req a module is bound with (MXNet 1.x's answers)."""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx
import lazynd_sym as sym


def _bound(grad_req: str, contexts: list) -> mx.mod.Module:
    net = sym.FullyConnected(sym.Variable("data"), num_hidden=2, name="fc")
    mod = mx.mod.Module(net, label_names=None, context=contexts)
    mod.bind([("data", (4, 3))], inputs_need_grad=True, grad_req=grad_req)
    mod.init_params(arg_params={"fc_weight": mx.nd.ones((2, 3)), "fc_bias": mx.nd.zeros((2,))})
    mod.forward(mx.io.DataBatch([mx.nd.ones((4, 3))]), is_train=True)
    mod.backward(out_grads=[mx.nd.ones((4, 2))])
    return mod


@pytest.mark.parametrize("contexts", [[mx.cpu(0)], [mx.cpu(0), mx.cpu(1)]])
def test_input_grads_of_a_module_bound_with_grad_req_null_are_none(contexts):
    # MXNet: no gradient arrays are bound, so each input's gradient is None
    mod = _bound("null", contexts)
    assert mod.get_input_grads() == [None]
    assert mod.get_input_grads(merge_multi_context=False) == [[None] * len(contexts)]


@pytest.mark.parametrize("grad_req", ["write", "add"])
def test_input_grads_of_a_module_bound_to_write_or_add_are_arrays(grad_req):
    np.testing.assert_allclose(_bound(grad_req, [mx.cpu(0)]).get_input_grads()[0].asnumpy(), np.full((4, 3), 2.0))
