"""Setting an optimizer's learning rate by hand, with and without an ``lr_scheduler``, as MXNet 1.x."""

from __future__ import annotations

import warnings

import pytest

import lazynd as mx
from lazynd import lr_scheduler, optimizer
from lazynd.errors import LazyNDError


def test_set_learning_rate_changes_the_rate_without_a_scheduler() -> None:
    opt = optimizer.Optimizer(learning_rate=0.01)
    opt.set_learning_rate(0.2)
    assert opt.learning_rate == 0.2


def test_set_learning_rate_under_a_scheduler_raises_what_mxnet_raises() -> None:
    opt = optimizer.Optimizer(lr_scheduler=lr_scheduler.FactorScheduler(step=1), learning_rate=0.3)
    # MXNet raises UserWarning here: programs catch that, and lazynd's own handlers catch LazyNDError
    with pytest.raises(UserWarning, match=r"set_learning_rate\(0.5\).*lr_scheduler") as info:
        opt.set_learning_rate(0.5)
    assert isinstance(info.value, LazyNDError)
    assert opt.learning_rate == 0.3


def test_the_scheduler_base_rate_is_the_way_to_change_it() -> None:
    opt = optimizer.Optimizer(lr_scheduler=lr_scheduler.FactorScheduler(step=1), learning_rate=0.3)
    opt.lr_scheduler.base_lr = 0.4
    assert opt.learning_rate == 0.4


def test_a_learning_rate_replacing_the_schedulers_base_lr_warns_as_mxnet_does():
    scheduler = lr_scheduler.FactorScheduler(step=10, base_lr=0.01)
    with pytest.warns(UserWarning, match=r"overwritten by ``learning_rate``"):
        opt = optimizer.create("sgd", learning_rate=0.1, lr_scheduler=scheduler)
    assert scheduler.base_lr == 0.1
    assert opt.learning_rate == 0.1


@pytest.mark.parametrize("through_a_module", [False, True])
def test_the_learning_rate_warning_names_the_users_line(through_a_module) -> None:
    # not a line inside lazynd (the optimizer's __init__): the user's create call, or their Module's
    scheduler = lr_scheduler.FactorScheduler(step=10, base_lr=0.01)
    with pytest.warns(UserWarning, match=r"overwritten by ``learning_rate``") as caught:
        if through_a_module:
            module = mx.mod.Module(mx.sym.FullyConnected(mx.sym.var("data"), num_hidden=2, name="fc"), label_names=None)
            module.bind([("data", (1, 3))])
            module.init_params()
            module.init_optimizer(optimizer_params={"learning_rate": 0.1, "lr_scheduler": scheduler})
        else:
            optimizer.create("sgd", learning_rate=0.1, lr_scheduler=scheduler)
    assert [warning.filename for warning in caught] == [__file__]


def test_a_learning_rate_equal_to_the_schedulers_base_lr_does_not_warn():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        optimizer.create("sgd", learning_rate=0.01, lr_scheduler=lr_scheduler.FactorScheduler(step=10, base_lr=0.01))
        optimizer.create("sgd", lr_scheduler=lr_scheduler.FactorScheduler(step=10, base_lr=0.3))


def test_set_lr_scale_names_set_lr_mult_instead_of_a_bare_attribute_error() -> None:
    opt = optimizer.create("sgd", learning_rate=0.1, param_idx2name={0: "fc_weight"})
    with pytest.raises(LazyNDError, match=r"set_lr_scale\(\{0: 0\.5\}\) is deprecated.*use optimizer\.set_lr_mult"):
        opt.set_lr_scale({0: 0.5})
    assert opt._get_lr(0) == 0.1
