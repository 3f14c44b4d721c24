"""Checkpoints in MXNet's layout, including one written by MXNet 1.9.1."""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx
import lazynd_sym as sym
from lazynd.errors import FormatError
from lazynd_sym import model


def _mlp() -> sym.Symbol:
    net = sym.FullyConnected(sym.Variable("data"), num_hidden=4, name="fc1")
    return sym.SoftmaxOutput(net, name="softmax")


def test_mxnet_checkpoint_reproduces_mxnet_probabilities(data_dir) -> None:
    symbol, arg_params, aux_params = model.load_checkpoint(str(data_dir / "mxnet" / "mnist_mlp"), 3)
    assert sorted(arg_params) == ["fc1_bias", "fc1_weight", "fc2_bias", "fc2_weight", "fc3_bias", "fc3_weight"]
    assert aux_params == {}
    images, _ = mx.datasets.load_mnist("mnist", data_dir / "mnist", train=False)
    pixels = images[:1000].astype(np.float32).reshape(1000, 1, 28, 28) / 255
    executor = symbol.simple_bind(mx.cpu(), grad_req="null", data=(1000, 1, 28, 28))
    executor.copy_params_from(arg_params, aux_params)
    probs = executor.forward(data=mx.nd.array(pixels))[0].asnumpy()
    expected = np.load(data_dir / "mxnet" / "mnist_mlp_probs_first1000.npy")
    np.testing.assert_allclose(probs, expected, rtol=0, atol=1e-5)


def test_feedforward_load_predicts_like_mxnet(data_dir) -> None:
    ff = model.FeedForward.load(str(data_dir / "mxnet" / "mnist_mlp"), 3, numpy_batch_size=300)
    images, _ = mx.datasets.load_mnist("mnist", data_dir / "mnist", train=False)
    pixels = images[:1000].astype(np.float32).reshape(1000, 1, 28, 28) / 255
    probs = ff.predict(pixels)  # 1000 = 3 full batches + a padded one
    expected = np.load(data_dir / "mxnet" / "mnist_mlp_probs_first1000.npy")
    assert probs.shape == (1000, 10)
    np.testing.assert_allclose(probs, expected, rtol=0, atol=1e-5)


def test_save_checkpoint_writes_mxnet_layout(tmp_path) -> None:
    prefix = str(tmp_path / "net")
    model.save_checkpoint(prefix, 7, _mlp(), {"fc1_weight": mx.nd.ones((4, 3))}, {"bn_moving_mean": mx.nd.zeros((2,))})
    assert (tmp_path / "net-symbol.json").exists()
    saved = mx.nd.load(f"{prefix}-0007.params")
    assert sorted(saved) == ["arg:fc1_weight", "aux:bn_moving_mean"]


def test_checkpoint_round_trip_keeps_symbol_and_values(tmp_path) -> None:
    prefix = str(tmp_path / "net")
    weight = mx.nd.array(np.arange(12).reshape(4, 3))
    model.save_checkpoint(prefix, 1, _mlp(), {"fc1_weight": weight}, {})
    symbol, args, aux = model.load_checkpoint(prefix, 1)
    assert symbol.list_arguments() == _mlp().list_arguments()
    assert np.array_equal(args["fc1_weight"].asnumpy(), weight.asnumpy())
    assert aux == {}


def test_params_without_arg_or_aux_prefix_are_rejected(tmp_path) -> None:
    path = str(tmp_path / "bad-0001.params")
    mx.nd.save(path, {"fc1_weight": mx.nd.ones((2,))})
    _mlp().save(str(tmp_path / "bad-symbol.json"))
    with pytest.raises(FormatError, match="'fc1_weight' does not start with 'arg:' or 'aux:'"):
        model.load_checkpoint(str(tmp_path / "bad"), 1)


def test_entries_of_another_kind_are_skipped_as_mxnet_skips_them(tmp_path, caplog) -> None:
    # MXNet 1.9.1's load_checkpoint keeps 'arg:' and 'aux:' entries and passes over any other
    # 'kind:name' key; lazynd refused the whole file
    path = str(tmp_path / "extra-0001.params")
    mx.nd.save(
        path, {"arg:fc1_weight": mx.nd.ones((2,)), "aux:m": mx.nd.zeros((1,)), "opt:fc1_weight": mx.nd.ones((3,))}
    )
    _mlp().save(str(tmp_path / "extra-symbol.json"))
    _, args, aux = model.load_checkpoint(str(tmp_path / "extra"), 1)
    assert sorted(args) == ["fc1_weight"] and sorted(aux) == ["m"]
    assert args["fc1_weight"].shape == (2,)
    assert "opt:fc1_weight" in caplog.text


def test_missing_checkpoint_file_raises(tmp_path) -> None:
    with pytest.raises(Exception, match="nothing-symbol.json"):
        model.load_checkpoint(str(tmp_path / "nothing"), 1)
