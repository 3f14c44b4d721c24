"""What mx.autograd differentiates through: detach, multi-output operators, BatchNorm, views, copies, assignments, concatenation."""

from __future__ import annotations

import numpy as np
from autograd_variables import variable

import lazynd as mx
from lazynd import autograd


def test_detach_stops_the_gradient_and_shares_the_memory() -> None:
    x = variable([1.0, 2.0])
    with autograd.record():
        y = x * 2
        z = y.detach() * x
    z.backward()
    np.testing.assert_array_equal(x.grad.asnumpy(), [2.0, 4.0])
    assert y.detach().var is y.var and y.detach()._ag is None


def test_an_unused_output_of_a_multi_output_operator_gets_a_zero_gradient() -> None:
    x = variable([[1.0, 2.0], [3.0, 4.0]])
    with autograd.record():
        top, _ = mx.nd.split(x, num_outputs=2, axis=0)
        y = top * 3
    y.backward()
    np.testing.assert_array_equal(x.grad.asnumpy(), [[3.0, 3.0], [0.0, 0.0]])


def test_batchnorm_differentiates_its_data_and_parameters_not_its_moving_statistics() -> None:
    x = variable([[1.0, 2.0], [3.0, 5.0]])
    gamma, beta = variable([1.0, 1.0]), variable([0.0, 0.0])
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
    x = variable([[1.0, 2.0], [3.0, 5.0], [-1.0, 0.5]])
    gamma, beta = variable([2.0, 0.5]), variable([0.0, 0.0])
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
    w = variable([[1.0, 2.0], [3.0, 4.0]], ctx)
    with autograd.record():
        heads = [w[1:2] * 3, w.reshape((4,)) * 2, w[1] * 7, w[:, 0] * 5, w.T * 11]
    autograd.backward(heads)
    np.testing.assert_array_equal(w.grad.asnumpy(), [[2 + 5 + 11, 2 + 11], [3 + 2 + 7 + 5 + 11, 3 + 2 + 7 + 11]])


def test_copies_are_differentiable_as_the_identity(ctx) -> None:
    x = variable([1.0, 2.0], ctx)
    target = mx.nd.zeros((2,), ctx=ctx)
    with autograd.record():
        a = x.copy() * 2
        b = x.as_in_context(mx.cpu()) * 3
        c = x.copyto(target) * 5
        d = x.astype("float64") * 7
    autograd.backward([a, b, c, d])
    np.testing.assert_array_equal(x.grad.asnumpy(), [17.0, 17.0])


def test_assigning_a_recorded_value_into_a_new_array_is_differentiable() -> None:
    x = variable([1.0, 2.0])
    with autograd.record():
        buffer = mx.nd.zeros((2, 3))
        buffer[:, 1] = x * 2
        broadcast = mx.nd.zeros((2, 2))
        broadcast[:] = x.reshape((1, 2))
        y = (buffer * 3).sum() + broadcast.sum()
    y.backward()
    np.testing.assert_array_equal(x.grad.asnumpy(), [8.0, 8.0])


def test_concatenate_of_recorded_arrays_is_differentiable() -> None:
    x = variable([1.0, 2.0])
    with autograd.record():
        y = mx.nd.concatenate([x, x * 2]) * mx.nd.array([1.0, 2.0, 3.0, 4.0])
    y.backward()
    np.testing.assert_array_equal(x.grad.asnumpy(), [7.0, 10.0])
