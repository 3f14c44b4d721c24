"""Embedding(sparse_grad=True): lazynd's gradient is dense, and the training loops say when that
trains differently from MXNet's lazy update of the batch's rows (lazynd_sym/model/sparse_grads.py)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import lazynd as mx
import lazynd_sym as sym

X = np.array([[0, 1], [1, 2], [0, 2], [2, 1]], np.float32)  # rows 3-5 of the table are never looked up
Y = np.array([0, 1, 1, 0], np.float32)


def _net(sparse_grad: bool = True):
    emb = sym.Embedding(sym.var("data"), input_dim=6, output_dim=3, sparse_grad=sparse_grad, name="emb")
    return sym.SoftmaxOutput(sym.FullyConnected(sym.flatten(emb), num_hidden=2, name="fc"), name="softmax")


def _train_module(net, optimizer: str, **params):
    it = mx.io.NDArrayIter(X, Y, batch_size=4)
    mod = mx.mod.Module(net, context=mx.cpu())
    mod.bind(it.provide_data, it.provide_label)
    mod.init_params(mx.init.Uniform(0.5))
    before = mod.get_params()[0]["emb_weight"].asnumpy()
    mod.init_optimizer(optimizer=optimizer, optimizer_params=params)
    batch = next(iter(it))
    mod.forward(batch, is_train=True)
    mod.backward()
    mod.update()
    return before, mod.get_params()[0]["emb_weight"].asnumpy()


@pytest.mark.parametrize(
    "optimizer, params",
    [("sgd", {"learning_rate": 0.1, "wd": 0.1}), ("sgd", {"momentum": 0.9, "learning_rate": 0.1}), ("adam", {})],
)
def test_module_warns_where_mxnets_lazy_update_would_leave_rows_alone(optimizer, params):
    with pytest.warns(UserWarning, match=r"Embedding\(sparse_grad=True\) weights \['emb_weight'\] get dense gradients"):
        before, after = _train_module(_net(), optimizer, **params)
    if params.get("wd"):  # the rows no batch looked up moved: what the warning says
        assert not np.allclose(before[3:], after[3:])


@pytest.mark.parametrize(
    "net, optimizer, params",
    [
        (_net(False), "sgd", {"wd": 0.1}),  # no sparse gradient asked for
        (_net(), "sgd", {"learning_rate": 0.1}),  # plain SGD leaves zero-gradient rows as they are
        (_net(), "sgd", {"wd": 0.1, "lazy_update": False}),  # MXNet's dense update: lazynd's
    ],
)
def test_no_warning_where_the_update_is_mxnets(net, optimizer, params):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        before, after = _train_module(net, optimizer, **params)
    if not params.get("wd"):
        np.testing.assert_array_equal(before[3:], after[3:])


def test_feedforward_fit_warns_too():
    model = mx.model.FeedForward(_net(), num_epoch=1, optimizer="sgd", wd=0.1, numpy_batch_size=4, progress_bar=False)
    with pytest.warns(UserWarning, match=r"FeedForward.fit: Embedding\(sparse_grad=True\)"):
        model.fit(X, Y)
