"""A loss operator is a source of gradient wherever it sits in the graph, as in MXNet.

A loss operator's gradient rule reads no head gradient, so MXNet's gradient pass gives it its
gradient even when a ``BlockGrad`` above it lets no head gradient through: the debug group of
MXNet's deep-embedded-clustering solver wraps every internal, the loss included, in
``BlockGrad`` and still trains.  The expected gradients below are MXNet 1.9.1's (imperative autograd: tests/autograd/test_autograd_backward.py).
"""

from __future__ import annotations

import numpy as np

import lazynd as mx
import lazynd_sym as sym
from lazynd.testing import assert_almost_equal


def _gradient_of_x(net: sym.Symbol, x: np.ndarray, **shapes: tuple) -> np.ndarray:
    reqs = {name: ("write" if name == "x" else "null") for name in net.list_arguments()}
    ex = net.simple_bind(mx.cpu(), grad_req=reqs, x=x.shape, **shapes)
    ex.arg_dict["x"][:] = x
    ex.forward(is_train=True)
    ex.backward([mx.nd.ones(o.shape) * 5 for o in ex.outputs])
    return ex.grad_dict["x"].asnumpy()


X = np.array([[1.0, 2.0]], dtype=np.float32)


def test_make_loss_below_block_grad_still_gives_its_gradient():
    x = sym.Variable("x")
    net = sym.BlockGrad(sym.MakeLoss(x * 2))
    assert_almost_equal(_gradient_of_x(net, X), [[2.0, 2.0]])


def test_a_blocked_loss_adds_its_gradient_to_the_other_heads():
    x = sym.Variable("x")
    net = sym.Group([sym.BlockGrad(sym.MakeLoss(x * 2)), x * 3])
    assert_almost_equal(_gradient_of_x(net, X), [[17.0, 17.0]])  # 2 from the loss, 3 * 5 from the head


def test_softmax_output_below_block_grad_gives_prob_minus_onehot():
    x = sym.Variable("x")
    net = sym.BlockGrad(sym.SoftmaxOutput(x, sym.Variable("label")))
    p = np.exp(X) / np.exp(X).sum()
    assert_almost_equal(_gradient_of_x(net, X, label=(1,)), p - [[1.0, 0.0]], rtol=1e-5)


def test_regression_output_below_block_grad_inside_a_sum():
    x = sym.Variable("x")
    net = sym.sum(sym.BlockGrad(sym.LinearRegressionOutput(x, sym.Variable("label"))))
    # label zeros: (x - 0) / 2 outputs per row
    assert_almost_equal(_gradient_of_x(net, X, label=(1, 2)), X / 2)


def test_debug_group_of_blocked_internals_trains_like_the_plain_loss():
    """The deep-embedded-clustering solver's debug mode: every internal that is not an
    argument, wrapped in BlockGrad under its own name, grouped; the gradients are the loss's."""
    data = sym.Variable("data")
    h = sym.Activation(sym.FullyConnected(data, name="enc", num_hidden=3), act_type="relu")
    loss = sym.LinearRegressionOutput(sym.FullyConnected(h, name="dec", num_hidden=4), label=data)
    arg_names = loss.list_arguments()
    debug = sym.Group([sym.BlockGrad(s, name=s.name) for s in loss.get_internals() if s.name not in arg_names])
    rng = np.random.default_rng(0)
    values = {n: rng.uniform(-1, 1, s) for n, s in zip(arg_names, loss.infer_shape(data=(2, 4))[0], strict=True)}
    grads = []
    for net in (loss, debug):
        args = {n: mx.nd.array(v) for n, v in values.items()}
        args_grad = {n: mx.nd.zeros(v.shape) for n, v in values.items() if n != "data"}
        ex = net.bind(mx.cpu(), args=args, args_grad=args_grad)
        ex.forward(is_train=True)
        ex.backward()
        grads.append({n: g.asnumpy() for n, g in args_grad.items()})
    for name in grads[0]:
        assert np.abs(grads[0][name]).sum() > 0
        assert_almost_equal(grads[1][name], grads[0][name])
