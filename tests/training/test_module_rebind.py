"""Binding a bound module again: ignored without ``force_rebind``; with it, new executors that keep the
trained parameters, and a refused rebind leaves the module as it was."""

from __future__ import annotations

import logging

import numpy as np
import pytest
from blob_problem import two_class_net

import lazynd as mx
from lazynd.errors import LazyNDError

_DATA, _LABEL = [("data", (4, 5))], [("softmax_label", (4,))]


def _batch() -> mx.io.DataBatch:
    return mx.io.DataBatch([mx.nd.array(np.arange(20.0).reshape(4, 5) / 20)], [mx.nd.array([0, 1, 1, 0])])


def _trained_module() -> mx.mod.Module:
    mod = mx.mod.Module(two_class_net())
    mod.bind(_DATA, _LABEL)
    mod.init_params(mx.init.Xavier())
    mod.init_optimizer(kvstore=None, optimizer_params={"learning_rate": 1.0})
    mod.forward(_batch())
    mod.backward()
    mod.update()
    return mod


def test_force_rebind_keeps_the_updates_since_the_last_get_params() -> None:
    # MXNet 1.9 copies its stale host copy to the new executors, losing the updates (a bug not kept)
    mod = _trained_module()
    mod.forward(_batch(), is_train=False)
    trained = mod.get_outputs()[0].asnumpy()
    mod.bind(_DATA, _LABEL, force_rebind=True)
    mod.forward(_batch(), is_train=False)
    np.testing.assert_allclose(mod.get_outputs()[0].asnumpy(), trained, rtol=1e-6)


def test_bind_on_a_bound_module_is_ignored_whatever_its_arguments(caplog: pytest.LogCaptureFixture) -> None:
    mod = _trained_module()
    with caplog.at_level(logging.WARNING):
        mod.bind(_DATA, for_training=False, inputs_need_grad=True)
    assert "already bound, ignoring bind()" in caplog.text
    assert mod.binded and mod.for_training


def test_a_refused_rebind_keeps_the_module_bound() -> None:
    mod = _trained_module()
    with pytest.raises(LazyNDError, match="inputs_need_grad=True needs for_training=True"):
        mod.bind(_DATA, for_training=False, inputs_need_grad=True, force_rebind=True)
    assert mod.binded and mod.for_training
    mod.forward(_batch())
    assert mod.get_outputs()[0].shape == (4, 2)
