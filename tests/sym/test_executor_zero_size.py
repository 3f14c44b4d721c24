"""Zero-size arrays in a bound graph, as MXNet 1.9.1 takes them: under ``mx.np_shape`` only.

There a 0 in a bound array's shape is a size, so a graph whose arguments, intermediates or
outputs have a zero-length axis binds, runs forward and backward (MXNet 1.9.1 does for
elementwise ops, softmax, concat, a sum of everything, dot with an empty outer axis); lazynd
gives NumPy's answers where MXNet 1.9.1 fails (a sum over an empty axis, FullyConnected's
backward on an empty batch).  Outside ``mx.np_shape`` a 0 is an unknown size, and MXNet cannot
make such an array: bind refuses it by name.
"""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx
import lazynd_sym as sym
from lazynd.errors import ShapeError


def _bound(symbol, **arrays):
    args = {name: mx.nd.array(value) for name, value in arrays.items()}
    grads = {name: mx.nd.ones(value.shape) * 5 for name, value in arrays.items()}
    return symbol.bind(mx.cpu(), args, args_grad=grads)


def _run(executor):
    outputs = executor.forward(is_train=True)
    executor.backward([mx.nd.ones(o.shape) for o in outputs])
    return outputs[0].asnumpy(), {name: g.asnumpy() for name, g in executor.grad_dict.items()}


def test_an_output_with_a_zero_length_axis_binds_and_runs_under_np_shape():
    a = sym.Variable("a")
    with mx.np_shape():
        out, grads = _run(_bound(sym.softmax(a * 2 + 1), a=np.ones((0, 3))))
    assert out.shape == (0, 3) and grads["a"].shape == (0, 3)


def test_a_zero_size_intermediate_feeds_a_nonempty_output():
    a, b = sym.Variable("a"), sym.Variable("b")
    with mx.np_shape():
        out, grads = _run(_bound(sym.concat(a * 2, b, dim=1), a=np.ones((2, 0)), b=np.full((2, 2), 3.0)))
        total, total_grads = _run(_bound(sym.sum(a * 3) + b, a=np.ones((2, 0)), b=np.array([4.0])))
    np.testing.assert_array_equal(out, np.full((2, 2), 3.0))
    assert grads["a"].shape == (2, 0)
    np.testing.assert_array_equal(grads["b"], np.ones((2, 2)))
    np.testing.assert_array_equal(total, [4.0])
    np.testing.assert_array_equal(total_grads["b"], [1.0])


def test_where_mxnet_fails_lazynd_gives_numpys_answer():
    a, b = sym.Variable("a"), sym.Variable("b")
    with mx.np_shape():
        summed, _ = _run(_bound(sym.sum(a, axis=1) + b, a=np.ones((2, 0)), b=np.array([1.0, 2.0])))
        layer = sym.FullyConnected(a, num_hidden=4, name="fc")
        out, grads = _run(_bound(layer, a=np.ones((0, 3)), fc_weight=np.ones((4, 3)), fc_bias=np.ones(4)))
    np.testing.assert_array_equal(summed, [1.0, 2.0])
    assert out.shape == (0, 4)
    np.testing.assert_array_equal(grads["fc_weight"], np.zeros((4, 3)))  # an empty batch sums to nothing
    np.testing.assert_array_equal(grads["fc_bias"], np.zeros(4))


def test_zero_sizes_must_agree_exactly():
    a, b = sym.Variable("a"), sym.Variable("b")
    with mx.np_shape(), pytest.raises(ShapeError, match=r"\(0, 3\).*\(2, 3\)"):
        _bound(a + b, a=np.ones((0, 3)), b=np.ones((2, 3)))


def test_bind_refuses_a_zero_size_array_outside_np_shape():
    with pytest.raises(ShapeError, match=r"'a' is bound to a zero-size array of shape \(0, 3\).*mx.np_shape"):
        _bound(sym.Variable("a") * 2, a=np.ones((0, 3)))


def test_simple_bind_takes_a_given_zero_size_shape_under_np_shape():
    a, b = sym.Variable("a"), sym.Variable("b")
    with mx.np_shape():
        executor = (a + b).simple_bind(mx.cpu(), a=(0, 3))
        output, grads = _run(executor)
    assert output.shape == (0, 3) and grads["a"].shape == (0, 3) and grads["b"].shape == (0, 3)


def test_simple_bind_refuses_zero_and_nonzero_sizes_that_must_agree():
    a, b = sym.Variable("a"), sym.Variable("b")
    # before, the 0 was read as unknown and filled: (0, 3) + (5, 3) bound as (5, 3) + (5, 3)
    with mx.np_shape(), pytest.raises(ShapeError, match=r"\(0, 3\).*\(5, 3\)|\(5, 3\).*\(0, 3\)"):
        (a + b).simple_bind(mx.cpu(), a=(0, 3), b=(5, 3))


def test_simple_bind_of_a_network_with_an_empty_batch_infers_its_weights_and_label():
    fc = sym.FullyConnected(sym.Variable("data"), num_hidden=3, name="fc")
    net = sym.SoftmaxOutput(fc, name="softmax")
    with mx.np_shape():
        executor = net.simple_bind(mx.cpu(), data=(0, 5))
        output = executor.forward(is_train=False)[0]
    assert output.shape == (0, 3)
    assert executor.arg_dict["fc_weight"].shape == (3, 5) and executor.arg_dict["softmax_label"].shape == (0,)


def test_module_binds_a_zero_wide_input_under_np_shape():
    net = sym.FullyConnected(sym.Variable("data"), num_hidden=4, name="fc")
    module = mx.mod.Module(net, data_names=["data"], label_names=None, context=mx.cpu())
    with mx.np_shape():
        module.bind(data_shapes=[("data", (5, 0))])
        module.init_params(mx.init.Uniform(0.1))
        module.forward(mx.io.DataBatch([mx.nd.ones((5, 0))], []), is_train=False)
        output = module.get_outputs()[0].asnumpy()
    # no inputs: each output is its bias
    np.testing.assert_allclose(output, np.tile(module.get_params()[0]["fc_bias"].asnumpy(), (5, 1)))
