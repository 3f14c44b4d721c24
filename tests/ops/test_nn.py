"""FullyConnected, Activation, LeakyReLU, Dropout, Embedding: forward references, gradients, modes."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import lazynd
from lazynd.errors import OperatorError, ShapeError
from lazynd.ops import registry
from lazynd.testing import check_gradient

rng = np.random.default_rng(0)


def test_fully_connected_matches_numpy():
    x, w, b = rng.standard_normal((4, 2, 3)), rng.standard_normal((5, 6)), rng.standard_normal(5)
    y = lazynd.nd.FullyConnected(lazynd.nd.array(x), lazynd.nd.array(w), lazynd.nd.array(b), num_hidden=5)
    np.testing.assert_allclose(y.asnumpy(), x.reshape(4, 6) @ w.T + b, rtol=1e-5, atol=1e-5)


def test_fully_connected_without_flatten_applies_to_last_axis():
    x, w = rng.standard_normal((4, 2, 3)), rng.standard_normal((5, 3))
    y = lazynd.nd.FullyConnected(lazynd.nd.array(x), lazynd.nd.array(w), num_hidden=5, no_bias=True, flatten=False)
    np.testing.assert_allclose(y.asnumpy(), x @ w.T, rtol=1e-5, atol=1e-5)


def test_fully_connected_infers_weight_and_bias():
    op = registry.get("FullyConnected")
    ins, outs, _ = op.infer_shape(op.parse({"num_hidden": 10}), [(32, 1, 28, 28), None, None])
    assert ins[1:] == [(10, 784), (10,)] and outs == [(32, 10)]


def test_fully_connected_rejects_wrong_weight():
    with pytest.raises(ShapeError, match="weight"):
        lazynd.nd.FullyConnected(lazynd.nd.zeros((2, 3)), lazynd.nd.zeros((4, 2)), num_hidden=4, no_bias=True)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_fully_connected_mnist_layer_matches_numpy(dtype):
    x, w, b = (rng.standard_normal(s).astype(dtype) for s in ((128, 2, 392), (128, 784), (128,)))
    args = [lazynd.nd.array(v, dtype=dtype) for v in (x, w, b)]
    y = lazynd.nd.FullyConnected(*args, num_hidden=128).asnumpy()
    tol = 1e-4 if dtype == np.float32 else 1e-10
    np.testing.assert_allclose(y, x.reshape(128, -1) @ w.T + b, rtol=tol, atol=tol)


def test_fully_connected_forward_does_not_import_opencv():
    # a per-call transposed weight copy through OpenCV cost more than it saved, and importing
    # OpenCV on the first call put ~30 ms into a training loop's first batch
    code = (
        "import sys, numpy as np, lazynd\n"
        "x, w = lazynd.nd.array(np.ones((128, 784))), lazynd.nd.array(np.ones((128, 784)))\n"
        "lazynd.nd.FullyConnected(x, w, num_hidden=128, no_bias=True).asnumpy()\n"
        "print('cv2' in sys.modules)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "False"


def test_fully_connected_gradient():
    check_gradient(
        "FullyConnected",
        [rng.standard_normal((3, 4)), rng.standard_normal((2, 4)), rng.standard_normal(2)],
        {"num_hidden": 2},
    )


ACTIVATIONS = {
    "relu": lambda x: np.maximum(x, 0),
    "sigmoid": lambda x: 1 / (1 + np.exp(-x)),
    "tanh": np.tanh,
    "softrelu": lambda x: np.log1p(np.exp(x)),
    "softsign": lambda x: x / (1 + np.abs(x)),
}


@pytest.mark.parametrize("act_type", sorted(ACTIVATIONS))
def test_activation_matches_numpy(act_type):
    x = rng.standard_normal((3, 5))
    y = lazynd.nd.Activation(lazynd.nd.array(x, dtype="float64"), act_type=act_type)
    np.testing.assert_allclose(y.asnumpy(), ACTIVATIONS[act_type](x), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("act_type", sorted(ACTIVATIONS))
def test_activation_gradient(act_type):
    x = rng.standard_normal((3, 4))
    x[np.abs(x) < 0.05] = 0.5  # keep away from relu's kink
    check_gradient("Activation", [x], {"act_type": act_type}, rtol=1e-4, atol=1e-6)


def test_activation_rejects_unknown_type():
    with pytest.raises(OperatorError, match="act_type"):
        lazynd.nd.Activation(lazynd.nd.zeros((2,)), act_type="swish")


@pytest.mark.parametrize("act_type", ["leaky", "elu"])
def test_leaky_relu_forward_and_gradient(act_type):
    x = rng.standard_normal((2, 3, 4))
    x[np.abs(x) < 0.05] = 0.5
    y = lazynd.nd.LeakyReLU(lazynd.nd.array(x, dtype="float64"), act_type=act_type, slope=0.3).asnumpy()
    expected = np.where(x > 0, x, 0.3 * x if act_type == "leaky" else 0.3 * np.expm1(x))
    np.testing.assert_allclose(y, expected, rtol=1e-10)
    check_gradient("LeakyReLU", [x], {"act_type": act_type, "slope": 0.3}, rtol=1e-4, atol=1e-6)


def test_prelu_uses_per_channel_gamma_and_has_its_gradient():
    x, gamma = rng.standard_normal((2, 3, 4)), np.array([0.1, 0.2, 0.3])
    x[np.abs(x) < 0.05] = 0.5
    y = lazynd.nd.LeakyReLU(lazynd.nd.array(x), lazynd.nd.array(gamma), act_type="prelu").asnumpy()
    np.testing.assert_allclose(y, np.where(x > 0, x, x * gamma.reshape(1, 3, 1)), rtol=1e-6)
    check_gradient("LeakyReLU", [x, gamma], {"act_type": "prelu"}, rtol=1e-4, atol=1e-6)


def test_prelu_takes_one_slope_shared_by_every_channel():
    x = lazynd.nd.array(np.array([-2, 1, -0.5, 3, -1, -4], np.float32).reshape(2, 3, 1))
    gamma = lazynd.nd.array([0.25])
    x.attach_grad()
    gamma.attach_grad()
    with lazynd.autograd.record():
        y = lazynd.nd.LeakyReLU(x, gamma, act_type="prelu")
    y.backward(lazynd.nd.ones(y.shape) * 2)
    # values from MXNet 1.9.1 (gluon's PReLU holds a single slope of shape (1,) by default)
    np.testing.assert_allclose(y.asnumpy().ravel(), [-0.5, 1.0, -0.125, 3.0, -0.25, -1.0])
    np.testing.assert_allclose(x.grad.asnumpy().ravel(), [0.5, 2.0, 0.5, 2.0, 0.5, 0.5])
    np.testing.assert_allclose(gamma.grad.asnumpy(), [-15.0])
    check_gradient(
        "LeakyReLU", [rng.standard_normal((2, 3, 4)), np.array([0.2])], {"act_type": "prelu"}, rtol=1e-4, atol=1e-6
    )


def test_dropout_training_zeroes_about_p_and_scales_the_rest():
    x = lazynd.nd.ones((200, 100))
    y = lazynd.nd.Dropout(x, p=0.3, is_train=True).asnumpy()
    kept = y[y != 0]
    np.testing.assert_allclose(kept, 1 / 0.7, rtol=1e-6)
    assert abs((y == 0).mean() - 0.3) < 0.03


def test_dropout_inference_is_identity():
    x = rng.standard_normal((4, 5)).astype("float32")
    np.testing.assert_array_equal(lazynd.nd.Dropout(lazynd.nd.array(x), p=0.5).asnumpy(), x)


def test_dropout_gradient_multiplies_by_the_hidden_mask():
    op = registry.get("Dropout")
    x, head = lazynd.nd.ones((10, 10)), lazynd.nd.ones((10, 10))
    output = lazynd.nd.Dropout(x, p=0.5, is_train=True)
    outputs = [output, lazynd.nd.array(output.asnumpy())]  # the mask equals the output for an all-ones input
    grad = op.gradient(lazynd.nd, op.parse({"p": 0.5}), [x], outputs, [head])[0]
    np.testing.assert_array_equal(grad.asnumpy(), output.asnumpy())
    assert 0 < (output.asnumpy() == 0).sum() < 100


def test_embedding_looks_up_rows_and_scatters_gradient():
    w = rng.standard_normal((5, 3))
    idx = np.array([[0, 4], [4, 2]])
    y = lazynd.nd.Embedding(lazynd.nd.array(idx), lazynd.nd.array(w), input_dim=5, output_dim=3)
    np.testing.assert_allclose(y.asnumpy(), w[idx].astype("float32"), rtol=1e-6)
    op = registry.get("Embedding")
    attrs = op.parse({"input_dim": 5, "output_dim": 3})
    grad = op.gradient(lazynd.nd, attrs, [lazynd.nd.array(idx), lazynd.nd.array(w)], [y], [lazynd.nd.ones((2, 2, 3))])
    assert not grad[0].asnumpy().any()  # the indices are not differentiable: zeros where asked
    np.testing.assert_allclose(grad[1].asnumpy()[:, 0], [1, 0, 1, 0, 2])


def test_embeddings_gradient_is_written_into_the_weights_buffer_and_leaves_out_the_indices():
    # a vocabulary-sized gradient: one scatter into w.grad, no second array copied into it
    from lazynd.runtime.capture import PushCapture

    idx, w = lazynd.nd.array([[0, 4], [4, 2]]), lazynd.nd.array(rng.standard_normal((5, 3)))
    w.attach_grad()
    with lazynd.autograd.record():
        y = lazynd.nd.Embedding(idx, w, input_dim=5, output_dim=3)
    with PushCapture() as seen:
        y.backward()
    names = [name for *_, name in seen.pushes]
    assert names.count("_backward_Embedding") == 1 and "_copyto" not in names, names
    (outs,) = [args[3] for *_, args, _, _, name in seen.pushes if name == "_backward_Embedding"]
    assert outs[0] is None and outs[1] is w.grad.data_array
    np.testing.assert_allclose(w.grad.asnumpy()[:, 0], [1, 0, 1, 0, 2])


# -- LeakyReLU(act_type='rrelu') -------------------------------------------------------------------
RRELU = {"act_type": "rrelu", "lower_bound": 0.1, "upper_bound": 0.3}


def test_rrelu_inference_uses_the_mean_slope(ctx):
    x = rng.standard_normal((3, 4)).astype(np.float32)
    y = lazynd.nd.LeakyReLU(lazynd.nd.array(x, ctx=ctx), **RRELU)
    np.testing.assert_allclose(y.asnumpy(), np.where(x > 0, x, 0.2 * x), rtol=1e-6)


def test_rrelu_training_draws_a_slope_per_element_within_the_bounds(ctx):
    x = -np.ones((50, 40), np.float32)
    y = lazynd.nd.LeakyReLU(lazynd.nd.array(x, ctx=ctx), is_train=True, **RRELU).asnumpy()
    slopes = -y
    assert slopes.min() >= 0.1 and slopes.max() < 0.3 and np.unique(slopes).size > 100
    assert abs(slopes.mean() - 0.2) < 0.01


def test_rrelu_training_gradient_uses_the_drawn_slopes(ctx):
    x = rng.standard_normal((4, 5)).astype(np.float32)
    net = lazynd.sym.LeakyReLU(lazynd.sym.Variable("data"), **RRELU)
    assert len(net.list_outputs()) == 1  # the slopes are a hidden output, as in MXNet 0.9
    ex = net.simple_bind(ctx, data=x.shape)
    ex.forward(is_train=True, data=lazynd.nd.array(x, ctx=ctx))
    y = ex.outputs[0].asnumpy()
    slope = np.where(x > 0, 1.0, y / np.where(x > 0, 1.0, x))
    assert ((slope[x <= 0] >= 0.1) & (slope[x <= 0] < 0.3)).all()
    head = rng.standard_normal(x.shape).astype(np.float32)
    ex.backward(lazynd.nd.array(head, ctx=ctx))
    np.testing.assert_allclose(ex.grad_dict["data"].asnumpy(), head * slope, rtol=1e-5, atol=1e-6)


def test_rrelu_refuses_a_lower_bound_above_the_upper_bound_by_name():
    with pytest.raises(lazynd.LazyNDError, match="LeakyReLU: .*lower_bound=0.5, upper_bound=0.1"):
        lazynd.nd.LeakyReLU(lazynd.nd.ones((2, 3)), act_type="rrelu", lower_bound=0.5, upper_bound=0.1)
    with pytest.raises(lazynd.LazyNDError, match="lower_bound must not exceed upper_bound"):
        sym = lazynd.sym.LeakyReLU(lazynd.sym.Variable("data"), act_type="rrelu", lower_bound=0.5, upper_bound=0.1)
        sym.simple_bind(lazynd.cpu(), data=(2, 3))


def test_rrelu_with_equal_bounds_has_the_leaky_gradient(ctx):
    x = rng.standard_normal((3, 4))
    grads = []
    for params in ({"act_type": "rrelu", "lower_bound": 0.2, "upper_bound": 0.2}, {"slope": 0.2}):
        ex = lazynd.sym.LeakyReLU(lazynd.sym.Variable("data"), **params).simple_bind(ctx, data=x.shape)
        ex.forward(is_train=True, data=lazynd.nd.array(x, ctx=ctx))
        ex.backward(lazynd.nd.array(x + 1, ctx=ctx))
        grads.append(ex.grad_dict["data"].asnumpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-6)


def _strided_out(shape: tuple[int, ...]) -> tuple[lazynd.nd.NDArray, lazynd.nd.NDArray]:
    """A base array and its view of ``shape``: rows 0..shape[1]-1 of axis 1 of a longer array, a
    layout whose first two axes no reshape can merge without a copy."""
    longer = (shape[0], shape[1] + 1, *shape[2:])
    base = lazynd.nd.full(longer, 7.0)
    return base, base[:, 0 : shape[1]]


def test_fully_connected_and_embedding_write_into_a_strided_out_array():
    nd = lazynd.nd
    x, w, b = (nd.array(rng.standard_normal(s)) for s in ((2, 3, 4), (5, 4), (5,)))
    base, out = _strided_out((2, 3, 5))
    nd.FullyConnected(x, w, b, num_hidden=5, flatten=False, out=out)
    expected = x.asnumpy() @ w.asnumpy().T + b.asnumpy()
    np.testing.assert_allclose(base.asnumpy()[:, :3], expected, rtol=1e-5)
    np.testing.assert_array_equal(base.asnumpy()[:, 3], 7.0)  # the rest of the base untouched

    idx, weight = nd.array([[0, 1, 2], [3, 1, 0]]), nd.array(rng.standard_normal((4, 6)))
    base, out = _strided_out((2, 3, 6))
    nd.Embedding(idx, weight, input_dim=4, output_dim=6, out=out)
    np.testing.assert_array_equal(base.asnumpy()[:, :3], weight.asnumpy()[[[0, 1, 2], [3, 1, 0]]])


def test_fully_connected_data_gradient_into_a_strided_buffer():
    nd = lazynd.nd
    x, w, b = (nd.array(rng.standard_normal(s)) for s in ((2, 3, 4), (5, 4), (5,)))
    head = nd.array(rng.standard_normal((2, 3, 5)))
    base, data_grad = _strided_out((2, 3, 4))
    weight_grad, bias_grad = nd.zeros((5, 4)), nd.zeros((5,))
    nd._backward_FullyConnected(head, x, w, num_hidden=5, flatten=False, out=[data_grad, weight_grad, bias_grad])
    np.testing.assert_allclose(base.asnumpy()[:, :3], head.asnumpy() @ w.asnumpy(), rtol=1e-5)


def test_fully_connected_of_two_dimensional_strided_arrays_forward_and_backward():
    # 2-D arrays go to the products as they are (no reshaped view): a strided data, out= and data gradient
    nd = lazynd.nd
    x_base = nd.array(rng.standard_normal((6, 7)))
    x, w, b = x_base[:, 1:5], nd.array(rng.standard_normal((5, 4))), nd.array(rng.standard_normal(5))
    expected = x.asnumpy() @ w.asnumpy().T + b.asnumpy()
    for flatten in (True, False):
        base, out = _strided_out((6, 5))
        nd.FullyConnected(x, w, b, num_hidden=5, flatten=flatten, out=out)
        np.testing.assert_allclose(base.asnumpy()[:, :5], expected, rtol=1e-5)
        np.testing.assert_array_equal(base.asnumpy()[:, 5:], 7.0)
        head = nd.array(rng.standard_normal((6, 5)))
        base, data_grad = _strided_out((6, 4))
        weight_grad, bias_grad = nd.zeros((5, 4)), nd.zeros((5,))
        nd._backward_FullyConnected(head, x, w, num_hidden=5, flatten=flatten, out=[data_grad, weight_grad, bias_grad])
        np.testing.assert_allclose(base.asnumpy()[:, :4], head.asnumpy() @ w.asnumpy(), rtol=1e-5)
        np.testing.assert_array_equal(base.asnumpy()[:, 4:], 7.0)
        np.testing.assert_allclose(weight_grad.asnumpy(), head.asnumpy().T @ x.asnumpy(), rtol=1e-5)
        np.testing.assert_allclose(bias_grad.asnumpy(), head.asnumpy().sum(axis=0), rtol=1e-5)


def test_a_batch_of_no_rows_goes_through_fully_connected_and_embedding(ctx):
    # an empty batch (the tail of a split, a filtered batch): empty results, zero weight gradients
    x = lazynd.nd.zeros((0, 2, 5), ctx=ctx)
    w, b = lazynd.nd.ones((3, 10), ctx=ctx), lazynd.nd.zeros((3,), ctx=ctx)
    w.attach_grad()
    with lazynd.autograd.record():
        y = lazynd.nd.FullyConnected(x, w, b, num_hidden=3)
    y.backward()
    assert y.asnumpy().shape == (0, 3)
    np.testing.assert_array_equal(w.grad.asnumpy(), np.zeros((3, 10)))
    y = lazynd.nd.FullyConnected(x, lazynd.nd.ones((3, 5), ctx=ctx), b, num_hidden=3, flatten=False)
    assert y.asnumpy().shape == (0, 2, 3)
    e = lazynd.nd.Embedding(
        lazynd.nd.zeros((0, 4), ctx=ctx), lazynd.nd.ones((6, 2), ctx=ctx), input_dim=6, output_dim=2
    )
    assert e.asnumpy().shape == (0, 4, 2)


def test_dropout_axes_share_one_draw_along_them_as_mxnet():
    x = lazynd.nd.ones((4, 5, 6))
    y = lazynd.nd.Dropout(x, p=0.5, axes=(0, 2), mode="always").asnumpy()
    # MXNet 1.x's variational dropout: each channel of axis 1 is kept (as 2.0) or dropped whole
    assert set(np.unique(y)) <= {0.0, 2.0}
    assert (y == y[:1, :, :1]).all()
    np.testing.assert_array_equal(lazynd.nd.Dropout(x, p=0.5, axes=(1,)).asnumpy(), x.asnumpy())  # prediction
    with pytest.raises(ShapeError, match=r"Dropout: axes=\(3,\) must be axes of the 3-D input"):
        lazynd.nd.Dropout(x, p=0.5, axes=(3,))


# LeakyReLU at x, and the gradient of its sum, from MXNet 1.9.1 (float64 data; MXNet's gelu
# computes in float32, hence the tolerance); both act_types were 'invalid value' in lazynd
_LEAKY_X = [-2.0, -1.0, -0.5, 0.0, 0.5, 1.0, 3.0]
_LEAKY_MXNET = {
    "gelu": (
        [-0.0455003, -0.1586553, -0.1542688, 0.0, 0.3457312, 0.8413447, 2.9959502],
        [-0.0852318, -0.0833155, 0.1325049, 0.5, 0.8674951, 1.0833155, 1.0119456],
    ),
    "selu": (
        [-1.5201665, -1.1113307, -0.6917582, 0.0, 0.5253505, 1.050701, 3.1521031],
        # lambda * alpha * exp(x) where x <= 0; MXNet 1.9.1 gives lambda * (selu(x) + alpha) there
        # (0.1608589, 0.590423, 1.0312683 for the first three), not the derivative: lazynd keeps the derivative
        [0.2379329, 0.6467686, 1.0663412, 1.7580993, 1.050701, 1.050701, 1.050701],
    ),
}


@pytest.mark.parametrize("act_type", sorted(_LEAKY_MXNET))
def test_leaky_relu_selu_and_gelu_match_mxnet(act_type):
    x = lazynd.nd.array(_LEAKY_X, dtype="float64")
    x.attach_grad()
    with lazynd.autograd.record():
        y = lazynd.nd.LeakyReLU(x, act_type=act_type)
    y.backward()
    values, grads = _LEAKY_MXNET[act_type]
    np.testing.assert_allclose(y.asnumpy(), values, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(x.grad.asnumpy(), grads, rtol=1e-6, atol=1e-7)
    check_gradient("LeakyReLU", [rng.standard_normal((3, 4)) + 0.05], {"act_type": act_type}, rtol=1e-4, atol=1e-6)


def test_embedding_clips_infinite_ids_as_numbers_without_a_numpy_warning():
    import warnings

    weight = lazynd.nd.array([[1.0], [2.0]])
    weight.attach_grad()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # NumPy's "invalid value encountered in cast" would fail the kernel
        with lazynd.autograd.record():
            y = lazynd.nd.Embedding(lazynd.nd.array([np.inf, -np.inf, 1.0]), weight, input_dim=2, output_dim=1)
        y.backward()
        # clipped as numbers (MXNet 1.9.1's cast sends both to row 0); NaN is refused
        # (tests/ops/test_label_classes.py)
        np.testing.assert_array_equal(y.asnumpy().ravel(), [2.0, 1.0, 2.0])
        np.testing.assert_array_equal(weight.grad.asnumpy().ravel(), [1.0, 2.0])


def test_gelu_of_infinities_is_mxnet_s_without_a_numpy_warning():
    import warnings

    x = lazynd.nd.array([-np.inf, np.inf])
    x.attach_grad()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # inf * 0 inside would warn and fail the kernel
        with lazynd.autograd.record():
            y = lazynd.nd.LeakyReLU(x, act_type="gelu")
        y.backward()
        # values MXNet 1.9.1 gives
        np.testing.assert_array_equal(y.asnumpy(), [np.nan, np.inf])
        np.testing.assert_array_equal(x.grad.asnumpy(), [np.nan, np.nan])
