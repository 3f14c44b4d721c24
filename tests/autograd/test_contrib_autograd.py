"""``mx.contrib``: MXNet 0.9.4/0.10's ``contrib.autograd`` API and the contrib operator faces.

The expected values are MXNet 1.9.1's for the same program (its ``mx.contrib.autograd`` is kept
there too)."""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx

ag = mx.contrib.autograd


def test_train_section_records_and_test_section_turns_both_switches_off() -> None:
    x = mx.nd.array([1.0, 2.0, 3.0])
    dx = mx.nd.zeros_like(x)
    ag.mark_variables([x], [dx])
    with ag.train_section():
        y = x * 2 + x * x
        assert (mx.autograd.is_recording(), mx.autograd.is_training()) == (True, True)
        with ag.test_section():
            assert (mx.autograd.is_recording(), mx.autograd.is_training()) == (False, False)
    ag.compute_gradient([y])
    assert dx.asnumpy().tolist() == [4.0, 6.0, 8.0]


def test_set_is_training_sets_both_and_returns_the_previous_setting() -> None:
    try:
        assert ag.set_is_training(True) is False
        assert (mx.autograd.is_recording(), mx.autograd.is_training()) == (True, True)
    finally:
        assert ag.set_is_training(False) is True
    assert (mx.autograd.is_recording(), mx.autograd.is_training()) == (False, False)


def test_training_state_scope_sets_both_switches_and_restores_them() -> None:
    x = mx.nd.array([1.0, 2.0])
    dx = mx.nd.zeros_like(x)
    ag.mark_variables([x], [dx])
    with ag.TrainingStateScope(True):
        assert (mx.autograd.is_recording(), mx.autograd.is_training()) == (True, True)
        y = x * x
        with ag.TrainingStateScope(False):
            assert (mx.autograd.is_recording(), mx.autograd.is_training()) == (False, False)
        assert (mx.autograd.is_recording(), mx.autograd.is_training()) == (True, True)
    assert (mx.autograd.is_recording(), mx.autograd.is_training()) == (False, False)
    ag.compute_gradient([y])
    assert dx.asnumpy().tolist() == [2.0, 4.0]
    assert isinstance(ag.train_section(), ag.TrainingStateScope)
    assert isinstance(ag.test_section(), ag.TrainingStateScope)


def test_grad_and_grad_and_loss_wrap_a_function() -> None:
    def f(a, b):
        return (a * b + a).sum()

    a, b = mx.nd.array([1.0, 2.0]), mx.nd.array([3.0, 4.0])
    assert [g.asnumpy().tolist() for g in ag.grad(f)(a, b)] == [[4.0, 5.0], [1.0, 2.0]]
    assert [g.asnumpy().tolist() for g in ag.grad(f, argnum=1)(a, b)] == [[1.0, 2.0]]
    grads, out = ag.grad_and_loss(f, argnum=[0, 1])(a, b)
    assert [g.asnumpy().tolist() for g in grads] == [[4.0, 5.0], [1.0, 2.0]]
    assert out.asnumpy().tolist() == [14.0]
    with pytest.raises(mx.LazyNDError, match="argument 1 is a float"):
        ag.grad(f)(a, 2.0)
    with pytest.raises(mx.LazyNDError, match="argnum 5"):
        ag.grad(f, argnum=5)(a, b)


def test_backward_takes_a_list_of_heads_and_their_gradients() -> None:
    x = mx.nd.array([1.0, 2.0])
    g = mx.nd.zeros((2,))
    ag.mark_variables([x], [g])
    with ag.train_section():
        u = x * 3
        v = x * x
    ag.backward([u, v], [mx.nd.array([1.0, 1.0]), mx.nd.array([2.0, 2.0])])
    assert g.asnumpy().tolist() == [7.0, 11.0]
    with pytest.raises(mx.LazyNDError, match="a list of NDArrays"):
        ag.backward(u)
    with pytest.raises(mx.LazyNDError, match="1 out_grads for 2 outputs"):
        ag.backward([u, v], [mx.nd.ones((2,))])


def test_contrib_nd_and_sym_are_the_contrib_operators() -> None:
    anchors = mx.contrib.nd.MultiBoxPrior(mx.nd.zeros((1, 3, 2, 2)), sizes=(0.5,))
    np.testing.assert_array_equal(
        anchors.asnumpy(), mx.nd.contrib.MultiBoxPrior(mx.nd.zeros((1, 3, 2, 2)), sizes=(0.5,)).asnumpy()
    )
    assert mx.contrib.ndarray is mx.nd.contrib and mx.contrib.symbol is mx.sym.contrib
    prior = mx.contrib.sym.MultiBoxPrior(mx.sym.var("data"), sizes=(0.5,))
    assert prior.infer_shape(data=(1, 3, 2, 2))[1] == [(1, 4, 4)]
    with pytest.raises(AttributeError, match="no attribute 'no_such_face'"):
        mx.contrib.no_such_face  # noqa: B018
