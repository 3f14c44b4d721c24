"""An MXNet 1.x-style script, unchanged but for ``import lazynd as mx``, using the names added for it.

It trains a small network with the Module API (symbol method forms, ``Nadam``, an
``eval_end_callback``), then uses ``mx.nd.random``, storage types, ``split_v2``,
``load_frombuffer``, ``mx.base`` and ``mx.test_utils`` helpers as MXNet programs do.
"""

from __future__ import annotations

import logging
import random

import numpy as np

import lazynd as mx


def test_mxnet_style_training_script(tmp_path) -> None:
    mx.random.seed(42)
    np.random.seed(0)
    features = np.random.randn(200, 2, 2).astype("float32")
    labels = (features.reshape(200, -1).sum(axis=1) > 0).astype("float32")
    train_iter = mx.io.NDArrayIter(features[:160], labels[:160], batch_size=20, shuffle=True)
    val_iter = mx.io.NDArrayIter(features[160:], labels[160:], batch_size=20)

    data = mx.sym.var("data")
    net = mx.sym.FullyConnected(data.flatten(), num_hidden=16, name="fc1").relu()
    net = mx.sym.SoftmaxOutput(mx.sym.FullyConnected(net, num_hidden=2, name="fc2"), name="softmax")
    mod = mx.mod.Module(net, context=mx.cpu())
    validations: list[float] = []
    mod.fit(
        train_iter,
        eval_data=val_iter,
        optimizer="nadam",
        optimizer_params={"learning_rate": 0.05},
        initializer=mx.init.Xavier(),
        eval_metric="acc",
        num_epoch=8,
        eval_end_callback=[
            mx.callback.LogValidationMetricsCallback(),
            lambda param: validations.append(param.eval_metric.get()[1]),
        ],
    )
    assert len(validations) == 8
    assert dict(mod.score(val_iter, ["acc"]))["accuracy"] > 0.9
    mod.save_checkpoint(str(tmp_path / "net"), 8, remove_amp_cast=True)
    arg_params, _ = mx.model.load_params(str(tmp_path / "net"), 8)
    assert sorted(arg_params) == ["fc1_bias", "fc1_weight", "fc2_bias", "fc2_weight"]

    x = mx.nd.random.randn(4, 3)
    x.attach_grad(stype="default")
    with mx.autograd.record():
        pieces = x.split_v2((1,), axis=1)
        y = pieces[0].square().sum() + pieces[1].sum()
    y.backward()
    expected = np.concatenate([2 * x.asnumpy()[:, :1], np.ones((4, 2), np.float32)], axis=1)
    mx.test_utils.assert_almost_equal(x.grad, expected)
    assert x.stype == "default" and x.tostype("default").shape == (4, 3)

    mx.test_utils.assert_exception(mx.sym.var("z").asnumpy, mx.base.MXNetError)
    np.testing.assert_array_equal(mx.sym.full((2,), 3).eval()[0].asnumpy(), [3.0, 3.0])

    path = tmp_path / "x.params"
    mx.nd.save(str(path), {"w": x})
    mx.test_utils.assert_almost_equal(mx.nd.load_frombuffer(path.read_bytes())["w"], x)

    random.seed(0)
    augs = mx.image.CreateAugmenter((3, 4, 4), brightness=0.2, hue=0.1, rand_gray=0.5)
    image = mx.nd.array(np.random.randint(0, 255, (4, 4, 3)))
    for aug in augs:
        image = aug(image)
    assert image.shape == (4, 4, 3)
    logging.getLogger(__name__).info("script done")
