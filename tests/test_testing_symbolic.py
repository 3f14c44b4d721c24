"""check_symbolic_backward and check_numeric_gradient take MXNet's grad_req forms; 'null' is not checked."""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx
import lazynd_sym as sym
from lazynd.test_utils import (
    check_consistency,
    check_numeric_gradient,
    check_symbolic_backward,
    check_symbolic_forward,
)


def _product() -> sym.Symbol:
    return sym.Variable("a") * sym.Variable("b")


@pytest.mark.parametrize("grad_req", ["write", "add", "null"])
def test_check_symbolic_backward_takes_each_grad_req(grad_req):
    x = sym.Variable("x")
    data = np.random.uniform(-2, 2, (2, 3))
    # the row-wise softmax's gradient under a head of ones is zero
    check_symbolic_backward(
        sym.softmax(x, axis=-1), [data], [np.ones((2, 3))], [np.zeros((2, 3))], atol=1e-6, grad_req=grad_req
    )


def test_check_symbolic_backward_skips_a_null_argument_of_a_dict():
    a, b = np.full((2,), 2.0), np.full((2,), 3.0)
    grads = check_symbolic_backward(
        _product(), [a, b], [np.ones(2)], [b, np.full((2,), 99.0)], grad_req={"a": "write", "b": "null"}
    )
    np.testing.assert_allclose(grads["a"], b)


def test_check_symbolic_backward_still_checks_written_gradients():
    with pytest.raises(AssertionError, match="gradient of a"):
        check_symbolic_backward(_product(), [np.ones(2), np.ones(2)], [np.ones(2)], [np.zeros(2), np.ones(2)])


def test_check_numeric_gradient_skips_null_nodes_of_a_dict():
    # a is checked; the index input of take has no gradient and is marked null
    data = sym.Variable("data")
    index = sym.Variable("index")
    net = sym.take(data, index)
    location = [np.random.rand(4, 3), np.array([3.0, 1.0])]
    check_numeric_gradient(net, location, grad_nodes={"data": "write", "index": "null"})
    check_numeric_gradient(net, location, grad_nodes={"data": "add", "index": "null"})


def test_check_symbolic_forward_and_backward_return_ndarrays_with_mxnets_default_tolerances():
    x = sym.Variable("x")
    # within MXNet's float32 atol (1e-3), outside the old 1e-5
    outputs = check_symbolic_forward(x * 2, [np.ones(2, np.float32)], [np.full(2, 2.0005, np.float32)])
    assert isinstance(outputs[0], mx.nd.NDArray)
    grads = check_symbolic_backward(x * 2, [np.ones(2)], [np.ones(2)], [np.full(2, 2.0005)])
    assert isinstance(grads["x"], mx.nd.NDArray)
    np.testing.assert_allclose(grads["x"].asnumpy(), [2.0, 2.0])


def test_check_consistency_draws_arguments_in_name_order_and_takes_use_uniform():
    # MXNet 1.9.1 draws in sorted-name order, so under one NumPy seed both give these values
    net = sym.FullyConnected(sym.Variable("data"), num_hidden=2, name="fc")
    ctx_list = [
        {"ctx": mx.cpu(0), "data": (2, 3), "type_dict": {"data": np.float64}},
        {"ctx": mx.cpu(0), "data": (2, 3), "type_dict": {"data": np.float32}},
    ]
    np.random.seed(3)
    truth = check_consistency(net, ctx_list, rand_type=np.float32, scale=0.5)
    np.testing.assert_allclose(truth["fc_bias"], [-0.01608, -0.71888], atol=1e-5)
    np.random.seed(3)
    truth = check_consistency(net, ctx_list, use_uniform=True, scale=0.5)
    assert np.all(np.abs(truth["data"]) <= 0.46)


def test_check_numeric_gradient_steps_by_dtype_so_float16_differences_are_not_zero():
    # a fixed step of 1e-4 rounds away in float16 and read every numeric gradient as 0
    x = sym.Variable("x")
    location = [np.random.default_rng(0).uniform(-2, 2, (3, 4))]
    check_numeric_gradient(sym.exp(x), location, dtype=np.float16, rtol=0.1, atol=0.1)
    check_numeric_gradient(sym.tanh(x) * x, location, dtype=np.float32)


def test_mxnets_gradient_storage_keywords_take_default_and_refuse_sparse():
    x = sym.Variable("x")
    check_symbolic_backward(x * 2, [np.ones(2)], [np.ones(2)], [np.full(2, 2.0)], grad_stypes={"x": "default"})
    check_numeric_gradient(x * 2, [np.ones(2)], grad_stype_dict={"x": "default"})
    with pytest.raises(mx.OperatorError, match="grad_stypes .*row_sparse"):
        check_symbolic_backward(x * 2, [np.ones(2)], [np.ones(2)], [np.full(2, 2.0)], grad_stypes={"x": "row_sparse"})


def test_check_symbolic_backward_checks_the_leading_arguments_of_a_shorter_list():
    # MXNet 1.9.1 pairs a list of expected gradients with the first arguments
    a, b = np.full((2, 2), 2.0), np.full((2, 2), 3.0)
    grads = check_symbolic_backward(_product(), [a, b], [np.ones((2, 2))], [b])
    assert set(grads) >= {"a"}
    with pytest.raises(AssertionError, match="gradient of a"):
        check_symbolic_backward(_product(), [a, b], [np.ones((2, 2))], [a])


def test_check_symbolic_backward_refuses_more_expected_gradients_than_arguments():
    a = np.ones((2, 2))
    with pytest.raises(ValueError, match="3 arrays given, the symbol has 2"):
        check_symbolic_backward(_product(), [a, a], [a], [a, a, a])


def test_check_symbolic_forward_checks_the_leading_outputs_of_a_shorter_list():
    x = sym.Variable("x")
    data = np.arange(6.0).reshape(2, 3)
    pieces = sym.SliceChannel(x, num_outputs=3, axis=1)
    check_symbolic_forward(pieces, [data], [data[:, 0:1]])
    with pytest.raises(AssertionError, match="expected"):
        check_symbolic_forward(pieces, [data], [data[:, 1:2]])
    with pytest.raises(AssertionError, match="3 output"):
        check_symbolic_forward(pieces, [data], [data[:, 0:1]] * 4)
