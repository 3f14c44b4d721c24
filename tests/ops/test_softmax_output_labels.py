"""The labels ``SoftmaxOutput`` takes: the label shapes of ``multi_output=True``, as MXNet 1.9.1
takes them, where a label out of range is refused and where it leaves its mark on the gradient.

Flattened positions ``(n, h*w)``, unflattened ``(n, h, w)`` (see ``test_loss.py``) and data's
shape with one class ``(n, 1, h, w)``: Faster R-CNN programs bind the RPN label that way.
Without ``multi_output``, a label per position ``data.shape[:-1]`` needs ``preserve_shape``.
"""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx
from lazynd.errors import EngineError, OperatorError, ShapeError
from lazynd.testing import assert_almost_equal


def _rpn_head() -> mx.sym.Symbol:
    return mx.sym.SoftmaxOutput(
        mx.sym.Variable("data"),
        multi_output=True,
        use_ignore=True,
        ignore_label=-1,
        normalization="valid",
        name="rpn_cls_prob",
    )


def _data_gradient(net: mx.sym.Symbol, x: np.ndarray, label: np.ndarray) -> np.ndarray:
    exe = net.simple_bind(mx.cpu(), data=x.shape, rpn_cls_prob_label=label.shape)
    exe.forward(is_train=True, data=x, rpn_cls_prob_label=label)
    exe.backward()
    return exe.grad_dict["data"].asnumpy()


def test_multi_output_takes_a_label_shaped_like_data_with_one_class():
    rng = np.random.default_rng(5)
    x = rng.standard_normal((2, 2, 6, 4)).astype(np.float32)
    label = rng.integers(-1, 2, size=(2, 1, 6, 4)).astype(np.float32)
    net = _rpn_head()
    assert net.infer_shape(data=x.shape, rpn_cls_prob_label=label.shape)[0][1] == (2, 1, 6, 4)
    flat = _data_gradient(net, x, label.reshape(2, 24))
    assert_almost_equal(_data_gradient(net, x, label), flat)
    valid = label != -1
    onehot = np.where(valid, np.moveaxis(np.eye(2)[label[:, 0].clip(0).astype(int)], -1, 1), 0)
    expected = (np.exp(x) / np.exp(x).sum(axis=1, keepdims=True) * valid - onehot) / valid.sum()
    assert_almost_equal(flat, expected, rtol=1e-5, atol=1e-6)


def test_multi_output_names_every_accepted_label_shape_when_none_fits():
    with pytest.raises(ShapeError, match=r"expected \(2, 20\) or \(2, 4, 5\) or \(2, 1, 4, 5\)"):
        _rpn_head().infer_shape(data=(2, 3, 4, 5), rpn_cls_prob_label=(2, 1, 4, 5, 1))


def test_multi_output_rejects_a_one_class_label_of_the_wrong_size():
    with pytest.raises(ShapeError, match="label"):
        _rpn_head().infer_shape(data=(2, 3, 4, 5), rpn_cls_prob_label=(2, 1, 4, 6))


@pytest.mark.gpu
@pytest.mark.skipif(not mx.num_gpus(), reason="needs an NVIDIA GPU with CuPy (none visible)")
@pytest.mark.parametrize("bad", [3, -1])
def test_float16_gradient_on_the_gpu_refuses_a_label_out_of_range_and_keeps_it_in_its_own_row(bad):
    """One label per row in float16 takes the indexed path (softmax.cu's one-pass kernel is for
    float32 and float64): a label out of range is found by a device check and raised at the next
    wait, as on every other path; meanwhile it subtracts nothing, as in the kernel, instead of
    landing, by its flat index, on a class of the next or the previous row."""
    data = mx.nd.zeros((3, 3), ctx=mx.gpu(0), dtype="float16")
    data.attach_grad()
    labels = mx.nd.array([0, bad, 2], ctx=mx.gpu(0), dtype="float16")
    with mx.autograd.record():
        out = mx.nd.SoftmaxOutput(data, labels)
    out.backward()
    with pytest.raises(OperatorError, match=rf"SoftmaxOutput: label out of range: {bad} at position 1, "):
        data.grad.asnumpy()
    expected = np.full((3, 3), 1 / 3)
    expected[0, 0] -= 1
    expected[2, 2] -= 1
    assert_almost_equal(data.grad.asnumpy(), expected, rtol=1e-3, atol=1e-3)


def test_a_label_per_position_without_preserve_shape_names_preserve_shape():
    # a time-major language model's head: (time, batch, vocab) data, (time, batch) labels
    net = mx.sym.SoftmaxOutput(mx.sym.Variable("data"), name="softmax")
    with pytest.raises(ShapeError, match="preserve_shape=True") as caught:
        net.infer_shape(data=(7, 3, 10), softmax_label=(7, 3))
    assert "(7, 3)" in str(caught.value) and "(7,)" in str(caught.value)


def test_a_label_per_position_with_preserve_shape_gives_one_softmax_per_position():
    rng = np.random.default_rng(2)
    x = rng.standard_normal((4, 3, 5)).astype(np.float32)
    label = rng.integers(0, 5, size=(4, 3)).astype(np.float32)
    net = mx.sym.SoftmaxOutput(mx.sym.Variable("data"), preserve_shape=True, name="softmax")
    exe = net.simple_bind(mx.cpu(), data=x.shape, softmax_label=label.shape)
    prob = exe.forward(is_train=True, data=x, softmax_label=label)[0].asnumpy()
    exe.backward()
    expected = np.exp(x - x.max(-1, keepdims=True))
    expected /= expected.sum(-1, keepdims=True)
    assert_almost_equal(prob, expected, rtol=1e-5, atol=1e-6)
    one_hot = np.eye(5, dtype=np.float32)[label.astype(int)]
    assert_almost_equal(exe.grad_dict["data"].asnumpy(), expected - one_hot, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("bad", [3, -1])
@pytest.mark.parametrize("params", [{"multi_output": True}, {"use_ignore": True, "ignore_label": 5}])
def test_softmax_output_gradient_rejects_out_of_range_labels_on_every_path(bad, params, ctx):
    """The paths for several labels per sample, ignored labels or smoothing check labels too: on the
    host at once, on a GPU by a device check raised at the next wait (a host read of the labels
    would keep the pass out of a CUDA graph).  Meanwhile the GPU's label matches no class, where
    CuPy's integer indexing would have wrapped it around to another class."""
    shape = (2, 3, 4) if params.get("multi_output") else (2, 3)
    labels = np.zeros(shape[:1] + shape[2:])
    labels.flat[1] = bad
    data = mx.nd.ones(shape, ctx=ctx)
    data.attach_grad()
    if ctx.device_type == "cpu":
        message = f"SoftmaxOutput: label {bad} is out of range for 3 classes"
    else:
        message = (
            rf"SoftmaxOutput: label out of range: {bad} at position 1, expected a value in \[0, 3\); "
            r"found by a check on gpu\(0\) and raised at this wait"
        )
    with pytest.raises((OperatorError, EngineError), match=message):
        with mx.autograd.record():
            out = mx.nd.SoftmaxOutput(data, mx.nd.array(labels, ctx=ctx), **params)
        out.backward()
        data.grad.asnumpy()
    if ctx.device_type == "gpu":  # raised once; the bad label's position has the probabilities, no -1
        grad = data.grad.asnumpy()
        scale = 1 / 4 if params.get("multi_output") else 1.0  # multi_output divides by the positions
        at_bad = grad[0, :, 1] if params.get("multi_output") else grad[1]
        assert_almost_equal(at_bad, np.full(3, scale / 3), rtol=1e-6, atol=1e-7)
