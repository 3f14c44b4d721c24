"""What FeedForward takes as its ``symbol``: a Symbol, a ``sym_gen`` (a function of the bucket
key, as MXNet's bucketing examples such as bi-lstm-sort pass), and a clear error for anything else."""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx
import lazynd_sym as sym
from lazynd.errors import DataError, LazyNDError
from lazynd_sym.model import FeedForward


def _sym_gen(length: int) -> sym.Symbol:
    # the same parameters for every length: each value is a row of its own, summed after tanh
    hidden = sym.FullyConnected(sym.Reshape(sym.Variable("data"), shape=(-1, 1)), num_hidden=3, name="fc")
    pooled = sym.Reshape(sym.sum(sym.tanh(hidden), axis=0, keepdims=True), shape=(1, -1))
    return sym.SoftmaxOutput(sym.FullyConnected(pooled, num_hidden=2, name="out"), name="softmax")


class _TwoLengths(mx.io.DataIter):
    """Four batches of one sequence, of lengths 4, 6, 4, 6 (bucket keys), default key 4."""

    def __init__(self, lengths: tuple[int, ...] = (4, 6)) -> None:
        super().__init__(batch_size=1)
        self.lengths = lengths
        self.default_bucket_key = 4
        self.provide_data = [("data", (1, 4))]
        self.provide_label = [("softmax_label", (1,))]
        self.count = 0

    def reset(self) -> None:
        self.count = 0

    def next(self) -> mx.io.DataBatch:
        if self.count == 4:
            raise StopIteration
        self.count += 1
        n = self.lengths[(self.count - 1) % len(self.lengths)]
        x = np.linspace(-1, 1, n).reshape(1, n) * self.count
        return mx.io.DataBatch(
            [mx.nd.array(x)],
            [mx.nd.array([self.count % 2])],
            bucket_key=n,
            provide_data=[("data", (1, n))],
            provide_label=[("softmax_label", (1,))],
        )


def _start() -> dict:
    return {
        "fc_weight": mx.nd.array([[0.5], [-0.3], [0.2]]),
        "fc_bias": mx.nd.array([0.1, 0.0, -0.1]),
        "out_weight": mx.nd.array([[0.3, -0.2, 0.1], [0.0, 0.4, -0.5]]),
        "out_bias": mx.nd.zeros((2,)),
    }


def test_fit_with_a_sym_gen_trains_every_bucket_on_the_same_parameters() -> None:
    model = FeedForward(_sym_gen, num_epoch=2, arg_params=_start(), learning_rate=0.5, progress_bar=False)
    model.fit(_TwoLengths())
    # MXNet 1.9.1's FeedForward on the same program
    expected = {
        "fc_bias": [0.292883, 0.070023, -0.629556],
        "fc_weight": [[1.152812], [-2.329772], [3.465511]],
        "out_bias": [0.321449, -0.321449],
        "out_weight": [[0.272422, 0.09325, -0.234802], [0.027578, 0.10675, -0.165198]],
    }
    for name, value in expected.items():
        np.testing.assert_allclose(model.arg_params[name].asnumpy(), value, rtol=1e-5, atol=1e-5)


def test_a_sym_gen_of_one_bucket_trains_as_its_symbol_does() -> None:
    models = [
        FeedForward(symbol, num_epoch=2, arg_params=_start(), learning_rate=0.5, progress_bar=False)
        for symbol in (_sym_gen, _sym_gen(4))
    ]
    for model in models:
        model.fit(_TwoLengths(lengths=(4,)))
    for name in _start():
        np.testing.assert_allclose(models[0].arg_params[name].asnumpy(), models[1].arg_params[name].asnumpy())
    assert models[0].symbol.list_arguments() == _sym_gen(4).list_arguments()


def test_a_sym_gen_predicts_with_the_default_buckets_symbol_before_any_fit() -> None:
    model = FeedForward(_sym_gen, arg_params=_start(), progress_bar=False)
    out = model.predict(_TwoLengths(lengths=(4,)))
    assert out.shape == (4, 2)


def test_a_sym_gen_needs_an_iterator_with_a_default_bucket_key() -> None:
    model = FeedForward(_sym_gen, num_epoch=1, progress_bar=False)
    with pytest.raises(DataError, match=r"FeedForward.fit: .*sym_gen.*default_bucket_key"):
        model.fit(mx.io.NDArrayIter(np.zeros((2, 4)), np.zeros(2), batch_size=1))


def test_a_bucket_whose_parameters_differ_from_the_default_ones_is_refused() -> None:
    # old char-LSTM scripts: sym_gen(seq_len) with a layer of seq_len units
    def sym_gen(length: int) -> sym.Symbol:
        fc = sym.FullyConnected(sym.Variable("data"), num_hidden=length, name="fc")
        return sym.SoftmaxOutput(sym.FullyConnected(fc, num_hidden=2, name="out"), name="softmax")

    model = FeedForward(sym_gen, num_epoch=1, progress_bar=False)
    with pytest.raises(
        DataError, match=r"bucket 6: parameter 'fc_weight' has shape \(6, 6\), the default bucket's is \(4, 4\)"
    ):
        model.fit(_TwoLengths())


def test_something_else_than_a_symbol_is_refused_naming_its_type() -> None:
    with pytest.raises(LazyNDError, match=r"symbol must be a Symbol or a function of a bucket key, got str$"):
        FeedForward("net-symbol.json")
