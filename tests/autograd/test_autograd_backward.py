"""mx.autograd.backward: gradients of chains and of several uses and heads, head gradients, graphs kept or
freed, and where gradients go (grad_req write, add and null; the arrays given to mark_variables).
"""

from __future__ import annotations

import numpy as np
import pytest
from autograd_variables import variable

import lazynd as mx
from lazynd import LazyNDError, autograd


def test_attach_grad_gives_a_gradient_of_zeros_before_any_backward(ctx) -> None:
    x = variable([1.0, 2.0, 3.0], ctx)
    assert x.grad.context == ctx
    np.testing.assert_array_equal(x.grad.asnumpy(), [0.0, 0.0, 0.0])


def test_backward_writes_the_gradient_of_a_chain_of_operators(ctx) -> None:
    x = variable([1.0, 2.0, 3.0], ctx)
    w = variable([[0.1, -0.2, 0.3]], ctx)
    with autograd.record():
        y = mx.nd.FullyConnected(x.reshape((1, 3)), w, num_hidden=1, no_bias=True)
        loss = (mx.nd.tanh(y) * 2).sum()
    loss.backward()
    t = np.tanh(np.dot([0.1, -0.2, 0.3], [1.0, 2.0, 3.0]))
    np.testing.assert_allclose(x.grad.asnumpy(), 2 * (1 - t**2) * np.array([0.1, -0.2, 0.3]), rtol=1e-5)
    np.testing.assert_allclose(w.grad.asnumpy(), 2 * (1 - t**2) * np.array([[1.0, 2.0, 3.0]]), rtol=1e-5)


def test_an_array_read_twice_receives_the_sum_of_both_gradients(ctx) -> None:
    x = variable([1.0, 2.0], ctx)
    with autograd.record():
        y = x * x + x * 3 + mx.nd.exp(x)
    y.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), 2 * np.array([1.0, 2.0]) + 3 + np.exp([1.0, 2.0]), rtol=1e-6)


def test_backward_without_head_gradient_uses_ones_on_a_non_scalar_head() -> None:
    x = variable([[1.0, 2.0], [3.0, 4.0]])
    with autograd.record():
        y = x * 2
    y.backward()
    np.testing.assert_array_equal(x.grad.asnumpy(), np.full((2, 2), 2.0))


def test_backward_takes_a_head_gradient() -> None:
    x = variable([[1.0, 2.0], [3.0, 4.0]])
    with autograd.record():
        y = x * 2
    y.backward(out_grad=mx.nd.array([[1.0, 0.0], [0.0, 1.0]]))
    np.testing.assert_array_equal(x.grad.asnumpy(), [[2.0, 0.0], [0.0, 2.0]])


def test_backward_of_several_heads_sums_their_gradients() -> None:
    x = variable([1.0, 2.0])
    with autograd.record():
        y, z = x * 2, x * x
    autograd.backward([y, z], [mx.nd.ones((2,)), mx.nd.array([1.0, 10.0])])
    np.testing.assert_array_equal(x.grad.asnumpy(), [4.0, 42.0])


def test_a_second_backward_through_a_freed_graph_is_refused() -> None:
    x = variable([1.0, 2.0])
    with autograd.record():
        y = x * x
    y.backward()
    with pytest.raises(LazyNDError, match="freed by an earlier backward; pass retain_graph=True"):
        y.backward()


def test_retain_graph_keeps_the_graph_for_another_backward() -> None:
    x = variable([1.0, 2.0], grad_req="add")
    with autograd.record():
        y = x * x
    y.backward(retain_graph=True)
    y.backward()
    np.testing.assert_array_equal(x.grad.asnumpy(), [4.0, 8.0])


def test_backward_of_a_variable_itself_gives_its_head_gradient() -> None:
    x = variable([1.0, 2.0])
    x.backward()
    np.testing.assert_array_equal(x.grad.asnumpy(), [1.0, 1.0])


def test_variables_the_heads_do_not_reach_keep_their_gradient() -> None:
    x, w = variable([1.0, 2.0]), variable([1.0, 2.0])
    w.grad[:] = 7
    with autograd.record():
        y = x * 2
        _ = w * 3
    y.backward()
    np.testing.assert_array_equal(w.grad.asnumpy(), [7.0, 7.0])


def test_backward_pushes_its_work_and_waits_for_nothing() -> None:
    # the gradient buffer is held busy by an operation that ends only after backward returns:
    # backward pushes its work behind it instead of waiting
    import threading

    from lazynd.engine import get_engine

    if get_engine().name == "naive":
        pytest.skip("the naive engine runs each operation at its push: nothing is ever pending")
    x = variable([1.0, 2.0])
    release = threading.Event()
    with autograd.record():
        y = x * x
    get_engine().push(release.wait, (10,), [], [x.grad.var], "hold", mx.cpu())
    y.backward()  # would hang here (until the timeout) if it waited for its results
    assert get_engine().num_pending() > 0
    release.set()
    np.testing.assert_array_equal(x.grad.asnumpy(), [2.0, 4.0])


def test_grad_req_write_overwrites_and_add_accumulates() -> None:
    w, a = variable([1.0, 2.0]), variable([1.0, 2.0], grad_req="add")
    for _ in range(3):
        with autograd.record():
            y = w * w + a * a
        y.backward()
    np.testing.assert_array_equal(w.grad.asnumpy(), [2.0, 4.0])
    np.testing.assert_array_equal(a.grad.asnumpy(), [6.0, 12.0])


def test_grad_req_null_takes_no_gradient() -> None:
    x, w = variable([1.0, 2.0], grad_req="null"), variable([3.0, 4.0])
    assert x.grad is None
    with autograd.record():
        y = x * w
    y.backward()
    assert x.grad is None
    np.testing.assert_array_equal(w.grad.asnumpy(), [1.0, 2.0])


def test_an_unknown_grad_req_is_refused() -> None:
    with pytest.raises(LazyNDError, match="attach_grad: grad_req must be one of 'write', 'add', 'null', got 'sum'"):
        mx.nd.ones((2,)).attach_grad("sum")


@pytest.mark.parametrize(
    "mark",
    [
        lambda x: x.attach_grad(grad_req="sum"),
        lambda x: autograd.mark_variables([x], [mx.nd.zeros((2,))], grad_reqs="sum"),
    ],
    ids=["attach_grad", "mark_variables"],
)
def test_an_unknown_grad_req_is_a_key_error_as_in_mxnet(mark) -> None:
    # MXNet 1.9.1 looks the name up in its table and raises KeyError('sum'): the except clauses written for it catch ours
    with pytest.raises(KeyError, match="grad_req must be one of 'write', 'add', 'null', got 'sum'"):
        mark(mx.nd.ones((2,)))


@pytest.mark.parametrize(
    "call",
    [lambda: mx.nd.ones((2,)).attach_grad(stype="bogus"), lambda: mx.nd.zeros((2,), stype="bogus")],
    ids=["attach_grad", "nd.zeros"],
)
def test_an_unknown_storage_type_is_a_value_error_as_in_mxnet(call) -> None:
    # MXNet 1.9.1: ValueError('unknown storage typebogus') from both
    with pytest.raises(ValueError, match="storage type 'bogus' is not supported"):
        call()


def test_mark_variables_puts_gradients_into_the_given_arrays() -> None:
    x, w = mx.nd.array([1.0, 2.0]), mx.nd.array([3.0, 4.0])
    dx, dw = mx.nd.zeros((2,)), mx.nd.ones((2,))
    autograd.mark_variables([x, w], [dx, dw], grad_reqs=["write", "add"])
    with autograd.record():
        y = x * w
    y.backward()
    np.testing.assert_array_equal(dx.asnumpy(), [3.0, 4.0])
    np.testing.assert_array_equal(dw.asnumpy(), [2.0, 3.0])
    assert x.grad is dx


def test_mark_variables_refuses_a_gradient_of_another_shape() -> None:
    with pytest.raises(LazyNDError, match=r"gradient 0 must be an NDArray of shape \(2,\), dtype float32 on cpu\(0\)"):
        autograd.mark_variables([mx.nd.ones((2,))], [mx.nd.ones((3,))])


@pytest.mark.parametrize("grad_reqs", [None, 1.5, True, {"write"}], ids=repr)
def test_mark_variables_refuses_grad_reqs_that_are_no_name_or_list_by_name(grad_reqs) -> None:
    # list()'s TypeError "'NoneType' object is not iterable" before
    with pytest.raises(LazyNDError, match="mark_variables: grad_reqs must be 'write', 'add' or 'null', or a list"):
        autograd.mark_variables([mx.nd.ones((2,))], [mx.nd.zeros((2,))], grad_reqs=grad_reqs)


@pytest.mark.parametrize("grad_req", ["write", "add"])
def test_mark_variables_refuses_a_gradient_of_another_dtype(grad_req) -> None:
    # MXNet refuses it for both; 'add' here failed only at the backward, in an internal _plus
    x, dx = mx.nd.ones((2,)), mx.nd.zeros((2,), dtype="float64")
    with pytest.raises(
        LazyNDError, match=r"gradient 0 must be .* dtype float32 on cpu\(0\), got shape \(2,\), dtype float64"
    ):
        autograd.mark_variables(x, dx, grad_req)


@pytest.mark.parametrize(
    "make, expected",
    [
        (lambda x: mx.nd.BlockGrad(mx.nd.MakeLoss(x * 2)) + x, [3.0, 3.0]),
        (lambda x: mx.nd.BlockGrad(mx.nd.LinearRegressionOutput(x * 2, mx.nd.zeros((2,)))), [4.0, 8.0]),
    ],
    ids=["make_loss", "linear_regression"],
)
def test_a_loss_below_block_grad_still_gives_its_gradient(make, expected) -> None:
    """A loss operator's rule reads no head gradient: MXNet 1.9.1 takes its gradient under BlockGrad too."""
    x = mx.nd.array([1.0, 2.0])
    x.attach_grad()
    with mx.autograd.record():
        y = make(x)
    y.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), expected)
