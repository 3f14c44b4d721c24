"""The fused RNN's ``p``: in training, dropout on each layer's outputs before the next layer reads
them (not on the last layer's), as MXNet's RNN applies it; nothing in inference.

The mask is a hidden output that the backward operator reads, so the gradients are those of
the forward that ran; with a seed, the same draw is repeatable, which the gradient checks use.
"""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx
import lazynd_sym as sym
from lazynd.errors import OperatorError
from lazynd.ops.rnn import parameter_count

STEPS, BATCH, INPUT, HIDDEN = 5, 3, 4, 6


def _inputs(mode: str, layers: int, dirs: int, ctx=None, seed: int = 0) -> tuple[mx.nd.NDArray, mx.nd.NDArray, list]:
    rng = np.random.default_rng(seed)
    attrs = {
        "state_size": HIDDEN,
        "num_layers": layers,
        "mode": mode,
        "bidirectional": dirs == 2,
        "p": 0.0,
        "projection_size": None,
    }
    size = parameter_count(attrs, INPUT)
    data = mx.nd.array(rng.standard_normal((STEPS, BATCH, INPUT)), ctx=ctx, dtype="float64")
    params = mx.nd.array(rng.standard_normal(size) * 0.4, ctx=ctx, dtype="float64")
    states = [mx.nd.zeros((layers * dirs, BATCH, HIDDEN), ctx=ctx, dtype="float64")]
    if mode == "lstm":
        states.append(mx.nd.zeros((layers * dirs, BATCH, HIDDEN), ctx=ctx, dtype="float64"))
    return data, params, states


def _rnn(data, params, states, mode, layers, dirs, p):
    return mx.nd.RNN(
        data, params, *states, state_size=HIDDEN, num_layers=layers, mode=mode, bidirectional=dirs == 2, p=p
    )


@pytest.mark.parametrize("mode", ["lstm", "gru", "rnn_tanh"])
def test_inference_ignores_p(ctx, mode):
    data, params, states = _inputs(mode, 2, 1, ctx)
    np.testing.assert_array_equal(
        _rnn(data, params, states, mode, 2, 1, 0.5).asnumpy(), _rnn(data, params, states, mode, 2, 1, 0.0).asnumpy()
    )


def test_training_drops_what_the_second_layer_reads(ctx):
    # with p next to 1 every unit between the layers is dropped: the second layer reads zeros,
    # so the output no longer depends on the data; with p=0 it does
    data, params, states = _inputs("gru", 2, 1, ctx)
    other = data + 1
    with mx.autograd.train_mode():
        dropped = [_rnn(x, params, states, "gru", 2, 1, 1 - 1e-12).asnumpy() for x in (data, other)]
        kept = [_rnn(x, params, states, "gru", 2, 1, 0.0).asnumpy() for x in (data, other)]
    np.testing.assert_array_equal(dropped[0], dropped[1])
    assert not np.allclose(kept[0], kept[1])


def test_a_single_layer_has_nothing_to_drop():
    data, params, states = _inputs("lstm", 1, 2)
    with mx.autograd.train_mode():
        np.testing.assert_array_equal(
            _rnn(data, params, states, "lstm", 1, 2, 0.5).asnumpy(),
            _rnn(data, params, states, "lstm", 1, 2, 0.0).asnumpy(),
        )


def test_kept_units_are_scaled_and_about_p_are_dropped(ctx):
    # a 2-layer vanilla stack whose second layer's input weights are the identity and whose other
    # weights are zero: its output (before tanh) is what it read, the first layer's output masked
    layers, p = 2, 0.3
    attrs = {"state_size": HIDDEN, "num_layers": layers, "mode": "rnn_relu", "bidirectional": False, "p": 0.0,
             "projection_size": None}  # fmt: skip
    size = parameter_count(attrs, INPUT)
    params = np.zeros(size)
    params[: HIDDEN * INPUT] = 1.0  # first layer: every unit sums the inputs
    second_i2h = HIDDEN * INPUT + HIDDEN * HIDDEN
    params[second_i2h : second_i2h + HIDDEN * HIDDEN] = np.eye(HIDDEN).reshape(-1)
    data = mx.nd.ones((200, BATCH, INPUT), ctx=ctx, dtype="float64")
    states = [mx.nd.zeros((layers, BATCH, HIDDEN), ctx=ctx, dtype="float64")]
    mx.random.seed(11)
    with mx.autograd.train_mode():
        out = _rnn(data, mx.nd.array(params, ctx=ctx, dtype="float64"), states, "rnn_relu", layers, 1, p).asnumpy()
    values = np.unique(np.round(out, 9))
    np.testing.assert_allclose(values, [0.0, INPUT / (1 - p)])
    assert abs((out == 0).mean() - p) < 0.03


@pytest.mark.parametrize(("mode", "dirs"), [("lstm", 1), ("gru", 2), ("rnn_tanh", 1)])
def test_gradients_are_those_of_the_draw_that_ran(ctx, mode, dirs):
    layers, p, seed = 3, 0.4, 5
    data, params, states = _inputs(mode, layers, dirs, ctx)
    data.attach_grad()
    params.attach_grad()
    mx.random.seed(seed)
    with mx.autograd.record():
        loss = (_rnn(data, params, states, mode, layers, dirs, p) ** 2).sum()
    loss.backward()

    def value(d, w):
        mx.random.seed(seed)
        with mx.autograd.train_mode():
            return float((_rnn(d, w, states, mode, layers, dirs, p) ** 2).sum().asscalar())

    eps = 1e-6
    w, d = params.asnumpy(), data.asnumpy()
    for index in (0, w.size // 2, w.size - 1):
        step = np.zeros_like(w)
        step[index] = eps
        numeric = (
            value(data, mx.nd.array(w + step, ctx=ctx, dtype="float64"))
            - value(data, mx.nd.array(w - step, ctx=ctx, dtype="float64"))
        ) / (2 * eps)
        assert params.grad.asnumpy()[index] == pytest.approx(numeric, rel=1e-5, abs=1e-7)
    step = np.zeros_like(d)
    step[2, 1, 3] = eps
    numeric = (
        value(mx.nd.array(d + step, ctx=ctx, dtype="float64"), params)
        - value(mx.nd.array(d - step, ctx=ctx, dtype="float64"), params)
    ) / (2 * eps)
    assert data.grad.asnumpy()[2, 1, 3] == pytest.approx(numeric, rel=1e-5, abs=1e-7)


def test_an_executor_draws_in_training_and_hides_the_mask():
    data, params, states = _inputs("gru", 2, 1)
    net = sym.RNN(sym.Variable("x"), sym.Variable("w"), sym.Variable("h"), state_size=HIDDEN, num_layers=2,
                  mode="gru", p=0.5, name="rnn")  # fmt: skip
    assert net.list_outputs() == ["rnn_output"]
    ex = net.simple_bind(mx.cpu(), x=data.shape, type_dict={"x": "float64"})
    ex.arg_dict["x"][:] = data
    ex.arg_dict["w"][:] = params
    mx.random.seed(2)
    trained = ex.forward(is_train=True)[0].asnumpy()
    ex.backward(mx.nd.ones(trained.shape, dtype="float64"))
    mx.random.seed(2)
    with mx.autograd.train_mode():
        np.testing.assert_allclose(trained, _rnn(data, params, states, "gru", 2, 1, 0.5).asnumpy(), rtol=1e-12)
    np.testing.assert_array_equal(
        ex.forward(is_train=False)[0].asnumpy(), _rnn(data, params, states, "gru", 2, 1, 0.0).asnumpy()
    )


@pytest.mark.parametrize("p", [-0.1, 2.0, float("nan")])
def test_a_dropout_outside_zero_to_one_is_refused(p):
    data, params, states = _inputs("gru", 2, 1)
    with pytest.raises(OperatorError, match=r"RNN: invalid value .* for parameter 'p': expected a number in \[0, 1\]"):
        _rnn(data, params, states, "gru", 2, 1, p)


def test_a_dropout_of_one_drops_every_unit_between_layers():
    # MXNet 1.9.1 takes p = 1 (its bound is [0, 1]); the second layer then sees only zeros
    data, params, states = _inputs("gru", 2, 1)
    with mx.autograd.train_mode():
        dropped = _rnn(data, params, states, "gru", 2, 1, 1.0).asnumpy()
    assert np.isfinite(dropped).all()
