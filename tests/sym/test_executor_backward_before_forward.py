"""Executors: a backward pass before any forward pass.

A backward pass that reads values the forward pass computes (a softmax's output, an
activation's input) has nothing to read until a forward has run: MXNet 1.9.1 runs it on
whatever its unwritten buffers hold and returns gradients of garbage; lazynd refuses with a
:class:`~lazynd.LazyNDError`.  A backward pass that reads no forward value (its gradients
depend only on the arguments and the head gradients) runs, as in MXNet.
"""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx
import lazynd_sym as sym
from lazynd.errors import LazyNDError


def _softmax_net() -> sym.Symbol:
    fc = sym.FullyConnected(sym.Variable("data"), num_hidden=3, name="fc")
    return sym.SoftmaxOutput(fc, sym.Variable("label"), name="sm")


def _bound(net: sym.Symbol, **shapes: tuple) -> object:
    ex = net.simple_bind(mx.cpu(), **shapes)
    rng = np.random.default_rng(0)
    for name, arr in ex.arg_dict.items():
        arr[:] = rng.integers(0, 3, arr.shape) if name == "label" else rng.uniform(-1, 1, arr.shape)
    return ex


def test_backward_before_any_forward_names_the_forward_value_it_reads() -> None:
    ex = _bound(_softmax_net(), data=(4, 5), label=(4,))
    with pytest.raises(LazyNDError, match=r"backward: no forward has run.*'sm_output'.*forward\(is_train=True\)"):
        ex.backward()


def test_a_second_backward_before_any_forward_says_no_forward_ran() -> None:
    net = sym.MakeLoss(sym.square(sym.FullyConnected(sym.Variable("data"), num_hidden=2, name="fc")))
    ex = _bound(net, data=(3, 4))
    for _ in range(2):
        with pytest.raises(LazyNDError, match="no forward has run"):
            ex.backward()


@pytest.mark.parametrize("is_train", [True, False])
def test_backward_after_a_forward_runs(is_train: bool) -> None:
    ex = _bound(_softmax_net(), data=(4, 5), label=(4,))
    ex.forward(is_train=is_train)
    ex.backward()
    probs = ex.outputs[0].asnumpy()
    label = ex.arg_dict["label"].asnumpy().astype(int)
    expected = probs.copy()
    expected[np.arange(4), label] -= 1
    np.testing.assert_allclose(ex.grad_dict["fc_bias"].asnumpy(), expected.sum(0), rtol=1e-5, atol=1e-6)


def test_a_reshaped_executor_needs_its_own_forward() -> None:
    ex = _bound(_softmax_net(), data=(4, 5), label=(4,))
    ex.forward(is_train=True)
    ex.backward()
    smaller = ex.reshape(data=(2, 5), label=(2,))
    with pytest.raises(LazyNDError, match="no forward has run"):
        smaller.backward()
    smaller.forward(is_train=True)
    smaller.backward()


def test_backward_that_reads_no_forward_value_runs_without_forward() -> None:
    # the gradient of MakeLoss(x * 2) is 2 whatever x is: MakeLoss's backward reads only the
    # shape of its output (unless normalization='valid' counts its values)
    x = sym.Variable("x")
    ex = sym.MakeLoss(x * 2).simple_bind(mx.cpu(), x=(3,))
    ex.backward()
    np.testing.assert_array_equal(ex.grad_dict["x"].asnumpy(), [2, 2, 2])
    a, b = sym.Variable("a"), sym.Variable("b")
    ex = (a + b).simple_bind(mx.cpu(), a=(2,), b=(2,))
    ex.backward(mx.nd.array([1, 3]))
    np.testing.assert_array_equal(ex.grad_dict["a"].asnumpy(), [1, 3])


def test_make_loss_valid_normalization_reads_its_output() -> None:
    ex = sym.MakeLoss(sym.Variable("x") * 2, normalization="valid").simple_bind(mx.cpu(), x=(3,))
    with pytest.raises(LazyNDError, match="no forward has run"):
        ex.backward()
    ex.arg_dict["x"][:] = mx.nd.array([1, -1, 1])
    ex.forward(is_train=True)
    ex.backward()
    np.testing.assert_allclose(ex.grad_dict["x"].asnumpy(), [1, 1, 1])
