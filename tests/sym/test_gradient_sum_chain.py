"""Gradients of many terms: summed by a chain of in-place adds, each run as soon as its term is made.

A weight used by 12 layers receives 12 gradient terms.  Summed by one n-ary node, all 12 were
alive at once at the end of the backward pass; from 8 terms on (MXNet's
``MXNET_EXEC_INPLACE_GRAD_SUM_CAP``) the gradient pass chains ``_grad_add`` nodes instead, each
adding one term into the running sum's block, and the backward pass runs each node as soon as its
inputs are made.  The values are the n-ary sum's (``LAZYND_INPLACE_GRAD_SUM_CAP`` set high keeps
it), bitwise on the CPU: both add the terms one by one in the same order.
"""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx
import lazynd_sym as sym
from lazynd.errors import LazyNDError

N, D, USES = 2, 128, 12
TERM_BYTES = D * D * 4  # one gradient term of the shared weight
NARY = "1000"  # a cap no sum here reaches: the n-ary sum everywhere


def _shared_weight_net(act: str | None = "tanh") -> sym.Symbol:
    """``USES`` dense layers that all multiply by one weight ``w`` (each with ``act`` after it)."""
    w, h = sym.Variable("w"), sym.Variable("data")
    for k in range(USES):
        h = sym.FullyConnected(h, w, num_hidden=D, no_bias=True, name=f"fc{k}")
        h = sym.Activation(h, act_type=act) if act else h
    return sym.MakeLoss(sym.sum(h), name="loss")


def _bind(net: sym.Symbol, ctx: mx.Context, req: str, monkeypatch, cap: str | None = None):
    if cap is None:
        monkeypatch.delenv("LAZYND_INPLACE_GRAD_SUM_CAP", raising=False)
    else:
        monkeypatch.setenv("LAZYND_INPLACE_GRAD_SUM_CAP", cap)
    ex = net.simple_bind(ctx, data=(N, D), grad_req={"data": "null", "w": req})
    rng = np.random.default_rng(3)
    ex.arg_dict["data"][:] = rng.standard_normal((N, D)).astype(np.float32)
    ex.arg_dict["w"][:] = (rng.standard_normal((D, D)) / np.sqrt(D)).astype(np.float32)
    ex.grad_dict["w"][:] = 0.5 if req == "add" else 0.0
    return ex


def _ops(ex) -> list[str]:
    return [ex._graph.nodes[i].opdef.name for i in ex._backward_order]


def test_twelve_uses_of_a_weight_plan_memory_for_a_few_terms_not_twelve(monkeypatch):
    ex = _bind(_shared_weight_net(), mx.cpu(), "write", monkeypatch)
    # the n-ary sum kept all 12 terms: 12.2 terms' worth; the chain holds the sum and one term
    assert ex.planned_bytes < 4 * TERM_BYTES
    nary = _bind(_shared_weight_net(), mx.cpu(), "write", monkeypatch, cap=NARY)
    assert nary.planned_bytes > 10 * TERM_BYTES


def test_an_unrolled_lstm_frees_each_steps_weight_terms_as_it_goes(monkeypatch):
    """The depth-first order made the input layer's terms (and kept the gates' gradients for them)
    only after walking every step back, first step first, while the chain adds the last step's term
    first: every term waited, chain or not.  Run as soon as their inputs are made, they are not kept."""
    monkeypatch.delenv("LAZYND_INPLACE_GRAD_SUM_CAP", raising=False)
    steps, hidden, batch = 12, 32, 4
    cell = mx.rnn.LSTMCell(hidden, prefix="lstm_")
    embedded = sym.Embedding(sym.Variable("data"), input_dim=50, output_dim=hidden, name="embed")
    outputs, _ = cell.unroll(steps, inputs=embedded, merge_outputs=True, layout="NTC")
    net = sym.MakeLoss(sym.sum(outputs), name="loss")
    reqs = {name: "null" if name == "data" else "write" for name in net.list_arguments()}
    ex = net.simple_bind(mx.cpu(), data=(batch, steps), grad_req=reqs)
    term = 4 * hidden * hidden * 4  # one step's term of the i2h or h2h weight
    assert ex.planned_bytes < 12 * term  # 28.7 terms' worth in depth-first order, with or without chains


@pytest.mark.parametrize("fusion", ["1", "0"])
def test_each_link_adds_in_place_right_after_its_term_and_is_never_fused(monkeypatch, fusion):
    monkeypatch.setenv("LAZYND_SYM_FUSION", fusion)
    ex = _bind(_shared_weight_net(), mx.cpu(), "write", monkeypatch)
    ops = _ops(ex)
    assert ops.count("_grad_add") == USES - 1 and "ElementWiseSum" not in ops
    assert not any("_grad_add" in line for line in ex.debug_str().splitlines() if "[fused:" in line)
    for k, op in enumerate(ops):
        if op == "_grad_add":
            assert ops[k - 1] == "_backward_FullyConnected"  # the step that made its term
    links = [line for line in ex.debug_str().splitlines() if line.startswith("_grad_add ")]
    # every link but the last writes in place of the running sum; the last writes the gradient array
    assert all("(in place of" in line for line in links[:-1]) and "external" in links[-1]


@pytest.mark.parametrize("bulk", ["1", "0"])
@pytest.mark.parametrize("req", ["write", "add"])
def test_the_chain_gives_the_n_ary_sums_gradient(ctx, monkeypatch, req, bulk):
    monkeypatch.setenv("LAZYND_EXEC_BULK", bulk)
    got = _bind(_shared_weight_net(), ctx, req, monkeypatch)
    want = _bind(_shared_weight_net(), ctx, req, monkeypatch, cap=NARY)
    assert "_grad_add" in _ops(got) and "ElementWiseSum" in _ops(want)
    for ex in (got, want):
        for _ in range(2):  # 'add' accumulates two passes into the 0.5 the array started with
            ex.forward(is_train=True)
            ex.backward()
    if ctx.device_type == "cpu":
        np.testing.assert_array_equal(got.grad_dict["w"].asnumpy(), want.grad_dict["w"].asnumpy())
    else:
        np.testing.assert_allclose(got.grad_dict["w"].asnumpy(), want.grad_dict["w"].asnumpy(), rtol=1e-5, atol=1e-6)


def test_backward_twice_after_one_forward_gives_the_same_gradient(monkeypatch):
    ex = _bind(_shared_weight_net(act=None), mx.cpu(), "write", monkeypatch)
    ex.forward(is_train=True)
    ex.backward()
    first = ex.grad_dict["w"].asnumpy()
    ex.backward()
    np.testing.assert_array_equal(ex.grad_dict["w"].asnumpy(), first)
    x, w = ex.arg_dict["data"].asnumpy().astype(np.float64), ex.arg_dict["w"].asnumpy().astype(np.float64)
    # d sum(x (W^T)^12) / dW = sum over uses k of (W^k)^T 1^T x (W^T)^(11-k), all in (out, in) layout
    ones, want = np.ones((N, D)), np.zeros((D, D))
    for k in range(USES):
        upstream = ones @ np.linalg.matrix_power(w, USES - 1 - k)  # gradient reaching layer k's output
        want += upstream.T @ (x @ np.linalg.matrix_power(w.T, k))
    np.testing.assert_allclose(first, want, rtol=1e-3, atol=1e-4)


@pytest.mark.parametrize(
    ("variable", "cap", "chained"),
    [
        ("LAZYND_INPLACE_GRAD_SUM_CAP", "12", True),  # 12 terms reach a cap of 12
        ("LAZYND_INPLACE_GRAD_SUM_CAP", "13", False),
        ("MXNET_EXEC_INPLACE_GRAD_SUM_CAP", "13", False),  # MXNet's variable is honoured too
        ("MXNET_EXEC_INPLACE_GRAD_SUM_CAP", "0", True),
    ],
)
def test_the_cap_comes_from_the_environment(monkeypatch, variable, cap, chained):
    monkeypatch.delenv("LAZYND_INPLACE_GRAD_SUM_CAP", raising=False)
    monkeypatch.setenv(variable, cap)
    ex = _shared_weight_net().simple_bind(mx.cpu(), data=(N, D), grad_req={"data": "null", "w": "write"})
    assert ("_grad_add" in _ops(ex)) is chained and ("ElementWiseSum" in _ops(ex)) is not chained


def test_a_cap_that_is_not_a_count_is_refused_naming_the_variable(monkeypatch):
    monkeypatch.setenv("LAZYND_INPLACE_GRAD_SUM_CAP", "many")
    with pytest.raises(LazyNDError, match="LAZYND_INPLACE_GRAD_SUM_CAP.*'many'"):
        _shared_weight_net().simple_bind(mx.cpu(), data=(N, D), grad_req={"data": "null", "w": "write"})


def test_few_terms_keep_one_n_ary_sum(monkeypatch):
    monkeypatch.delenv("LAZYND_INPLACE_GRAD_SUM_CAP", raising=False)
    w = sym.Variable("w")
    net = sym.MakeLoss(sym.sum(sym.add_n(*[sym.sin(sym.Variable(f"x{k}") * w) for k in range(7)])))
    reqs = {name: "write" if name == "w" else "null" for name in net.list_arguments()}
    ex = net.simple_bind(mx.cpu(), w=(3,), grad_req=reqs, **{f"x{k}": (3,) for k in range(7)})
    assert "_grad_add" not in _ops(ex) and "ElementWiseSum" in _ops(ex)  # 7 terms: under MXNet's 8
