"""Imperative calls reuse parsed parameters and inferred shapes, keyed by everything they depend on."""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx
from lazynd.errors import EngineError, OperatorError, ShapeError


def test_same_call_with_other_parameters_uses_the_new_parameters():
    w, g = mx.nd.ones((3,)), mx.nd.ones((3,))
    for lr in (0.1, 0.2, 0.1):
        w[:] = 1.0
        mx.nd.sgd_update(w, g, lr=lr, out=w)
        np.testing.assert_allclose(w.asnumpy(), 1.0 - lr, rtol=1e-6)


def test_same_call_with_other_shapes_infers_the_new_shape():
    for rows in (2, 5, 2):
        out = mx.nd.FullyConnected(mx.nd.ones((rows, 4)), mx.nd.ones((3, 4)), mx.nd.zeros((3,)), num_hidden=3)
        assert out.shape == (rows, 3)


def test_bad_shapes_are_still_rejected_after_a_good_call_was_remembered():
    mx.nd.FullyConnected(mx.nd.ones((2, 4)), mx.nd.ones((3, 4)), mx.nd.zeros((3,)), num_hidden=3)
    with pytest.raises(ShapeError, match="weight"):
        mx.nd.FullyConnected(mx.nd.ones((2, 5)), mx.nd.ones((3, 4)), mx.nd.zeros((3,)), num_hidden=3)


def test_bad_parameters_are_still_rejected_after_a_good_call_was_remembered():
    # (a bounded parameter: MXNet 1.9.1 bounds Dropout's p to [0, 1], and no optimizer's lr)
    x = mx.nd.ones((3,))
    mx.nd.Dropout(x, p=0.5)
    with pytest.raises(OperatorError, match="'p'"):
        mx.nd.Dropout(x, p=1.5)


def test_a_bool_and_an_int_parameter_are_told_apart():
    x = mx.nd.array(np.arange(6, dtype=np.float32).reshape(2, 3))
    assert mx.nd.sum(x, axis=1, keepdims=True).shape == (2, 1)
    assert mx.nd.sum(x, axis=1, keepdims=1).shape == (2, 1)
    assert mx.nd.sum(x, axis=1, keepdims=False).shape == (2,)


def test_out_of_range_labels_still_raise_through_a_remembered_call():
    prob = mx.nd.softmax(mx.nd.ones((2, 3)))
    mx.nd._backward_SoftmaxOutput(prob, mx.nd.array([0, 1])).wait_to_read()
    with pytest.raises((OperatorError, EngineError), match="out of range"):
        mx.nd._backward_SoftmaxOutput(prob, mx.nd.array([0, 3])).wait_to_read()
