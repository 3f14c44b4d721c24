"""FeedForward.fit and create: learning, logging, initial parameters, optimizers, and what fit refuses."""

from __future__ import annotations

import logging

import numpy as np
import pytest
from blob_problem import fitted_feedforward, two_class_blobs, two_class_net

import lazynd as mx
import lazynd_sym as sym
from lazynd.errors import ArgumentTypeError, ContextError, DataError
from lazynd_sym.model import FeedForward


def test_fit_learns_a_separable_problem() -> None:
    ff = fitted_feedforward()
    data, label = two_class_blobs(200, seed=1)
    assert ff.score(mx.io.NDArrayIter(data, label, batch_size=50)) > 0.95


def test_fit_logs_train_and_validation_metrics(caplog) -> None:
    data, label = two_class_blobs()
    ff = FeedForward(two_class_net(), num_epoch=1, numpy_batch_size=40, learning_rate=0.1, progress_bar=False)
    with caplog.at_level(logging.INFO):
        ff.fit(data, label, eval_data=(data, label), eval_metric=["acc", "ce"])
    messages = [r.getMessage() for r in caplog.records]
    assert any(m.startswith("Epoch[0] Train-accuracy=") for m in messages)
    assert any(m.startswith("Epoch[0] Validation-cross-entropy=") for m in messages)
    # MXNet 1.9.1's own lines, which scripts that read its logs look for
    assert messages[0] == "Start training with [cpu(0)]"
    assert "Epoch[0] Resetting Data Iterator" in messages


def test_init_attribute_overrides_the_initializer() -> None:
    weight = sym.Variable("fc1_weight", init=mx.init.Constant(0.5))
    net = sym.SoftmaxOutput(
        sym.FullyConnected(sym.Variable("data"), weight=weight, num_hidden=2, name="fc1"), name="softmax"
    )
    data, label = two_class_blobs(40)
    ff = FeedForward(net, num_epoch=1, numpy_batch_size=40, learning_rate=0.0, progress_bar=False)
    ff.fit(data, label)
    assert np.all(ff.arg_params["fc1_weight"].asnumpy() == 0.5)


def test_given_arg_params_are_used_and_checked() -> None:
    data, label = two_class_blobs(40)
    ff = FeedForward(
        two_class_net(),
        num_epoch=1,
        numpy_batch_size=40,
        progress_bar=False,
        arg_params={"fc1_weight": mx.nd.ones((3, 3))},
    )
    with pytest.raises(DataError, match="'fc1_weight' has shape \\(3, 3\\), the symbol needs \\(16, 5\\)"):
        ff.fit(data, label)


def test_create_builds_and_fits() -> None:
    data, label = two_class_blobs(80)
    ff = FeedForward.create(two_class_net(), data, label, num_epoch=1, numpy_batch_size=40, progress_bar=False)
    assert sorted(ff.arg_params) == ["fc1_bias", "fc1_weight", "fc2_bias", "fc2_weight"]


def test_fit_without_labels_raises() -> None:
    with pytest.raises(DataError, match="y is needed"):
        FeedForward(two_class_net(), num_epoch=1, progress_bar=False).fit(np.zeros((4, 5)))


def test_a_ctx_that_is_not_a_context_is_refused_with_a_clear_error() -> None:
    with pytest.raises(ContextError, match="ctx must be a Context or a non-empty list of them, got \\[\\]"):
        FeedForward(two_class_net(), ctx=[])


@pytest.mark.parametrize("contexts", [[mx.cpu()], [mx.cpu(0), mx.cpu(1)]], ids=["one", "two"])
def test_an_optimizer_object_gets_the_parameter_names_so_its_multipliers_apply(contexts) -> None:
    # MXNet 1.9.1 gives an Optimizer without names FeedForward's index -> name map
    data = np.random.default_rng(0).normal(size=(24, 4)).astype(np.float32)
    label = (data[:, 0] > 0).astype(np.float32)
    net = sym.FullyConnected(
        sym.FullyConnected(sym.Variable("data"), num_hidden=3, name="fc1"), num_hidden=2, name="fc2"
    )
    opt = mx.optimizer.SGD(learning_rate=0.5, rescale_grad=0.25)
    opt.set_lr_mult({"fc1_weight": 0.0})
    model = FeedForward(
        sym.SoftmaxOutput(net, name="softmax"), ctx=contexts, num_epoch=1, optimizer=opt,
        initializer=mx.init.Constant(0.1), numpy_batch_size=4,
    )  # fmt: skip
    model.fit(mx.io.NDArrayIter(data, label, batch_size=4))
    np.testing.assert_array_equal(model.arg_params["fc1_weight"].asnumpy(), np.full((3, 4), 0.1, np.float32))
    assert not np.allclose(model.arg_params["fc2_weight"].asnumpy(), 0.1)


def test_fit_leaves_the_training_and_validation_iterators_reset_as_mxnet_does() -> None:
    """MXNet resets the iterators at the end of every epoch (its 'Resetting Data Iterator' line)
    and of every validation: a Module.fit on the same iterators afterwards sees every batch."""
    data, label = two_class_blobs(120)
    train = mx.io.NDArrayIter(data, label, batch_size=40)
    val = mx.io.NDArrayIter(data[:80], label[:80], batch_size=40)
    ff = FeedForward(two_class_net(), num_epoch=2, learning_rate=0.1, progress_bar=False)
    ff.fit(train, eval_data=val)
    assert len(list(train)) == 3
    assert len(list(val)) == 2


def _small_net():
    data = sym.Variable("data")
    return sym.SoftmaxOutput(sym.FullyConnected(data, num_hidden=2, name="fc"), name="softmax")


@pytest.mark.parametrize("y", ["abc", 3, {"k": 1}, [None] * 4], ids=repr)
def test_fit_refuses_labels_that_are_no_array_of_numbers_by_name(y):
    # "len() of unsized object" before (a list of None was read as NaN labels)
    with pytest.raises(DataError, match="FeedForward: y must be an array of labels, one per example"):
        FeedForward(_small_net(), num_epoch=1).fit(np.ones((4, 3)), y)


@pytest.mark.parametrize("numpy_batch_size", [None, "2", 1.5], ids=repr)
def test_fit_refuses_a_numpy_batch_size_that_is_no_int_by_name(numpy_batch_size):
    # a comparison's TypeError inside min() before
    model = FeedForward(_small_net(), num_epoch=1, numpy_batch_size=numpy_batch_size)
    with pytest.raises(DataError, match="FeedForward: numpy_batch_size must be an int, got "):
        model.fit(np.ones((4, 3)), np.zeros(4))


@pytest.mark.parametrize(
    "which", ["batch_end_callback", "epoch_end_callback", "eval_end_callback", "eval_batch_end_callback"]
)
@pytest.mark.parametrize("callback", ["speedometer", 1.5, [print, 3]], ids=repr)
def test_fit_refuses_a_callback_that_cannot_be_called_before_training(which, callback):
    # "'str' object is not callable" at the end of the first batch or epoch before
    model = FeedForward(_small_net(), num_epoch=1)
    with pytest.raises(ArgumentTypeError, match=f"FeedForward.fit: {which} must be a callable or a list of them"):
        model.fit(np.ones((4, 3)), np.zeros(4), eval_data=(np.ones((4, 3)), np.zeros(4)), **{which: callback})
