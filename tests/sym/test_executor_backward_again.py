"""Executors: backward run again after one forward (as MXNet allows), e.g. with another head gradient.

The memory plan may let a backward step reuse the block of a forward value; a second backward
is refused only when a value the backward pass reads (not just its shape) was overwritten.
The reference gradients are written in NumPy; MXNet 1.9.1 gives the same for these graphs.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

import lazynd as mx
import lazynd_sym as sym
from lazynd.errors import LazyNDError

# each case: f applied to square(fc(data)) as a symbol, and the gradient of f for a head gradient
Head = Callable[[sym.Symbol], sym.Symbol]
HeadGrad = Callable[[np.ndarray, np.ndarray, dict], np.ndarray]


def _grad_of_slice(g: np.ndarray, h: np.ndarray, args: dict) -> np.ndarray:
    dh = np.zeros_like(h)
    dh[0:2, 1:3] = g
    return dh


CASES: dict[str, tuple[Head, HeadGrad, dict]] = {
    "sum": (lambda h: sym.sum(h, axis=1), lambda g, h, args: np.repeat(g[:, None], h.shape[1], 1), {}),
    "mean": (
        lambda h: sym.mean(h, axis=1),
        lambda g, h, args: np.repeat(g[:, None], h.shape[1], 1) / h.shape[1],
        {},
    ),
    "slice": (lambda h: sym.slice(h, begin=(0, 1), end=(2, 3)), _grad_of_slice, {}),
    "broadcast_add": (lambda h: sym.broadcast_add(h, sym.Variable("b")), lambda g, h, args: g, {"b": (1, 4)}),
}


def _bind(net: sym.Symbol, req: str, shapes: dict, seed: int = 3) -> tuple:
    reqs = {n: ("null" if n in ("idx", "sm_label") else req) for n in net.list_arguments()}
    ex = net.simple_bind(mx.cpu(), grad_req=reqs, **shapes)
    rng = np.random.default_rng(seed)
    values = {}
    for name, arr in ex.arg_dict.items():
        if name == "idx":
            values[name] = rng.integers(0, 6, arr.shape).astype(np.float32)
        elif name == "sm_label":
            values[name] = rng.integers(0, 3, arr.shape).astype(np.float32)
        else:
            values[name] = rng.uniform(-1, 1, arr.shape).astype(np.float32)
        arr[:] = values[name]
    for grad in ex.grad_dict.values():
        if grad is not None:  # None where an argument has no gradient (the labels), as in MXNet
            grad[:] = 0
    return ex, values, rng


def _fc_square_grads(values: dict, dh: np.ndarray) -> dict:
    """Gradients of data, fc_weight, fc_bias through h = square(data @ fc_weight.T + fc_bias)."""
    z = values["data"] @ values["fc_weight"].T + values["fc_bias"]
    dz = 2 * z * dh
    return {"data": dz @ values["fc_weight"], "fc_weight": dz.T @ values["data"], "fc_bias": dz.sum(0)}


def _twice(ex: object, heads: list) -> list[dict]:
    """Forward once, then one backward per head gradient; the gradients after each."""
    ex.forward(is_train=True)
    seen = []
    for head in heads:
        ex.backward(head)
        seen.append({name: grad.asnumpy().copy() for name, grad in ex.grad_dict.items() if grad is not None})
    return seen


@pytest.mark.parametrize("req", ["write", "add"])
@pytest.mark.parametrize("fusion", ["0", "1"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_backward_twice_through_a_gradient_that_reads_only_shapes(monkeypatch, case, fusion, req):
    # the gradients of sum, mean, slice and broadcast_add read the forward square only for its
    # shape; the plan reuses its block, and a second backward was refused
    monkeypatch.setenv("LAZYND_SYM_FUSION", fusion)
    head, head_grad, extra = CASES[case]
    net = head(sym.square(sym.FullyConnected(sym.Variable("data"), num_hidden=4, name="fc")))
    ex, values, rng = _bind(net, req, {"data": (3, 5), **extra})
    heads = [mx.nd.array(rng.uniform(-1, 1, ex.outputs[0].shape)) for _ in range(2)]
    seen = _twice(ex, heads)
    h = np.square(values["data"] @ values["fc_weight"].T + values["fc_bias"])
    total = {name: 0 for name in seen[0]}
    for k, head_array in enumerate(heads):
        g = head_array.asnumpy()
        expected = _fc_square_grads(values, head_grad(g, h, values))
        if case == "broadcast_add":
            expected["b"] = g.sum(0, keepdims=True)
        for name, grad in seen[k].items():
            total[name] = total[name] + expected[name] if req == "add" else expected[name]
            np.testing.assert_allclose(grad, total[name], rtol=1e-4, atol=1e-5, err_msg=f"{name} after {k + 1}")


@pytest.mark.parametrize("fusion", ["0", "1"])
def test_backward_twice_through_embedding_times_fc(monkeypatch, fusion):
    # the plan put a gradient in the block of the FullyConnected output that the other
    # gradient reads; it now takes another free block, so backward may run again
    monkeypatch.setenv("LAZYND_SYM_FUSION", fusion)
    emb = sym.Embedding(sym.Variable("idx"), input_dim=6, output_dim=4, name="emb")
    net = emb * sym.FullyConnected(sym.Variable("data"), num_hidden=4, name="fc")
    ex, values, rng = _bind(net, "write", {"data": (3, 5), "idx": (3,)})
    heads = [mx.nd.array(rng.uniform(-1, 1, (3, 4))) for _ in range(2)]
    seen = _twice(ex, heads)
    rows = values["idx"].astype(int)
    z = values["data"] @ values["fc_weight"].T + values["fc_bias"]
    for k, head_array in enumerate(heads):
        g = head_array.asnumpy()
        dz = g * values["emb_weight"][rows]
        expected = {"data": dz @ values["fc_weight"], "fc_weight": dz.T @ values["data"], "fc_bias": dz.sum(0)}
        expected["emb_weight"] = np.zeros_like(values["emb_weight"])
        np.add.at(expected["emb_weight"], rows, g * z)
        for name, grad in seen[k].items():
            np.testing.assert_allclose(grad, expected[name], rtol=1e-4, atol=1e-5, err_msg=f"{name} after {k + 1}")


@pytest.mark.parametrize("req", ["write", "add"])
def test_backward_twice_through_fc_relu_fc_softmax_output(req):
    # a loss output takes no head gradient: the second backward gives the same gradients
    # (added to the first with grad_req 'add'), as in MXNet
    hidden = sym.Activation(sym.FullyConnected(sym.Variable("data"), num_hidden=5, name="fc1"), act_type="relu")
    net = sym.SoftmaxOutput(sym.FullyConnected(hidden, num_hidden=3, name="fc2"), name="sm")
    ex, values, _ = _bind(net, req, {"data": (4, 6), "sm_label": (4,)})
    first, second = _twice(ex, [None, None])
    for name, grad in second.items():
        expected = 2 * first[name] if req == "add" else first[name]
        np.testing.assert_allclose(grad, expected, rtol=1e-5, atol=1e-6, err_msg=name)


def test_second_backward_is_still_refused_where_a_value_it_reads_was_overwritten():
    # with grad_req 'add' the bias gradient of fc lands in the block of fc's output, which the
    # gradient of the product reads (its value, not only its shape): no other free block fits
    emb = sym.Embedding(sym.Variable("idx"), input_dim=6, output_dim=4, name="emb")
    net = emb * sym.FullyConnected(sym.Variable("data"), num_hidden=4, name="fc")
    ex, _, rng = _bind(net, "add", {"data": (3, 5), "idx": (3,)})
    head = mx.nd.array(rng.uniform(-1, 1, (3, 4)))
    ex.forward(is_train=True)
    ex.backward(head)
    with pytest.raises(LazyNDError, match=r"second backward after one forward.*'fc_output' \(read by _mul"):
        ex.backward(head)
    ex.forward(is_train=True)
    ex.backward(head)  # a forward makes the values again


def _lenet() -> sym.Symbol:
    x = sym.Variable("data")
    for i, filters in enumerate((20, 50), 1):
        x = sym.Convolution(x, kernel=(5, 5), num_filter=filters, name=f"conv{i}")
        x = sym.Pooling(sym.relu(x), pool_type="max", kernel=(2, 2), stride=(2, 2))
    x = sym.relu(sym.FullyConnected(sym.Flatten(x), num_hidden=500, name="fc1"))
    return sym.SoftmaxOutput(sym.FullyConnected(x, num_hidden=10, name="fc2"), name="softmax")


def _mlp() -> sym.Symbol:
    x = sym.relu(sym.FullyConnected(sym.Variable("data"), num_hidden=128, name="fc1"))
    x = sym.relu(sym.FullyConnected(x, num_hidden=64, name="fc2"))
    return sym.SoftmaxOutput(sym.FullyConnected(x, num_hidden=10, name="fc3"), name="softmax")


@pytest.mark.parametrize("net, shape", [(_mlp, (128, 784)), (_lenet, (128, 1, 28, 28))], ids=["mlp", "lenet"])
def test_memory_plan_of_mnist_training_graphs_stays_under_half_of_naive(net, shape):
    symbol = net()
    reqs = {n: ("null" if n in ("data", "softmax_label") else "write") for n in symbol.list_arguments()}
    ex = symbol.simple_bind(mx.cpu(), grad_req=reqs, data=shape)
    assert ex.planned_bytes <= 0.5 * ex.naive_bytes


def test_backward_twice_through_an_lstm_with_merged_outputs():
    # the gradient of Concat (merge_outputs) reads its forward inputs only for their sizes; counted
    # as read values, their blocks, reused by later steps, refused a second backward
    cell = mx.rnn.LSTMCell(32, prefix="lstm_")
    embedded = sym.Embedding(sym.Variable("idx"), input_dim=6, output_dim=32, name="embed")
    outputs, _ = cell.unroll(12, inputs=embedded, merge_outputs=True, layout="NTC")
    ex, _, _ = _bind(sym.MakeLoss(sym.sum(outputs), name="loss"), "write", {"idx": (4, 12)})
    first, second = _twice(ex, [None, None])
    for name, grad in second.items():
        np.testing.assert_array_equal(grad, first[name], err_msg=name)
