"""Modules written by users: the helpers MXNet keeps in ``mxnet.module.base_module`` and that user
subclasses of ``Module`` import from there (``_as_list``, ``_check_input_names``, ``_parse_data_desc``)."""

from __future__ import annotations

import importlib
import warnings

import numpy as np
import pytest
from blob_problem import two_class_blobs

import lazynd as mx
import lazynd_sym as sym
from lazynd.errors import ParameterError
from lazynd_sym.module.base_module import _as_list, _check_input_names, _parse_data_desc


def _softmax_net() -> sym.Symbol:
    hidden = sym.FullyConnected(sym.Variable("data"), num_hidden=2, name="fc")
    return sym.SoftmaxOutput(hidden, name="softmax")


def test_the_helpers_import_from_mxnets_module_path() -> None:
    face = importlib.import_module("lazynd.module.base_module")  # ``mxnet.module.base_module`` in a user's file
    assert (face._as_list, face._check_input_names, face._parse_data_desc) == (
        _as_list,
        _check_input_names,
        _parse_data_desc,
    )


def test_as_list_wraps_a_single_callback_and_keeps_a_list() -> None:
    def callback(params: object) -> None:
        return None

    assert _as_list(callback) == [callback]
    assert _as_list([callback, callback]) == [callback, callback]


def test_check_input_names_refuses_or_warns_about_a_name_the_symbol_lacks() -> None:
    net = _softmax_net()
    _check_input_names(net, ["data", "softmax_label"], "data", throw=True)
    with pytest.raises(ParameterError, match="label_names has 'lbl'.*softmax_label"):
        _check_input_names(net, ["lbl"], "label", throw=True)
    with pytest.raises(ValueError):  # MXNet's type, for existing except clauses
        _check_input_names(net, ["lbl"], "label", throw=True)
    with pytest.warns(UserWarning, match="'lbl'"):
        _check_input_names(net, ["lbl"], "label", throw=False)


def test_parse_data_desc_gives_data_descs_and_checks_the_names() -> None:
    data, labels = _parse_data_desc(["data"], ["softmax_label"], [("data", (4, 3))], [("softmax_label", (4,))])
    assert [(d.name, d.shape) for d in data] == [("data", (4, 3))]
    assert labels is not None and [(d.name, d.shape) for d in labels] == [("softmax_label", (4,))]
    with pytest.warns(UserWarning, match="label_shapes name"):  # no label shapes for a module with labels: as MXNet
        assert _parse_data_desc(["data"], ["softmax_label"], [mx.io.DataDesc("data", (4, 3))], None)[1] is None
    assert _parse_data_desc(["data"], None, [("data", (4, 3))], None) == ([mx.io.DataDesc("data", (4, 3))], None)
    with pytest.raises(ParameterError, match=r"data_shapes name \['x'\].*\['data'\]"):
        _parse_data_desc(["data"], None, [("x", (4, 3))], None)
    with pytest.warns(UserWarning, match="label_shapes name"):
        _parse_data_desc(["data"], ["softmax_label"], [("data", (4, 3))], [("lbl", (4,))])


class _EpochLoopModule(mx.mod.Module):
    """A user's own training loop, in the style of plateau-schedule modules found in MXNet projects."""

    def train(self, batches: mx.io.NDArrayIter, epochs: int, batch_end_callback: object) -> list[float]:
        self.bind(data_shapes=batches.provide_data, label_shapes=batches.provide_label)
        self.init_params(initializer=mx.init.Xavier())
        self.init_optimizer(optimizer="sgd", optimizer_params={"learning_rate": 0.5})
        metric = mx.metric.create("ce")
        losses = []
        for epoch in range(epochs):
            metric.reset()
            batches.reset()
            for nbatch, batch in enumerate(batches):
                self.forward_backward(batch)
                self.update()
                self.update_metric(metric, batch.label)
                for callback in _as_list(batch_end_callback):
                    callback(mx.model.BatchEndParam(epoch=epoch, nbatch=nbatch, eval_metric=metric, locals=locals()))
            losses.append(metric.get()[1])
        return losses


def test_a_module_subclass_with_its_own_loop_trains() -> None:
    data, label = two_class_blobs(64, seed=5)
    seen: list[int] = []
    mod = _EpochLoopModule(_softmax_net(), context=mx.cpu())
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        losses = mod.train(mx.io.NDArrayIter(data, label, batch_size=16), 3, lambda p: seen.append(p.nbatch))
    assert seen == [0, 1, 2, 3] * 3
    assert losses[-1] < losses[0]
    assert np.isfinite(losses).all()
