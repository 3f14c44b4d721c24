"""SequentialModule: two modules chained train as the one module of the composed network."""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx
import lazynd_sym as sym
from lazynd.errors import DataError


def _body(data: sym.Symbol) -> sym.Symbol:
    return sym.Activation(sym.FullyConnected(data, num_hidden=8, name="fc1"), act_type="relu", name="relu1")


def _head(data: sym.Symbol) -> sym.Symbol:
    return sym.SoftmaxOutput(sym.FullyConnected(data, num_hidden=2, name="fc2"), name="softmax")


def _chain(auto_wiring: bool = True) -> mx.mod.SequentialModule:
    first = mx.mod.Module(_body(sym.Variable("data")), label_names=None)
    second = mx.mod.Module(_head(sym.Variable("features")), data_names=["features"])
    return mx.mod.SequentialModule().add(first).add(second, take_labels=True, auto_wiring=auto_wiring)


def _data(count: int = 120, seed: int = 0) -> mx.io.NDArrayIter:
    rng = np.random.default_rng(seed)
    label = rng.integers(0, 2, count)
    data = rng.normal(size=(count, 5)).astype(np.float32) + (label[:, None] * 2.0 - 1.0)
    return mx.io.NDArrayIter(data, label.astype(np.float32), batch_size=40)


def _start_params() -> dict[str, mx.NDArray]:
    rng = np.random.default_rng(1)
    shapes = {"fc1_weight": (8, 5), "fc1_bias": (8,), "fc2_weight": (2, 8), "fc2_bias": (2,)}
    return {n: mx.nd.array(rng.normal(scale=0.3, size=s).astype(np.float32)) for n, s in shapes.items()}


def _train(mod: mx.mod.BaseModule) -> mx.mod.BaseModule:
    data = _data()
    mod.bind(data.provide_data, data.provide_label)
    mod.init_params(arg_params=_start_params())
    mod.init_optimizer(optimizer_params={"learning_rate": 0.1, "momentum": 0.9})
    for batch in data:
        mod.forward_backward(batch)
        mod.update()
    return mod


def test_two_chained_modules_train_as_the_composed_module() -> None:
    chain = _train(_chain())
    whole = _train(mx.mod.Module(_head(_body(sym.Variable("data")))))
    expected = {n: v.asnumpy() for n, v in whole.get_params()[0].items()}
    got = chain.get_params()[0]
    assert sorted(got) == sorted(expected)
    for name, value in got.items():
        np.testing.assert_allclose(value.asnumpy(), expected[name], rtol=1e-5, atol=1e-6, err_msg=name)
    np.testing.assert_allclose(chain.predict(_data()).asnumpy(), whole.predict(_data()).asnumpy(), rtol=1e-5)


def test_shapes_names_and_labels_of_the_chain() -> None:
    chain = _chain()
    data = _data()
    chain.bind(data.provide_data, data.provide_label)
    assert chain.data_names == ["data"] and chain.output_names == ["softmax_output"]
    assert chain.output_shapes == [("softmax_output", (40, 2))]
    assert [tuple(d) for d in chain.label_shapes] == [("softmax_label", (40,))]
    assert chain._modules[1].inputs_need_grad and not chain._modules[0].inputs_need_grad


def test_fit_learns_through_the_chain() -> None:
    mx.random.seed(0)
    chain = _chain()
    chain.fit(_data(400), num_epoch=3, initializer=mx.init.Xavier(), optimizer_params={"learning_rate": 0.1})
    assert chain.score(_data(200, seed=1), "acc")[0][1] > 0.9


def test_chain_errors_are_clear() -> None:
    data = _data()
    with pytest.raises(DataError, match="data_shapes name \\['relu1_output'\\].*auto_wiring=True renames them"):
        _chain(auto_wiring=False).bind(data.provide_data, data.provide_label)
    with pytest.raises(DataError, match="unknown options \\['take_label'\\]"):
        mx.mod.SequentialModule().add(mx.mod.Module(_body(sym.Variable("data"))), take_label=True)
    twice = mx.mod.SequentialModule().add(mx.mod.Module(_body(sym.Variable("data")), label_names=None))
    twice.add(mx.mod.Module(_body(sym.Variable("data")), label_names=None), auto_wiring=True)
    twice.bind(data.provide_data)
    with pytest.raises(DataError, match="parameter 'fc1_weight' is in module 0 and module 1"):
        twice.init_params()


def test_chain_has_no_symbol_and_takes_every_module_s_params_with_allow_missing(tmp_path) -> None:
    # MXNet 1.9.1: a SequentialModule's symbol is None, so set_params(allow_missing=True) checks the
    # names against no one module's graph, and do_checkpoint writes the parameters only (the last
    # module's graph with every module's parameters would be a checkpoint that loads wrongly)
    chain = _train(_chain())
    assert chain.symbol is None
    params = {name: value + 1.0 for name, value in _start_params().items()}
    chain.set_params(params, {}, allow_missing=True)
    got, _ = chain.get_params()
    np.testing.assert_allclose(got["fc1_weight"].asnumpy(), params["fc1_weight"].asnumpy())
    prefix = str(tmp_path / "chain")
    mx.callback.do_checkpoint(prefix)(0, chain.symbol, *chain.get_params())
    assert sorted(p.name for p in tmp_path.iterdir()) == ["chain-0001.params"]


def test_input_grads_of_the_chain_are_the_composed_module_s() -> None:
    # README departure: MXNet 1.9.1's SequentialModule never records inputs_need_grad, so its get_input_grads
    # always fails an assertion; the chain's are the first module's, as the composed network's are
    batch = next(iter(_data()))
    grads = []
    for mod in (_chain(), mx.mod.Module(_head(_body(sym.Variable("data"))))):
        mod.bind(batch.provide_data, batch.provide_label, inputs_need_grad=True)
        mod.init_params(arg_params=_start_params())
        mod.forward_backward(batch)
        assert mod.inputs_need_grad
        grads.append(mod.get_input_grads()[0].asnumpy())
    assert grads[0].shape == (40, 5) and np.abs(grads[0]).sum() > 0
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-5, atol=1e-7)
