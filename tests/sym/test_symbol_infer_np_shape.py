"""Partial shape inference under mx.np_shape: -1 is an unknown size, as MXNet 1.x reads and reports it."""

from __future__ import annotations

import pytest

import lazynd as mx
import lazynd_sym as sym
from lazynd.errors import ShapeError


def test_variable_takes_minus_one_under_np_shape_and_partial_inference_reports_it():
    with mx.np_shape():
        data = sym.Variable("data", shape=(-1, 20))
        sliced = sym.slice(data, begin=(None, 3), end=(None, 10))
        args, outs, aux = sliced.infer_shape_partial()
    assert args == [(-1, 20)] and outs == [(-1, 7)] and aux == []


def test_unknown_shapes_are_none_under_np_shape():
    net = sym.Variable("a") + sym.Variable("b")
    with mx.np_shape():
        assert net.infer_shape_partial() == ([None, None], [None], [])
    assert net.infer_shape_partial() == ([(), ()], [()], [])


def test_legacy_partial_inference_keeps_zero_for_unknown():
    data = sym.Variable("data", shape=(0, 20))
    assert sym.slice_axis(data, axis=1, begin=0, end=5).infer_shape_partial()[1] == [(0, 5)]


def test_minus_one_is_still_refused_outside_np_shape():
    with pytest.raises(ShapeError, match=r"Variable 'x': shape \(2, -1\) is not a shape.*under mx.np_shape"):
        sym.Variable("x", shape=(2, -1))
    with mx.np_shape(), pytest.raises(ShapeError, match="is not a shape"):
        sym.Variable("x", shape=(2, -2))


def test_partial_results_given_back_read_an_empty_shape_as_unknown():
    # MXNet 1.9.1 reads a shape of no dimensions as unknown outside np_shape, as infer_shape_partial
    # reports one; before, it was taken for a scalar: "shape of 'rhs' is (), expected (2, 3)"
    net = sym.FullyConnected(sym.Variable("a"), num_hidden=3, name="fc") + sym.Variable("b")
    partial, _, _ = net.infer_shape_partial(fc_weight=(3, 5))
    known = dict(zip(net.list_arguments(), partial, strict=True))
    assert known["a"] == () and known["b"] == ()
    known["a"] = (2, 5)
    args, outs, _ = net.infer_shape(**known)
    assert args == [(2, 5), (3, 5), (3,), (2, 3)] and outs == [(2, 3)]


def test_an_empty_shape_is_a_scalar_under_np_shape():
    net = sym.Variable("a") + sym.Variable("b")
    with mx.np_shape():
        assert net.infer_shape(a=(), b=()) == ([(), ()], [()], [])
    with pytest.warns(UserWarning, match="cannot be inferred"):
        assert net.infer_shape(a=(), b=()) == (None, None, None)
