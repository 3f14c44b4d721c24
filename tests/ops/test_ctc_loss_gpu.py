"""CTCLoss on gpu(0) against cpu(0): the kernel of ``kernels/ctc.cu`` (a block per sequence) must
give the host path's losses and gradients to float tolerance, on random sequences under every
option, through ``nd`` with autograd and through an executor whose passes are captured into CUDA
graphs; bad labels and lengths are refused by the device's checks at the next wait.

The host path (float64 NumPy recursions) is the reference: its values are MXNet 1.9.1's
(test_ctc_loss.py).
"""

from __future__ import annotations

import zlib

import numpy as np
import pytest

import lazynd as mx
import lazynd_sym as sym
from lazynd.errors import LazyNDError

pytestmark = pytest.mark.gpu

# dtype -> (rtol, atol) of gpu(0) against cpu(0): float32 and float16 compute in float32 on the GPU,
# float64 everywhere on the host; float16 results are rounded to 11 bits on both
TOLERANCE = {"float64": (1e-9, 1e-11), "float32": (2e-5, 2e-6), "float16": (4e-3, 2e-3)}


@pytest.fixture
def gpu() -> mx.Context:
    if mx.num_gpus() == 0:
        pytest.skip("needs an NVIDIA GPU with CuPy (none visible)")
    return mx.gpu(0)


def random_sequences(
    rng: np.random.Generator, steps: int, batch: int, alphabet: int, params: dict
) -> tuple[np.ndarray, list[np.ndarray]]:
    """Activations and the other inputs of a call with ``params``: sequences of 1 .. ``steps`` steps
    (all ``steps`` without ``use_data_lengths``), labels of 0 up to as many classes as each sequence
    can emit, drawn from three classes so that repeats, which need a blank between, are common;
    past a label's end its padding value, or (with ``use_label_lengths``) anything in the alphabet."""
    first = params.get("blank_label", "first") == "first"
    low, high, padding = (1, alphabet - 1, 0) if first else (0, alphabet - 2, -1)
    width = steps // 2 + 1
    data_lengths = rng.integers(1, steps + 1, batch) if params.get("use_data_lengths") else np.full(batch, steps)
    label = np.full((batch, width), padding, np.float64)
    label_lengths = np.zeros(batch)
    for b in range(batch):
        classes = list(rng.integers(low, min(low + 3, high + 1), rng.integers(0, width + 1)))
        while len(classes) + sum(x == y for x, y in zip(classes[:-1], classes[1:], strict=True)) > data_lengths[b]:
            classes.pop()
        label[b, : len(classes)] = classes
        label_lengths[b] = len(classes)
        if params.get("use_label_lengths"):
            label[b, len(classes) :] = rng.integers(padding, alphabet - 1, width - len(classes))
    data = rng.standard_normal((steps, batch, alphabet)) * 2
    rest = [label]
    if params.get("use_data_lengths"):
        rest.append(data_lengths.astype(np.float64))
    if params.get("use_label_lengths"):
        rest.append(label_lengths)
    return data, rest


def loss_and_gradient(ctx: mx.Context, data: np.ndarray, rest: list, dtype: str, head: np.ndarray, **params):
    """The loss and, for head gradient ``head``, the data gradient on ``ctx``, through autograd."""
    x = mx.nd.array(data, ctx=ctx, dtype=dtype)
    x.attach_grad()
    others = [mx.nd.array(r, ctx=ctx, dtype=dtype) for r in rest]
    with mx.autograd.record():
        loss = mx.nd.CTCLoss(x, *others, **params)
    loss.backward(mx.nd.array(head, ctx=ctx, dtype=dtype))
    return loss.asnumpy(), x.grad.asnumpy()


OPTIONS = {
    "padded": {},
    "blank_last": {"blank_label": "last"},
    "data_lengths": {"use_data_lengths": True},
    "label_lengths": {"use_label_lengths": True},
    "both_lengths_blank_last": {"use_data_lengths": True, "use_label_lengths": True, "blank_label": "last"},
    "both_lengths": {"use_data_lengths": True, "use_label_lengths": True},
}


@pytest.mark.parametrize("dtype", list(TOLERANCE))
@pytest.mark.parametrize("option", list(OPTIONS))
def test_random_sequences_agree_with_the_host(gpu, option, dtype):
    params = OPTIONS[option]
    rng = np.random.default_rng(zlib.crc32(f"{option} {dtype}".encode()))
    data, rest = random_sequences(rng, steps=9, batch=6, alphabet=5, params=params)
    head = rng.uniform(0.5, 2.0, 6)
    got = loss_and_gradient(gpu, data, rest, dtype, head, **params)
    want = loss_and_gradient(mx.cpu(), data, rest, dtype, head, **params)
    rtol, atol = TOLERANCE[dtype]
    for name, a, b in zip(("loss", "gradient"), got, want, strict=True):
        assert a.dtype == b.dtype == np.dtype(dtype)
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, err_msg=f"{name}: gpu(0) vs cpu(0)")


def test_long_labels_and_a_wide_alphabet_loop_over_the_block(gpu):
    # 2 * 150 + 1 extended positions and 300 classes: more than a block's 256 threads, so each
    # thread takes several positions and classes
    rng = np.random.default_rng(7)
    params = {"use_data_lengths": True, "use_label_lengths": True}
    data, rest = random_sequences(rng, steps=300, batch=2, alphabet=300, params=params)
    rest[0][:, :150] = rng.integers(1, 300, (2, 150))  # every class a distinct run of labels
    rest[1][:], rest[2][:] = [300, 280], [150, 149]
    head = np.array([1.0, 0.5])
    got = loss_and_gradient(gpu, data, rest, "float64", head, **params)
    want = loss_and_gradient(mx.cpu(), data, rest, "float64", head, **params)
    for a, b in zip(got, want, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_activations_of_probability_zero_or_infinite_agree(gpu, dtype):
    # sequence 0: its label's class 1 has probability 0 at every step (inf loss, the softmax as
    # gradient); sequence 1: an inf activation at its second step (NaN from there, as on the host);
    # sequence 2: an inf activation past its length (no effect); sequence 3: a -inf at a class it
    # may skip (a finite loss)
    data = np.random.default_rng(3).standard_normal((5, 4, 4))
    data[:, 0, 1] = -np.inf
    data[1, 1, 2] = np.inf
    data[4, 2, 0] = np.inf
    data[2, 3, 3] = -np.inf
    rest = [np.array([[1, 2], [2, 3], [1, 0], [3, 0]], np.float64), np.array([5, 5, 3, 5], np.float64)]
    head = np.ones(4)
    got = loss_and_gradient(gpu, data, rest, dtype, head, use_data_lengths=True)
    want = loss_and_gradient(mx.cpu(), data, rest, dtype, head, use_data_lengths=True)
    assert np.isinf(want[0][0]) and np.isnan(want[0][1]) and np.isfinite(want[0][2:]).all()
    assert np.isfinite(want[1][:, 0]).all() and np.isfinite(want[1][:, 2:]).all()
    for a, b in zip(got, want, strict=True):
        np.testing.assert_allclose(a, b, rtol=2e-5, atol=2e-6)  # NaN where NaN, inf where inf


@pytest.mark.parametrize(
    "label,lengths,params,match",
    [
        # [1, 1, 1] needs 5 steps, with blanks between the repeats: 4 are given
        ([[1, 1, 1], [1, 2, 3]], None, {}, r"time steps a sequence has beyond what its label needs out of range: -1 "),
        ([[1, 2], [2, 3]], [4, 1], {"use_data_lengths": True}, r"beyond what its label needs .* -1 at position 1"),
        ([[1, 5], [1, 1]], None, {}, r"label \(blank_label='first', alphabet_size 4.*: 5 at position 1"),
        ([[1, 3], [1, 1]], None, {"blank_label": "last"}, r"label \(blank_label='last'.*expected a value in \[0, 2\]"),
        ([[1.5, 2], [1, 1]], None, {}, r"fractional part of label .*: 0.5 at position 0"),
        ([[1, 2], [1, 1]], [5, 4], {"use_data_lengths": True}, r"data_lengths out of range: 5 at position 0"),
        (
            [[1, 2], [1, 1]],
            [2, 2.5],
            {"use_data_lengths": True},
            r"fractional part of data_lengths .*0.5 at position 1",
        ),
        ([[1, 2], [1, 1]], [1, 3], {"use_label_lengths": True}, r"label_lengths out of range: 3 at position 1"),
    ],
)
def test_bad_labels_and_lengths_are_refused_by_the_device_at_the_next_wait(gpu, label, lengths, params, match):
    data = mx.nd.array(np.random.default_rng(0).standard_normal((4, 2, 4)), ctx=gpu)
    rest = [mx.nd.array(label, ctx=gpu)] + ([] if lengths is None else [mx.nd.array(lengths, ctx=gpu)])
    loss = mx.nd.CTCLoss(data, *rest, **params)  # nothing read back: the call returns
    with pytest.raises(LazyNDError, match=match):
        loss.asnumpy()
    assert mx.nd.CTCLoss(data, mx.nd.array([[1, 2], [1, 1]], ctx=gpu)).asnumpy().shape == (2,)  # raised once


def _train(ctx: mx.Context, params: dict, steps: int, dtype: str) -> tuple:
    """An executor of CTCLoss over a FullyConnected layer, trained ``steps`` steps on new sequences
    each; per step, the loss and the gradients of the data and the weight."""
    names = ["data", "label"] + [n for n in ("data_lengths", "label_lengths") if params.get(f"use_{n}")]
    scores = sym.FullyConnected(sym.Variable("data"), num_hidden=5, flatten=False, name="fc")
    net = sym.CTCLoss(scores, *[sym.Variable(n) for n in names[1:]], name="ctc", **params)
    rng = np.random.default_rng(5)
    first = random_sequences(rng, 7, 4, 5, params)[1]
    shapes = {"data": (7, 4, 3), **{n: r.shape for n, r in zip(names[1:], first, strict=True)}}
    grad_req = {n: "null" for n in names} | {"data": "write", "fc_weight": "write", "fc_bias": "write"}
    ex = net.simple_bind(ctx, grad_req=grad_req, type_dict={n: dtype for n in shapes}, **shapes)
    ex.arg_dict["fc_weight"][:] = rng.standard_normal((5, 3))
    ex.arg_dict["fc_bias"][:] = rng.standard_normal(5)
    seen = []
    for _ in range(steps):
        features = rng.standard_normal(shapes["data"])
        _, rest = random_sequences(rng, 7, 4, 5, params)
        ex.arg_dict["data"][:] = features
        for n, r in zip(names[1:], rest, strict=True):
            ex.arg_dict[n][:] = r
        ex.forward(is_train=True)
        ex.backward(mx.nd.array(rng.uniform(0.5, 2.0, 4), ctx=ctx, dtype=dtype))
        seen.append([ex.outputs[0].asnumpy()] + [ex.grad_dict[n].asnumpy() for n in ("data", "fc_weight", "fc_bias")])
    return ex, seen


@pytest.mark.parametrize("option", ["padded", "both_lengths_blank_last", "data_lengths"])
def test_executor_passes_are_captured_and_agree_with_the_host(captured_steps, option):
    params = OPTIONS[option]
    ex, on_gpu = _train(mx.gpu(0), params, captured_steps, "float32")
    _, on_cpu = _train(mx.cpu(), params, captured_steps, "float32")
    assert ex._graphs is not None and ex._graphs.failures == {}, ex._graphs and ex._graphs.failures
    assert ex._graphs.captured("forward_train") and ex._graphs.captured("backward")
    for k, (got, want) in enumerate(zip(on_gpu, on_cpu, strict=True)):
        for i, (a, b) in enumerate(zip(got, want, strict=True)):
            np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5, err_msg=f"step {k}, array {i}: gpu(0) vs cpu(0)")
