"""_identity_with_attr_like_rhs and IdentityAttachKLSparseReg (moving average, KL penalty gradient)."""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx
import lazynd_sym as sym
from lazynd.errors import OperatorError, ShapeError


def test_identity_with_attr_like_rhs_passes_lhs_and_takes_rhs_shape(ctx):
    net = sym._identity_with_attr_like_rhs(sym.Variable("a"), sym.Variable("b"))
    args, outs, _ = net.infer_shape(b=(2, 3))
    assert args == [(2, 3), (2, 3)] and outs == [(2, 3)]
    ex = net.simple_bind(ctx, a=(2, 3), b=(2, 3))
    ex.forward(is_train=True, a=mx.nd.ones((2, 3), ctx=ctx), b=mx.nd.ones((2, 3), ctx=ctx) * 5)
    ex.backward(mx.nd.ones((2, 3), ctx=ctx) * 2)
    # MXNet 1.9.1: output = a, gradient 2 for a and 0 for b
    np.testing.assert_array_equal(ex.outputs[0].asnumpy(), np.ones((2, 3)))
    np.testing.assert_array_equal(ex.grad_dict["a"].asnumpy(), np.full((2, 3), 2))
    np.testing.assert_array_equal(ex.grad_dict["b"].asnumpy(), np.zeros((2, 3)))


def test_identity_with_attr_like_rhs_rejects_mismatched_shapes():
    with pytest.raises(ShapeError, match="_identity_with_attr_like_rhs"):
        mx.nd._identity_with_attr_like_rhs(mx.nd.zeros((2, 3)), mx.nd.zeros((3, 2)))


def kl_executor(ctx, shape, **params):
    net = sym.IdentityAttachKLSparseReg(sym.Variable("data"), **params)
    ex = net.simple_bind(ctx, data=shape)
    ex.aux_arrays[0][:] = 0.3
    return ex


def test_kl_sparse_reg_training_updates_moving_average_and_adds_the_penalty(ctx):
    x = np.random.RandomState(0).uniform(0.1, 0.9, (4, 3))
    ex = kl_executor(ctx, x.shape, sparseness_target=0.2, penalty=0.01, momentum=0.5)
    ex.forward(is_train=True, data=mx.nd.array(x, ctx=ctx))
    np.testing.assert_allclose(ex.outputs[0].asnumpy(), x, rtol=1e-6)
    ex.backward(mx.nd.ones(x.shape, ctx=ctx))
    average = 0.5 * 0.3 + 0.5 * x.mean(axis=0)
    np.testing.assert_allclose(ex.aux_arrays[0].asnumpy(), average, rtol=1e-6)
    expected = 1 + 0.01 * (-0.2 / average + 0.8 / (1 - average))
    np.testing.assert_allclose(ex.grad_dict["data"].asnumpy(), np.broadcast_to(expected, x.shape), rtol=1e-6)
    # MXNet 1.9.1's gradient for these inputs
    np.testing.assert_allclose(ex.grad_dict["data"].asnumpy()[0], [1.008038, 1.011304, 1.010994], rtol=1e-6)


def test_kl_sparse_reg_averages_over_every_axis_but_the_units(ctx):
    x = np.random.RandomState(1).uniform(0.1, 0.9, (2, 3, 4))
    ex = kl_executor(ctx, x.shape, momentum=0.0)
    ex.forward(is_train=True, data=mx.nd.array(x, ctx=ctx))
    np.testing.assert_allclose(ex.aux_arrays[0].asnumpy(), x.mean(axis=(0, 2)), rtol=1e-6)


def test_kl_sparse_reg_inference_leaves_the_moving_average(ctx):
    ex = kl_executor(ctx, (2, 3))
    ex.forward(is_train=False, data=mx.nd.ones((2, 3), ctx=ctx) * 0.9)
    np.testing.assert_allclose(ex.aux_arrays[0].asnumpy(), np.full(3, 0.3), rtol=1e-6)


def test_kl_sparse_reg_lists_its_auxiliary_state_and_checks_parameters():
    net = sym.IdentityAttachKLSparseReg(sym.Variable("data"), name="kl")
    assert net.list_auxiliary_states() == ["kl_moving_avg"] and net.list_outputs() == ["kl_output"]
    with pytest.raises(
        OperatorError, match=r"invalid value 1.5 for parameter 'sparseness_target': expected a number in \[0, 1\]"
    ):
        mx.nd.IdentityAttachKLSparseReg(mx.nd.zeros((2, 3)), mx.nd.zeros((3,)), sparseness_target=1.5)


def test_kl_sparse_reg_of_units_always_off_or_on_is_infinite_without_a_numpy_warning():
    import warnings

    ex = kl_executor(mx.cpu(), (2, 3), momentum=0.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # NumPy's divide warning would fail the kernel
        ex.forward(is_train=True, data=mx.nd.array([[0.0, 1.0, 0.5], [0.0, 1.0, 0.5]]))
        ex.backward(mx.nd.ones((2, 3)))
        # a moving average of 0 or 1 divides by 0; MXNet 1.9.1's gradient row is [-inf, inf, 1.0016]
        np.testing.assert_allclose(ex.grad_dict["data"].asnumpy()[0], [-np.inf, np.inf, 1.0016], rtol=1e-6)


def test_cast_storage_to_dense_copies_and_passes_the_gradient(ctx):
    # MXNet 1.9.1: cast_storage(x, stype='default') of a dense x is x, and its gradient is the head's
    x = mx.nd.array([[1, 2], [3, 4]], ctx=ctx)
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.cast_storage(x, stype="default")
        (y * y).sum().backward()
    assert y.stype == "default"
    np.testing.assert_array_equal(y.asnumpy(), [[1, 2], [3, 4]])
    np.testing.assert_array_equal(x.grad.asnumpy(), [[2, 4], [6, 8]])
    # named: an automatic name counts the cast_storage symbols made before it in the process
    net = sym.cast_storage(sym.Variable("a"), stype="default", name="cast")
    assert net.infer_shape(a=(2, 3))[1] == [(2, 3)]
    assert sym.load_json(net.tojson()).attr_dict()["cast"] == {"stype": "default"}


@pytest.mark.parametrize("stype", ["csr", "row_sparse"])
def test_cast_storage_to_a_sparse_type_is_refused_by_name(stype):
    with pytest.raises(OperatorError, match=rf"cast_storage: .*'{stype}' .*'stype': sparse storage is not supported"):
        mx.nd.cast_storage(mx.nd.ones((2, 2)), stype=stype)
    with pytest.raises(OperatorError, match="cast_storage: required parameter 'stype' is missing"):
        mx.nd.cast_storage(mx.nd.ones((2, 2)))
