"""Monitor: statistics of outputs, weights and gradients every ``interval`` batches, alone and through fit."""

from __future__ import annotations

import logging

import numpy as np
import pytest

import lazynd as mx
import lazynd_sym as sym
from lazynd.errors import LazyNDError
from lazynd.monitor import Monitor
from lazynd_sym.model import FeedForward


def _net() -> sym.Symbol:
    net = sym.FullyConnected(sym.Variable("data"), num_hidden=4, name="fc1")
    net = sym.Activation(net, act_type="relu", name="relu1")
    net = sym.FullyConnected(net, num_hidden=2, name="fc2")
    return sym.SoftmaxOutput(net, name="softmax")


def _executor():
    ex = _net().simple_bind(mx.cpu(), data=(3, 5), softmax_label=(3,))
    for arr in ex.arg_dict.values():
        arr[:] = np.linspace(-1, 1, arr.size).reshape(arr.shape).astype(np.float32)
    return ex


def _step(mon: Monitor, ex) -> list:
    mon.tic()
    ex.forward(is_train=True, data=mx.nd.ones((3, 5)), softmax_label=mx.nd.array([0, 1, 0]))
    ex.backward()
    return mon.toc()


def test_default_statistic_is_the_root_mean_square_of_each_array() -> None:
    ex = _executor()
    mon = Monitor(1, pattern="fc1_(weight|output)$")
    mon.install(ex)
    rows = {name: float(text) for _, name, text in _step(mon, ex)}
    weight = ex.arg_dict["fc1_weight"].asnumpy()
    assert rows["fc1_weight"] == pytest.approx(np.sqrt(np.mean(weight**2)), rel=1e-5)
    out = np.ones((3, 5), np.float32) @ weight.T + ex.arg_dict["fc1_bias"].asnumpy()
    assert rows["fc1_output"] == pytest.approx(np.sqrt(np.mean(out**2)), rel=1e-5)


def test_rows_cover_outputs_weights_gradients_and_follow_the_pattern() -> None:
    ex = _executor()
    mon = Monitor(1, pattern="fc2", sort=True)
    mon.install(ex)
    names = [name for _, name, _ in _step(mon, ex)]
    assert names == sorted(names)
    # gradients are the backward node's outputs, one per input of fc2 (data, weight, bias), as in MXNet 1.9.1
    assert set(names) == {
        "fc2_output",
        "fc2_weight",
        "fc2_bias",
        "fc2_backward_output0",
        "fc2_backward_output1",
        "fc2_backward_output2",
    }


def test_only_every_interval_th_batch_is_recorded() -> None:
    ex = _executor()
    mon = Monitor(3, pattern="fc1_output")
    mon.install(ex)
    recorded = [[step for step, _, _ in _step(mon, ex)] for _ in range(7)]
    assert recorded == [[1], [], [], [4], [], [], [7]]


def test_custom_stat_func_may_return_several_arrays() -> None:
    ex = _executor()
    mon = Monitor(1, stat_func=lambda x: [mx.nd.max(x), mx.nd.min(x)], pattern="fc1_weight$")
    mon.install(ex)
    ((_, name, text),) = _step(mon, ex)
    assert name == "fc1_weight"
    assert text == "1.0\t-1.0\t"  # as MXNet writes it: each value followed by a tab


def test_statistic_text_is_a_scalar_only_for_shape_1_as_mxnet() -> None:
    ex = _executor()
    mon = Monitor(1, stat_func=lambda x: mx.nd.max(x).reshape((1, 1)), pattern="fc1_weight$")
    mon.install(ex)
    ((_, _, text),) = _step(mon, ex)
    assert text == "[[1.]]\t"


def test_toc_print_logs_one_line_per_array(caplog) -> None:
    ex = _executor()
    mon = Monitor(1, pattern="relu1_output")
    mon.install(ex)
    mon.tic()
    ex.forward(data=mx.nd.ones((3, 5)))
    with caplog.at_level(logging.INFO):
        mon.toc_print()
    assert [r.getMessage().split()[:3] for r in caplog.records] == [["Batch:", "1", "relu1_output"]]


def test_fit_with_a_monitor_prints_stats_every_interval_on_every_device(caplog) -> None:
    rng = np.random.default_rng(0)
    data, label = rng.normal(size=(40, 5)).astype(np.float32), rng.integers(0, 2, 40).astype(np.float32)
    ff = FeedForward(_net(), ctx=[mx.cpu(0), mx.cpu(1)], num_epoch=1, numpy_batch_size=10, progress_bar=False)
    with caplog.at_level(logging.INFO):
        ff.fit(data, label, monitor=Monitor(2, pattern="fc2_backward_output1"))
    lines = [r.getMessage().split() for r in caplog.records if r.getMessage().startswith("Batch:")]
    # batches 1 and 3 of 4, one executor per device
    expected = [(1, "fc2_backward_output1")] * 2 + [(3, "fc2_backward_output1")] * 2
    assert [(int(words[1]), words[2]) for words in lines] == expected
    assert all(float(words[3]) > 0 for words in lines)


def test_after_a_reshape_toc_lists_each_array_once_from_the_executor_that_ran() -> None:
    # the module keeps the executors of its first shapes, monitored too; MXNet 1.9.1 lists each
    # array once, with the batch just run (its data row: 1.0), not the unused executors' (0.0)
    mod = mx.mod.Module(_net())
    mod.bind([("data", (4, 5))], [("softmax_label", (4,))])
    mod.init_params(mx.init.One())
    mod.reshape([("data", (2, 5))], [("softmax_label", (2,))])
    mon = Monitor(1, pattern="data|fc1_weight|fc2_output", sort=True)
    mod.install_monitor(mon)
    mon.tic()
    mod.forward(mx.io.DataBatch([mx.nd.ones((2, 5))], [mx.nd.zeros(2)]), is_train=False)
    assert [(name, text) for _, name, text in mon.toc()] == [
        ("data", "1.0\t"),
        ("fc1_weight", "1.0\t"),
        ("fc2_output", "20.0\t"),
    ]


def test_toc_without_a_pass_lists_the_arrays_of_every_installed_executor() -> None:
    ex = _executor()
    mon = Monitor(1, pattern="fc1_weight$")
    mon.install(ex)
    mon.tic()
    assert [name for _, name, _ in mon.toc()] == ["fc1_weight"]


def test_bad_arguments_are_refused_with_clear_errors() -> None:
    with pytest.raises(LazyNDError, match="interval must be a positive int, got 0"):
        Monitor(0)
    with pytest.raises(LazyNDError, match="pattern '\\(' is not a regular expression"):
        Monitor(1, pattern="(")
    with pytest.raises(LazyNDError, match="stat_func must be callable, got int"):
        Monitor(1, stat_func=3)
    with pytest.raises(LazyNDError, match="expected an Executor, got str"):
        Monitor(1).install("executor")
    ex = _executor()
    mon = Monitor(1, stat_func=lambda x: 1.0, pattern="fc1_weight$")
    mon.install(ex)
    with pytest.raises(LazyNDError, match="stat_func must return an NDArray or a list of them, got float"):
        _step(mon, ex)


def test_mx_mon_is_the_monitor_module() -> None:
    assert mx.mon.Monitor is Monitor
