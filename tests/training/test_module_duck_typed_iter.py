"""Module's loops take a plain class that iterates batches as a DataIter does, as MXNet's do.

MXNet's tutorials feed ``fit`` an iterator that is no ``mx.io.DataIter`` subclass (it has
``provide_data``, ``provide_label``, ``reset`` and ``next``) and yield batches that carry only
``data``, ``label`` and ``pad``.
"""

from __future__ import annotations

from collections import namedtuple
from typing import Any

import numpy as np
import pytest

import lazynd as mx
from lazynd.errors import DataError


class _PlainBatch:
    """A batch with nothing but what a loop reads: no provide_data, index or bucket_key."""

    def __init__(self, data: list[Any], label: list[Any]) -> None:
        self.data = data
        self.label = label
        self.pad = 0


class _PlainIter:
    """Two well separated classes, ``num_batches`` batches of ``batch_size``; not a DataIter."""

    def __init__(self, batch_size: int = 8, num_batches: int = 4) -> None:
        self.batch_size = batch_size
        self.num_batches = num_batches
        self.current = 0
        self.rng = np.random.RandomState(0)

    @property
    def provide_data(self) -> list[tuple[str, tuple[int, ...]]]:
        return [("data", (self.batch_size, 6))]

    @property
    def provide_label(self) -> list[tuple[str, tuple[int, ...]]]:
        return [("softmax_label", (self.batch_size,))]

    def __iter__(self) -> _PlainIter:
        return self

    def __next__(self) -> _PlainBatch:
        return self.next()

    def reset(self) -> None:
        self.current = 0

    def next(self) -> _PlainBatch:
        if self.current == self.num_batches:
            raise StopIteration
        self.current += 1
        label = self.rng.randint(0, 2, self.batch_size)
        data = self.rng.normal(0, 0.1, (self.batch_size, 6)) + label[:, None] * 2.0 - 1.0
        return _PlainBatch([mx.nd.array(data)], [mx.nd.array(label)])


def _module() -> Any:
    net = mx.sym.FullyConnected(mx.sym.Variable("data"), num_hidden=2, name="fc")
    return mx.mod.Module(mx.sym.SoftmaxOutput(net, name="softmax"), context=mx.cpu())


def test_fit_score_and_predict_take_an_iterator_that_is_no_data_iter_subclass() -> None:
    module = _module()
    module.fit(
        _PlainIter(),
        eval_data=_PlainIter(),
        optimizer_params={"learning_rate": 0.5},
        initializer=mx.init.Xavier(),
        num_epoch=3,
    )
    assert module.score(_PlainIter(), "acc")[0][1] == 1.0
    assert module.predict(_PlainIter()).shape == (32, 2)
    batches = [nbatch for _, nbatch, _ in module.iter_predict(_PlainIter(num_batches=2))]
    assert batches == [0, 1]


def test_fit_names_what_a_plain_iterator_lacks() -> None:
    class NoLabels:
        provide_data = [("data", (8, 6))]

        def __iter__(self) -> Any:
            return iter([])

        def reset(self) -> None:
            pass

    with pytest.raises(DataError, match="fit: expected a DataIter .* got NoLabels, which lacks provide_label"):
        _module().fit(NoLabels(), num_epoch=1)


@pytest.mark.parametrize("given", [np.zeros((8, 6)), [1, 2, 3], "train.rec"])
def test_score_refuses_what_is_no_iterator_of_batches(given: Any) -> None:
    module = _module()
    module.bind([("data", (8, 6))], [("softmax_label", (8,))])
    module.init_params()
    with pytest.raises(DataError, match=f"score: expected a DataIter .* got {type(given).__name__}, which lacks"):
        module.score(given, "acc")


class _DataOnly:
    """A batch object holding ``data`` alone, as MXNet's debugging how-to feeds Module.forward."""

    def __init__(self, data: list[Any]) -> None:
        self.data = data


def test_forward_takes_an_object_holding_data_alone() -> None:
    conv = mx.sym.Convolution(mx.sym.Variable("data"), kernel=(3, 3), pad=(1, 1), num_filter=1, name="conv")
    module = mx.mod.Module(conv, label_names=None, context=mx.cpu())
    module.bind(data_shapes=[("data", (1, 3, 5, 5))])
    module.init_params(mx.init.One())
    module.forward(_DataOnly([mx.nd.ones((1, 3, 5, 5))]))
    # the centre sees 27 ones, a corner 12 (biases start at zero, whatever the initializer)
    out = module.get_outputs()[0].asnumpy()
    assert out[0, 0, 2, 2] == 27.0 and out[0, 0, 0, 0] == 12.0


def test_forward_without_labels_on_a_module_with_labels_predicts_at_another_batch_size() -> None:
    module = _module()
    module.bind([("data", (8, 6))], [("softmax_label", (8,))], for_training=False)
    module.init_params(mx.init.One())
    module.forward(_DataOnly([mx.nd.ones((3, 6))]), is_train=False)  # a new batch size: the module reshapes
    np.testing.assert_allclose(module.get_outputs()[0].asnumpy(), np.full((3, 2), 0.5))


def test_a_namedtuple_batch_predicts_as_the_predict_image_tutorial_writes_it() -> None:
    # MXNet's "Predict with pre-trained models" tutorial: Batch = namedtuple('Batch', ['data'])
    batch_type = namedtuple("Batch", ["data"])
    fc = mx.sym.FullyConnected(mx.sym.Variable("data"), num_hidden=2, name="fc")
    net = mx.sym.SoftmaxOutput(mx.sym.Flatten(fc, name="flatten0"), name="softmax")
    module = mx.mod.Module(symbol=net, context=mx.cpu(), label_names=None)
    module.bind(for_training=False, data_shapes=[("data", (1, 6))], label_shapes=module._label_shapes)
    # the label is an argument the checkpoint lacks: allow_missing leaves it, as the tutorial loads
    module.set_params({"fc_weight": mx.nd.ones((2, 6)), "fc_bias": mx.nd.zeros((2,))}, {}, allow_missing=True)
    module.forward(batch_type([mx.nd.ones((1, 6))]))
    np.testing.assert_allclose(module.get_outputs()[0].asnumpy(), [[0.5, 0.5]])
    features = mx.mod.Module(symbol=net.get_internals()["flatten0_output"], context=mx.cpu(), label_names=None)
    features.bind(for_training=False, data_shapes=[("data", (1, 6))])
    features.set_params(*module.get_params(), allow_extra=True)
    features.forward(batch_type([mx.nd.ones((1, 6))]))
    np.testing.assert_allclose(features.get_outputs()[0].asnumpy(), [[6.0, 6.0]])


@pytest.mark.parametrize("for_training", [False, True])
def test_a_module_without_labels_ignores_what_the_batch_holds_as_labels(for_training: bool) -> None:
    # MXNet's neural-style feeds its label-less VGG modules DataBatch([img], [0]); MXNet never reads
    # the 0, lazynd refused it as a label that is not an NDArray
    fc = mx.sym.FullyConnected(mx.sym.Variable("style_data"), num_hidden=2, no_bias=True, name="fc")
    loss = mx.sym.sum(mx.sym.square(fc))
    module = mx.mod.Module(loss, data_names=("style_data",), label_names=None, context=mx.cpu())
    module.bind([("style_data", (1, 3))], for_training=for_training, inputs_need_grad=for_training)
    module.init_params(mx.init.One())
    module.forward(mx.io.DataBatch([mx.nd.array([[1.0, 2.0, 3.0]])], [0]), is_train=for_training)
    np.testing.assert_allclose(module.get_outputs()[0].asnumpy(), [72.0])  # (1+2+3)^2 on each of 2 units
    if for_training:
        module.backward([mx.nd.ones((1,))])
        np.testing.assert_allclose(module.get_input_grads()[0].asnumpy(), [[24.0, 24.0, 24.0]])
