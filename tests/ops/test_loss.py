"""Output layers and losses: forward values and MXNet's gradient semantics (head gradient ignored)."""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx
from lazynd.errors import EngineError, OperatorError, ShapeError
from lazynd.ops import host_reduce, registry
from lazynd.testing import assert_almost_equal


def np_softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def loss_gradient(name: str, inputs: list, head: float = 1.0, **params) -> list:
    """Forward ``name`` then evaluate its gradient rule with a (deliberately odd) head gradient."""
    op = registry.get(name)
    out = getattr(mx.nd, name)(*inputs, **params)
    head_grad = mx.nd.ones(out.shape, ctx=out.context) * head
    grads = op.gradient(mx.nd, op.parse(params), inputs, [out], [head_grad])
    return [None if g is None else g.asnumpy() for g in grads]


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(3)


def test_softmax_output_forward_is_softmax_over_classes(ctx, rng):
    x = rng.standard_normal((4, 5)).astype(np.float32)
    y = mx.nd.SoftmaxOutput(mx.nd.array(x, ctx=ctx), mx.nd.array([0, 1, 2, 3], ctx=ctx))
    assert_almost_equal(y.asnumpy(), np_softmax(x), rtol=1e-5, atol=1e-6)


def test_softmax_output_gradient_is_prob_minus_onehot_times_grad_scale(ctx, rng):
    x = rng.standard_normal((4, 3)).astype(np.float32)
    label = np.array([0, 2, 1, 2])
    grads = loss_gradient(
        "SoftmaxOutput", [mx.nd.array(x, ctx=ctx), mx.nd.array(label, ctx=ctx)], head=7.0, grad_scale=0.5
    )
    expected = (np_softmax(x) - np.eye(3)[label]) * 0.5
    assert_almost_equal(grads[0], expected, rtol=1e-5, atol=1e-6)
    assert grads[1] is None


@pytest.mark.parametrize("dtype", ["float64", "float16"])
def test_softmax_output_gradient_keeps_the_data_dtype(rng, dtype):
    x = rng.standard_normal((6, 4)).astype(dtype)
    label = np.array([3, 0, 1, 2, 3, 0])
    grads = loss_gradient("SoftmaxOutput", [mx.nd.array(x, dtype=dtype), mx.nd.array(label, dtype=dtype)])
    assert grads[0].dtype == np.dtype(dtype)
    expected = np_softmax(x.astype(np.float64)) - np.eye(4)[label]
    assert_almost_equal(
        grads[0], expected, rtol=1e-2 if dtype == "float16" else 1e-7, atol=1e-3 if dtype == "float16" else 1e-9
    )
    # the one-hot rows come from a shared read-only table, which the gradient must leave intact
    np.testing.assert_array_equal(host_reduce.identity(4, np.dtype(dtype)), np.eye(4, dtype=dtype))


def test_softmax_output_batch_normalization_divides_by_batch(rng):
    x = rng.standard_normal((4, 3)).astype(np.float32)
    label = np.array([0, 2, 1, 2])
    grads = loss_gradient("SoftmaxOutput", [mx.nd.array(x), mx.nd.array(label)], normalization="batch")
    assert_almost_equal(grads[0], (np_softmax(x) - np.eye(3)[label]) / 4, rtol=1e-5, atol=1e-6)


def test_softmax_output_ignore_label_zeroes_rows_and_valid_normalization_counts_the_rest(rng):
    x = rng.standard_normal((4, 3)).astype(np.float32)
    label = np.array([0, -1, 1, -1])
    grads = loss_gradient(
        "SoftmaxOutput", [mx.nd.array(x), mx.nd.array(label)], use_ignore=True, ignore_label=-1, normalization="valid"
    )
    expected = np_softmax(x) - np.eye(3)[np.maximum(label, 0)]
    expected[label == -1] = 0
    assert_almost_equal(grads[0], expected / 2, rtol=1e-5, atol=1e-6)


def test_softmax_output_multi_output_uses_axis_1_and_spatial_labels(rng):
    x = rng.standard_normal((2, 3, 4)).astype(np.float32)
    label = rng.integers(0, 3, size=(2, 4))
    y = mx.nd.SoftmaxOutput(mx.nd.array(x), mx.nd.array(label), multi_output=True)
    assert_almost_equal(y.asnumpy(), np_softmax(x, 1), rtol=1e-5, atol=1e-6)
    grads = loss_gradient("SoftmaxOutput", [mx.nd.array(x), mx.nd.array(label)], multi_output=True)
    onehot = np.moveaxis(np.eye(3)[label], -1, 1)
    # normalization 'null' still divides by the 4 positions per sample, as MXNet does
    assert_almost_equal(grads[0], (np_softmax(x, 1) - onehot) / 4, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("normalization, divisor", [("null", 4), ("batch", 8), ("valid", 8)])
def test_softmax_output_multi_output_normalization_matches_mxnet(rng, normalization, divisor):
    x = rng.standard_normal((2, 3, 2, 2)).astype(np.float32)
    label = rng.integers(0, 3, size=(2, 2, 2))
    grads = loss_gradient(
        "SoftmaxOutput", [mx.nd.array(x), mx.nd.array(label)], multi_output=True, normalization=normalization
    )
    onehot = np.moveaxis(np.eye(3)[label], -1, 1)
    assert_almost_equal(grads[0], (np_softmax(x, 1) - onehot) / divisor, rtol=1e-5, atol=1e-6)


def test_softmax_output_accepts_probabilities_as_labels(ctx):
    import lazynd_sym as sym

    x = np.array([[1, 2, 3], [1, 0, -1]], dtype=np.float32)
    label = np.array([[0, 0.5, 0.5], [1, 0, 0]], dtype=np.float32)
    out = sym.SoftmaxOutput(sym.Variable("x"), sym.Variable("l"), grad_scale=2)
    ex = out.simple_bind(ctx, x=(2, 3), l=(2, 3))
    ex.forward(is_train=True, x=mx.nd.array(x, ctx=ctx), l=mx.nd.array(label, ctx=ctx))
    ex.backward()
    assert_almost_equal(ex.grad_dict["x"].asnumpy(), (np_softmax(x) - label) * 2, rtol=1e-5, atol=1e-6)


def test_softmax_output_out_grad_weights_the_gradient_by_the_head_gradient(ctx):
    import lazynd_sym as sym

    x = np.array([[1, 2, 3], [1, 0, -1]], dtype=np.float32)
    label = np.array([[0, 0.5, 0.5], [1, 0, 0]], dtype=np.float32)
    head = np.array([[1, 2, 3], [4, 5, 6]], dtype=np.float32)
    out = sym.SoftmaxOutput(sym.Variable("x"), sym.Variable("l"), grad_scale=2, out_grad=True)
    ex = out.simple_bind(ctx, x=(2, 3), l=(2, 3))
    ex.forward(is_train=True, x=mx.nd.array(x, ctx=ctx), l=mx.nd.array(label, ctx=ctx))
    ex.backward(mx.nd.array(head, ctx=ctx))
    assert_almost_equal(ex.grad_dict["x"].asnumpy(), (np_softmax(x) - label) * 2 * head, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("how", ["executor", "autograd"])
def test_softmax_output_out_grad_weights_a_class_label_gradient_by_the_head_gradient(ctx, how):
    # with one class per row as the label too: (softmax - one_hot) * grad_scale * head
    import lazynd_sym as sym

    x = np.array([[1, 2, 3], [1, 0, -1]], dtype=np.float32)
    label = np.array([2, 0], dtype=np.float32)
    head = np.array([[1, 2, 3], [4, 5, 6]], dtype=np.float32)
    want = (np_softmax(x) - np.eye(3)[[2, 0]]) * 2 * head
    if how == "executor":
        out = sym.SoftmaxOutput(sym.Variable("x"), sym.Variable("l"), grad_scale=2, out_grad=True)
        ex = out.simple_bind(ctx, x=(2, 3), l=(2,))
        ex.forward(is_train=True, x=mx.nd.array(x, ctx=ctx), l=mx.nd.array(label, ctx=ctx))
        ex.backward(mx.nd.array(head, ctx=ctx))
        got = ex.grad_dict["x"].asnumpy()
    else:
        data = mx.nd.array(x, ctx=ctx)
        data.attach_grad()
        with mx.autograd.record():
            y = mx.nd.SoftmaxOutput(data, mx.nd.array(label, ctx=ctx), grad_scale=2, out_grad=True)
        y.backward(mx.nd.array(head, ctx=ctx))
        got = data.grad.asnumpy()
    assert_almost_equal(got, want, rtol=1e-5, atol=1e-6)


def test_softmax_output_preserve_shape_uses_last_axis(rng):
    x = rng.standard_normal((2, 3, 4)).astype(np.float32)
    label = rng.integers(0, 4, size=(2, 3))
    grads = loss_gradient("SoftmaxOutput", [mx.nd.array(x), mx.nd.array(label)], preserve_shape=True)
    assert_almost_equal(grads[0], np_softmax(x, -1) - np.eye(4)[label], rtol=1e-5, atol=1e-6)


def test_softmax_output_preserve_shape_batch_normalization_divides_by_every_row(rng):
    # MXNet sees the data as 2-D (every position a row): (2, 3, 4) has 6 rows, not a batch of 2
    x = rng.standard_normal((2, 3, 4)).astype(np.float32)
    label = rng.integers(0, 4, size=(2, 3))
    inputs = [mx.nd.array(x), mx.nd.array(label)]
    grads = loss_gradient("SoftmaxOutput", inputs, preserve_shape=True, normalization="batch")
    assert_almost_equal(grads[0], (np_softmax(x, -1) - np.eye(4)[label]) / 6, rtol=1e-5, atol=1e-6)


def test_softmax_output_flattens_trailing_axes_without_multi_output(rng):
    x = rng.standard_normal((2, 3, 2)).astype(np.float32)
    y = mx.nd.SoftmaxOutput(mx.nd.array(x), mx.nd.array([0, 5]))
    assert_almost_equal(y.asnumpy(), np_softmax(x.reshape(2, 6)).reshape(x.shape), rtol=1e-5, atol=1e-6)


def test_softmax_output_infers_label_shape_from_data():
    op = registry.get("SoftmaxOutput")
    assert op.infer_shape(op.parse({}), [(8, 10), None])[0][1] == (8,)
    assert op.infer_shape(op.parse({"multi_output": True}), [(8, 10, 5, 5), None])[0][1] == (8, 25)
    assert op.infer_shape(op.parse({"preserve_shape": True}), [(8, 4, 10), None])[0][1] == (8, 4)
    assert op.input_names({}) == ["data", "label"]


def test_softmax_output_multi_output_takes_flat_or_spatial_labels(rng):
    # fcn-xs binds (batch, height * width) labels to 4-D scores; MXNet also takes (batch, height, width)
    x = rng.standard_normal((2, 3, 4, 5)).astype(np.float32)
    label = rng.integers(0, 3, size=(2, 4, 5))
    net = mx.sym.SoftmaxOutput(mx.sym.Variable("data"), multi_output=True, name="softmax")
    assert net.infer_shape(data=x.shape)[0][1] == (2, 20)
    assert net.infer_shape(data=x.shape, softmax_label=(2, 4, 5))[0][1] == (2, 4, 5)
    grads = []
    for lab in (label.reshape(2, 20), label):
        exe = net.simple_bind(mx.cpu(), data=x.shape, softmax_label=lab.shape)
        exe.forward(is_train=True, data=x, softmax_label=lab)
        exe.backward()
        grads.append(exe.grad_dict["data"].asnumpy())
    onehot = np.moveaxis(np.eye(3)[label], -1, 1)
    assert_almost_equal(grads[0], (np_softmax(x, 1) - onehot) / 20, rtol=1e-5, atol=1e-6)
    assert_almost_equal(grads[1], grads[0])


def test_softmax_output_rejects_a_label_of_the_wrong_shape():
    with pytest.raises(ShapeError, match="label"):
        mx.nd.SoftmaxOutput(mx.nd.ones((4, 3)), mx.nd.ones((5,)))


@pytest.mark.parametrize("labels", [[0, 3], [-1, 0], [2, -4], [0, 1e9]])
def test_softmax_output_gradient_rejects_out_of_range_labels(labels):
    bad = next(int(v) for v in labels if not 0 <= v < 3)
    with pytest.raises((OperatorError, EngineError), match=f"label {bad} is out of range for 3 classes"):
        loss_gradient("SoftmaxOutput", [mx.nd.ones((2, 3)), mx.nd.array(labels)])


def test_softmax_is_an_alias_of_softmax_output():
    assert registry.get("Softmax") is registry.get("SoftmaxOutput")


def test_label_smoothing_spreads_alpha_over_other_classes(rng):
    x = rng.standard_normal((2, 4)).astype(np.float32)
    label = np.array([1, 3])
    grads = loss_gradient("SoftmaxOutput", [mx.nd.array(x), mx.nd.array(label)], smooth_alpha=0.3)
    target = np.full((2, 4), 0.1)
    target[np.arange(2), label] = 0.7
    assert_almost_equal(grads[0], np_softmax(x) - target, rtol=1e-5, atol=1e-6)


def test_linear_regression_gradient_divides_by_outputs_per_row(ctx):
    data = np.array([[1.0, 2, 3], [1, 1, 1]], dtype=np.float32)
    label = np.array([[1.0, 2, 3], [0, 0, 0]], dtype=np.float32)
    inputs = [mx.nd.array(data, ctx=ctx), mx.nd.array(label, ctx=ctx)]
    assert_almost_equal(mx.nd.LinearRegressionOutput(*inputs).asnumpy(), data)
    grads = loss_gradient("LinearRegressionOutput", inputs, head=3.0, grad_scale=2.0)
    assert_almost_equal(grads[0], (data - label) * 2.0 / 3, rtol=1e-6)


def test_logistic_regression_forward_is_sigmoid_and_gradient_is_residual(ctx, rng):
    data = rng.standard_normal((3, 2)).astype(np.float32) * 50
    label = (rng.random((3, 2)) > 0.5).astype(np.float32)
    inputs = [mx.nd.array(data, ctx=ctx), mx.nd.array(label, ctx=ctx)]
    prob = 1 / (1 + np.exp(-data.astype(np.float64)))
    assert_almost_equal(mx.nd.LogisticRegressionOutput(*inputs).asnumpy(), prob, rtol=1e-5, atol=1e-7)
    assert_almost_equal(loss_gradient("LogisticRegressionOutput", inputs)[0], (prob - label) / 2, rtol=1e-5, atol=1e-6)


def test_mae_regression_gradient_is_sign_of_residual_and_minus_one_where_it_is_zero(ctx):
    inputs = [mx.nd.array([[0.5], [-2.0], [1.0]], ctx=ctx), mx.nd.array([1.0, -3.0, 1.0], ctx=ctx)]
    # values from MXNet 1.9.1, whose gradient is (out > label ? 1 : -1): -1 at out == label, not 0
    assert_almost_equal(loss_gradient("MAERegressionOutput", inputs)[0], [[-1.0], [1.0], [-1.0]])


def test_regression_output_rejects_a_label_of_the_wrong_shape():
    with pytest.raises(ShapeError, match="label"):
        mx.nd.LinearRegressionOutput(mx.nd.ones((4, 3)), mx.nd.ones((4, 2)))


def test_make_loss_gradient_is_grad_scale_whatever_the_head():
    data = mx.nd.array([[1.0, 2, 3], [1, 1, 1]])
    assert_almost_equal(loss_gradient("MakeLoss", [data], head=9.0, grad_scale=0.25)[0], np.full((2, 3), 0.25))
    assert_almost_equal(loss_gradient("MakeLoss", [data], normalization="batch")[0], np.full((2, 3), 0.5))
    valid = loss_gradient("MakeLoss", [data], normalization="valid", valid_thresh=1.5)[0]
    assert_almost_equal(valid, np.full((2, 3), 0.5))


@pytest.mark.parametrize("shape, divisor", [((5,), 1), ((4, 1), 4), ((2, 3, 4), 6)])
def test_make_loss_batch_normalization_divides_by_the_rows_of_the_data_seen_as_2d(shape, divisor):
    # as MXNet: a vector of per-sample losses is one row (no division); (2, 3, 4) has 6 rows
    grads = loss_gradient("MakeLoss", [mx.nd.ones(shape)], normalization="batch", grad_scale=3.0)
    assert_almost_equal(grads[0], np.full(shape, 3.0 / divisor))


def test_block_grad_passes_values_and_stops_gradients():
    x = mx.nd.array([1.0, -2.0])
    assert_almost_equal(mx.nd.BlockGrad(x).asnumpy(), [1.0, -2.0])
    assert loss_gradient("stop_gradient", [x]) == [None]


@pytest.mark.parametrize(
    "name",
    [
        "SoftmaxOutput",
        "LinearRegressionOutput",
        "LogisticRegressionOutput",
        "MAERegressionOutput",
        "MakeLoss",
        "BlockGrad",
    ],
)
def test_loss_heads_are_marked_as_losses(name):
    assert registry.get(name).is_loss


def test_softmax_output_gradient_trains_a_linear_classifier(rng):
    centers = np.array([[3.0, 0.0], [-3.0, 0.0], [0.0, 3.0]])
    label = rng.integers(0, 3, size=90)
    x = (centers[label] + rng.standard_normal((90, 2)) * 0.5).astype(np.float32)
    data, lab = mx.nd.array(x), mx.nd.array(label)
    weight, op = mx.nd.zeros((2, 3)), registry.get("SoftmaxOutput")
    attrs = op.parse({"normalization": "batch"})
    for _ in range(30):
        prob = mx.nd.SoftmaxOutput(mx.nd.dot(data, weight), lab, normalization="batch")
        dlogits = op.gradient(mx.nd, attrs, [None, lab], [prob], [None])[0]
        mx.nd.sgd_update(weight, mx.nd.dot(data, dlogits, transpose_a=True), out=weight, lr=1.0)
    accuracy = (mx.nd.dot(data, weight).asnumpy().argmax(1) == label).mean()
    assert accuracy > 0.95


@pytest.mark.gpu
@pytest.mark.skipif(mx.num_gpus() == 0, reason="needs an NVIDIA GPU with CuPy (none visible)")
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("label_dtype", ["float32", "float64", "int32", "int64"])
def test_softmax_output_gradient_of_one_label_a_row_agrees_on_gpu(dtype, label_dtype):
    """The GPU's one-pass kernel (scale * (p - one_hot(label))) against the host's gradient."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal((7, 5))
    label = rng.integers(0, 5, 7)
    grads = []
    for ctx in (mx.cpu(), mx.gpu(0)):
        data = mx.nd.array(x, ctx=ctx, dtype=dtype)
        data.attach_grad()
        with mx.autograd.record():
            out = mx.nd.SoftmaxOutput(
                data, mx.nd.array(label, ctx=ctx, dtype=label_dtype), normalization="batch", grad_scale=2.0
            )
        out.backward()
        grads.append(data.grad.asnumpy())
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", ["LinearRegressionOutput", "LogisticRegressionOutput", "MAERegressionOutput"])
def test_regression_output_of_one_column_infers_a_vector_label(name):
    # MXNet: an (n, 1) output's unknown label is (n,), so simple_bind makes a label that takes y of shape (n,)
    out = getattr(mx.sym, name)(mx.sym.Variable("x"), name="out")
    assert out.infer_shape(x=(5, 1)) == ([(5, 1), (5,)], [(5, 1)], [])
    assert out.infer_shape(x=(5, 3)) == ([(5, 3), (5, 3)], [(5, 3)], [])
    with pytest.raises(ShapeError, match="label"):
        out.infer_shape(x=(5, 1), out_label=(4,))


@pytest.mark.parametrize("name", ["LinearRegressionOutput", "LogisticRegressionOutput", "MAERegressionOutput"])
def test_regression_output_takes_a_label_with_the_data_rows_and_size(name):
    # MXNet 1.9.1 takes any label with the data's first axis and element count: (2, 3) for (2, 3, 1)
    data = np.array([[[0.5], [1.0], [-1.0]], [[2.0], [0.0], [1.0]]], dtype=np.float32)
    label = np.array([[1.0, 1.0, 0.0], [0.0, 0.0, 1.0]], dtype=np.float32)
    grads = loss_gradient(name, [mx.nd.array(data), mx.nd.array(label)])
    expected = loss_gradient(name, [mx.nd.array(data), mx.nd.array(label.reshape(data.shape))])
    assert_almost_equal(grads[0], expected[0])
    sym = getattr(mx.sym, name)(mx.sym.Variable("data"), mx.sym.Variable("label"))
    assert sym.infer_shape(data=(2, 3, 1), label=(2, 3))[0] == [(2, 3, 1), (2, 3)]
    with pytest.raises(ShapeError, match="label"):
        getattr(mx.nd, name)(mx.nd.array(data), mx.nd.ones((3, 2)))


def test_make_loss_names_its_output_loss_as_mxnet_1x_does():
    # MXNet 1.9.1: make_loss's output is '<name>_loss' (MakeLoss keeps '<name>_output'), so
    # get_internals()['l_loss'] and a Module's output_names find it
    net = mx.sym.make_loss(mx.sym.sum(mx.sym.Variable("data")), name="l")
    assert net.list_outputs() == ["l_loss"]
    assert "l_loss" in net.get_internals().list_outputs()
    assert mx.sym.MakeLoss(mx.sym.Variable("data"), name="m").list_outputs() == ["m_output"]
    data = mx.nd.array([[1.0, 2, 3], [1, 1, 1]])
    assert_almost_equal(loss_gradient("make_loss", [data], head=9.0)[0], np.ones((2, 3)))


@pytest.mark.parametrize(
    "params", [{"grad_scale": 0.25}, {"normalization": "batch"}, {"normalization": "valid", "valid_thresh": 1.5}]
)
def test_make_loss_gradient_is_ones_whatever_makeloss_parameters_it_is_given(params):
    # MXNet 1.9.1's make_loss is the identity with a gradient of ones: it takes MakeLoss's parameters (its
    # symbol files may hold them) and ignores them, so a program trains the same; the warning says so
    data = mx.nd.array([[1.0, 2, 3], [1, 1, 1]])
    with pytest.warns(UserWarning, match="make_loss: .* change nothing.*MakeLoss"):
        grads = loss_gradient("make_loss", [data], head=9.0, **params)
    assert_almost_equal(grads[0], np.ones((2, 3)))
    net = mx.sym.make_loss(mx.sym.Variable("data"), name="l", **params)
    with pytest.warns(UserWarning, match="make_loss: .* change nothing"):  # the gradient pass, at bind
        exe = net.simple_bind(mx.cpu(), data=(2, 3))
    exe.forward(is_train=True, data=data)
    exe.backward()
    assert_almost_equal(exe.grad_dict["data"].asnumpy(), np.ones((2, 3)))
