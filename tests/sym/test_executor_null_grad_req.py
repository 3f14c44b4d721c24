"""An argument bound with ``grad_req='null'`` keeps the gradient array it was given, as in MXNet 1.9.1.

MXNet's ``grad_dict`` and ``grad_arrays`` show every array passed in ``args_grad``, whatever its
``grad_req``; backward leaves the ones of ``'null'`` untouched.  Only ``simple_bind`` (which
allocates) and ``bind`` without an array give None.
"""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx
import lazynd_sym as sym


def _product_bound(args_grad_form: str, grad_req):
    a, b = sym.Variable("a"), sym.Variable("b")
    grad_a, grad_b = mx.nd.array([7.0, 7.0]), mx.nd.zeros((2,))
    args_grad = {"a": grad_a, "b": grad_b} if args_grad_form == "dict" else [grad_a, grad_b]
    args = {"a": mx.nd.ones((2,)), "b": mx.nd.array([2.0, 3.0])}
    return (a * b).bind(mx.cpu(), args, args_grad=args_grad, grad_req=grad_req), grad_a, grad_b


@pytest.mark.parametrize("args_grad_form", ["dict", "list"])
@pytest.mark.parametrize("grad_req", [{"a": "null", "b": "write"}, ["null", "write"]], ids=["dict", "list"])
def test_bind_shows_the_given_array_of_a_null_grad_req_argument(args_grad_form, grad_req):
    executor, grad_a, grad_b = _product_bound(args_grad_form, grad_req)
    assert executor.grad_dict["a"] is grad_a and executor.grad_arrays[0] is grad_a
    executor.forward(is_train=True)
    executor.backward(mx.nd.ones((2,)))
    np.testing.assert_array_equal(executor.grad_dict["a"].asnumpy(), [7.0, 7.0])  # untouched
    np.testing.assert_array_equal(grad_b.asnumpy(), [1.0, 1.0])


def test_bind_with_every_grad_req_null_still_shows_the_given_arrays():
    executor, grad_a, grad_b = _product_bound("dict", "null")
    assert executor.grad_arrays == [grad_a, grad_b]
    executor.forward(is_train=True)
    executor.backward(mx.nd.ones((2,)))
    np.testing.assert_array_equal(grad_a.asnumpy(), [7.0, 7.0])
    np.testing.assert_array_equal(grad_b.asnumpy(), [0.0, 0.0])


def test_bind_without_an_array_for_an_argument_gives_none():
    a, b = sym.Variable("a"), sym.Variable("b")
    grad_a = mx.nd.zeros((2,))
    executor = (a * b).bind(
        mx.cpu(), {"a": mx.nd.ones((2,)), "b": mx.nd.ones((2,))}, args_grad={"a": grad_a}, grad_req="write"
    )
    assert executor.grad_dict == {"a": grad_a, "b": None}


@pytest.mark.parametrize("grad_req", [{"a": "null", "b": "write"}, ["null", "write"], "null"], ids=str)
def test_simple_bind_allocates_no_array_for_a_null_grad_req_argument(grad_req):
    a, b = sym.Variable("a"), sym.Variable("b")
    executor = (a * b).simple_bind(mx.cpu(), grad_req=grad_req, a=(2,), b=(2,))
    assert executor.grad_dict["a"] is None
    assert (executor.grad_dict["b"] is None) == (grad_req == "null")
