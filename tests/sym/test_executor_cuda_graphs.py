"""Executors replaying their passes as CUDA graphs (on a GPU by default; ``LAZYND_CUDA_GRAPHS=0``
turns them off): the same values as eager passes, step after step with new data; which executors
and passes may be captured."""

from __future__ import annotations

import numpy as np
import pytest
from executor_bulk_nets import CONV_SHAPES, MLP_SHAPES, conv_net, mlp

import lazynd as mx
import lazynd_sym as sym
from lazynd.backend.cuda.graphs import capture_supported
from lazynd_sym.executor.run import graphs_enabled


def _can_capture() -> bool:
    if mx.num_gpus() == 0:
        return False
    import cupy

    return capture_supported(cupy)


needs_capture = pytest.mark.skipif(
    not _can_capture(), reason="needs a GPU whose CuPy captures streams (none visible, or the CUDA emulator's CuPy)"
)


@pytest.mark.parametrize(("value", "enabled"), [(None, True), ("0", False), ("off", False), ("1", True), ("", True)])
def test_graphs_are_enabled_by_the_environment(monkeypatch, value, enabled):
    if value is None:
        monkeypatch.delenv("LAZYND_CUDA_GRAPHS", raising=False)
    else:
        monkeypatch.setenv("LAZYND_CUDA_GRAPHS", value)
    assert graphs_enabled() is enabled


def test_an_executor_on_the_cpu_has_no_graphs(monkeypatch):
    monkeypatch.setenv("LAZYND_CUDA_GRAPHS", "1")
    ex = mlp().simple_bind(mx.cpu(), **MLP_SHAPES)
    assert ex._graphs is None


def _bind(net, shapes, graphs, monkeypatch):
    monkeypatch.setenv("LAZYND_CUDA_GRAPHS", "1" if graphs else "0")
    grad_req = {name: "write" for name in net.list_arguments() if name != "softmax_label"}
    ex = net.simple_bind(mx.gpu(0), grad_req=grad_req, **shapes)
    rng = np.random.default_rng(5)
    for name, arr in ex.arg_dict.items():
        if name != "softmax_label":
            arr[:] = rng.standard_normal(arr.shape).astype(np.float32)
    for arr in ex.aux_arrays:
        arr[:] = np.abs(rng.standard_normal(arr.shape)).astype(np.float32)
    return ex


def _steps(ex, shapes, steps=4):
    """Training steps on new data each time (given through forward's kwargs every other step, so
    both the bound-argument and the copied-argument paths run); every output and gradient."""
    rng = np.random.default_rng(9)
    seen = []
    for k in range(steps):
        data = rng.standard_normal(shapes["data"]).astype(np.float32)
        label = rng.integers(0, 4, shapes["softmax_label"]).astype(np.float32)
        if k % 2:
            ex.forward(
                is_train=True,
                data=mx.nd.array(data, ctx=mx.gpu(0)),
                softmax_label=mx.nd.array(label, ctx=mx.gpu(0)),
            )
        else:
            ex.arg_dict["data"][:] = data
            ex.arg_dict["softmax_label"][:] = label
            ex.forward(is_train=True)
        ex.backward()
        seen.append([o.asnumpy() for o in ex.outputs] + [g.asnumpy() for g in ex.grad_arrays if g is not None])
        seen.append([a.asnumpy() for a in ex.aux_arrays])
    ex.forward(is_train=False)
    seen.append([o.asnumpy() for o in ex.outputs])
    return seen


@pytest.mark.parametrize(("net", "shapes"), [(mlp, MLP_SHAPES), (conv_net, CONV_SHAPES)], ids=["mlp", "conv"])
@pytest.mark.gpu
@needs_capture
def test_graph_replays_give_the_eager_passes_values(monkeypatch, net, shapes):
    eager = _bind(net(), shapes, False, monkeypatch)
    graphed = _bind(net(), shapes, True, monkeypatch)
    assert eager._graphs is None and graphed._graphs is not None
    want, got = _steps(eager, shapes), _steps(graphed, shapes)
    assert graphed._graphs.failures == {}
    for key in ("forward_train", "backward"):
        assert graphed._graphs.captured(key), key
    for k, (a, b) in enumerate(zip(want, got, strict=True)):
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            np.testing.assert_allclose(y, x, rtol=1e-6, atol=1e-7, err_msg=f"record {k}, array {i}")


@pytest.mark.gpu
@needs_capture
def test_a_net_drawing_random_numbers_is_not_captured(monkeypatch):
    net = sym.SoftmaxOutput(
        sym.FullyConnected(sym.Dropout(sym.Variable("data"), p=0.5), num_hidden=4, name="fc"), name="softmax"
    )
    ex = _bind(net, MLP_SHAPES, True, monkeypatch)
    assert ex._graphs is None


@pytest.mark.gpu
@needs_capture
def test_a_monitored_pass_runs_eagerly_and_the_graph_stays(monkeypatch):
    ex = _bind(mlp(), MLP_SHAPES, True, monkeypatch)
    for _ in range(2):
        ex.forward(is_train=True)
    assert ex._graphs.captured("forward_train")
    names = []
    ex.set_monitor_callback(lambda name, array: names.append(name))
    ex.forward(is_train=True)
    mx.nd.waitall()
    assert names, "the monitor saw no outputs"
    ex.set_monitor_callback(None)
    ex.forward(is_train=True)
    assert ex._graphs.captured("forward_train")


@needs_capture
def test_a_device_check_in_a_graph_reports_at_every_replay(monkeypatch):
    # softmax_cross_entropy checks its labels on the device (lazynd/backend/cuda/checks.py): the
    # check's kernel is in the graph, and each replay given a bad label reports it at the next wait
    monkeypatch.setenv("LAZYND_CUDA_GRAPHS", "1")
    net = sym.softmax_cross_entropy(sym.Variable("data"), sym.Variable("label"))
    ex = net.simple_bind(mx.gpu(0), grad_req="null", data=(2, 3), label=(2,))
    ex.arg_dict["data"][:] = np.ones((2, 3), np.float32)
    for step, bad in enumerate((None, None, 4, None, 7, None)):
        ex.arg_dict["label"][:] = np.array([0, 1 if bad is None else bad], np.float32)
        out = ex.forward(is_train=False)[0]
        if bad is None:
            assert np.isfinite(out.asnumpy()).all(), step
        else:
            with pytest.raises(mx.OperatorError, match=rf"label out of range: {bad} at position 1"):
                out.asnumpy()
    assert ex._graphs.captured("forward"), ex._graphs.failures
