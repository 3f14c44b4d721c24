"""The optimizer registry, its hyperparameters and multipliers, and arguments refused by name."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from optimizer_reference import run

import lazynd as mx
from lazynd import optimizer
from lazynd.errors import ArgumentTypeError, LazyNDError


def test_unknown_optimizer_name_is_an_error():
    with pytest.raises(LazyNDError, match="unknown optimizer 'sgdd'"):
        optimizer.create("sgdd")


def test_unknown_optimizer_name_is_a_value_error_as_mxnet():
    # MXNet 1.9.1: ValueError "Cannot find optimizer sgdd"
    with pytest.raises(ValueError, match="unknown optimizer 'sgdd'"):
        optimizer.create("sgdd")


@pytest.mark.parametrize(
    ("name", "kwargs", "message"),
    [
        ("sgd", {"learning_rate": -1}, "learning_rate"),
        ("sgd", {"momentum": 1.5}, "momentum"),
        ("sgd", {"clip_gradient": -2}, "clip_gradient"),
        ("adam", {"beta1": 1.0}, "beta1"),
        ("rmsprop", {"gamma1": 2}, "gamma1"),
        ("adadelta", {"rho": -0.5}, "rho"),
        ("rmsprop", {"gamma2": 1.0}, "gamma2"),
        ("ftrl", {"lamda1": -1}, "lamda1"),
        ("dcasgd", {"momentum": 2}, "momentum"),
        ("signum", {"momentum": 1.0}, "momentum"),
        ("signum", {"wd_lh": -1}, "wd_lh"),
    ],
)
def test_bad_hyperparameters_are_errors(name, kwargs, message):
    with pytest.raises(LazyNDError, match=message):
        optimizer.create(name, **kwargs)


def test_register_adds_a_custom_optimizer():
    @optimizer.register
    class HalveOnly(optimizer.Optimizer):
        def update(self, index, weight, grad, state):
            weight[:] = weight * 0.5

    opt = optimizer.Optimizer.create_optimizer("halveonly")
    assert run(opt, np.ones(2, np.float32), [np.ones(2, np.float32)]).tolist() == [0.5, 0.5]


def test_biases_get_no_weight_decay_and_multipliers_apply_by_name():
    opt = optimizer.create(
        "sgd", learning_rate=1.0, wd=0.1, param_idx2name={0: "fc_weight", 1: "fc_bias", 2: "bn_gamma"}
    )
    opt.set_lr_mult({"fc_weight": 0.5})
    assert opt._get_wd(0) == pytest.approx(0.1)
    assert opt._get_wd(1) == 0.0
    assert opt._get_wd(2) == pytest.approx(0.1)
    assert opt._get_lr(0) == 0.5
    assert opt._get_lr(1) == 1.0


def test_multipliers_come_from_symbol_attributes():
    import lazynd_sym as sym

    net = sym.Variable("w", lr_mult=3.0, wd_mult=0.0)
    opt = optimizer.create("sgd", learning_rate=0.1, wd=0.2, sym=net, param_idx2name={0: "w"})
    assert opt._get_lr(0) == pytest.approx(0.3)
    assert opt._get_wd(0) == 0.0


def test_an_unknown_optimizer_name_is_refused():
    with pytest.raises(LazyNDError, match="unknown optimizer 'nosuch'"):
        optimizer.create("nosuch")
    with pytest.raises(AttributeError):
        optimizer.NoSuchOptimizer  # noqa: B018


def test_ccsgd_is_mxnets_deprecated_name_of_sgd():
    assert mx.optimizer.ccSGD is optimizer.SGD
    assert type(optimizer.create("ccsgd")) is optimizer.SGD


@pytest.mark.parametrize(
    "name, kwargs, message",
    [
        ("sgd", {"learning_rate": "0.1"}, "learning_rate must be a number"),
        ("sgd", {"wd": None}, "wd must be a number"),
        ("sgd", {"rescale_grad": "a"}, "rescale_grad must be a number"),
        ("sgd", {"clip_gradient": "1"}, "clip_gradient must be a number"),
        ("sgd", {"momentum": "0.9"}, "SGD: momentum must be a number"),
        ("nag", {"momentum": None}, "NAG: momentum must be a number"),
        ("adam", {"beta1": "0.9"}, "beta1 must be a number"),
        ("adam", {"begin_num_update": "3"}, "begin_num_update must be an int >= 0"),
        ("adam", {"begin_num_update": -1}, "begin_num_update must be an int >= 0"),
        ("rmsprop", {"clip_weights": "1"}, "clip_weights must be a number"),
        ("adadelta", {"rho": None}, "rho must be a number"),
        ("adagrad", {"eps": "1e-7"}, "eps must be a number"),
        ("ftrl", {"lamda1": "0.1"}, "lamda1 must be a number"),
        ("dcasgd", {"lamda": None}, "lamda must be a number"),
        ("signum", {"wd_lh": "0"}, "wd_lh must be a number"),
        ("adamax", {"beta2": None}, "beta2 must be a number"),
        ("sgd", {"lr_scheduler": 3}, "lr_scheduler must be an LRScheduler"),
        # a class is callable: each update called it and the rate was a scheduler (TypeError inside)
        (
            "sgd",
            {"lr_scheduler": mx.lr_scheduler.FactorScheduler},
            r"lr_scheduler must be an LRScheduler, got the class FactorScheduler itself; make one",
        ),
        ("sgd", {"param_idx2name": {0: 3}}, "param_idx2name must be a dict of index -> name"),
    ],
)
def test_arguments_of_the_wrong_type_are_refused_by_name(name, kwargs, message):
    with pytest.raises(LazyNDError, match=message):
        optimizer.create(name, **kwargs)


@pytest.mark.parametrize(
    "name, key",
    [
        ("sgd", "learning_rate"),
        ("sgd", "wd"),
        ("sgd", "rescale_grad"),
        ("sgd", "clip_gradient"),
        ("adam", "learning_rate"),
        ("adam", "epsilon"),
        ("rmsprop", "gamma1"),
        ("adagrad", "eps"),
    ],
)
@pytest.mark.parametrize("value", [float("nan"), float("inf")])
def test_an_argument_that_is_nan_or_infinite_is_refused_by_name(name, key, value):
    # accepted before, and the first update made every weight NaN (MXNet 1.9.1's SGD refuses them
    # at the update, naming the operator's parameter)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # and nothing else said first (a NaN rate differs from itself)
        with pytest.raises(LazyNDError, match=f"{key} must be a finite number, got {value}"):
            optimizer.create(name, **{key: value})


def test_multipliers_must_be_a_dict_of_numbers():
    opt = optimizer.create("sgd")
    with pytest.raises(LazyNDError, match="set_lr_mult: expected a dict"):
        opt.set_lr_mult([("fc_weight", 0.1)])
    with pytest.raises(LazyNDError, match=r"set_wd_mult: \['fc_weight'\] must be a number"):
        opt.set_wd_mult({"fc_weight": "0"})


@pytest.mark.parametrize("make", [lambda: optimizer.create("sgd", bogus=1), lambda: optimizer.Adam(momentum=0.9)])
def test_an_unknown_argument_is_named_with_the_optimizer(make):
    # a raw "Optimizer.__init__() got an unexpected keyword argument" before; MXNet raises a TypeError too
    with pytest.raises(
        ArgumentTypeError, match=r"(SGD: unknown argument\(s\) bogus|Adam: unknown argument\(s\) momentum)"
    ):
        make()


@pytest.mark.parametrize(
    ("name", "kwargs", "owner"),
    [
        ("nag", {"momentum": 0.9}, "NAG"),
        ("adagrad", {}, "AdaGrad"),
        ("adadelta", {}, "AdaDelta"),
        ("sgld", {}, "SGLD"),
        ("dcasgd", {"momentum": 0.9}, "DCASGD"),
        ("adamax", {}, "Adamax"),
        ("nadam", {}, "Nadam"),
    ],
)
def test_update_called_directly_refuses_what_it_would_broadcast_or_truncate(name, kwargs, owner):
    # opt.update(index, weight, grad, state) outside an Updater: the optimizers written with NDArray
    # operators stepped every row of a (2, 3) weight by one (3,) gradient, and left int32 weights as they were
    opt = optimizer.create(name, learning_rate=0.1, **kwargs)
    weight = mx.nd.ones((2, 3))
    with pytest.raises(LazyNDError, match=rf"^{owner}: gradient of shape \(3,\) for a weight of shape \(2, 3\)"):
        opt.update(0, weight, mx.nd.ones((3,)), opt.create_state(0, weight))
    np.testing.assert_array_equal(weight.asnumpy(), np.ones((2, 3)))
    integer = mx.nd.ones((3,), dtype="int32")
    with pytest.raises(LazyNDError, match=rf"^{owner}: the weight has dtype int32; optimizers update float weights"):
        opt.update(0, integer, mx.nd.ones((3,), dtype="int32"), opt.create_state(0, integer))


@pytest.mark.parametrize(("name", "owner"), [("ftrl", "Ftrl"), ("ftml", "FTML")])
def test_a_learning_rate_of_zero_for_ftrl_and_ftml_is_refused_naming_the_parameter(name, owner):
    # they divide by the learning rate: MXNet 1.9.1 turns the weight of a parameter with lr_mult 0 to NaN
    opt = optimizer.create(name, learning_rate=0.1, param_idx2name={0: "conv1_weight", 1: "fc_weight"})
    opt.set_lr_mult({"conv1_weight": 0.0})
    updater = optimizer.get_updater(opt)
    fc = mx.nd.ones((3,))
    updater(1, mx.nd.ones((3,)), fc)
    assert np.all(np.isfinite(fc.asnumpy())) and not np.allclose(fc.asnumpy(), 1.0)
    message = rf"^{owner}: the learning rate of parameter 'conv1_weight' is 0.0 \(an lr_mult of 0.*fixed_param_names"
    with pytest.raises(LazyNDError, match=message):
        updater(0, mx.nd.ones((3,)), mx.nd.ones((3,)))


@pytest.mark.parametrize("name", ["sgd", "adam", "rmsprop", "nag"])
@pytest.mark.parametrize("index", [{"k": 1}, np.ones(2)], ids=["dict", "array"])
def test_an_index_that_is_no_int_or_name_is_refused_by_name(name, index):
    # "unhashable type" from the update counts before
    opt = optimizer.create(name)
    weight, grad = mx.nd.ones((2, 3)), mx.nd.ones((2, 3))
    with pytest.raises(LazyNDError, match=r"\.update: a parameter's index must be an int or a name, got "):
        opt.update(index, weight, grad, opt.create_state(0, weight))


@pytest.mark.parametrize("which", ["weight", "grad", "state"])
def test_sgds_list_form_refuses_arguments_that_are_not_lists_of_as_many(which):
    # "'NoneType' object is not iterable" (or a silently shorter update) before
    opt = optimizer.create("sgd", momentum=0.9)
    given = {"weight": [mx.nd.ones(2)] * 2, "grad": [mx.nd.ones(2)] * 2, "state": [mx.nd.zeros(2)] * 2}
    given[which] = given[which][0] if which != "state" else None
    with pytest.raises(
        LazyNDError, match=f"SGD.update: a list of 2 indices updates lists of as many .*; {which} is not"
    ):
        opt.update([0, 1], given["weight"], given["grad"], given["state"])
