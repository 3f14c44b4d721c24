"""mx.rnn: recurrent cells unrolled into symbols, sentence iterators, RNN checkpoints.

Names and shapes are MXNet 1.9.1's; values are checked against NumPy recurrences.
"""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx
from lazynd.errors import LazyNDError


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 1 / (1 + np.exp(-x))


def _bind(net, rng, ctx=None, **shapes):
    arg_shapes, _, _ = net.infer_shape(**shapes)
    args = {n: rng.uniform(-1, 1, s).astype(np.float32) for n, s in zip(net.list_arguments(), arg_shapes, strict=True)}
    exe = net.bind(ctx or mx.cpu(), {k: mx.nd.array(v, ctx=ctx) for k, v in args.items()})
    return args, [o.asnumpy() for o in exe.forward()]


def test_lstm_unroll_has_mxnets_names_and_computes_an_lstm(ctx):
    cell = mx.rnn.LSTMCell(num_hidden=4, prefix="lstm_")
    outputs, states = cell.unroll(3, inputs=mx.sym.var("data"), layout="NTC", merge_outputs=True)
    net = mx.sym.Group([outputs, *states])
    # MXNet 1.9.1's names
    assert net.list_outputs()[1:] == ["lstm_t2_out_output", "lstm_t2_state_output"]
    assert net.list_arguments() == ["data", "lstm_i2h_weight", "lstm_i2h_bias", "lstm_h2h_weight", "lstm_h2h_bias"]
    assert net.infer_shape(data=(2, 3, 5))[1] == [(2, 3, 4), (2, 4), (2, 4)]
    args, (out, h, c) = _bind(net, np.random.default_rng(0), ctx, data=(2, 3, 5))
    h_ref, c_ref, steps = np.zeros((2, 4)), np.zeros((2, 4)), []
    for t in range(3):
        gates = args["data"][:, t] @ args["lstm_i2h_weight"].T + args["lstm_i2h_bias"]
        gates = gates + h_ref @ args["lstm_h2h_weight"].T + args["lstm_h2h_bias"]
        i, f, g, o = np.split(gates, 4, axis=1)
        c_ref = _sigmoid(f) * c_ref + _sigmoid(i) * np.tanh(g)
        h_ref = _sigmoid(o) * np.tanh(c_ref)
        steps.append(h_ref)
    np.testing.assert_allclose(out, np.stack(steps, axis=1), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(h, h_ref, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(c, c_ref, rtol=1e-5, atol=1e-6)


def test_gru_and_rnn_cells_stacked_in_time_major_layout():
    stack = mx.rnn.SequentialRNNCell()
    stack.add(mx.rnn.GRUCell(num_hidden=3, prefix="g0_"))
    stack.add(mx.rnn.RNNCell(num_hidden=2, prefix="r1_", activation="relu"))
    outputs, states = stack.unroll(4, inputs=mx.sym.var("data"), layout="TNC", merge_outputs=False)
    assert len(outputs) == 4 and len(states) == 2
    assert sorted(stack.params._params) == sorted(
        f"{p}_{g}_{k}" for p in ("g0", "r1") for g in ("i2h", "h2h") for k in ("weight", "bias")
    )
    net = mx.sym.Group(outputs)
    args, values = _bind(net, np.random.default_rng(1), data=(4, 2, 3))
    h0, h1 = np.zeros((2, 3)), np.zeros((2, 2))
    for t in range(4):
        xr, xz, xn = np.split(args["data"][t] @ args["g0_i2h_weight"].T + args["g0_i2h_bias"], 3, axis=1)
        hr, hz, hn = np.split(h0 @ args["g0_h2h_weight"].T + args["g0_h2h_bias"], 3, axis=1)
        reset, update = _sigmoid(xr + hr), _sigmoid(xz + hz)
        h0 = (1 - update) * np.tanh(xn + reset * hn) + update * h0
        pre = h0 @ args["r1_i2h_weight"].T + args["r1_i2h_bias"] + h1 @ args["r1_h2h_weight"].T + args["r1_h2h_bias"]
        h1 = np.maximum(pre, 0)
        np.testing.assert_allclose(values[t], h1, rtol=1e-5, atol=1e-6)


def test_bidirectional_joins_forward_and_reversed_outputs_as_mxnet():
    cell = mx.rnn.BidirectionalCell(
        mx.rnn.LSTMCell(3, prefix="l_"), mx.rnn.GRUCell(2, prefix="r_"), output_prefix="bi_"
    )
    outputs, states = cell.unroll(3, inputs=mx.sym.var("data"), merge_outputs=True)
    assert outputs.name == "bi_out" and outputs.infer_shape(data=(2, 3, 4))[1] == [(2, 3, 5)]
    assert [len(s) for s in states] == [2, 1]  # MXNet: [l_states, r_states]
    steps, _ = cell.unroll(3, inputs=[mx.sym.var(f"x{i}") for i in range(3)])
    assert [s.name for s in steps] == ["bi_t0", "bi_t1", "bi_t2"]
    with pytest.raises(LazyNDError, match="cannot be stepped"):
        cell(mx.sym.var("x"), [])


def test_residual_and_dropout_cells():
    stack = mx.rnn.SequentialRNNCell()
    stack.add(mx.rnn.LSTMCell(4, prefix="a_"))
    stack.add(mx.rnn.DropoutCell(0.5))
    stack.add(mx.rnn.ResidualCell(mx.rnn.GRUCell(4, prefix="b_")))
    outputs, states = stack.unroll(3, inputs=mx.sym.var("data"), merge_outputs=True)
    assert outputs.name.endswith("_plus_residual") and len(states) == 3
    assert outputs.infer_shape(data=(2, 3, 4))[1] == [(2, 3, 4)]
    assert "dropout" in " ".join(outputs.get_internals().list_outputs())


def test_zoneout_cell_at_inference_is_its_base_cell():
    plain, _ = mx.rnn.LSTMCell(4, prefix="l_").unroll(3, mx.sym.var("data"), merge_outputs=True)
    zoned_cell = mx.rnn.ZoneoutCell(mx.rnn.LSTMCell(4, prefix="l_"), zoneout_outputs=0.3, zoneout_states=0.2)
    zoned, states = zoned_cell.unroll(3, mx.sym.var("data"), merge_outputs=True)
    assert zoned.list_arguments() == plain.list_arguments()  # MXNet 1.9.1's: the base cell's weights
    assert [s.name for s in zoned_cell.begin_state()] == ["l_begin_state_2", "l_begin_state_3"]
    args, (expected,) = _bind(plain, np.random.default_rng(0), data=(2, 3, 5))
    exe = zoned.bind(mx.cpu(), {k: mx.nd.array(v) for k, v in args.items()})
    np.testing.assert_allclose(exe.forward(is_train=False)[0].asnumpy(), expected, rtol=1e-6)


def test_zoneout_cell_in_training_keeps_units_of_the_previous_step():
    mx.random.seed(0)
    base = mx.rnn.GRUCell(16, prefix="g_")
    plain, _ = mx.rnn.GRUCell(16, prefix="g_").unroll(1, mx.sym.var("data"), merge_outputs=True)
    zoned, _ = mx.rnn.ZoneoutCell(base, zoneout_outputs=0.5).unroll(1, mx.sym.var("data"), merge_outputs=True)
    args, (new,) = _bind(plain, np.random.default_rng(1), data=(8, 1, 5))
    exe = zoned.bind(mx.cpu(), {k: mx.nd.array(v) for k, v in args.items()})
    out = exe.forward(is_train=True)[0].asnumpy()
    kept_old = out == 0  # the first step's previous output is zeros
    assert kept_old.any() and (~kept_old).any()
    np.testing.assert_allclose(out[~kept_old], new[~kept_old], rtol=1e-6)


@pytest.mark.parametrize("kwargs", [{"zoneout_outputs": 1.0}, {"zoneout_states": -0.1}, {"zoneout_outputs": "0.2"}])
def test_zoneout_cell_refuses_what_is_not_a_probability(kwargs):
    with pytest.raises(LazyNDError, match="ZoneoutCell: zoneout_.* must be a probability in"):
        mx.rnn.ZoneoutCell(mx.rnn.GRUCell(3), **kwargs)


def test_zoneout_cell_refuses_a_bidirectional_cell():
    bidirectional = mx.rnn.BidirectionalCell(mx.rnn.GRUCell(3, prefix="l_"), mx.rnn.GRUCell(3, prefix="r_"))
    with pytest.raises(LazyNDError, match="ZoneoutCell: a BidirectionalCell cannot be zoned out"):
        mx.rnn.ZoneoutCell(bidirectional, zoneout_outputs=0.5)


def test_begin_states_are_zeros_whose_batch_comes_from_the_graph():
    cell = mx.rnn.GRUCell(3, prefix="g_")
    states = cell.begin_state()
    assert [s.name for s in states] == ["g_begin_state_0"]
    assert cell.state_info == [{"shape": (0, 3), "__layout__": "NC"}]
    output, _ = cell(mx.sym.var("x"), states)
    assert output.name == "g_t0_out"
    assert output.infer_shape(x=(5, 2))[1] == [(5, 3)]


def test_cells_share_parameters_through_rnn_params():
    params = mx.rnn.RNNParams("shared_")
    first = mx.rnn.LSTMCell(3, prefix="shared_", params=params)
    second = mx.rnn.LSTMCell(3, prefix="shared_", params=params)
    a, _ = first.unroll(2, mx.sym.var("x"), merge_outputs=True)
    b, _ = second.unroll(2, mx.sym.var("y"), merge_outputs=True)
    assert mx.sym.Group([a, b]).list_arguments() == [
        "x",
        "shared_i2h_weight",
        "shared_i2h_bias",
        "shared_h2h_weight",
        "shared_h2h_bias",
        "y",
    ]


def test_lstm_forget_bias_initialises_the_forget_gate():
    cell = mx.rnn.LSTMCell(2, prefix="l_", forget_bias=2.5)
    outputs, _ = cell.unroll(1, mx.sym.var("data"), merge_outputs=True)
    mod = mx.mod.Module(outputs, label_names=None)
    mod.bind(data_shapes=[("data", (1, 1, 3))])
    mod.init_params(initializer=mx.init.Xavier())
    np.testing.assert_array_equal(mod.get_params()[0]["l_i2h_bias"].asnumpy(), [0, 0, 2.5, 2.5, 0, 0, 0, 0])


def test_unpack_and_pack_weights_per_gate_and_rnn_checkpoints(tmp_path):
    cell = mx.rnn.LSTMCell(2, prefix="l_")
    rng = np.random.default_rng(2)
    args = {
        "l_i2h_weight": mx.nd.array(rng.random((8, 3))),
        "l_i2h_bias": mx.nd.array(rng.random(8)),
        "l_h2h_weight": mx.nd.array(rng.random((8, 2))),
        "l_h2h_bias": mx.nd.array(rng.random(8)),
    }
    unpacked = cell.unpack_weights(args)
    assert sorted(unpacked) == sorted(
        f"l_{g}_{gate}_{k}" for g in ("i2h", "h2h") for gate in "ifco" for k in ("weight", "bias")
    )
    np.testing.assert_array_equal(unpacked["l_i2h_f_weight"].asnumpy(), args["l_i2h_weight"].asnumpy()[2:4])
    packed = cell.pack_weights(unpacked)
    for name, value in args.items():
        np.testing.assert_array_equal(packed[name].asnumpy(), value.asnumpy())
    outputs, _ = cell.unroll(2, mx.sym.var("data"), merge_outputs=True)
    prefix = str(tmp_path / "lstm")
    mx.rnn.save_rnn_checkpoint(cell, prefix, 3, outputs, args, {})
    assert "l_i2h_f_weight" in mx.nd.load(f"{prefix}-0003.params") or "arg:l_i2h_f_weight" in mx.nd.load(
        f"{prefix}-0003.params"
    )
    _, loaded, _ = mx.rnn.load_rnn_checkpoint(cell, prefix, 3)
    np.testing.assert_array_equal(loaded["l_h2h_weight"].asnumpy(), args["l_h2h_weight"].asnumpy())


def test_encode_sentences_builds_or_extends_a_vocabulary():
    coded, vocab = mx.rnn.encode_sentences([["a", "b", "c"], ["b", "d"]], invalid_label=0, start_label=1)
    assert coded == [[1, 2, 3], [2, 4]]  # MXNet 1.9.1
    assert vocab == {"\n": 0, "a": 1, "b": 2, "c": 3, "d": 4}
    more, vocab = mx.rnn.encode_sentences([["a", "zz"]], vocab=dict(vocab), unknown_token="<unk>", invalid_label=0)
    # MXNet 1.9.1 gave <unk> the id 1, a's: lazynd counts on past the vocabulary
    assert more == [[1, 5]] and vocab["<unk>"] == 5
    with pytest.raises(LazyNDError, match="unknown word 'zz'"):
        mx.rnn.encode_sentences([["zz"]], vocab={"a": 1})
    with pytest.raises(AssertionError, match="unknown word 'zz'"):  # MXNet 1.9.1 asserts there
        mx.rnn.encode_sentences([["a", "zz"]], vocab={"a": 1})


def test_encode_sentences_new_vocabulary_steps_over_invalid_label_among_its_ids():
    sentences = [["a", "b", "c"], ["b", "d"], ["a", "e"]]
    coded, vocab = mx.rnn.encode_sentences(sentences, invalid_label=2, start_label=0)
    assert coded == [[0, 1, 3], [1, 4], [0, 5]]  # MXNet 1.9.1
    assert vocab == {"\n": 2, "a": 0, "b": 1, "c": 3, "d": 4, "e": 5}


def test_bucket_sentence_iter_pads_and_shifts_labels():
    sentences = [[1, 2, 3], [4, 5, 6, 7, 8], [2, 3, 4], [5, 6, 7, 8, 1], [9] * 9]
    it = mx.rnn.BucketSentenceIter(sentences, batch_size=2, buckets=[3, 5], invalid_label=0)
    assert it.default_bucket_key == 5 and [(d.name, d.shape) for d in it.provide_data] == [("data", (2, 5))]
    batches = list(it)
    assert sorted(b.bucket_key for b in batches) == [3, 5]
    for batch in batches:
        data, label = batch.data[0].asnumpy(), batch.label[0].asnumpy()
        assert data.shape == (2, batch.bucket_key)
        np.testing.assert_array_equal(label[:, :-1], data[:, 1:])
        assert (label[:, -1] == 0).all()
    time_major = mx.rnn.BucketSentenceIter(sentences, batch_size=2, buckets=[5], layout="TN", invalid_label=0)
    assert next(iter(time_major)).data[0].shape == (5, 2)


def test_bucket_sentence_iter_drops_buckets_no_sentence_falls_in():
    it = mx.rnn.BucketSentenceIter([[1, 2], [3, 4], [5]], batch_size=2, buckets=[2, 3, 6], invalid_label=0, layout="TN")
    assert it.buckets == [2] and it.default_bucket_key == 2  # MXNet 1.9.1
    assert [(d.name, d.shape, d.layout) for d in it.provide_data] == [("data", (2, 2), "TN")]
    assert [batch.bucket_key for batch in it] == [2]


def test_bucket_sentence_iter_names_sentences_that_fit_no_bucket():
    with pytest.raises(LazyNDError, match=r"none of the 2 sentences fits the buckets \[2\]"):
        mx.rnn.BucketSentenceIter([[1, 2, 3], [4, 5, 6]], batch_size=2, buckets=[2], invalid_label=0)


def test_lstm_language_model_trains_with_a_bucketing_module_and_perplexity():
    # the outputs are (batch * time, vocab), the labels (batch, time): the metric gets every output row
    rng = np.random.default_rng(3)
    cell = mx.rnn.LSTMCell(4, prefix="lstm_")

    def sym_gen(seq_len):
        embed = mx.sym.Embedding(mx.sym.var("data"), input_dim=6, output_dim=3, name="embed")
        cell.reset()
        outputs, _ = cell.unroll(seq_len, inputs=embed, merge_outputs=True)
        pred = mx.sym.FullyConnected(mx.sym.Reshape(outputs, shape=(-1, 4)), num_hidden=6, name="pred")
        label = mx.sym.Reshape(mx.sym.var("softmax_label"), shape=(-1,))
        return mx.sym.SoftmaxOutput(pred, label, name="softmax"), ("data",), ("softmax_label",)

    sentences = [list(rng.integers(1, 6, size=4)) for _ in range(6)]
    it = mx.rnn.BucketSentenceIter(sentences, batch_size=3, buckets=[4], invalid_label=0)
    mod = mx.mod.BucketingModule(sym_gen, default_bucket_key=4)
    metric = mx.metric.Perplexity(0)
    mod.fit(it, eval_metric=metric, optimizer="sgd", optimizer_params={"learning_rate": 0.5}, num_epoch=2)
    assert np.isfinite(metric.get()[1]) and metric.get()[1] > 1


class _MemoryCell(mx.rnn.BaseRNNCell):
    """A cell in MXNet 0.9's style: it lists its states by ``state_shape`` and keeps the running sum of its inputs."""

    @property
    def state_shape(self):
        return [(0, 3)]

    def __call__(self, inputs, states):
        total = inputs + states[0]
        return total, [total]


class _PassCell(mx.rnn.BaseRNNCell):
    """A stateless cell in MXNet 0.9's style (``state_shape`` is empty)."""

    @property
    def state_shape(self):
        return []

    def __call__(self, inputs, states):
        return inputs, states


def test_a_cell_giving_only_state_shape_has_those_states_in_a_stack():
    stack = mx.rnn.SequentialRNNCell()
    stack.add(_PassCell(prefix="pass_"))
    stack.add(_MemoryCell(prefix="memory_"))
    assert stack.state_info == [{"shape": (0, 3)}]
    outputs, states = stack.unroll(2, inputs=mx.sym.var("data"), layout="NTC", merge_outputs=True)
    data = np.arange(12, dtype=np.float32).reshape(2, 2, 3)
    exe = mx.sym.Group([outputs, *states]).bind(mx.cpu(), {"data": mx.nd.array(data)})
    out, last = (o.asnumpy() for o in exe.forward())
    np.testing.assert_allclose(out, np.cumsum(data, axis=1))
    np.testing.assert_allclose(last, data.sum(axis=1))


class _ReluElmanCell(mx.rnn.BaseRNNCell):
    """A cell written as users write theirs on MXNet's BaseRNNCell, taking its activation by name."""

    def __init__(self, num_hidden, prefix="mine_"):
        super().__init__(prefix=prefix)
        self._num_hidden = num_hidden

    @property
    def state_info(self):
        return [{"shape": (0, self._num_hidden), "__layout__": "NC"}]

    def __call__(self, inputs, states):
        self._counter += 1
        name = f"{self._prefix}t{self._counter}_"
        i2h = mx.sym.FullyConnected(
            inputs, weight=self.params.get("i2h_weight"), no_bias=True, num_hidden=self._num_hidden, name=f"{name}i2h"
        )
        output = self._get_activation(i2h + states[0], "relu", name=f"{name}out")
        return output, [output]


def test_a_users_cell_applies_its_activation_with_get_activation():
    cell = _ReluElmanCell(3)
    outputs, _ = cell.unroll(2, inputs=mx.sym.var("data"), layout="NTC", merge_outputs=False)
    assert mx.sym.Group(outputs).list_outputs() == ["mine_t0_out_output", "mine_t1_out_output"]
    rng = np.random.default_rng(0)
    args, (out0, out1) = _bind(mx.sym.Group(outputs), rng, data=(2, 2, 4))
    step0 = np.maximum(args["data"][:, 0] @ args["mine_i2h_weight"].T, 0)
    np.testing.assert_allclose(out0, step0, rtol=1e-5)
    np.testing.assert_allclose(out1, np.maximum(args["data"][:, 1] @ args["mine_i2h_weight"].T + step0, 0), rtol=1e-5)


def test_rnn_cell_takes_a_callable_activation_as_mxnet():
    cell = mx.rnn.RNNCell(3, activation=lambda x, name: mx.sym.LeakyReLU(x, slope=0.5, name=name), prefix="rnn_")
    outputs, _ = cell.unroll(1, inputs=mx.sym.var("data"), layout="NTC", merge_outputs=False)
    assert outputs[0].name == "rnn_t0_out"
    args, (out,) = _bind(mx.sym.Group(outputs), np.random.default_rng(1), data=(2, 1, 4))
    pre = args["data"][:, 0] @ args["rnn_i2h_weight"].T + args["rnn_i2h_bias"] + args["rnn_h2h_bias"]
    np.testing.assert_allclose(out, np.where(pre > 0, pre, 0.5 * pre), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize(
    ("make", "begin_state", "message"),
    [
        (lambda: mx.rnn.LSTMCell(3, prefix="l_"), ["s"], r"LSTMCell.unroll: begin_state must be a list of 2 symbols"),
        (lambda: mx.rnn.GRUCell(3), ["s", "t"], r"GRUCell.unroll: begin_state must be a list of 1 symbols"),
        (
            lambda: mx.rnn.BidirectionalCell(mx.rnn.GRUCell(3, prefix="l_"), mx.rnn.GRUCell(3, prefix="r_")),
            [["s"], ["t"]],  # the nested states a BidirectionalCell returns
            r"BidirectionalCell.unroll: begin_state must be a list of 2 symbols .* got 2: \['list', 'list'\]",
        ),
        (lambda: mx.rnn.FusedRNNCell(3, mode="lstm"), ["s"], r"FusedRNNCell.unroll: begin_state must be a list of 2"),
    ],
)
def test_unroll_names_a_begin_state_that_does_not_match_the_cells_states(make, begin_state, message):
    def as_symbols(states):
        return [as_symbols(s) if isinstance(s, list) else mx.sym.var(s) for s in states]

    stack = mx.rnn.SequentialRNNCell()
    stack.add(make())
    for cell in (make(), stack):
        wanted = message if cell is not stack else message.replace(type(make()).__name__, "SequentialRNNCell")
        with pytest.raises(LazyNDError, match=wanted):
            cell.unroll(2, mx.sym.var("data"), begin_state=as_symbols(begin_state))


def test_unpack_and_pack_weights_name_a_missing_weight_as_a_key_error():
    cell = mx.rnn.LSTMCell(2, prefix="l_")
    with pytest.raises(KeyError, match=r"LSTMCell.unpack_weights: 'l_i2h_bias' is not among the arguments"):
        cell.unpack_weights({"l_i2h_weight": mx.nd.ones((8, 3))})
    with pytest.raises(LazyNDError, match=r"GRUCell.pack_weights: 'g_i2h_z_weight' is not among the arguments"):
        mx.rnn.GRUCell(2, prefix="g_").pack_weights({"g_i2h_r_weight": mx.nd.ones((2, 3))})
    with pytest.raises(KeyError, match=r"FusedRNNCell.unpack_weights: 'f_parameters' is not among"):
        mx.rnn.FusedRNNCell(2, prefix="f_").unpack_weights({})
