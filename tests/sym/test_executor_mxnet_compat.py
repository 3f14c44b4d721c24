"""Executors behave as MXNet's where programs notice: unused head gradients, reshape's sharing, binding errors."""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx
import lazynd_sym as sym
from lazynd.errors import LazyNDError


@pytest.mark.parametrize(
    "make",
    [
        lambda x, y: sym.ceil(x),
        lambda x, y: sym.floor(x),
        lambda x, y: sym.round(x),
        lambda x, y: sym.rint(x),
        lambda x, y: sym.fix(x),
        lambda x, y: x == y,
        lambda x, y: x > y,
    ],
    ids=["ceil", "floor", "round", "rint", "fix", "equal", "greater"],
)
def test_bind_with_gradients_when_no_gradient_reads_the_head_gradient(make):
    x, y = sym.Variable("x"), sym.Variable("y")
    out = make(x, y)
    shapes = {name: (2, 3) for name in out.list_arguments()}
    ex = out.simple_bind(mx.cpu(), **shapes)
    for arr in ex.arg_arrays:
        arr[:] = np.arange(6).reshape(2, 3) * 0.7
    ex.forward(is_train=True)
    ex.backward(mx.nd.ones((2, 3)))
    for grad in ex.grad_arrays:
        np.testing.assert_array_equal(grad.asnumpy(), np.zeros((2, 3)))
    ex.backward()  # MXNet does not ask for a head gradient no gradient reads
    for grad in ex.grad_arrays:
        np.testing.assert_array_equal(grad.asnumpy(), np.zeros((2, 3)))


def test_batchnorm_with_mean_var_outputs_binds_with_gradients():
    data = sym.Variable("x")
    out = sym.BatchNorm(data, output_mean_var=True, name="bn")
    ex = out.simple_bind(mx.cpu(), x=(4, 3))
    ex.arg_dict["x"][:] = np.arange(12, dtype=np.float32).reshape(4, 3)
    ex.arg_dict["bn_gamma"][:] = 1
    ex.forward(is_train=True)
    head = np.arange(12, dtype=np.float32).reshape(4, 3)
    ex.backward([mx.nd.array(head)])
    # d/dbeta of sum(head * out) is the column sum of head (values MXNet 1.9.1 gives)
    np.testing.assert_allclose(ex.grad_dict["bn_beta"].asnumpy(), [18, 22, 26])
    np.testing.assert_array_equal(ex.grad_dict["bn_gamma"].asnumpy(), [0, 0, 0])


def test_backward_without_out_grads_for_a_non_loss_head_is_a_clear_error():
    x = sym.Variable("x")
    ex = (x * 2).simple_bind(mx.cpu(), x=(2,))
    ex.forward(is_train=True)
    with pytest.raises(LazyNDError, match="out_grads"):
        ex.backward()
