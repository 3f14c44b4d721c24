"""mx.test_utils as MXNet 0.9 programs call it."""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx
import lazynd_sym as sym
from lazynd import test_utils


def _net():
    data = sym.Variable("data")
    fc = sym.FullyConnected(data, num_hidden=4, name="fc")
    bn = sym.BatchNorm(fc, name="bn")
    return sym.Activation(bn, act_type="tanh", name="act")


def test_check_consistency_across_dtypes_returns_the_ground_truth(ctx):
    specs = [
        {"ctx": mx.cpu(0), "data": (3, 5), "type_dict": {"data": np.float64}},
        {"ctx": ctx, "data": (3, 5), "type_dict": {"data": np.float32}},
    ]
    truth = test_utils.check_consistency(_net(), specs)
    assert set(truth) >= {"act_output", "data", "fc_weight", "fc_bias", "bn_gamma", "bn_beta"}
    assert truth["act_output"].dtype == np.float64  # the most precise executor is the truth


def test_check_consistency_finds_a_disagreement():
    x = sym.Variable("x")
    specs = [{"ctx": mx.cpu(0), "x": (4,)}, {"ctx": mx.cpu(0), "x": (4,)}]
    # different symbols per entry: one of them is wrong
    with pytest.raises(AssertionError, match="test forward"):
        test_utils.check_consistency([x * 2, x * 3], specs)
    test_utils.check_consistency([x * 2, x * 3], specs, raise_on_err=False)  # reported, not raised


def test_check_consistency_with_given_arguments_and_tolerance():
    x = sym.Variable("x")
    specs = [{"ctx": mx.cpu(0), "x": (2,)}, {"ctx": mx.cpu(0), "x": (2,)}]
    truth = test_utils.check_consistency(sym.exp(x), specs, arg_params={"x": np.zeros(2)}, tol=1e-6)
    np.testing.assert_allclose(truth["x"], [1, 1])  # exp's gradient with exp(x) as head gradient
    with pytest.raises(ValueError, match="at least two"):
        test_utils.check_consistency(x, specs[:1])


def test_check_consistency_takes_mxnet_1x_rtol_atol_and_equal_nan():
    x = sym.Variable("x")
    specs = [{"ctx": mx.cpu(0), "x": (3,)}, {"ctx": mx.cpu(0), "x": (3,)}]
    # log of a negative argument is NaN in both executors: equal only with equal_nan
    args = {"x": np.array([-1.0, 1.0, 2.0])}
    test_utils.check_consistency(sym.log(x), specs, arg_params=args, grad_req="null", equal_nan=True)
    with pytest.raises(AssertionError, match="test forward"):
        test_utils.check_consistency(sym.log(x), specs, arg_params=args, grad_req="null")
    # rtol/atol replace the dtype's tolerance
    test_utils.check_consistency([x * 2, x * 2.001], specs, arg_params={"x": np.ones(3)}, rtol=1e-2, atol=1e-2)
    with pytest.raises(AssertionError, match="test forward"):
        test_utils.check_consistency([x * 2, x * 2.001], specs, arg_params={"x": np.ones(3)}, rtol=1e-5, atol=1e-5)


def test_check_consistency_with_an_operator_name_is_the_project_helper():
    results = test_utils.check_consistency("exp", [np.ones((2,), np.float32)])
    np.testing.assert_allclose(results[0][0], np.exp(np.ones(2)), rtol=1e-6)


def test_check_numeric_gradient_takes_check_eps():
    x = sym.Variable("x")
    test_utils.check_numeric_gradient(sym.square(x), [np.array([1.0, 2.0])], numeric_eps=1e-3, check_eps=1e-2)
    with pytest.raises(AssertionError):
        # a wrong gradient fails at any tolerance
        test_utils.check_numeric_gradient(sym.BlockGrad(x) * x, [np.array([1.0, 2.0])], check_eps=1e-2)


def test_small_helpers():
    assert test_utils.default_numerical_threshold() == 1e-6
    assert test_utils.reldiff(np.array([1.0, 2.0]), np.array([1.0, 2.0])) == 0
    assert test_utils.almost_equal_ignore_nan(np.array([np.nan, 1.0]), np.array([3.0, 1.0]))
    assert not test_utils.almost_equal_ignore_nan(np.array([np.nan, 1.0]), np.array([3.0, 2.0]))
    assert mx.test_utils is test_utils


def test_check_speed_times_a_training_pass_or_a_forward() -> None:
    import lazynd as mx

    fc = mx.sym.FullyConnected(mx.sym.var("data"), num_hidden=8, name="fc")
    assert mx.test_utils.check_speed(fc, data=(4, 16), N=3) > 0
    location = [np.ones((4, 16)), np.ones((8, 16)), np.zeros(8)]  # list_arguments() order
    assert mx.test_utils.check_speed(fc, location=location, typ="forward", N=2) > 0
    with pytest.raises(ValueError, match="typ must be"):
        mx.test_utils.check_speed(fc, data=(4, 16), typ="backward")


def test_same_symbol_structure_compares_operators_not_names():
    fc = sym.FullyConnected(sym.Variable("x"), num_hidden=2)
    assert test_utils.same_symbol_structure(fc, sym.FullyConnected(sym.Variable("y"), num_hidden=3, name="q"))
    assert not test_utils.same_symbol_structure(fc, sym.Activation(sym.Variable("x"), act_type="relu"))
    # MXNet 1.9.1 says True here (it compares the shorter graph only)
    assert not test_utils.same_symbol_structure(fc, sym.relu(fc))
