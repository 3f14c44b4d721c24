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


# -- a 0 is a zero size under np_shape (MXNet 1.9.1's answers; lazynd read it as unknown before) ----------------------


def test_a_zero_size_given_shape_reaches_every_entry_under_np_shape():
    net = sym.Variable("a") + sym.Variable("b")
    with mx.np_shape():
        assert net.infer_shape(a=(0, 3)) == ([(0, 3), (0, 3)], [(0, 3)], [])
        assert net.infer_shape_partial(a=(0, -1), b=(-1, 3)) == ([(0, 3), (0, 3)], [(0, 3)], [])


def test_zero_and_nonzero_sizes_disagree_under_np_shape():
    net = sym.Variable("a") + sym.Variable("b")
    with mx.np_shape(), pytest.raises(ShapeError, match=r"\(0, 3\).*\(5, 3\)|\(5, 3\).*\(0, 3\)"):
        net.infer_shape_partial(a=(0, 3), b=(5, 3))
    # outside np_shape the 0 is an unknown size the other shape fills, as in MXNet 1.9.1
    assert net.infer_shape_partial(a=(0, 3), b=(5, 3)) == ([(5, 3), (5, 3)], [(5, 3)], [])


def test_layers_infer_weights_around_an_empty_batch_or_a_zero_wide_input():
    fc = sym.FullyConnected(sym.Variable("data"), num_hidden=4, name="fc")
    with mx.np_shape():
        assert fc.infer_shape(data=(0, 3)) == ([(0, 3), (4, 3), (4,)], [(0, 4)], [])
        assert fc.infer_shape(data=(5, 0)) == ([(5, 0), (4, 0), (4,)], [(5, 4)], [])
        conv = sym.Convolution(sym.Variable("data"), kernel=(3, 3), num_filter=2, pad=(1, 1), name="conv")
        assert conv.infer_shape(data=(0, 1, 5, 5))[1] == [(0, 2, 5, 5)]


def test_an_empty_batch_reaches_an_inferred_label_while_other_dims_are_unknown():
    # the label's rule runs while the data's width is unknown: the zero batch is carried through it
    net = sym.SoftmaxOutput(sym.Variable("a"), sym.Variable("b"))
    with mx.np_shape():
        assert net.infer_shape_partial(a=(0, -1)) == ([(0, -1), (0,)], [(0, -1)], [])


def test_a_zero_size_dim_a_rule_adds_to_an_unknown_one_stays_unknown():
    net = sym.concat(sym.Variable("a"), sym.Variable("b"), dim=0)
    with mx.np_shape():
        assert net.infer_shape_partial(a=(0, 3), b=(-1, 3)) == ([(0, 3), (-1, 3)], [(-1, 3)], [])
        assert net.infer_shape_partial(a=(0, 3), b=(2, 3)) == ([(0, 3), (2, 3)], [(2, 3)], [])


def test_a_variable_shape_hint_keeps_its_zero_size_and_unknown_dims_under_np_shape():
    with mx.np_shape():
        zero = sym.Variable("x", shape=(0, 3)) + sym.Variable("b")
        assert zero.infer_shape_partial() == ([(0, 3), (0, 3)], [(0, 3)], [])
        unknown = sym.Variable("x", shape=(-1, 3)) + sym.Variable("b")
        assert unknown.infer_shape_partial(b=(4, -1)) == ([(4, 3), (4, 3)], [(4, 3)], [])


def test_flatten_infers_nothing_from_a_partly_known_input():
    # MXNet 1.9.1: the output of Flatten is unknown until every input dim is, and so is a weight behind it
    net = sym.FullyConnected(sym.flatten(sym.Variable("data")), num_hidden=4, name="fc")
    assert net.infer_shape_partial(data=(0, 3, 4)) == ([(0, 3, 4), (), ()], [()], [])
    with mx.np_shape():
        assert net.infer_shape_partial(data=(-1, 3, 4)) == ([(-1, 3, 4), None, None], [None], [])
        assert net.infer_shape(data=(0, 3, 4))[1] == [(0, 4)]
    assert net.infer_shape(data=(2, 3, 4))[1] == [(2, 4)]
