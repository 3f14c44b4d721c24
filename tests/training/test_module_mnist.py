"""The MNIST MLP trained with Module.fit on the real data set (``$LAZYND_DATA_DIR``)."""

from __future__ import annotations

import lazynd as mx
import lazynd_sym as sym


def _mlp() -> sym.Symbol:
    net = sym.Flatten(sym.Variable("data"), name="flatten")
    net = sym.Activation(sym.FullyConnected(net, num_hidden=128, name="fc1"), act_type="relu", name="relu1")
    net = sym.Activation(sym.FullyConnected(net, num_hidden=64, name="fc2"), act_type="relu", name="relu2")
    return sym.SoftmaxOutput(sym.FullyConnected(net, num_hidden=10, name="fc3"), name="softmax")


def test_module_fit_trains_the_mnist_mlp_past_95_percent_in_two_epochs(data_dir) -> None:
    mx.random.seed(0)
    train = mx.io.MNISTIter(batch_size=100, shuffle=True, seed=0, data_dir=str(data_dir), train=True)
    test = mx.io.MNISTIter(batch_size=100, shuffle=False, data_dir=str(data_dir), train=False)
    mod = mx.mod.Module(_mlp(), context=mx.cpu())
    mod.fit(
        train,
        eval_data=test,
        num_epoch=2,
        initializer=mx.init.Xavier(),
        optimizer_params={"learning_rate": 0.1, "momentum": 0.9},
    )
    ((name, accuracy),) = mod.score(test, "acc")
    assert name == "accuracy" and accuracy > 0.95
