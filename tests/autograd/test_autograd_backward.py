"""mx.autograd's gradients: backward and grad, grad_req, head gradients, graphs kept or freed,
views, copies and assignments, and the arrays autograd hands back (MXNet 1.9.1's semantics)."""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx
from lazynd import LazyNDError, autograd


def _variable(values, ctx=None, grad_req: str = "write") -> mx.NDArray:
    x = mx.nd.array(values, ctx=ctx)
    x.attach_grad(grad_req)
    return x


def test_attach_grad_gives_a_gradient_of_zeros_before_any_backward(ctx) -> None:
    x = _variable([1.0, 2.0, 3.0], ctx)
    assert x.grad.context == ctx
    np.testing.assert_array_equal(x.grad.asnumpy(), [0.0, 0.0, 0.0])


def test_backward_writes_the_gradient_of_a_chain_of_operators(ctx) -> None:
    x = _variable([1.0, 2.0, 3.0], ctx)
    w = _variable([[0.1, -0.2, 0.3]], ctx)
    with autograd.record():
        y = mx.nd.FullyConnected(x.reshape((1, 3)), w, num_hidden=1, no_bias=True)
        loss = (mx.nd.tanh(y) * 2).sum()
    loss.backward()
    t = np.tanh(np.dot([0.1, -0.2, 0.3], [1.0, 2.0, 3.0]))
    np.testing.assert_allclose(x.grad.asnumpy(), 2 * (1 - t**2) * np.array([0.1, -0.2, 0.3]), rtol=1e-5)
    np.testing.assert_allclose(w.grad.asnumpy(), 2 * (1 - t**2) * np.array([[1.0, 2.0, 3.0]]), rtol=1e-5)


def test_an_array_read_twice_receives_the_sum_of_both_gradients(ctx) -> None:
    x = _variable([1.0, 2.0], ctx)
    with autograd.record():
        y = x * x + x * 3 + mx.nd.exp(x)
    y.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), 2 * np.array([1.0, 2.0]) + 3 + np.exp([1.0, 2.0]), rtol=1e-6)


def test_backward_without_head_gradient_uses_ones_on_a_non_scalar_head() -> None:
    x = _variable([[1.0, 2.0], [3.0, 4.0]])
    with autograd.record():
        y = x * 2
    y.backward()
    np.testing.assert_array_equal(x.grad.asnumpy(), np.full((2, 2), 2.0))


def test_backward_takes_a_head_gradient() -> None:
    x = _variable([[1.0, 2.0], [3.0, 4.0]])
    with autograd.record():
        y = x * 2
    y.backward(out_grad=mx.nd.array([[1.0, 0.0], [0.0, 1.0]]))
    np.testing.assert_array_equal(x.grad.asnumpy(), [[2.0, 0.0], [0.0, 2.0]])


def test_backward_of_several_heads_sums_their_gradients() -> None:
    x = _variable([1.0, 2.0])
    with autograd.record():
        y, z = x * 2, x * x
    autograd.backward([y, z], [mx.nd.ones((2,)), mx.nd.array([1.0, 10.0])])
    np.testing.assert_array_equal(x.grad.asnumpy(), [4.0, 42.0])


def test_a_head_gradient_of_another_shape_is_refused() -> None:
    x = _variable([1.0, 2.0])
    with autograd.record():
        y = x * 2
    with pytest.raises(LazyNDError, match=r"head gradient 0 must be an NDArray of shape \(2,\), got shape \(3,\)"):
        y.backward(mx.nd.ones((3,)))


def test_a_head_gradient_of_another_dtype_is_refused_naming_backward() -> None:
    x = _variable([1.0, 2.0])
    with autograd.record():
        y = x * 2
    with pytest.raises(LazyNDError, match="backward: head gradient 0 must have the head's dtype float32, got float64"):
        y.backward(mx.nd.ones((2,), dtype="float64"))
    with pytest.raises(LazyNDError, match="grad: head gradient 0 must have the head's dtype float32, got int32"):
        autograd.grad(y, [x], mx.nd.ones((2,), dtype="int32"))


def test_a_loss_operator_takes_no_head_gradient() -> None:
    x = _variable([[1.0, 2.0, 3.0]])
    with autograd.record():
        y = mx.nd.SoftmaxOutput(x, mx.nd.array([1.0]))
    y.backward()
    p = np.exp([1.0, 2.0, 3.0]) / np.exp([1.0, 2.0, 3.0]).sum()
    np.testing.assert_allclose(x.grad.asnumpy(), [p - [0.0, 1.0, 0.0]], rtol=1e-5)


def test_grad_req_write_overwrites_and_add_accumulates() -> None:
    w, a = _variable([1.0, 2.0]), _variable([1.0, 2.0], grad_req="add")
    for _ in range(3):
        with autograd.record():
            y = w * w + a * a
        y.backward()
    np.testing.assert_array_equal(w.grad.asnumpy(), [2.0, 4.0])
    np.testing.assert_array_equal(a.grad.asnumpy(), [6.0, 12.0])


def test_grad_req_null_takes_no_gradient() -> None:
    x, w = _variable([1.0, 2.0], grad_req="null"), _variable([3.0, 4.0])
    assert x.grad is None
    with autograd.record():
        y = x * w
    y.backward()
    assert x.grad is None
    np.testing.assert_array_equal(w.grad.asnumpy(), [1.0, 2.0])


def test_backward_with_no_variable_taking_a_gradient_is_refused() -> None:
    x = _variable([1.0, 2.0], grad_req="null")
    with autograd.record():
        y = x * 2
    with pytest.raises(LazyNDError, match="no variable in the recorded graph takes a gradient"):
        y.backward()


def test_an_unknown_grad_req_is_refused() -> None:
    with pytest.raises(LazyNDError, match="attach_grad: grad_req must be one of 'write', 'add', 'null', got 'sum'"):
        mx.nd.ones((2,)).attach_grad("sum")


def test_backward_of_an_array_not_recorded_is_refused() -> None:
    x = mx.nd.array([1.0, 2.0])
    with pytest.raises(LazyNDError, match=r"head 0 \(shape \(2,\)\) is not in a recorded graph"):
        (x * 2).backward()


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda y, x: autograd.backward(3), "backward: heads must be an NDArray or a list of NDArrays, got int"),
        (lambda y, x: autograd.backward([]), "backward: no heads given"),
        (lambda y, x: autograd.backward(y, 1.0), "backward: head_grads must be an NDArray or a list .*, got float"),
        (lambda y, x: autograd.grad(y, 7), "grad: variables must be an NDArray or a list of NDArrays, got int"),
        (lambda y, x: autograd.grad([], [x]), "grad: no heads given"),
        (lambda y, x: autograd.mark_variables(7, 8), "mark_variables: variables must be an NDArray or a list"),
        (
            lambda y, x: autograd.mark_variables([x], x.grad),
            r"mark_variables: gradients must be a list of NDArrays, one per variable, as variables is a list; got NDArray",
        ),
    ],
    ids=["backward-int", "backward-none", "head-grads-float", "grad-int", "grad-no-heads",
         "mark-int", "mark-mixed"],
)  # fmt: skip
def test_heads_variables_and_gradients_of_another_kind_are_refused_and_the_next_pass_works(call, message) -> None:
    x = _variable([1.0, 2.0])
    with autograd.record():
        y = x * x
    with pytest.raises(LazyNDError, match=message):
        call(y, x)
    y.backward()
    np.testing.assert_array_equal(x.grad.asnumpy(), [2.0, 4.0])


def test_a_second_backward_through_a_freed_graph_is_refused() -> None:
    x = _variable([1.0, 2.0])
    with autograd.record():
        y = x * x
    y.backward()
    with pytest.raises(LazyNDError, match="freed by an earlier backward; pass retain_graph=True"):
        y.backward()


def test_retain_graph_keeps_the_graph_for_another_backward() -> None:
    x = _variable([1.0, 2.0], grad_req="add")
    with autograd.record():
        y = x * x
    y.backward(retain_graph=True)
    y.backward()
    np.testing.assert_array_equal(x.grad.asnumpy(), [4.0, 8.0])


def test_backward_of_a_variable_itself_gives_its_head_gradient() -> None:
    x = _variable([1.0, 2.0])
    x.backward()
    np.testing.assert_array_equal(x.grad.asnumpy(), [1.0, 1.0])


def test_variables_the_heads_do_not_reach_keep_their_gradient() -> None:
    x, w = _variable([1.0, 2.0]), _variable([1.0, 2.0])
    w.grad[:] = 7
    with autograd.record():
        y = x * 2
        _ = w * 3
    y.backward()
    np.testing.assert_array_equal(w.grad.asnumpy(), [7.0, 7.0])


def test_grad_returns_new_arrays_and_leaves_grad_alone() -> None:
    x = _variable([1.0, 2.0])
    with autograd.record():
        y = x * x
    (dx,) = autograd.grad(y, [x])
    np.testing.assert_array_equal(dx.asnumpy(), [2.0, 4.0])
    np.testing.assert_array_equal(x.grad.asnumpy(), [0.0, 0.0])
    assert dx is not x.grad


def test_grad_with_respect_to_an_intermediate_result() -> None:
    x = _variable([1.0, 2.0])
    with autograd.record():
        h = x * 3
        y = h * h
    dh, dx = autograd.grad(y, [h, x])
    np.testing.assert_allclose(dh.asnumpy(), 2 * np.array([3.0, 6.0]))
    np.testing.assert_allclose(dx.asnumpy(), 18 * np.array([1.0, 2.0]))


def test_grad_of_a_variable_the_heads_do_not_reach_is_refused() -> None:
    x, w = _variable([1.0, 2.0]), _variable([1.0, 2.0])
    with autograd.record():
        y = x * 2
    with pytest.raises(LazyNDError, match="variable 1 is not reached from the heads"):
        autograd.grad(y, [x, w])


def test_grad_with_create_graph_gives_a_differentiable_gradient(ctx) -> None:
    x = _variable([1.0, 2.0, 3.0], ctx)
    with autograd.record():
        y = x**3
        (dx,) = autograd.grad(y, [x], create_graph=True)
        z = (dx * dx).sum()
    z.backward()
    values = np.array([1.0, 2.0, 3.0])
    np.testing.assert_allclose(dx.asnumpy(), 3 * values**2)
    np.testing.assert_allclose(x.grad.asnumpy(), 2 * 3 * values**2 * 6 * values)  # d/dx (3x^2)^2


def test_second_derivative_through_an_operator_whose_gradient_has_no_rule_is_refused() -> None:
    x = _variable([0.5, 1.0])
    with autograd.record():
        (dx,) = autograd.grad(mx.nd.softmax(x), [x], create_graph=True)
    with pytest.raises(LazyNDError, match="operator '_backward_softmax' has no gradient rule"):
        dx.backward()


@pytest.mark.parametrize("act_type", ["relu", "sigmoid", "tanh", "softrelu", "softsign"])
def test_second_derivative_through_activation_is_that_of_its_elementwise_operator(act_type) -> None:
    def second(f):
        x = mx.nd.array([-1.5, -0.3, 0.4, 2.0], dtype="float64")
        x.attach_grad()
        with autograd.record():
            (dx,) = autograd.grad(f(x), [x], create_graph=True)
            z = (dx * dx).sum()
        z.backward()
        return x.grad.asnumpy()

    np.testing.assert_allclose(
        second(lambda x: mx.nd.Activation(x, act_type=act_type)), second(getattr(mx.nd, act_type)), rtol=1e-12
    )


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


@pytest.mark.parametrize("grad_req", ["write", "add"])
def test_mark_variables_refuses_a_gradient_of_another_dtype(grad_req) -> None:
    # MXNet refuses it for both; 'add' here failed only at the backward, in an internal _plus
    x, dx = mx.nd.ones((2,)), mx.nd.zeros((2,), dtype="float64")
    with pytest.raises(
        LazyNDError, match=r"gradient 0 must be .* dtype float32 on cpu\(0\), got shape \(2,\), dtype float64"
    ):
        autograd.mark_variables(x, dx, grad_req)


def test_detach_stops_the_gradient_and_shares_the_memory() -> None:
    x = _variable([1.0, 2.0])
    with autograd.record():
        y = x * 2
        z = y.detach() * x
    z.backward()
    np.testing.assert_array_equal(x.grad.asnumpy(), [2.0, 4.0])
    assert y.detach().var is y.var and y.detach()._ag is None


def test_an_unused_output_of_a_multi_output_operator_gets_a_zero_gradient() -> None:
    x = _variable([[1.0, 2.0], [3.0, 4.0]])
    with autograd.record():
        top, _ = mx.nd.split(x, num_outputs=2, axis=0)
        y = top * 3
    y.backward()
    np.testing.assert_array_equal(x.grad.asnumpy(), [[3.0, 3.0], [0.0, 0.0]])


def test_batchnorm_differentiates_its_data_and_parameters_not_its_moving_statistics() -> None:
    x = _variable([[1.0, 2.0], [3.0, 5.0]])
    gamma, beta = _variable([1.0, 1.0]), _variable([0.0, 0.0])
    moving_mean, moving_var = mx.nd.zeros((2,)), mx.nd.ones((2,))
    head = np.array([[1.0, 2.0], [3.0, 4.0]])
    with autograd.record():
        y = mx.nd.BatchNorm(x, gamma, beta, moving_mean, moving_var, fix_gamma=False)
    y.backward(mx.nd.array(head))
    np.testing.assert_allclose(beta.grad.asnumpy(), head.sum(axis=0))
    np.testing.assert_allclose(moving_mean.asnumpy(), [0.2, 0.35], rtol=1e-6)
    assert moving_mean._ag is None


def test_batchnorm_in_prediction_mode_takes_its_moving_statistics_as_constants() -> None:
    # recorded and differentiated outside training, BatchNorm is y = gamma * (x - mm) / sqrt(mv + eps) + beta:
    # dy/dx is gamma / sqrt(mv + eps), not the batch statistics' gradient (MXNet 1.9.1 agrees)
    x = _variable([[1.0, 2.0], [3.0, 5.0], [-1.0, 0.5]])
    gamma, beta = _variable([2.0, 0.5]), _variable([0.0, 0.0])
    moving_mean, moving_var = mx.nd.array([0.5, 1.0]), mx.nd.array([4.0, 0.25])
    head = np.array([[1.0, 2.0], [3.0, 4.0], [-2.0, 1.0]])
    with autograd.record(train_mode=False):
        y = mx.nd.BatchNorm(x, gamma, beta, moving_mean, moving_var, fix_gamma=False, eps=1e-5)
    y.backward(mx.nd.array(head), train_mode=False)
    scale = np.array([2.0, 0.5]) / np.sqrt(np.array([4.0, 0.25]) + 1e-5)
    np.testing.assert_allclose(x.grad.asnumpy(), head * scale, rtol=1e-5)
    x_hat = (x.asnumpy() - [0.5, 1.0]) / np.sqrt(np.array([4.0, 0.25]) + 1e-5)
    np.testing.assert_allclose(gamma.grad.asnumpy(), (head * x_hat).sum(axis=0), rtol=1e-5)


def test_slices_reshapes_and_integer_indices_of_a_variable_are_differentiable(ctx) -> None:
    w = _variable([[1.0, 2.0], [3.0, 4.0]], ctx)
    with autograd.record():
        heads = [w[1:2] * 3, w.reshape((4,)) * 2, w[1] * 7, w[:, 0] * 5, w.T * 11]
    autograd.backward(heads)
    np.testing.assert_array_equal(w.grad.asnumpy(), [[2 + 5 + 11, 2 + 11], [3 + 2 + 7 + 5 + 11, 3 + 2 + 7 + 11]])


def test_copies_are_differentiable_as_the_identity(ctx) -> None:
    x = _variable([1.0, 2.0], ctx)
    target = mx.nd.zeros((2,), ctx=ctx)
    with autograd.record():
        a = x.copy() * 2
        b = x.as_in_context(mx.cpu()) * 3
        c = x.copyto(target) * 5
        d = x.astype("float64") * 7
    autograd.backward([a, b, c, d])
    np.testing.assert_array_equal(x.grad.asnumpy(), [17.0, 17.0])


def test_assigning_a_recorded_value_into_a_new_array_is_differentiable() -> None:
    x = _variable([1.0, 2.0])
    with autograd.record():
        buffer = mx.nd.zeros((2, 3))
        buffer[:, 1] = x * 2
        broadcast = mx.nd.zeros((2, 2))
        broadcast[:] = x.reshape((1, 2))
        y = (buffer * 3).sum() + broadcast.sum()
    y.backward()
    np.testing.assert_array_equal(x.grad.asnumpy(), [8.0, 8.0])


def test_concatenate_of_recorded_arrays_is_differentiable() -> None:
    x = _variable([1.0, 2.0])
    with autograd.record():
        y = mx.nd.concatenate([x, x * 2]) * mx.nd.array([1.0, 2.0, 3.0, 4.0])
    y.backward()
    np.testing.assert_array_equal(x.grad.asnumpy(), [7.0, 10.0])


def test_backward_pushes_its_work_and_waits_for_nothing() -> None:
    # the gradient buffer is held busy by an operation that ends only after backward returns:
    # backward pushes its work behind it instead of waiting
    import threading

    from lazynd.engine import get_engine

    if get_engine().name == "naive":
        pytest.skip("the naive engine runs each operation at its push: nothing is ever pending")
    x = _variable([1.0, 2.0])
    release = threading.Event()
    with autograd.record():
        y = x * x
    get_engine().push(release.wait, (10,), [], [x.grad.var], "hold", mx.cpu())
    y.backward()  # would hang here (until the timeout) if it waited for its results
    assert get_engine().num_pending() > 0
    release.set()
    np.testing.assert_array_equal(x.grad.asnumpy(), [2.0, 4.0])


def test_grad_returns_arrays_that_share_memory_with_no_head_gradient_and_no_other_result() -> None:
    x, w = _variable([1.0, 2.0]), _variable([3.0, 4.0])
    head_gradient = mx.nd.ones((2,))
    with autograd.record():
        y = x + w  # its rule hands the head gradient on, unchanged, to both inputs
        z = x.reshape((2,))  # its rule hands on a view of it
    dx, dw = autograd.grad(y, [x, w], head_gradient)
    (dz,) = autograd.grad(z, [x], head_gradient)
    dx += 10  # e.g. clipping or scaling a gradient in place
    dz += 100
    np.testing.assert_array_equal(dw.asnumpy(), [1.0, 1.0])
    np.testing.assert_array_equal(head_gradient.asnumpy(), [1.0, 1.0])
    np.testing.assert_array_equal(dx.asnumpy(), [11.0, 11.0])
    np.testing.assert_array_equal(dz.asnumpy(), [101.0, 101.0])
    with autograd.record():
        y = x + w
    dx, dw = autograd.grad(y, [x, w])  # the default head gradient
    dx += 10
    np.testing.assert_array_equal(dw.asnumpy(), [1.0, 1.0])


@pytest.mark.parametrize("name", ["floor", "ceil", "round", "rint", "fix", "trunc"])
def test_a_gradient_nothing_reaches_can_be_differentiated_again_to_zeros(name) -> None:
    # MXNet 1.9.1: grad(create_graph=True) of a rounding gives recorded zeros; a backward through them gives zeros
    x = _variable([0.3, 1.7, -2.2])
    with autograd.record():
        (dx,) = autograd.grad(getattr(mx.nd, name)(x), [x], create_graph=True)
        z = (dx * dx).sum()
    z.backward()
    np.testing.assert_array_equal(dx.asnumpy(), [0.0, 0.0, 0.0])
    np.testing.assert_array_equal(x.grad.asnumpy(), [0.0, 0.0, 0.0])
