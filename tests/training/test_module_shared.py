"""Modules bound with ``shared_module``: they share the lender's parameters and, as in MXNet 1.x,
its optimizer when it has one (a GAN updates one discriminator through two loss heads)."""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx
import lazynd_sym as sym
from lazynd.errors import LazyNDError


def _two_heads() -> tuple[sym.Symbol, sym.Symbol]:
    score = sym.FullyConnected(sym.Variable("data"), num_hidden=1, name="fc")
    return sym.MakeLoss(score, name="real"), sym.MakeLoss(-score, name="fake")


def _lender(with_optimizer: bool) -> mx.mod.Module:
    real, _ = _two_heads()
    mod = mx.mod.Module(real, label_names=None, context=mx.cpu())
    mod.bind([("data", (2, 3))], inputs_need_grad=True)
    mod.init_params(arg_params={"fc_weight": mx.nd.zeros((1, 3)), "fc_bias": mx.nd.zeros((1,))})
    if with_optimizer:
        mod.init_optimizer(optimizer="sgd", optimizer_params={"learning_rate": 1.0, "rescale_grad": 0.5})
    return mod


def _borrower(lender: mx.mod.Module) -> mx.mod.Module:
    _, fake = _two_heads()
    mod = mx.mod.Module(fake, label_names=None, context=mx.cpu())
    mod.bind([("data", (2, 3))], inputs_need_grad=True, shared_module=lender)
    return mod


def test_a_module_bound_on_one_with_an_optimizer_updates_the_shared_weights_with_it() -> None:
    lender = _lender(with_optimizer=True)
    borrower = _borrower(lender)
    assert borrower.optimizer_initialized
    borrower.forward(mx.io.DataBatch([mx.nd.ones((2, 3))]), is_train=True)
    borrower.backward()
    borrower.update()  # d(-w.x - b)/dw = -x summed over 2 rows, times 1/2: w and b go up by 1
    np.testing.assert_allclose(borrower.get_params()[0]["fc_weight"].asnumpy(), np.ones((1, 3)))
    np.testing.assert_allclose(borrower.get_params()[0]["fc_bias"].asnumpy(), np.ones((1,)))
    lender.forward(mx.io.DataBatch([mx.nd.ones((2, 3))]), is_train=False)  # the lender runs on the same weights
    np.testing.assert_allclose(lender.get_outputs()[0].asnumpy(), np.full((2, 1), 4.0))


def test_a_module_bound_on_one_without_an_optimizer_still_asks_for_init_optimizer() -> None:
    borrower = _borrower(_lender(with_optimizer=False))
    assert not borrower.optimizer_initialized
    borrower.forward(mx.io.DataBatch([mx.nd.ones((2, 3))]), is_train=True)
    borrower.backward()
    with pytest.raises(LazyNDError, match=r"update: call init_optimizer\(\) first"):
        borrower.update()
