"""SVMOutput (L2- and L1-SVM gradients, head gradient ignored) and softmax_cross_entropy."""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx
import lazynd_sym as sym
from lazynd.errors import EngineError, OperatorError, ShapeError
from lazynd.testing import check_forward, check_gradient

rng = np.random.default_rng(0)
SCORES = np.array([[0.5, -0.9, 0.2, 1.5], [-0.1, 0.3, -1.2, 0.0]], np.float32)
LABELS = np.array([2, 0], np.float32)


def svm_gradient(ctx, **params):
    """Bind SVMOutput, run forward/backward with a head gradient of 5 (which must be ignored)."""
    net = sym.SVMOutput(sym.Variable("data"), sym.Variable("label"), **params)
    ex = net.simple_bind(ctx, data=SCORES.shape, label=LABELS.shape, grad_req={"data": "write", "label": "null"})
    ex.forward(is_train=True, data=mx.nd.array(SCORES, ctx=ctx), label=mx.nd.array(LABELS, ctx=ctx))
    np.testing.assert_array_equal(ex.outputs[0].asnumpy(), SCORES)
    ex.backward(mx.nd.ones(SCORES.shape, ctx=ctx) * 5)
    return ex.grad_dict["data"].asnumpy()


def test_svm_output_l2_gradient_matches_mxnet(ctx):
    grad = svm_gradient(ctx, margin=0.7, regularization_coefficient=0.3)
    # MXNet 1.9.1's gradient for the same inputs
    np.testing.assert_allclose(grad, [[0.72, 0, -0.3, 1.32], [-0.48, 0.6, 0, 0.42]], rtol=1e-5, atol=1e-6)


def test_svm_output_l1_gradient_matches_mxnet(ctx):
    grad = svm_gradient(ctx, margin=0.7, regularization_coefficient=0.3, use_linear=True)
    np.testing.assert_allclose(grad, [[0.3, 0, -0.3, 0.3], [-0.3, 0.3, 0, 0.3]], rtol=1e-5, atol=1e-6)


def test_svm_output_infers_label_shape():
    args, outs, _ = sym.SVMOutput(sym.Variable("data"), name="svm").infer_shape(data=(8, 10))
    assert args == [(8, 10), (8,)] and outs == [(8, 10)]


def test_svm_output_rejects_out_of_range_labels(ctx):
    # on a GPU by a device check, raised at the next wait: no host read keeps the pass out of a CUDA graph
    net = sym.SVMOutput(sym.Variable("data"), sym.Variable("label"))
    ex = net.simple_bind(ctx, data=(2, 3), label=(2,))
    ex.forward(is_train=True, data=mx.nd.zeros((2, 3), ctx=ctx), label=mx.nd.array([0, 3], ctx=ctx))
    if ctx.device_type == "cpu":
        message = "SVMOutput: label 3 is out of range for 3 classes"
    else:
        message = (
            r"SVMOutput: label out of range: 3 at position 1, expected a value in \[0, 3\); found by a check on gpu"
        )
    with pytest.raises((OperatorError, EngineError), match=message):
        ex.backward()
        ex.grad_dict["data"].asnumpy()


def np_cross_entropy(x, label):
    shifted = x - x.max(axis=1, keepdims=True)
    log_p = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    return np.array([-log_p[np.arange(len(x)), label.astype(int)].sum()])


def test_softmax_cross_entropy_forward(ctx):
    x = np.array([[1, 2, 3], [0.5, 0, -1]], np.float32)
    out = check_forward("softmax_cross_entropy", [x, np.array([2, 0], np.float32)], {}, np_cross_entropy, ctx=ctx)
    np.testing.assert_allclose(out[0], [1.0117366], rtol=1e-6)  # MXNet 1.9.1


def test_softmax_cross_entropy_gradient(ctx):
    x = rng.standard_normal((4, 5))
    grads = check_gradient("softmax_cross_entropy", [x, np.array([0.0, 4.0, 2.0, 2.0])], ctx=ctx)
    assert grads[1] is None


def test_softmax_cross_entropy_rejects_bad_shapes_and_labels():
    with pytest.raises(ShapeError, match="softmax_cross_entropy.*label"):
        mx.nd.softmax_cross_entropy(mx.nd.zeros((2, 3)), mx.nd.zeros((3,)))
    with pytest.raises((OperatorError, EngineError), match="label -1 is out of range"):
        mx.nd.softmax_cross_entropy(mx.nd.zeros((2, 3)), mx.nd.array([0, -1])).asnumpy()


@pytest.mark.parametrize("shape", [(0, 3), (0, 3, 2)])
def test_softmax_cross_entropy_of_an_empty_batch_is_zero(shape, ctx):
    data = mx.nd.zeros(shape, ctx=ctx)
    data.attach_grad()
    with mx.autograd.record():
        loss = mx.nd.softmax_cross_entropy(data, mx.nd.zeros((0,), ctx=ctx))
    loss.backward()
    np.testing.assert_array_equal(loss.asnumpy(), np.zeros((1,), np.float32))
    assert data.grad.asnumpy().shape == shape


def test_svm_output_of_an_empty_batch_is_empty(ctx):
    data = mx.nd.zeros((0, 3), ctx=ctx)
    data.attach_grad()
    with mx.autograd.record():
        out = mx.nd.SVMOutput(data, mx.nd.zeros((0,), ctx=ctx))
    out.backward()
    assert out.asnumpy().shape == data.grad.asnumpy().shape == (0, 3)
