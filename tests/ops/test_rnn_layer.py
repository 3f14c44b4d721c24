"""The fused RNN operator's MXNet 1.9.1 options: ``use_sequence_length``, ``projection_size`` (LSTMP)
and ``lstm_state_clip_min``/``_max``/``_nan``, on every context.

MXNet 1.9.1's CPU operator computes LSTMP forward (our outputs matched it to 1e-12 on every case it
ran: 1 to 3 layers, both directions) but crashes on some shapes and trains none; it refuses to train
with the sequence lengths or the clip and silently ignores both in inference.  The references here
are therefore NumPy (LSTMP, the clip) and the operator itself run on each sequence alone (lengths).
"""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx
import lazynd_sym as sym
from lazynd.errors import LazyNDError, OperatorError
from lazynd.testing import check_gradient

rng = np.random.default_rng(7)


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


def lstm_inputs(steps, batch, input_size, hidden, projection=None, layers=1, dirs=1):
    """Data, packed parameters (MXNet's LSTMP layout), h0 and c0."""
    recurrent = projection or hidden
    size = 0
    for layer in range(layers):
        width = input_size if layer == 0 else dirs * recurrent
        size += dirs * (4 * hidden * (width + recurrent + 2) + (projection or 0) * hidden)
    return [
        rng.standard_normal((steps, batch, input_size)),
        rng.standard_normal(size) * 0.5,
        rng.standard_normal((layers * dirs, batch, recurrent)),
        rng.standard_normal((layers * dirs, batch, hidden)),
    ]


def np_lstm(data, params, h, c, *, hidden, projection=None, clip=None):
    """One forward LSTM layer: per step ``c = clip(f c + i g)``, ``h = (o tanh c) @ W_r.T``."""
    recurrent, rows, width = projection or hidden, 4 * hidden, data.shape[2]
    offset = 0
    w_i = params[offset : offset + rows * width].reshape(rows, width)
    offset += rows * width
    w_h = params[offset : offset + rows * recurrent].reshape(rows, recurrent)
    offset += rows * recurrent
    w_r = None
    if projection:
        w_r = params[offset : offset + projection * hidden].reshape(projection, hidden)
        offset += projection * hidden
    b_i, b_h = params[offset : offset + rows], params[offset + rows : offset + 2 * rows]
    h, c, outputs = h[0], c[0], []
    for x in data:
        gates = x @ w_i.T + b_i + h @ w_h.T + b_h
        i, f, o = (sigmoid(gates[:, k * hidden : (k + 1) * hidden]) for k in (0, 1, 3))
        c = f * c + i * np.tanh(gates[:, 2 * hidden : 3 * hidden])
        if clip is not None:
            c = np.clip(c, *clip)
        h = o * np.tanh(c)
        h = h @ w_r.T if projection else h
        outputs.append(h)
    return np.stack(outputs), h[None], c[None]


def run_rnn(inputs, ctx, **params):
    out = mx.nd.RNN(*[mx.nd.array(x, ctx=ctx, dtype="float64") for x in inputs], **params)
    return [o.asnumpy() for o in (out if isinstance(out, list) else [out])]


# -- projection_size -------------------------------------------------------------------------------
def test_projection_matches_numpy_lstmp(ctx):
    inputs = lstm_inputs(4, 3, 5, 6, projection=3)
    got = run_rnn(inputs, ctx, state_size=6, num_layers=1, mode="lstm", projection_size=3, state_outputs=True)
    for value, expected in zip(got, np_lstm(*inputs, hidden=6, projection=3), strict=True):
        np.testing.assert_allclose(value, expected, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("layers,bidirectional", [(1, False), (2, True)])
def test_projection_gradient_through_time(ctx, layers, bidirectional):
    dirs = 2 if bidirectional else 1
    inputs = lstm_inputs(3, 2, 3, 3, projection=2, layers=layers, dirs=dirs)
    params = dict(state_size=3, num_layers=layers, mode="lstm", bidirectional=bidirectional, projection_size=2)
    check_gradient("RNN", inputs, {**params, "state_outputs": True}, ctx=ctx, rtol=1e-4, atol=1e-6)


def test_projection_shapes_and_parameter_count_are_mxnets():
    # the counts MXNet 1.9.1's shape inference gives (258 and 1080)
    net = sym.RNN(sym.Variable("data"), state_size=6, num_layers=1, mode="lstm", projection_size=3, state_outputs=True)
    args, outs, _ = net.infer_shape(data=(4, 3, 5))
    assert args[1:] == [(258,), (1, 3, 3), (1, 3, 6)]
    assert outs == [(4, 3, 3), (1, 3, 3), (1, 3, 6)]
    deep = sym.RNN(sym.Variable("data"), state_size=6, num_layers=2, bidirectional=True, mode="lstm", projection_size=3)
    args, outs, _ = deep.infer_shape(data=(4, 3, 5))
    assert args[1:] == [(1080,), (4, 3, 3), (4, 3, 6)] and outs == [(4, 3, 6)]


@pytest.mark.parametrize("mode,size", [("gru", 2), ("rnn_tanh", 2), ("lstm", 0)])
def test_projection_refused_outside_lstm_or_when_not_positive(mode, size):
    # MXNet 1.9.1 corrupts its heap on a GRU with a projection
    with pytest.raises(OperatorError, match="projection_size"):
        sym.RNN(sym.Variable("data"), state_size=4, num_layers=1, mode=mode, projection_size=size).infer_shape(
            data=(3, 2, 5)
        )


# -- lstm_state_clip_min / _max / _nan ---------------------------------------------------------------
def test_cell_state_clip_matches_numpy(ctx):
    inputs = lstm_inputs(4, 3, 5, 6)
    inputs[3] *= 3  # start far outside the clip
    clip = dict(lstm_state_clip_min=-0.3, lstm_state_clip_max=0.4)
    got = run_rnn(inputs, ctx, state_size=6, num_layers=1, mode="lstm", state_outputs=True, **clip)
    for value, expected in zip(got, np_lstm(*inputs, hidden=6, clip=(-0.3, 0.4)), strict=True):
        np.testing.assert_allclose(value, expected, rtol=1e-10, atol=1e-12)
    assert got[2].min() >= -0.3 and got[2].max() <= 0.4


def test_cell_state_clip_gradient(ctx):
    inputs = lstm_inputs(3, 2, 3, 3, projection=2)
    params = dict(state_size=3, num_layers=1, mode="lstm", projection_size=2, state_outputs=True)
    clip = dict(lstm_state_clip_min=-0.35, lstm_state_clip_max=0.45)
    grads = check_gradient("RNN", inputs, {**params, **clip}, ctx=ctx, rtol=1e-4, atol=1e-6)
    unclipped = check_gradient("RNN", inputs, params, ctx=ctx, rtol=1e-4, atol=1e-6)
    assert not np.allclose(grads[1], unclipped[1])  # the clip acted on these inputs


def test_cell_state_clip_nan_stops_nan(ctx):
    inputs = lstm_inputs(2, 2, 3, 4)
    inputs[3][0, 1] = np.nan  # the second sequence starts from a NaN cell
    params = dict(state_size=4, num_layers=1, mode="lstm", state_outputs=True)
    clip = dict(lstm_state_clip_min=-0.5, lstm_state_clip_max=0.5)
    stopped = run_rnn(inputs, ctx, **params, **clip, lstm_state_clip_nan=True)
    assert np.isfinite(stopped[0]).all() and np.isfinite(stopped[2]).all()
    propagated = run_rnn(inputs, ctx, **params, **clip)
    assert np.isnan(propagated[2][0, 1]).all() and np.isfinite(propagated[2][0, 0]).all()


@pytest.mark.parametrize(
    "mode,clip",
    [("gru", (-1.0, 1.0)), ("lstm", (-1.0, None)), ("lstm", (None, 1.0)), ("lstm", (1.0, -1.0))],
)
def test_cell_state_clip_refused_unless_lstm_with_both_bounds_in_order(mode, clip):
    with pytest.raises(OperatorError, match="lstm_state_clip_min and lstm_state_clip_max"):
        sym.RNN(
            sym.Variable("data"),
            state_size=4,
            num_layers=1,
            mode=mode,
            lstm_state_clip_min=clip[0],
            lstm_state_clip_max=clip[1],
        ).infer_shape(data=(3, 2, 5))


# -- use_sequence_length -----------------------------------------------------------------------------
SEQUENCE_CONFIGS = [("lstm", 2, True, None), ("gru", 1, True, None), ("rnn_relu", 2, False, None), ("lstm", 1, True, 2)]


def sequence_inputs(mode, layers, bidirectional, projection, steps=5, batch=3, input_size=3, hidden=3):
    dirs = 2 if bidirectional else 1
    if mode == "lstm":
        inputs = lstm_inputs(steps, batch, input_size, hidden, projection, layers, dirs)
    else:
        gates = 3 if mode == "gru" else 1
        size = sum(
            dirs * gates * hidden * ((input_size if layer == 0 else dirs * hidden) + hidden + 2)
            for layer in range(layers)
        )
        inputs = [
            rng.standard_normal((steps, batch, input_size)),
            rng.standard_normal(size) * 0.5,
            rng.standard_normal((layers * dirs, batch, hidden)),
        ]
    params = dict(state_size=hidden, num_layers=layers, mode=mode, bidirectional=bidirectional, state_outputs=True)
    if projection:
        params["projection_size"] = projection
    return inputs, params


@pytest.mark.parametrize("mode,layers,bidirectional,projection", SEQUENCE_CONFIGS)
def test_sequence_length_runs_each_sequence_on_its_own_steps(ctx, mode, layers, bidirectional, projection):
    inputs, params = sequence_inputs(mode, layers, bidirectional, projection)
    lengths = np.array([5.0, 2.0, 1.0])
    got = run_rnn([*inputs, lengths], ctx, **params, use_sequence_length=True)
    for n, length in enumerate(lengths.astype(int)):
        alone = [inputs[0][:length, n : n + 1], inputs[1]] + [state[:, n : n + 1] for state in inputs[2:]]
        expected = run_rnn(alone, ctx, **params)
        np.testing.assert_allclose(got[0][:length, n : n + 1], expected[0], rtol=1e-10, atol=1e-12)
        assert (got[0][length:, n] == 0).all()  # past its length a sequence outputs zeros
        for state, expected_state in zip(got[1:], expected[1:], strict=True):
            np.testing.assert_allclose(state[:, n : n + 1], expected_state, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("mode,layers,bidirectional,projection", SEQUENCE_CONFIGS)
def test_sequence_length_gradient(ctx, mode, layers, bidirectional, projection):
    inputs, params = sequence_inputs(mode, layers, bidirectional, projection, steps=3, batch=2, input_size=2, hidden=2)
    lengths = np.array([1.0, 3.0])
    grads = check_gradient(
        "RNN", [*inputs, lengths], {**params, "use_sequence_length": True}, ctx=ctx, rtol=1e-4, atol=1e-6
    )
    assert grads[-1] is None  # no gradient for the lengths
    assert (grads[0][1:, 0] == 0).all()  # nor for the padding


def test_sequence_length_trains_in_an_executor(ctx):
    inputs, params = sequence_inputs("gru", 1, True, None)
    net = sym.RNN(*[sym.Variable(n) for n in ("data", "w", "h", "lengths")], **params, use_sequence_length=True)
    names = net.list_arguments()
    assert names[-1] == "lengths"
    arrays = [mx.nd.array(x, ctx=ctx) for x in inputs] + [mx.nd.array([3, 5, 1], ctx=ctx, dtype="int32")]
    grads = [mx.nd.zeros(x.shape, ctx=ctx) for x in arrays[:3]]
    ex = net.bind(
        ctx,
        arrays,
        args_grad=dict(zip(names[:3], grads, strict=True)),
        grad_req={**dict.fromkeys(names[:3], "write"), "lengths": "null"},
    )
    ex.forward(is_train=True)
    ex.backward([mx.nd.ones(o.shape, ctx=ctx) for o in ex.outputs])
    assert (grads[0].asnumpy()[3:, 0] == 0).all() and np.abs(grads[1].asnumpy()).sum() > 0
    assert (ex.outputs[0].asnumpy()[1:, 2] == 0).all()


def test_sequence_length_symbol_arguments_and_shapes_are_mxnets():
    net = sym.RNN(
        sym.Variable("data"), state_size=4, num_layers=1, mode="lstm", projection_size=2, state_outputs=True,
        use_sequence_length=True, name="r",
    )  # fmt: skip
    assert net.list_arguments() == ["data", "r_parameters", "r_state", "r_state_cell", "r_sequence_length"]
    args, outs, _ = net.infer_shape(data=(3, 2, 5))
    assert args == [(3, 2, 5), (152,), (1, 2, 2), (1, 2, 4), (2,)]
    assert outs == [(3, 2, 2), (1, 2, 2), (1, 2, 4)]


@pytest.mark.parametrize("lengths", [[0.0, 2.0], [2.0, 4.0], [1.5, 2.0]])
def test_sequence_length_outside_the_time_axis_is_refused(lengths):
    inputs, params = sequence_inputs("gru", 1, False, None, steps=3, batch=2)
    with pytest.raises(LazyNDError, match="sequence_length must hold whole numbers in \\[1, 3\\]"):
        run_rnn([*inputs, np.array(lengths)], mx.cpu(), **params, use_sequence_length=True)


def test_options_read_from_symbol_json_strings():
    # the attributes as MXNet 1.9.1 writes them in symbol JSON, and the shapes it infers from them
    attrs = dict(
        state_size="4", num_layers="2", mode="lstm", bidirectional="True", state_outputs="True",
        projection_size="2", lstm_state_clip_min="-1", lstm_state_clip_max="1.5", lstm_state_clip_nan="True",
        use_sequence_length="True",
    )  # fmt: skip
    net = sym.load_json(sym.RNN(sym.Variable("data"), name="r", **attrs).tojson())
    args, outs, _ = net.infer_shape(data=(3, 2, 5))
    assert args == [(3, 2, 5), (576,), (4, 2, 2), (4, 2, 4), (2,)]
    assert outs == [(3, 2, 4), (4, 2, 2), (4, 2, 4)]
