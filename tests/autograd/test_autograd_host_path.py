"""The host path of autograd: what a recorded call and a backward pass go through (not their speed)."""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx
from lazynd import autograd
from lazynd.autograd import backward_pass, recording


def _mlp_loss(x: mx.NDArray, params: list[mx.NDArray], label: mx.NDArray) -> mx.NDArray:
    h = mx.nd.relu(mx.nd.FullyConnected(x, params[0], params[1], num_hidden=3))
    return mx.nd.SoftmaxOutput(mx.nd.FullyConnected(h, params[2], params[3], num_hidden=2), label)


def _params() -> list[mx.NDArray]:
    rng = np.random.default_rng(0)
    params = [mx.nd.array(rng.standard_normal(s).astype(np.float32)) for s in [(3, 4), (3,), (2, 3), (2,)]]
    for p in params:
        p.attach_grad()
    return params


@pytest.mark.parametrize("train_mode", [True, False])
def test_a_backward_that_records_nothing_calls_its_rules_operators_without_the_recorder(
    monkeypatch: pytest.MonkeyPatch, train_mode: bool
) -> None:
    x, label, params = mx.nd.ones((2, 4)), mx.nd.array([0.0, 1.0]), _params()
    with autograd.record():
        loss = _mlp_loss(x, params, label)
    expected = _params()
    with autograd.record():
        loss_again = _mlp_loss(x, expected, label)
    loss_again.backward(train_mode=train_mode)  # through the recorder, as user calls go
    calls: list[str] = []
    original = recording.invoke

    def counted(op, *args, **kwargs):
        calls.append(op.name)
        return original(op, *args, **kwargs)

    monkeypatch.setattr(recording, "invoke", counted)
    loss.backward(train_mode=train_mode)
    assert calls == []
    for p, q in zip(params, expected, strict=True):
        np.testing.assert_allclose(p.grad.asnumpy(), q.grad.asnumpy(), rtol=1e-6)


def test_a_backward_with_create_graph_still_records_its_rules_operators() -> None:
    x = mx.nd.array([1.0, 2.0])
    x.attach_grad()
    with autograd.record():
        y = x * x * x
        (dy,) = autograd.grad(y, [x], create_graph=True)  # 3 x^2
    dy.backward()  # 6 x
    np.testing.assert_allclose(dy.asnumpy(), [3.0, 12.0])
    np.testing.assert_allclose(x.grad.asnumpy(), [6.0, 12.0])


def test_a_rule_given_positional_parameters_goes_through_the_nd_function() -> None:
    x = mx.nd.array([[1.0, 2.0], [3.0, 4.0]])
    x.attach_grad()
    with autograd.record():
        y = (mx.nd.broadcast_to(x.reshape((1, 2, 2)), shape=(3, 2, 2)) * 2).sum()
    y.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), np.full((2, 2), 6.0))


def test_a_backward_operator_leaves_out_the_gradient_nobody_needs() -> None:
    # FullyConnected's data gradient is not asked for (data is no variable): the backward operator
    # is handed None for it, with the weight's and bias's buffers, and writes only those
    x, label, params = mx.nd.ones((2, 4)), mx.nd.array([0.0, 1.0]), _params()
    with autograd.record():
        loss = _mlp_loss(x, params, label)
    loss.backward()
    h = np.maximum(x.asnumpy() @ params[0].asnumpy().T + params[1].asnumpy(), 0)
    z = h @ params[2].asnumpy().T + params[3].asnumpy()
    p = np.exp(z - z.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    d = p - np.eye(2, dtype=np.float32)[[0, 1]]
    np.testing.assert_allclose(params[2].grad.asnumpy(), d.T @ h, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(params[3].grad.asnumpy(), d.sum(axis=0), rtol=1e-5, atol=1e-6)


def _shared_head_gradient(monkeypatch: pytest.MonkeyPatch) -> list[mx.NDArray]:
    """Record the head gradients backward() seeds (the arrays its first rule is given)."""
    seeded: list[mx.NDArray] = []
    original = backward_pass._Backward._default_head_gradient

    def recorded(self, head):
        seeded.append(original(self, head))
        return seeded[-1]

    monkeypatch.setattr(backward_pass._Backward, "_default_head_gradient", recorded)
    return seeded


def test_backward_on_the_host_shares_one_read_only_ones_per_head_signature(monkeypatch: pytest.MonkeyPatch) -> None:
    seeded = _shared_head_gradient(monkeypatch)
    x = mx.nd.array([1.0, 2.0])
    x.attach_grad()
    for k in range(3):
        with autograd.record():
            y = x * x if k % 2 == 0 else (x.reshape((2, 1)) * 3).reshape((2,))  # a rule reading a view of it
        y.backward()
        np.testing.assert_allclose(x.grad.asnumpy(), [2.0, 4.0] if k % 2 == 0 else [3.0, 3.0])
    assert seeded[0] is seeded[1] is seeded[2]
    assert not seeded[0].data_array.flags.writeable
    np.testing.assert_array_equal(seeded[0].asnumpy(), [1.0, 1.0])
    with autograd.record():
        z = (x.reshape((1, 2)) * x.reshape((2, 1))).reshape((4,))  # another head shape: other ones
    z.backward()
    assert seeded[3] is not seeded[0] and seeded[3].shape == (4,)
    np.testing.assert_allclose(x.grad.asnumpy(), [6.0, 6.0])  # 2 (x1 + x2) each


def test_grad_hands_back_fresh_head_gradients_the_caller_may_write(monkeypatch: pytest.MonkeyPatch) -> None:
    seeded = _shared_head_gradient(monkeypatch)
    x = mx.nd.array([1.0, 2.0])
    x.attach_grad()
    for _ in range(2):
        with autograd.record():
            y = x.reshape((2,))
        (dx,) = autograd.grad(y, [x])
        dx[:] = 5.0  # the ones of the head, handed back through the view's rule: the caller's to write
        np.testing.assert_array_equal(dx.asnumpy(), [5.0, 5.0])
    assert seeded[0] is not seeded[1]
