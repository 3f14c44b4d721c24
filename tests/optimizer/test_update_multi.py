"""Updates of many parameters in one call: ``update_multi`` and updaters given lists."""

from __future__ import annotations

import numpy as np
import pytest
from optimizer_reference import KW

import lazynd as mx
from lazynd import lr_scheduler, optimizer
from lazynd.errors import LazyNDError
from lazynd.testing import assert_almost_equal


@pytest.mark.parametrize("momentum", [0.0, 0.9])
def test_sgd_update_multi_matches_one_update_per_parameter(momentum):
    rng = np.random.default_rng(7)
    names = {0: "a_weight", 1: "a_bias", 2: "b_weight"}
    shapes = [(3, 4), (3,), (2, 3)]
    w0 = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    grads = [[rng.standard_normal(s).astype(np.float32) * 3 for s in shapes] for _ in range(5)]
    results = []
    for multi in (True, False):
        opt = optimizer.create(
            "sgd", learning_rate=0.5, momentum=momentum, wd=0.1, rescale_grad=0.5, clip_gradient=1.0,
            param_idx2name=names, lr_scheduler=lr_scheduler.FactorScheduler(step=2, factor=0.5),
        )  # fmt: skip
        opt.set_lr_mult({"b_weight": 0.25})
        opt.set_wd_mult({0: 2.0})
        updater = optimizer.get_updater(opt)
        weights = [mx.nd.array(w) for w in w0]
        for batch in grads:
            g = [mx.nd.array(x) for x in batch]
            if multi:
                updater([0, 1, 2], g, weights)
            else:
                for i in range(3):
                    updater(i, g[i], weights[i])
        results.append(([w.asnumpy() for w in weights], opt.num_update, dict(opt._index_update_count)))
    (multi_w, multi_n, multi_counts), (single_w, single_n, single_counts) = results
    for a, b in zip(multi_w, single_w, strict=True):
        assert_almost_equal(a, b, rtol=1e-6, atol=1e-7)
    assert multi_n == single_n == 5 and multi_counts == single_counts == {0: 5, 1: 5, 2: 5}


def test_update_multi_asks_the_lr_scheduler_once_per_call():
    calls = []

    class Counting(lr_scheduler.LRScheduler):
        def __call__(self, num_update: int) -> float:
            calls.append(num_update)
            return 0.1

    opt = optimizer.create("sgd", lr_scheduler=Counting())
    weights = [mx.nd.zeros((2,)) for _ in range(3)]
    optimizer.get_updater(opt)([0, 1, 2], [mx.nd.ones((2,))] * 3, weights)
    assert calls == [1]  # as MXNet 1.x's _get_lrs: one rate for every parameter of the call
    assert_almost_equal(weights[2].asnumpy(), [-0.1, -0.1])


def test_update_multi_of_mixed_dtypes_updates_each_parameter_alone():
    opt = optimizer.create("sgd", learning_rate=1.0)
    weights = [mx.nd.zeros((2,)), mx.nd.zeros((2,), dtype="float64")]
    optimizer.get_updater(opt)([0, 1], [mx.nd.ones((2,)), mx.nd.ones((2,), dtype="float64")], weights)
    assert [w.asnumpy().tolist() for w in weights] == [[-1.0, -1.0], [-1.0, -1.0]]
    assert weights[1].dtype == np.float64 and opt.num_update == 1


# -- updaters given lists: one multi-parameter operation -----------------------------------------
def _params(seed: int) -> tuple[list[np.ndarray], list[list[np.ndarray]]]:
    rng = np.random.default_rng(seed)
    shapes = [(4, 3), (3,), (2, 2)]
    weights = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    return weights, [[rng.standard_normal(s).astype(np.float32) * 3 for s in shapes] for _ in range(3)]


@pytest.mark.parametrize(("name", "kwargs"), [("sgd", {}), ("sgd", {"momentum": 0.9}), ("adam", {})])
def test_updater_given_lists_matches_one_call_per_parameter(name, kwargs):
    w0, steps = _params(7)
    names = {0: "fc_weight", 1: "fc_bias", 2: "out_weight"}

    def make():
        opt = optimizer.create(name, learning_rate=0.1, param_idx2name=names, **KW, **kwargs)
        opt.set_lr_mult({"out_weight": 0.5})
        return opt, optimizer.get_updater(opt)

    (opt_a, listed), (opt_b, single) = make(), make()
    weights_a, weights_b = [mx.nd.array(w) for w in w0], [mx.nd.array(w) for w in w0]
    for grads in steps:
        listed([0, 1, 2], [mx.nd.array(g) for g in grads], weights_a)
        for i, g in enumerate(grads):
            single(i, mx.nd.array(g), weights_b[i])
    for a, b in zip(weights_a, weights_b, strict=True):
        assert_almost_equal(a.asnumpy(), b.asnumpy(), rtol=1e-6, atol=1e-7)
    assert opt_a.num_update == opt_b.num_update == 3
    assert sorted(listed.states) == [0, 1, 2]


def test_updater_given_lists_of_different_lengths_is_an_error():
    updater = optimizer.get_updater(optimizer.create("sgd"))
    with pytest.raises(LazyNDError, match="2 indices, 1 gradients and 2 weights"):
        updater([0, 1], [mx.nd.ones((2,))], [mx.nd.ones((2,)), mx.nd.ones((2,))])


def test_sgd_with_parameters_of_two_dtypes_falls_back_to_one_update_each():
    updater = optimizer.get_updater(optimizer.create("sgd", learning_rate=0.5))
    weights = [mx.nd.ones((2,)), mx.nd.ones((2,), dtype="float64")]
    grads = [mx.nd.ones((2,)), mx.nd.ones((2,), dtype="float64")]
    updater([0, 1], grads, weights)
    for w in weights:
        assert_almost_equal(w.asnumpy(), np.full(2, 0.5))
    assert weights[1].dtype == np.float64


def test_a_subclass_overriding_update_only_has_it_called_for_lists():
    # MXNet's DSD example: a pruning SGD masks the gradient in ``update`` and calls SGD's;
    # a Module on one device hands its updater lists, which must not skip that ``update``
    seen = []

    class MaskedSGD(optimizer.SGD):
        def update(self, index, weight, grad, state):
            seen.append(index)
            grad[:] = grad * (mx.nd.abs(weight) >= 0.5)
            super().update(index, weight, grad, state)

    opt = MaskedSGD(learning_rate=1.0, momentum=0.9)
    weights = [mx.nd.array([0.1, 1.0]), mx.nd.array([2.0, 0.2])]
    optimizer.get_updater(opt)([0, 1], [mx.nd.ones((2,)), mx.nd.ones((2,))], weights)
    assert seen == [0, 1]
    assert_almost_equal(weights[0].asnumpy(), [0.1, 0.0])
    assert_almost_equal(weights[1].asnumpy(), [1.0, 0.2])


def test_a_subclass_overriding_update_multi_precision_only_has_it_called_for_lists():
    # the method MXNet 1.9.1's updater calls: a subclass written for it customises that one
    seen = []

    class Logged(optimizer.SGD):
        def update_multi_precision(self, index, weight, grad, state):
            seen.append(index)
            super().update_multi_precision(index, weight, grad, state)

    weights = [mx.nd.ones((2,)), mx.nd.ones((3,))]
    optimizer.get_updater(Logged(learning_rate=0.5))([0, 1], [mx.nd.ones((2,)), mx.nd.ones((3,))], weights)
    assert seen == [0, 1]
    assert_almost_equal(weights[1].asnumpy(), [0.5, 0.5, 0.5])
