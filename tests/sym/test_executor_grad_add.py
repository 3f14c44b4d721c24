"""Executors with ``grad_req='add'``: each gradient is added into its array by the step making it.

As MXNet's backward operators accumulate into the gradient arrays (kAddTo), an 'add' gradient
needs no block of its own past the step that makes it; adding them all in the backward pass's
tail kept every weight gradient alive at once.  The values must not change: each backward adds
once more, a weight used twice gets the sum of both uses, and 'write', 'add' and 'null' mix per
argument.  The reference gradients are written in NumPy.
"""

from __future__ import annotations

import numpy as np
import pytest
from executor_bulk_nets import MLP_SHAPES, failing_net

import lazynd as mx
import lazynd_sym as sym
from lazynd.errors import EngineError

N, D = 4, 5


def _deep_mlp() -> sym.Symbol:
    """Four wide layers on a batch of 2: the weights' gradients dwarf the activations."""
    x = sym.Variable("data")
    for k in range(4):
        x = sym.relu(sym.FullyConnected(x, num_hidden=256, name=f"fc{k}"))
    return sym.MakeLoss(sym.sum(x), name="loss")


def _weight_gradient_bytes(ex) -> list[int]:
    return [g.size * np.dtype(g.dtype).itemsize for name, g in ex.grad_dict.items() if name.endswith("weight")]


def test_add_gradients_are_not_all_alive_at_once():
    net = _deep_mlp()
    reqs = {name: "null" if name == "data" else None for name in net.list_arguments()}
    write = net.simple_bind(mx.cpu(), data=(2, 256), grad_req={n: r or "write" for n, r in reqs.items()})
    add = net.simple_bind(mx.cpu(), data=(2, 256), grad_req={n: r or "add" for n, r in reqs.items()})
    weights = _weight_gradient_bytes(add)
    # with every gradient kept to the tail, 'add' planned all of them on top of 'write'
    assert add.planned_bytes - write.planned_bytes < sum(weights) - max(weights)
    graph = add._graph
    grad_blocks = {graph.attrs["storage_id"][eid] for eid in add._grad_entry.values()}
    assert len(grad_blocks) < len(add._grad_entry)  # the gradients' blocks are reused


def _shared_weight_net() -> sym.Symbol:
    """``y = (x w^T) w^T + b``: the weight ``w`` is used twice."""
    w = sym.Variable("w")
    h = sym.FullyConnected(sym.Variable("x"), w, num_hidden=D, no_bias=True, name="fc_a")
    return sym.FullyConnected(h, w, sym.Variable("b"), num_hidden=D, name="fc_b")


def _shared_weight_gradients(x: np.ndarray, w: np.ndarray, og: np.ndarray) -> dict[str, np.ndarray]:
    h = x @ w.T
    return {"x": og @ w @ w, "w": og.T @ h + (og @ w).T @ x, "b": og.sum(axis=0)}


def _run_twice(ctx, reqs: dict[str, str], bulk: bool, monkeypatch) -> tuple[dict, dict, dict]:
    """Bind the shared-weight net, fill the gradient arrays with ones, run forward and backward twice."""
    monkeypatch.setenv("LAZYND_EXEC_BULK", "1" if bulk else "0")
    rng = np.random.default_rng(7)
    values = {"x": rng.standard_normal((N, D)), "w": rng.standard_normal((D, D)), "b": rng.standard_normal(D)}
    values = {k: v.astype(np.float32) for k, v in values.items()}
    og = rng.standard_normal((N, D)).astype(np.float32)
    args = {k: mx.nd.array(v, ctx=ctx) for k, v in values.items()}
    grads = {k: mx.nd.ones(v.shape, ctx=ctx) for k, v in values.items()}
    ex = _shared_weight_net().bind(ctx, args, args_grad=grads, grad_req=reqs)
    for _ in range(2):
        ex.forward(is_train=True)
        ex.backward([mx.nd.array(og, ctx=ctx)])
    got = {k: g.asnumpy() for k, g in ex.grad_dict.items()}
    return got, _shared_weight_gradients(values["x"], values["w"], og), values


def _expected(req: str, once: np.ndarray) -> np.ndarray:
    return {"add": 1 + 2 * once, "write": once, "null": np.ones_like(once)}[req]


@pytest.mark.parametrize("bulk", [True, False], ids=["bulk", "per-op"])
@pytest.mark.parametrize(
    "reqs",
    [
        {"x": "add", "w": "add", "b": "add"},
        {"x": "write", "w": "add", "b": "null"},
        {"x": "null", "w": "add", "b": "write"},
    ],
    ids=["all add", "write add null", "null add write"],
)
def test_two_backward_passes_add_twice_with_a_shared_weight(reqs, bulk, monkeypatch):
    got, once, _ = _run_twice(mx.cpu(), reqs, bulk, monkeypatch)
    for name, req in reqs.items():
        np.testing.assert_allclose(got[name], _expected(req, once[name]), rtol=1e-4, atol=1e-4, err_msg=name)


@pytest.mark.gpu
@pytest.mark.skipif(mx.num_gpus() == 0, reason="needs an NVIDIA GPU with CuPy (none visible)")
@pytest.mark.parametrize("bulk", [True, False], ids=["bulk", "per-op"])
def test_two_backward_passes_add_twice_on_a_gpu(bulk, monkeypatch):
    reqs = {"x": "write", "w": "add", "b": "add"}
    for _ in range(2):  # the second executor's passes replay as CUDA graphs from their second run
        got, once, _ = _run_twice(mx.gpu(0), reqs, bulk, monkeypatch)
        for name, req in reqs.items():
            np.testing.assert_allclose(got[name], _expected(req, once[name]), rtol=1e-4, atol=1e-4, err_msg=name)


def test_an_add_gradient_no_step_makes_is_added_in_the_tail():
    # the gradient of a sum's terms is the head gradient itself: no backward step produces it
    a, b = sym.Variable("a"), sym.Variable("b")
    args = {"a": mx.nd.ones((3,)), "b": mx.nd.ones((3,))}
    grads = {"a": mx.nd.ones((3,)), "b": mx.nd.zeros((3,))}
    ex = (a + b).bind(mx.cpu(), args, args_grad=grads, grad_req={"a": "add", "b": "write"})
    og = mx.nd.array([1.0, 2.0, 3.0])
    for _ in range(2):
        ex.forward(is_train=True)
        ex.backward([og])
    np.testing.assert_array_equal(grads["a"].asnumpy(), [3.0, 5.0, 7.0])
    np.testing.assert_array_equal(grads["b"].asnumpy(), [1.0, 2.0, 3.0])


def test_add_gradients_push_no_operation_of_their_own(recording_engine, monkeypatch):
    # one operation per operator, as for 'write': no tail operation adding the gradients
    monkeypatch.setenv("LAZYND_EXEC_BULK", "0")
    names = {}
    for req in ("write", "add"):
        ex = _shared_weight_net().simple_bind(mx.cpu(), x=(N, D), grad_req=req)
        recording_engine.names.clear()
        ex.forward(is_train=True)
        ex.backward([mx.nd.ones((N, D))])
        names[req] = list(recording_engine.names)
    assert names["add"] == names["write"]
    assert "executor_backward_grads" not in names["add"]


@pytest.mark.parametrize("bulk", [True, False], ids=["bulk", "per-op"])
def test_a_backward_skipped_by_an_error_adds_nothing(bulk, monkeypatch):
    monkeypatch.setenv("LAZYND_EXEC_BULK", "1" if bulk else "0")
    reqs = {"data": "null", "fc1_weight": "add", "fc1_bias": "add", "fc2_weight": "add", "fc2_bias": "add"}
    ex = failing_net().simple_bind(mx.cpu(), grad_req=reqs, **MLP_SHAPES)
    ex.arg_dict["data"][:] = 1.0
    ex.arg_dict["fc2_weight"][:] = 0.5
    ex.arg_dict["softmax_label"][:] = 1.0
    for name, req in reqs.items():
        if req == "add":
            ex.grad_dict[name][:] = 0.0
    ex.arg_dict["fc1_weight"][:] = 0.5
    ex.arg_dict["fc1_bias"][:] = 0.0
    ex.forward(is_train=True)
    ex.backward()
    once = ex.grad_dict["fc2_weight"].asnumpy().copy()
    ex.arg_dict["fc1_bias"][:] = -100.0  # every fc1 output is negative: 'guard' raises
    ex.forward(is_train=True)
    ex.backward()  # reads the failed outputs: skipped, inheriting the error
    with pytest.raises(EngineError, match="guard"):
        ex.grad_dict["fc2_weight"].asnumpy()
    mx.nd.waitall()  # the error was reported
    ex.arg_dict["fc1_bias"][:] = 0.0
    ex.forward(is_train=True)
    ex.backward()
    np.testing.assert_allclose(ex.grad_dict["fc2_weight"].asnumpy(), 2 * once, rtol=1e-5)


_GPU = pytest.mark.skipif(mx.num_gpus() == 0, reason="needs an NVIDIA GPU with CuPy (none visible)")


@pytest.mark.parametrize(
    "second", [mx.cpu(1), pytest.param(mx.gpu(0), marks=[pytest.mark.gpu, _GPU])], ids=["cpu+cpu", "cpu+gpu"]
)
def test_add_gradients_of_an_executor_placed_on_two_contexts(second):
    # each step adds on its own context (a placed GPU executor pushes every step where it runs)
    with sym.AttrScope(ctx_group="first"):
        h = sym.FullyConnected(sym.Variable("x"), sym.Variable("w1"), num_hidden=D, no_bias=True, name="fc1")
    with sym.AttrScope(ctx_group="second"):
        y = sym.FullyConnected(h, sym.Variable("w2"), num_hidden=D, no_bias=True, name="fc2")
    rng = np.random.default_rng(3)
    values = {k: rng.standard_normal(s).astype(np.float32) for k, s in (("x", (N, D)), ("w1", (D, D)), ("w2", (D, D)))}
    og = rng.standard_normal((N, D)).astype(np.float32)
    grads = {}
    for req in ("write", "add"):
        ex = y.simple_bind(mx.cpu(), group2ctx={"first": mx.cpu(0), "second": second}, x=(N, D), grad_req=req)
        for name, value in values.items():
            ex.arg_dict[name][:] = value
            ex.grad_dict[name][:] = 1.0
        for _ in range(2):
            ex.forward(is_train=True)
            ex.backward([mx.nd.array(og, ctx=ex.outputs[0].context)])
        grads[req] = {name: g.asnumpy() for name, g in ex.grad_dict.items()}
    for name in values:
        np.testing.assert_allclose(grads["add"][name], 1 + 2 * grads["write"][name], rtol=1e-4, err_msg=name)
