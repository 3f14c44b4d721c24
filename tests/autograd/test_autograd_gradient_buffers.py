"""Where backward puts gradients that come from one backward operator (``BackwardOpGradient``
rules: FullyConnected, Convolution): straight into a ``'write'`` variable's own buffer, nowhere
for a gradient nobody needs, and through a copy wherever writing early would change what is read."""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx
from lazynd import autograd
from lazynd.ops import registry


@pytest.fixture
def fc_backward_calls(monkeypatch) -> list[list]:
    """The output buffers each run of the ``_backward_FullyConnected`` kernel was given."""
    op = registry.get("_backward_FullyConnected")
    kernel, calls = op.forward, []

    def spy(kctx, attrs, inputs, outputs, aux):
        calls.append(list(outputs))
        kernel(kctx, attrs, inputs, outputs, aux)

    monkeypatch.setattr(op, "forward", spy)
    return calls


def _layer(rows: int, cols: int, hidden: int, seed: int = 0) -> tuple[mx.NDArray, mx.NDArray, mx.NDArray]:
    rng = np.random.default_rng(seed)
    x = mx.nd.array(rng.standard_normal((rows, cols)))
    w = mx.nd.array(rng.standard_normal((hidden, cols)))
    b = mx.nd.array(rng.standard_normal((hidden,)))
    return x, w, b


def test_the_data_gradient_of_a_first_layer_is_not_computed(fc_backward_calls) -> None:
    x, w, b = _layer(5, 7, 3)  # shapes of their own: a plan made with the spied kernel
    w.attach_grad()
    b.attach_grad()
    with autograd.record():
        loss = mx.nd.FullyConnected(x, w, b, num_hidden=3).sum()
    loss.backward()
    mx.nd.waitall()
    ((data_grad, weight_grad, bias_grad),) = fc_backward_calls
    assert data_grad is None  # x is no variable: no data gradient
    np.testing.assert_allclose(w.grad.asnumpy(), np.tile(x.asnumpy().sum(axis=0), (3, 1)), rtol=1e-5)
    np.testing.assert_allclose(b.grad.asnumpy(), [5.0, 5.0, 5.0])


def test_a_write_variable_gets_its_gradient_in_its_own_buffer_without_a_copy(fc_backward_calls) -> None:
    x, w, b = _layer(4, 6, 2)
    w.attach_grad()
    b.attach_grad()
    buffers = (w.grad, b.grad)
    with autograd.record():
        loss = mx.nd.FullyConnected(x, w, b, num_hidden=2).sum()
    loss.backward()
    mx.nd.waitall()
    ((_, weight_grad, bias_grad),) = fc_backward_calls
    assert w.grad is buffers[0] and b.grad is buffers[1]
    assert weight_grad is w.grad.data_array and bias_grad is b.grad.data_array
    np.testing.assert_allclose(w.grad.asnumpy(), np.tile(x.asnumpy().sum(axis=0), (2, 1)), rtol=1e-5)


def test_a_weight_read_by_two_layers_gets_the_sum_of_both_gradients() -> None:
    x, w, _ = _layer(3, 4, 4)
    w.attach_grad()
    with autograd.record():
        h = mx.nd.FullyConnected(x, w, num_hidden=4, no_bias=True)
        loss = mx.nd.FullyConnected(h, w, num_hidden=4, no_bias=True).sum()
    loss.backward()
    xv, wv = x.asnumpy(), w.asnumpy()
    g2 = np.ones((3, 4))  # d loss / d output of the second layer
    expected = g2.T @ (xv @ wv.T) + (g2 @ wv).T @ xv
    np.testing.assert_allclose(w.grad.asnumpy(), expected, rtol=1e-4)


def test_a_gradient_buffer_read_by_the_graph_is_written_only_at_the_end() -> None:
    # h reads w.grad; the layer after it makes w's gradient.  Written at once, w.grad would
    # change under h's rule, which runs later.
    x, w, b = _layer(2, 3, 3)
    x.attach_grad()
    w.attach_grad()
    w.grad[:] = 2.0
    with autograd.record():
        h = x * w.grad[0:2]
        loss = mx.nd.FullyConnected(h, w, b, num_hidden=3).sum()
    loss.backward()
    xv, wv = x.asnumpy(), w.asnumpy()
    np.testing.assert_allclose(x.grad.asnumpy(), 2.0 * np.ones((2, 3)) @ wv, rtol=1e-5)
    np.testing.assert_allclose(w.grad.asnumpy(), np.ones((3, 2)) @ (2.0 * xv), rtol=1e-5)


def test_grad_req_add_accumulates_what_the_backward_operator_computes() -> None:
    x, w, b = _layer(4, 5, 2)
    w.attach_grad("add")
    b.attach_grad()
    for _ in range(2):
        with autograd.record():
            loss = mx.nd.FullyConnected(x, w, b, num_hidden=2).sum()
        loss.backward()
    np.testing.assert_allclose(w.grad.asnumpy(), 2 * np.tile(x.asnumpy().sum(axis=0), (2, 1)), rtol=1e-5)
    np.testing.assert_allclose(b.grad.asnumpy(), [4.0, 4.0])


def test_autograd_grad_leaves_the_gradient_buffers_alone() -> None:
    x, w, b = _layer(4, 5, 2)
    w.attach_grad()
    b.attach_grad()
    with autograd.record():
        loss = mx.nd.FullyConnected(x, w, b, num_hidden=2).sum()
    (gw,) = autograd.grad(loss, [w])
    np.testing.assert_allclose(gw.asnumpy(), np.tile(x.asnumpy().sum(axis=0), (2, 1)), rtol=1e-5)
    np.testing.assert_array_equal(w.grad.asnumpy(), np.zeros((2, 5)))


def test_an_optional_output_left_out_of_out_is_not_computed() -> None:
    x, w, _ = _layer(3, 4, 2)
    og = mx.nd.ones((3, 2))
    gw, gb = mx.nd.zeros((2, 4)), mx.nd.zeros((2,))
    result = mx.nd._backward_FullyConnected(og, x, w, num_hidden=2, out=[None, gw, gb])
    assert result[0] is None and result[1] is gw and result[2] is gb
    np.testing.assert_allclose(gw.asnumpy(), np.tile(x.asnumpy().sum(axis=0), (2, 1)), rtol=1e-5)
    np.testing.assert_allclose(gb.asnumpy(), [3.0, 3.0])


def test_none_in_out_is_refused_by_an_operator_that_computes_every_output() -> None:
    x = mx.nd.ones((2, 3))
    with pytest.raises(mx.LazyNDError, match="SliceChannel: out must be an NDArray, got NoneType"):
        mx.nd.split(x, num_outputs=3, axis=1, out=[None, mx.nd.zeros((2, 1)), mx.nd.zeros((2, 1))])
