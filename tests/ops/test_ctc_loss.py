"""CTCLoss: losses and data gradients against MXNet 1.9.1 and a brute-force sum over alignments."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import lazynd as mx
import lazynd_sym as sym
from lazynd.errors import EngineError, LazyNDError, OperatorError, ShapeError
from lazynd.testing import check_gradient

# (sequence_length 4, batch 2, alphabet 4); RandomState's normal draws are stable across NumPy versions
DATA = np.random.RandomState(0).randn(4, 2, 4).astype(np.float32)
HEAD = np.array([1.0, 2.0], np.float32)  # the second sequence's gradient is scaled by 2

# name -> (inputs after data, params, loss, data gradient for the head HEAD), from MXNet 1.9.1
MXNET_CASES = {
    "repeated_label": (
        [[[1, 2], [1, 1]]],
        {},
        [3.58001, 5.369572],
        [
            [[-0.214743, -0.407343, 0.137234, 0.484852], [0.962906, -1.632303, 0.502403, 0.166994]],
            [[0.028564, -0.439432, -0.134811, 0.545679], [-1.000545, 0.051162, 0.500818, 0.448565]],
            [[0.256624, 0.075926, -0.392817, 0.060267], [-0.312072, -0.863062, 0.978815, 0.196319]],
            [[0.081383, 0.019815, -0.171556, 0.070358], [-0.056026, -0.396757, 0.201229, 0.251554]],
        ],
    ),
    "blank_last": (
        [[[0, 1], [2, -1]]],
        {"blank_label": "last"},
        [4.799518, 4.321776],
        [
            [[-0.13433, 0.076946, 0.137234, -0.07985], [1.257488, 0.073115, -0.769294, -0.56131]],
            [[-0.14936, 0.089337, 0.147201, -0.087178], [0.687744, 0.362873, -1.053962, 0.003345]],
            [[0.092037, -0.279229, 0.19363, -0.006438], [0.032102, 0.792764, -0.732656, -0.092209]],
            [[0.821013, -0.642549, 0.088814, -0.267278], [0.798132, 0.749086, -0.587258, -0.95996]],
        ],
    ),
    "data_and_label_lengths": (
        [[[1, 2], [1, 1]], [3, 4], [1, 2]],
        {"use_data_lengths": True, "use_label_lengths": True},
        [2.752743, 5.369572],
        [
            [[-0.438469, -0.183617, 0.137234, 0.484852], [0.962906, -1.632303, 0.502403, 0.166994]],
            [[-0.035146, -0.657734, 0.147201, 0.545679], [-1.000545, 0.051162, 0.500818, 0.448565]],
            [[-0.175271, -0.078626, 0.19363, 0.060267], [-0.312072, -0.863062, 0.978815, 0.196319]],
            [[0.0, 0.0, 0.0, 0.0], [-0.056026, -0.396757, 0.201229, 0.251554]],
        ],
    ),
}


def ctc_with_gradient(data, *rest, ctx=None, head=HEAD, **params):
    """The loss and the data gradient (for head gradient ``head``) through autograd."""
    ctx = ctx or mx.cpu()
    x = mx.nd.array(data, ctx=ctx, dtype=data.dtype)
    x.attach_grad()
    others = [mx.nd.array(np.asarray(r, np.float32), ctx=ctx) for r in rest]
    with mx.autograd.record():
        loss = mx.nd.CTCLoss(x, *others, **params)
    loss.backward(mx.nd.array(head, ctx=ctx))
    return loss.asnumpy(), x.grad.asnumpy()


def brute_force_ctc(data: np.ndarray, label: list[int], blank: int = 0) -> float:
    """-log of the total probability of every path (one class per step) that collapses to ``label``."""
    steps, alphabet = data.shape
    prob = np.exp(data - data.max(axis=1, keepdims=True))
    prob /= prob.sum(axis=1, keepdims=True)
    total = 0.0
    for path in itertools.product(range(alphabet), repeat=steps):
        collapsed = [k for i, k in enumerate(path) if k != blank and (i == 0 or path[i - 1] != k)]
        if collapsed == label:
            total += np.prod(prob[np.arange(steps), path])
    return -np.log(total)


@pytest.mark.parametrize("name", sorted(MXNET_CASES))
def test_ctc_loss_matches_mxnet(ctx, name):
    rest, params, loss, grad = MXNET_CASES[name]
    got_loss, got_grad = ctc_with_gradient(DATA, *rest, ctx=ctx, **params)
    np.testing.assert_allclose(got_loss, loss, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got_grad, grad, rtol=1e-4, atol=2e-5)


def test_ctc_loss_label_ends_at_first_padding():
    # MXNet 1.9.1: [1, 0, 2] is the label [1] (the 2 after the padding is ignored)
    loss, _ = ctc_with_gradient(DATA, [[1, 0, 2], [2, 0, 0]])
    np.testing.assert_allclose(loss, [2.9371, 2.215748], rtol=1e-5)
    padded = mx.nd.CTCLoss(mx.nd.array(DATA), mx.nd.array([[0, -1], [2, 1]]), blank_label="last").asnumpy()
    given = mx.nd.CTCLoss(
        mx.nd.array(DATA),
        mx.nd.array([[0, 2], [2, 1]]),
        mx.nd.array([1, 2]),
        blank_label="last",
        use_label_lengths=True,
    ).asnumpy()
    np.testing.assert_allclose(padded, given, rtol=1e-6)


@pytest.mark.parametrize(
    "labels,data_lengths",
    [([[1], [2, 2]], [4, 4]), ([[1, 1], [2, 1, 2]], [3, 5]), ([[], [1, 2]], [2, 3]), ([[2, 1], [1]], [2, 1])],
)
def test_ctc_loss_matches_brute_force(labels, data_lengths):
    rng = np.random.default_rng(1)
    data = rng.standard_normal((5, 2, 3))
    width = max(len(label) for label in labels)
    padded = np.array([label + [0] * (width - len(label)) for label in labels], np.float64)
    loss = mx.nd.CTCLoss(
        mx.nd.array(data, dtype="float64"),
        mx.nd.array(padded),
        mx.nd.array(data_lengths),
        mx.nd.array([len(label) for label in labels]),
        use_data_lengths=True,
        use_label_lengths=True,
    ).asnumpy()
    expected = [brute_force_ctc(data[:n, b], labels[b]) for b, n in enumerate(data_lengths)]
    np.testing.assert_allclose(loss, expected, rtol=1e-10)


def test_ctc_loss_blank_last_matches_brute_force():
    data = np.random.default_rng(2).standard_normal((4, 1, 3))
    loss = mx.nd.CTCLoss(mx.nd.array(data, dtype="float64"), mx.nd.array([[1, 1]]), blank_label="last").asnumpy()
    np.testing.assert_allclose(loss, [brute_force_ctc(data[:, 0], [1, 1], blank=2)], rtol=1e-10)


def test_ctc_loss_numerical_gradient(ctx):
    data = np.random.default_rng(3).standard_normal((5, 3, 4))
    label = np.array([[1, 2, 2], [3, 0, 0], [1, 3, 1]], np.float64)
    grads = check_gradient("CTCLoss", [data, label], {}, ctx=ctx, wrt=[0], rtol=1e-4, atol=1e-6, eps=1e-6)
    assert grads[1] is None
    lengths = np.array([5.0, 2.0, 4.0])
    check_gradient(
        "CTCLoss", [data, label, lengths], {"use_data_lengths": True}, ctx=ctx, wrt=[0], rtol=1e-4, atol=1e-6
    )


def test_ctc_loss_symbol_arguments_shapes_and_backward():
    net = sym.CTCLoss(sym.Variable("data"), sym.Variable("label"), name="ctc")
    assert net.list_arguments() == ["data", "label"]
    assert net.list_outputs() == ["ctc_output0"]  # MXNet 1.9.1's name (its kernel has a hidden second output)
    _, outs, _ = net.infer_shape(data=(4, 2, 4), label=(2, 2))
    assert outs == [(2,)]
    both = sym.contrib.ctc_loss(
        sym.Variable("d"), sym.Variable("l"), sym.Variable("dl"), sym.Variable("ll"),
        use_data_lengths=True, use_label_lengths=True,
    )  # fmt: skip
    assert both.list_arguments() == ["d", "l", "dl", "ll"]
    labels_only = sym.CTCLoss(sym.Variable("d"), sym.Variable("l"), sym.Variable("ll"), use_label_lengths=True)
    assert labels_only.list_arguments() == ["d", "l", "ll"]

    exe = net.simple_bind(mx.cpu(), data=(4, 2, 4), label=(2, 2))
    exe.arg_dict["data"][:] = DATA
    exe.arg_dict["label"][:] = np.array([[1, 2], [1, 1]], np.float32)
    exe.forward(is_train=True)
    exe.backward(mx.nd.array(HEAD))
    _, _, loss, grad = MXNET_CASES["repeated_label"]
    np.testing.assert_allclose(exe.outputs[0].asnumpy(), loss, rtol=1e-5)
    np.testing.assert_allclose(exe.grad_dict["data"].asnumpy(), grad, rtol=1e-4, atol=2e-5)


def test_ctc_loss_aliases():
    expected = mx.nd.CTCLoss(mx.nd.array(DATA), mx.nd.array([[1, 2], [1, 1]])).asnumpy()
    for fn in (mx.nd.ctc_loss, mx.nd.contrib.CTCLoss, mx.nd.contrib.ctc_loss):
        np.testing.assert_array_equal(fn(mx.nd.array(DATA), mx.nd.array([[1, 2], [1, 1]])).asnumpy(), expected)


def test_ctc_loss_refuses_impossible_alignment():
    # [1, 1, 1] needs 5 steps (blanks between the repeats); MXNet returns 0 and an uninitialised gradient
    with pytest.raises((OperatorError, EngineError), match="label of sequence 0 .* cannot be aligned to its 4"):
        mx.nd.CTCLoss(mx.nd.array(DATA), mx.nd.array([[1, 1, 1], [1, 2, 3]])).asnumpy()
    with pytest.raises((OperatorError, EngineError), match="sequence 1 .* cannot be aligned to its 1 time steps"):
        mx.nd.CTCLoss(
            mx.nd.array(DATA), mx.nd.array([[1, 2], [2, 3]]), mx.nd.array([4, 1]), use_data_lengths=True
        ).asnumpy()
    with pytest.raises(ShapeError, match="label_length 5 exceeds the sequence length 4"):
        mx.nd.CTCLoss(mx.nd.array(DATA), mx.nd.ones((2, 5)))


@pytest.mark.parametrize(
    "data_shape,label,params,error,match",
    [
        ((4, 2), [[1], [1]], {}, ShapeError, "'data' must be 3-D"),
        ((4, 2, 4), [1, 1], {}, ShapeError, "'label' must be 2-D"),
        ((4, 2, 4), [[1], [1], [1]], {}, ShapeError, "shape of 'label' is \\(3, 1\\), expected \\(2, 0\\)"),
        ((4, 2, 4), [[1, 5], [1, 1]], {}, LazyNDError, r"label\[0, 1\] = 5 is outside the alphabet.*1 \.\. 3"),
        ((4, 2, 4), [[1, 3], [1, 1]], {"blank_label": "last"}, LazyNDError, r"label\[0, 1\] = 3 .*0 \.\. 2"),
        ((4, 2, 4), [[1, 1], [-2, 1]], {"blank_label": "last"}, LazyNDError, r"label\[1, 0\] = -2"),
        ((4, 2, 4), [[1, 1], [1, 1]], {"blank_label": "middle"}, LazyNDError, "blank_label"),
    ],
)
def test_ctc_loss_rejects_bad_input(data_shape, label, params, error, match):
    with pytest.raises(error, match=match):
        mx.nd.CTCLoss(mx.nd.zeros(data_shape), mx.nd.array(label), **params).asnumpy()


def test_ctc_loss_rejects_bad_lengths():
    data, label = mx.nd.array(DATA), mx.nd.array([[1, 2], [1, 1]])
    with pytest.raises(LazyNDError, match=r"'data_lengths' must hold whole numbers in \[1, 4\], got \[5, 4\]"):
        mx.nd.CTCLoss(data, label, mx.nd.array([5, 4]), use_data_lengths=True).asnumpy()
    with pytest.raises(LazyNDError, match=r"'label_lengths' must hold whole numbers in \[0, 2\], got \[1, 3\]"):
        mx.nd.CTCLoss(data, label, mx.nd.array([1, 3]), use_label_lengths=True).asnumpy()
    with pytest.raises(ShapeError, match="shape of 'data_lengths' is \\(3,\\), expected \\(2,\\)"):
        mx.nd.CTCLoss(data, label, mx.nd.ones(3), use_data_lengths=True)
    with pytest.raises(LazyNDError, match=r"label\[0, 0\] = 0 is outside the alphabet"):
        # with explicit lengths a 0 inside the label is the blank, not padding
        mx.nd.CTCLoss(data, mx.nd.array([[0, 2], [1, 1]]), mx.nd.array([2, 2]), use_label_lengths=True).asnumpy()


def test_ctc_loss_without_any_alignment_is_inf_with_the_softmax_as_gradient(ctx):
    # MXNet 1.9.1: class 1 has probability 0 at every step of sequence 0, whose label needs it; the
    # loss is inf and the gradient the softmax (0 for class 1), not NaN
    data = DATA.copy()
    data[:, 0, 1] = -np.inf
    loss, grad = ctc_with_gradient(data, [[1, 2], [1, 1]], ctx=ctx, head=np.ones(2, np.float32))
    np.testing.assert_array_equal(loss[0], np.inf)
    np.testing.assert_allclose(loss[1], 5.3695717, rtol=1e-5)
    expected = [
        [0.32605648, 0.0, 0.14867406, 0.52526945],
        [0.14229979, 0.0, 0.182217, 0.67548317],
        [0.7130066, 0.0, 0.21887028, 0.06812307],
        [0.83761007, 0.0, 0.09060926, 0.07178061],
    ]
    np.testing.assert_allclose(grad[:, 0], expected, rtol=1e-5, atol=1e-7)
    other = np.array(MXNET_CASES["repeated_label"][3])[:, 1] / HEAD[1]  # the same label as there
    np.testing.assert_allclose(grad[:, 1], other, rtol=1e-4, atol=2e-5)


def test_ctc_loss_refuses_sequences_of_no_steps(ctx):
    with pytest.raises((OperatorError, EngineError), match="'data' has sequence_length 0, expected at least 1"):
        mx.nd.CTCLoss(mx.nd.zeros((0, 2, 4), ctx=ctx), mx.nd.zeros((2, 0), ctx=ctx)).asnumpy()
