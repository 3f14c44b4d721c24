"""Module checkpoints: MXNet's file names and keys, and training resumed from them with the optimizer states."""

from __future__ import annotations

import os

import numpy as np
import pytest

import lazynd as mx
import lazynd_sym as sym
from lazynd.optimizer.states_pickle import loads_states
from lazynd_sym.model import load_checkpoint


def _net() -> sym.Symbol:
    net = sym.FullyConnected(sym.Variable("data"), num_hidden=8, name="fc1")
    net = sym.BatchNorm(net, name="bn1")
    net = sym.Activation(net, act_type="relu", name="relu1")
    return sym.SoftmaxOutput(sym.FullyConnected(net, num_hidden=2, name="fc2"), name="softmax")


def _train_iter() -> mx.io.NDArrayIter:
    rng = np.random.default_rng(0)
    label = rng.integers(0, 2, 160)
    data = rng.normal(size=(160, 5)).astype(np.float32) + (label[:, None] * 2.0 - 1.0)
    return mx.io.NDArrayIter(data, label.astype(np.float32), batch_size=40, shuffle=False)


def _fit(mod: mx.mod.BaseModule, begin_epoch: int, num_epoch: int, kvstore: str = "local") -> None:
    mx.random.seed(0)
    mod.fit(
        _train_iter(),
        begin_epoch=begin_epoch,
        num_epoch=num_epoch,
        kvstore=kvstore,
        initializer=mx.init.Xavier(),
        optimizer_params={"learning_rate": 0.1, "momentum": 0.9},
    )


def _host(mod: mx.mod.BaseModule) -> dict[str, np.ndarray]:
    arg_params, aux_params = mod.get_params()
    return {name: value.asnumpy() for name, value in {**arg_params, **aux_params}.items()}


def test_save_checkpoint_writes_mxnets_files(tmp_path) -> None:
    mod = mx.mod.Module(_net())
    _fit(mod, 0, 1)
    mod.save_checkpoint(str(tmp_path / "net"), 3, save_optimizer_states=True)
    # the names MXNet 1.9.1's Module.save_checkpoint(prefix, 3, save_optimizer_states=True) writes
    assert sorted(os.listdir(tmp_path)) == ["net-0003.params", "net-0003.states", "net-symbol.json"]
    assert sorted(mx.nd.load(str(tmp_path / "net-0003.params"))) == [
        "arg:bn1_beta", "arg:bn1_gamma", "arg:fc1_bias", "arg:fc1_weight", "arg:fc2_bias", "arg:fc2_weight",
        "aux:bn1_moving_mean", "aux:bn1_moving_var",
    ]  # fmt: skip
    symbol, arg_params, _ = load_checkpoint(str(tmp_path / "net"), 3)
    assert symbol.list_outputs() == ["softmax_output"] and sorted(arg_params) == sorted(mod.get_params()[0])


@pytest.mark.parametrize("contexts", [[mx.cpu()], [mx.cpu(0), mx.cpu(1)]], ids=["updater", "kvstore"])
def test_training_resumed_from_a_checkpoint_with_optimizer_states_is_identical(tmp_path, contexts) -> None:
    prefix = str(tmp_path / "net")
    straight = mx.mod.Module(_net(), context=contexts)
    _fit(straight, 0, 2)
    straight.save_checkpoint(prefix, 2, save_optimizer_states=True)
    _fit(straight, 2, 4)

    resumed = mx.mod.Module.load(prefix, 2, load_optimizer_states=True, context=contexts)
    _fit(resumed, 2, 4)
    expected, got = _host(straight), _host(resumed)
    for name in expected:
        np.testing.assert_allclose(got[name], expected[name], rtol=1e-6, atol=1e-7, err_msg=name)

    # without the momentum states the run differs: the states file is what makes it identical
    fresh = mx.mod.Module.load(prefix, 2, context=contexts)
    _fit(fresh, 2, 4)
    assert not np.allclose(_host(fresh)["fc1_weight"], expected["fc1_weight"], rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize(
    "contexts, keys",
    [([mx.cpu()], [0, 1, 2, 3, 4, 5]), ([mx.cpu(0), mx.cpu(1)], ["fc1_weight", "fc1_bias", "bn1_gamma"])],
    ids=["updater", "kvstore"],
)
def test_optimizer_states_are_keyed_in_the_file_as_mxnets_module_keys_them(tmp_path, contexts, keys) -> None:
    # MXNet 1.9.1 keys the states of its devices' updater by number and those of its store by
    # parameter name; a store's states saved by number were silently started afresh when MXNet resumed
    prefix = str(tmp_path / "net")
    mod = mx.mod.Module(_net(), context=contexts)
    _fit(mod, 0, 1)
    mod.save_checkpoint(prefix, 1, save_optimizer_states=True)
    with open(f"{prefix}-0001.states", "rb") as f:
        saved = loads_states(f.read())
    assert list(saved)[: len(keys)] == keys


def test_optimizer_states_loaded_from_the_file_go_back_to_the_device(tmp_path, ctx) -> None:
    prefix = str(tmp_path / "net")
    straight = mx.mod.Module(_net(), context=ctx)
    _fit(straight, 0, 1)
    straight.save_checkpoint(prefix, 1, save_optimizer_states=True)
    _fit(straight, 1, 2)
    resumed = mx.mod.Module.load(prefix, 1, load_optimizer_states=True, context=ctx)
    _fit(resumed, 1, 2)
    assert {state.context for state in resumed._updater.states.values()} == {ctx}
    expected = _host(straight)
    for name, value in _host(resumed).items():
        np.testing.assert_allclose(value, expected[name], rtol=1e-5, atol=1e-6, err_msg=name)


def test_a_loaded_module_predicts_as_the_saved_one(tmp_path) -> None:
    mod = mx.mod.Module(_net())
    _fit(mod, 0, 2)
    mod.save_checkpoint(str(tmp_path / "net"), 2)
    loaded = mx.mod.Module.load(str(tmp_path / "net"), 2)
    loaded.bind(_train_iter().provide_data, for_training=False)
    np.testing.assert_allclose(loaded.predict(_train_iter()).asnumpy(), mod.predict(_train_iter()).asnumpy(), rtol=1e-6)


def test_save_params_and_load_params_round_trip(tmp_path) -> None:
    mod = mx.mod.Module(_net())
    _fit(mod, 0, 1)
    mod.save_params(str(tmp_path / "net.params"))
    other = mx.mod.Module(_net())
    other.bind(_train_iter().provide_data, _train_iter().provide_label)
    other.load_params(str(tmp_path / "net.params"))
    for name, value in _host(mod).items():
        np.testing.assert_array_equal(_host(other)[name], value)


def test_do_checkpoint_is_an_epoch_end_callback_of_fit(tmp_path) -> None:
    mod = mx.mod.Module(_net())
    mod.fit(_train_iter(), num_epoch=2, epoch_end_callback=mx.callback.do_checkpoint(str(tmp_path / "ck")))
    assert sorted(os.listdir(tmp_path)) == ["ck-0001.params", "ck-0002.params", "ck-symbol.json"]


def test_module_checkpoint_callback_saves_the_module_every_period(tmp_path) -> None:
    # MXNet's mx.callback.module_checkpoint, an epoch-end callback for Module.fit
    prefix = str(tmp_path / "mc")
    mod = mx.mod.Module(_net(), context=mx.cpu())
    callback = mx.callback.module_checkpoint(mod, prefix, period=2, save_optimizer_states=True)
    mod.fit(_train_iter(), num_epoch=4, optimizer_params={"learning_rate": 0.1}, epoch_end_callback=callback)
    assert sorted(os.listdir(tmp_path)) == [
        "mc-0002.params", "mc-0002.states", "mc-0004.params", "mc-0004.states", "mc-symbol.json",
    ]  # fmt: skip
    _, arg_params, _ = load_checkpoint(prefix, 4)
    np.testing.assert_array_equal(arg_params["fc2_weight"].asnumpy(), mod.get_params()[0]["fc2_weight"].asnumpy())


def test_save_checkpoint_logs_each_file_it_writes_as_mxnet(tmp_path, caplog) -> None:
    mod = mx.mod.Module(_net())
    _fit(mod, 0, 1)
    prefix = str(tmp_path / "net")
    with caplog.at_level("INFO"):
        mod.save_checkpoint(prefix, 3, save_optimizer_states=True)
    assert [r.getMessage() for r in caplog.records] == [
        f'Saved checkpoint to "{prefix}-0003.params"',
        f'Saved optimizer state to "{prefix}-0003.states"',
    ]


def test_training_resumes_from_states_keyed_by_parameter_name_as_mxnet_writes_them(tmp_path) -> None:
    # MXNet 1.9.1's Module pushes its parameters to the KVStore by name, so a states file it saves
    # through the store is {name: state}; lazynd's Module numbers them and started over from no state
    import pickle

    from lazynd.optimizer.states_file import load_states

    contexts = [mx.cpu(0), mx.cpu(1)]
    prefix = str(tmp_path / "net")
    straight = mx.mod.Module(_net(), context=contexts)
    _fit(straight, 0, 2)
    straight.save_checkpoint(prefix, 2, save_optimizer_states=True)
    _fit(straight, 2, 4)

    numbered = mx.optimizer.get_updater(mx.optimizer.create("sgd"))
    load_states(numbered, f"{prefix}-0002.states")
    # the file is keyed by name already; written again as a pickle of NumPy arrays by name
    by_name = {name: (state if state is None else state.asnumpy()) for name, state in numbered.states.items()}
    assert "fc1_weight" in by_name
    with open(f"{prefix}-0002.states", "wb") as f:
        pickle.dump(by_name, f)

    resumed = mx.mod.Module.load(prefix, 2, load_optimizer_states=True, context=contexts)
    _fit(resumed, 2, 4)
    expected, got = _host(straight), _host(resumed)
    for name in expected:
        np.testing.assert_allclose(got[name], expected[name], rtol=1e-6, atol=1e-7, err_msg=name)


def test_a_loaded_module_gives_its_parameters_before_binding(tmp_path) -> None:
    # as MXNet's: get_params needs the parameters, not the executors
    mod = mx.mod.Module(_net())
    mod.bind([("data", (4, 5))], [("softmax_label", (4,))])
    mod.init_params()
    prefix = str(tmp_path / "net")
    mod.save_checkpoint(prefix, 1)
    loaded = mx.mod.Module.load(prefix, 1)
    arg_params, _ = loaded.get_params()
    np.testing.assert_array_equal(arg_params["fc1_weight"].asnumpy(), mod.get_params()[0]["fc1_weight"].asnumpy())


def test_module_load_params_refuses_entries_of_another_kind(tmp_path) -> None:
    # unlike mx.model.load_checkpoint, MXNet's Module.load_params refuses an 'opt:' entry
    mod = mx.mod.Module(_net())
    mod.bind(data_shapes=[("data", (4, 3))], label_shapes=[("softmax_label", (4,))])
    mod.init_params()
    path = str(tmp_path / "extra.params")
    arg_params, _ = mod.get_params()
    mx.nd.save(path, {**{f"arg:{k}": v for k, v in arg_params.items()}, "opt:state": mx.nd.ones((1,))})
    with pytest.raises(mx.LazyNDError, match="'opt:state' does not start with 'arg:' or 'aux:'"):
        mod.load_params(path)
