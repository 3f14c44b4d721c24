"""PythonModule and PythonLossModule: a loss written in Python ends a SequentialModule (MXNet 1.x's mx.mod)."""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx
import lazynd_sym as sym
from lazynd.errors import DataError, LazyNDError


def _squared_error_grad(scores, labels):
    return (scores - labels.reshape((-1, 1))) * 2


def _regression() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    data = rng.normal(size=(8, 3)).astype(np.float32)
    return data, data.sum(axis=1).astype(np.float32)


def _start() -> dict:
    return {"fc_weight": mx.nd.array([[0.1, -0.2, 0.3]]), "fc_bias": mx.nd.zeros((1,))}


def test_python_loss_module_ends_a_chain_as_linear_regression_output_would():
    data, label = _regression()
    net = sym.FullyConnected(sym.Variable("data"), num_hidden=1, name="fc")
    chain = mx.mod.SequentialModule()
    chain.add(mx.mod.Module(net, label_names=None))
    chain.add(mx.mod.PythonLossModule(grad_func=_squared_error_grad), take_labels=True, auto_wiring=True)
    # the same loss as a symbol: LinearRegressionOutput's gradient is (scores - labels) / 1, so grad_scale 2
    plain = mx.mod.Module(sym.LinearRegressionOutput(net, grad_scale=2.0, name="softmax"))
    for mod in (chain, plain):
        it = mx.io.NDArrayIter(data, label, batch_size=4)
        mod.fit(it, num_epoch=2, arg_params=_start(), optimizer_params={"learning_rate": 0.05})
    np.testing.assert_allclose(
        chain.get_params()[0]["fc_weight"].asnumpy(), plain.get_params()[0]["fc_weight"].asnumpy(), rtol=1e-5
    )
    assert chain.output_shapes == [("pyloss_output", (4, 1))]


def test_python_loss_module_alone_gives_its_gradient_and_refuses_misuse():
    loss = mx.mod.PythonLossModule(name="l2", grad_func=lambda scores, labels: np.ones(scores.shape))
    assert loss.output_names == ["l2_output"] and loss.get_params() == ({}, {})
    loss.bind([("data", (2, 3))], [("softmax_label", (2,))])
    loss.forward(mx.io.DataBatch([mx.nd.ones((2, 3))], [mx.nd.zeros((2,))]), is_train=True)
    loss.backward()
    np.testing.assert_array_equal(loss.get_input_grads()[0].asnumpy(), np.ones((2, 3), np.float32))
    with pytest.raises(LazyNDError, match="takes no out_grads"):
        loss.backward(out_grads=[mx.nd.ones((2, 3))])
    no_grad = mx.mod.PythonLossModule()
    no_grad.bind([("data", (2, 3))], [("softmax_label", (2,))])
    no_grad.forward(mx.io.DataBatch([mx.nd.ones((2, 3))], [mx.nd.zeros((2,))]))
    with pytest.raises(LazyNDError, match="give grad_func"):
        no_grad.backward()
    with pytest.raises(DataError, match="one data and one label name"):
        mx.mod.PythonLossModule(data_names=("a", "b"))
    with pytest.raises(DataError, match="data_shapes name \\['x'\\]"):
        mx.mod.PythonLossModule().bind([("x", (2, 3))])


def test_hooks_a_subclass_has_not_written_raise_not_implemented_error_as_mxnet():
    # MXNet's BaseModule, PythonModule and PythonLossModule raise NotImplementedError there
    with pytest.raises(NotImplementedError, match="PythonModule does not implement _compute_output_shapes"):
        mx.mod.PythonModule(["data"], ["softmax_label"], ["out"]).bind([("data", (2, 3))])
    with pytest.raises(NotImplementedError, match="BaseModule does not implement forward"):
        mx.mod.BaseModule().forward(mx.io.DataBatch([mx.nd.ones((2, 3))]))
    no_grad = mx.mod.PythonLossModule()
    no_grad.bind([("data", (2, 3))], [("softmax_label", (2,))])
    no_grad.forward(mx.io.DataBatch([mx.nd.ones((2, 3))], [mx.nd.zeros((2,))]))
    with pytest.raises(NotImplementedError, match="give grad_func") as caught:
        no_grad.backward()
    assert isinstance(caught.value, LazyNDError)
