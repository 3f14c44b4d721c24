"""Initializers: name dispatch, distributions, serialisation and overrides."""

from __future__ import annotations

import json
import logging

import numpy as np
import pytest

import lazynd as mx
from lazynd import initializer as init
from lazynd.errors import ArgumentValueError, DataError, ShapeError
from lazynd.testing import assert_almost_equal


def _filled(initializer, name: str, shape) -> np.ndarray:
    arr = mx.nd.zeros(shape) + 7.0
    initializer(name, arr)
    return arr.asnumpy()


@pytest.mark.parametrize(
    "name, value",
    [("fc1_bias", 0.0), ("bn_gamma", 1.0), ("bn_beta", 0.0), ("bn_moving_mean", 0.0), ("bn_moving_var", 1.0)],
)
def test_name_suffix_picks_the_fill(name, value) -> None:
    assert np.all(_filled(init.Uniform(0.5), name, (3,)) == value)


def test_unknown_suffix_raises_naming_the_parameter() -> None:
    # a ValueError, as MXNet 1.9.1's "Unknown initialization pattern for fc1_something"
    with pytest.raises(ArgumentValueError, match="'fc1_something'"):
        _filled(init.Uniform(), "fc1_something", (3,))
    with pytest.raises(ValueError):
        _filled(init.Uniform(), "fc1_something", (3,))


def test_uniform_weights_stay_within_scale_and_vary() -> None:
    values = _filled(init.Uniform(0.1), "fc_weight", (50, 40))
    assert np.abs(values).max() <= 0.1
    assert values.std() > 0.04  # U(-0.1, 0.1) has std 0.0577


def test_normal_weights_have_the_given_sigma() -> None:
    values = _filled(init.Normal(0.5), "fc_weight", (100, 100))
    assert values.std() == pytest.approx(0.5, rel=0.05)
    assert abs(values.mean()) < 0.02


def test_xavier_uniform_bound_uses_average_fan() -> None:
    values = _filled(init.Xavier(magnitude=3), "conv_weight", (16, 8, 3, 3))
    fan_in, fan_out = 8 * 9, 16 * 9
    bound = np.sqrt(3 / ((fan_in + fan_out) / 2))
    assert np.abs(values).max() <= bound
    assert np.abs(values).max() > 0.9 * bound


def test_xavier_gaussian_in_factor_std() -> None:
    values = _filled(init.Xavier("gaussian", "in", 2), "fc_weight", (200, 400))
    assert values.std() == pytest.approx(np.sqrt(2 / 400), rel=0.05)


def test_xavier_rejects_one_dimensional_weights() -> None:
    with pytest.raises(ShapeError, match="at least 2 dimensions"):
        _filled(init.Xavier(), "w_weight", (5,))


def test_msraprelu_std_uses_slope() -> None:
    values = _filled(init.MSRAPrelu("in", slope=0.0), "fc_weight", (200, 400))
    assert values.std() == pytest.approx(np.sqrt(2 / 400), rel=0.05)


def test_orthogonal_rows_are_orthonormal_times_scale() -> None:
    values = _filled(init.Orthogonal(scale=2.0), "fc_weight", (4, 10)).astype(np.float64)
    assert np.allclose(values @ values.T, 4.0 * np.eye(4), atol=1e-5)


@pytest.mark.parametrize("initializer, value", [(init.Zero(), 0.0), (init.One(), 1.0), (init.Constant(2.5), 2.5)])
def test_constant_initializers_fill_weights(initializer, value) -> None:
    assert np.all(_filled(initializer, "fc_weight", (2, 3)) == value)


def test_seed_makes_initialization_reproducible() -> None:
    mx.random.seed(11)
    a = _filled(init.Xavier(), "fc_weight", (5, 5))
    mx.random.seed(11)
    b = _filled(init.Xavier(), "fc_weight", (5, 5))
    assert np.array_equal(a, b)


def test_dumps_matches_mxnet_json() -> None:
    assert json.loads(init.Xavier(factor_type="in", magnitude=2).dumps()) == [
        "xavier",
        {"rnd_type": "uniform", "factor_type": "in", "magnitude": 2},
    ]
    assert init.MSRAPrelu().dumps() == '["msraprelu", {"factor_type": "avg", "slope": 0.25}]'
    assert init.Zero().dumps() == '["zero", {}]'


def test_create_round_trips_dumps() -> None:
    made = init.create(init.Normal(0.3).dumps())
    assert isinstance(made, init.Normal) and made.sigma == 0.3
    assert isinstance(init.create("xavier", magnitude=2), init.Xavier)


def test_create_unknown_name_raises() -> None:
    with pytest.raises(DataError, match="unknown initializer 'nope'"):
        init.create("nope")


def test_init_attribute_overrides_name_dispatch() -> None:
    desc = init.InitDesc("fc1_bias", attrs={"__init__": init.Constant(3.0).dumps()})
    assert np.all(_filled(init.Uniform(), desc, (4,)) == 3.0)


def test_load_takes_saved_values_and_strips_prefixes(tmp_path) -> None:
    path = str(tmp_path / "p.params")
    mx.nd.save(path, {"arg:fc_weight": mx.nd.ones((2, 2)) * 5})
    loader = init.Load(path, default_init=init.Constant(1.0))
    assert np.all(_filled(loader, "fc_weight", (2, 2)) == 5.0)
    assert np.all(_filled(loader, "other_weight", (2,)) == 1.0)


def test_load_shape_mismatch_raises() -> None:
    loader = init.Load({"fc_weight": mx.nd.ones((2, 2))})
    with pytest.raises(ShapeError, match=r"\(2, 2\) in the file but \(3, 2\)"):
        _filled(loader, "fc_weight", (3, 2))


def test_mixed_uses_first_matching_pattern() -> None:
    mixed = init.Mixed(["conv.*", ".*"], [init.One(), init.Zero()])
    assert np.all(_filled(mixed, "conv1_weight", (2, 2)) == 1.0)
    assert np.all(_filled(mixed, "fc1_weight", (2, 2)) == 0.0)


def test_mixed_without_a_matching_pattern_raises_a_value_error_as_mxnet() -> None:
    # MXNet 1.9.1: ValueError "Parameter name %s did not match any pattern. ..."
    with pytest.raises(ValueError, match="no pattern matches 'fc1_weight'"):
        _filled(init.Mixed(["conv.*"], [init.One()]), "fc1_weight", (2, 2))


def test_bilinear_fills_mxnets_upsampling_filter() -> None:
    weight = mx.nd.zeros((2, 1, 3, 5))
    mx.init.Bilinear()("deconv_weight", weight)
    # MXNet 1.9.1, every (n, c) slice alike; both axes use the width's factor f = 3
    row = np.array([1, 2, 3, 2, 1], np.float32) / 3
    expected = np.array([row / 3, 2 * row / 3, row], np.float32)
    for n in range(2):
        assert_almost_equal(weight.asnumpy()[n, 0], expected, rtol=1e-7, atol=0)


def test_bilinear_of_an_even_kernel_matches_mxnet() -> None:
    weight = mx.nd.zeros((1, 3, 4, 4))
    mx.init.create("bilinear")("up_weight", weight)
    tent = np.array([0.25, 0.75, 0.75, 0.25], np.float32)
    assert np.array_equal(weight.asnumpy(), np.broadcast_to(np.outer(tent, tent), (1, 3, 4, 4)))


def test_bilinear_round_trips_through_dumps_and_serves_an_init_attribute() -> None:
    assert mx.init.Bilinear().dumps() == '["bilinear", {}]'
    desc = mx.init.InitDesc("deconv_weight", attrs={"__init__": mx.init.Bilinear().dumps()})
    weight = mx.nd.zeros((1, 1, 4, 4))
    mx.init.Uniform()(desc, weight)
    assert weight.asnumpy()[0, 0, 1, 1] == np.float32(0.5625)


def test_bilinear_needs_a_four_dimensional_weight() -> None:
    with pytest.raises(ShapeError, match="'fc_weight' must have 4 dimensions"):
        mx.init.Bilinear()("fc_weight", mx.nd.zeros((4, 4)))


def test_lstm_bias_sets_the_forget_gate_through_an_init_attribute() -> None:
    arr = mx.nd.zeros((8,)) + 7.0
    desc = init.InitDesc("lstm_i2h_bias", attrs={"__init__": init.LSTMBias(forget_bias=2.0).dumps()})
    init.Uniform()(desc, arr)
    # MXNet 1.9.1: [0, 0, 2, 2, 0, 0, 0, 0]; dumps '["lstmbias", {"forget_bias": 2.0}]'
    np.testing.assert_array_equal(arr.asnumpy(), [0, 0, 2, 2, 0, 0, 0, 0])
    assert init.LSTMBias(forget_bias=0.5).dumps() == '["lstmbias", {"forget_bias": 0.5}]'
    assert init.create("lstmbias", forget_bias=3.0).forget_bias == 3.0


@pytest.mark.parametrize("value", [np.array([[1.0, 2.0], [3.0, 4.0]]), mx.nd.array([[1.0, 2.0], [3.0, 4.0]])])
def test_constant_with_an_array_value_dumps_it_as_a_list_that_creates_it_again(value) -> None:
    dumped = init.Constant(value).dumps()
    assert json.loads(dumped) == ["constant", {"value": [[1.0, 2.0], [3.0, 4.0]]}]
    assert_almost_equal(_filled(init.create(dumped), "c_weight", (2, 2)), [[1.0, 2.0], [3.0, 4.0]])


def test_initializers_of_one_class_and_arguments_are_equal() -> None:
    assert init.Xavier(magnitude=2) == init.Xavier(magnitude=2)
    assert init.Xavier(magnitude=2) != init.Xavier(magnitude=3)
    assert init.Uniform(0.1) != init.Normal(0.1)
    assert init.Constant(np.ones(2)) == init.Constant(np.ones(2))
    assert len({init.Zero(), init.Zero(), init.One()}) == 2


def test_set_verbosity_logs_each_array_it_fills(caplog) -> None:
    initializer = init.Constant(2.0)
    assert initializer.set_verbosity(True) is initializer
    with caplog.at_level(logging.INFO, logger="lazynd"):
        initializer(init.InitDesc("fc_weight"), mx.nd.zeros((2, 2)))
        initializer.set_verbosity(True, print_func=lambda arr: "custom")(init.InitDesc("fc_bias"), mx.nd.zeros((2,)))
    messages = [r.getMessage() for r in caplog.records]
    assert any("fc_weight" in m and m.endswith(": 2.0") for m in messages)
    assert any("fc_bias" in m and m.endswith(": custom") for m in messages)


def test_an_init_desc_gets_the_initializer_called_as_its_global_init() -> None:
    desc = init.InitDesc("fc_weight", attrs={"__init__": init.Zero().dumps()})
    uniform = init.Uniform()
    uniform(desc, mx.nd.zeros((2, 2)))
    assert desc.global_init is uniform


def test_xavier_refuses_a_negative_magnitude_and_leaves_an_empty_array_alone() -> None:
    with pytest.raises(DataError, match="magnitude"):
        init.Xavier(magnitude=-1)
    empty = mx.nd.zeros((0, 3))
    init.Xavier(factor_type="out")("fc_weight", empty)
    assert empty.shape == (0, 3)


def test_fused_rnn_initializer_is_mx_rnns_and_created_by_name() -> None:
    from lazynd_sym.rnn.fused import FusedRNN

    assert mx.init.FusedRNN is FusedRNN  # it lives with mx.rnn.FusedRNNCell (tests/sym/test_rnn_fused.py)
    created = init.create('["fusedrnn", {"init": null, "num_hidden": 4, "num_layers": 1, "mode": "lstm"}]')
    assert created == FusedRNN(None, 4, 1, "lstm")
    with pytest.raises(AttributeError):
        mx.init.NoSuchInitializer  # noqa: B018


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda: init.create('["uniform", {"foo": 1}]'), r"'uniform' cannot take \['foo'\]"),
        (lambda: init.create('["uniform", [0.1]]'), "must be a JSON object"),
        (lambda: init.Mixed(["("], [init.Zero()]), r"Mixed: '\(' is not a regular expression"),
        (lambda: init.Mixed([".*"], [3]), "Mixed: each initializer must be an Initializer, got 3"),
        (lambda: init.Uniform("a"), "Uniform: scale must be a number"),
        (lambda: init.Normal(None), "Normal: sigma must be a number"),
        (lambda: init.Orthogonal(scale="1"), "Orthogonal: scale must be a number"),
        (lambda: init.LSTMBias(forget_bias="1"), "LSTMBias: forget_bias must be a number"),
        (lambda: init.MSRAPrelu(slope="0.25"), "MSRAPrelu: slope must be a number"),
        (lambda: init.Xavier(magnitude="3"), "Xavier: magnitude must be a number"),
        # TypeError "object of type 'NoneType' has no len()" before
        (lambda: init.Mixed(None, [init.Zero()]), "Mixed: patterns must be a list, got None"),
        (lambda: init.Mixed([".*"], 1.5), "Mixed: initializers must be a list, got 1.5"),
        (lambda: init.Mixed(".*", [init.Zero()]), "Mixed: patterns must be a list, got '.\\*'"),
        # "expected string or bytes-like object" from re before
        (lambda: init.Mixed([".*"], [init.Zero()])(None, mx.nd.zeros(2)), "Mixed: the first argument must be the"),
        # dict()'s ValueError/TypeError before
        (lambda: init.InitDesc("fc_weight", attrs="abc"), "InitDesc 'fc_weight': attrs must be a dict"),
        (lambda: init.InitDesc("fc_weight", attrs=[1.5]), "InitDesc 'fc_weight': attrs must be a dict"),
    ],
)
def test_bad_initializer_arguments_are_refused_by_name(make, message) -> None:
    with pytest.raises(DataError, match=message):
        make()


@pytest.mark.parametrize(
    "make, expected",
    [
        # MXNet 1.9.1: ValueError("Unknown random type") / ValueError("Incorrect factor type")
        (lambda: init.Xavier(rnd_type="foo")("fc_weight", mx.nd.zeros((2, 2))), ValueError),
        (lambda: init.Xavier(factor_type="foo")("fc_weight", mx.nd.zeros((2, 2))), ValueError),
        (lambda: init.MSRAPrelu(factor_type="foo"), ValueError),
        (lambda: init.Orthogonal(rand_type="foo"), ValueError),
        (lambda: init.Xavier(magnitude=-1), ValueError),
        (lambda: init.create("nope"), ValueError),
        (lambda: init.Mixed(["a", "b"], [init.One()]), ValueError),
        (lambda: init.Mixed(["("], [init.One()]), ValueError),
        # MXNet 1.9.1: TypeError("name must be string") / TypeError("arr must be NDArray")
        (lambda: init.One()(3, mx.nd.zeros(1)), TypeError),
        (lambda: init.One()("fc_weight", np.zeros(1)), TypeError),
        (lambda: init.Uniform("0.1"), TypeError),  # MXNet's "bad operand type for unary -: 'str'"
        (lambda: init.create(3), TypeError),
        (lambda: init.Mixed([".*"], [3]), TypeError),
        (lambda: init.Load(3), TypeError),
        (lambda: init.InitDesc("fc_weight", attrs=3), TypeError),
        (lambda: init.One().set_verbosity(True, print_func=3), TypeError),
    ],
)
def test_bad_initializer_arguments_are_the_type_or_value_errors_mxnet_raises(make, expected) -> None:
    with pytest.raises(expected) as caught:
        make()
    assert isinstance(caught.value, DataError)  # and still a LazyNDError naming the argument


def test_an_initializer_fills_only_ndarrays() -> None:
    with pytest.raises(DataError, match="'fc_weight' must be filled in an NDArray, got ndarray"):
        init.Uniform()(init.InitDesc("fc_weight"), np.zeros((2, 2)))


@pytest.mark.parametrize("print_func", [5, "rms"])
def test_set_verbosity_refuses_a_print_func_that_cannot_be_called(print_func) -> None:
    with pytest.raises(DataError, match="set_verbosity: print_func must be a function of the array"):
        init.Uniform().set_verbosity(True, print_func=print_func)


def test_lstm_bias_of_a_scalar_is_a_shape_error_naming_it() -> None:
    with pytest.raises(ShapeError, match="LSTMBias: 'lstm_bias' must have the four gates' biases along its first axis"):
        desc = init.InitDesc("lstm_bias", attrs={"__init__": init.LSTMBias().dumps()})
        init.Uniform()(desc, mx.nd.zeros(()))


def test_a_plain_name_of_a_spatial_transformer_localisation_layer_starts_at_the_identity() -> None:
    # MXNet's init(name, arr) with a plain string (its MXNet 0.9 call, which users' executor loops
    # still make): stn_loc* weights are zeros and biases the identity transform [1, 0, 0, 0, 1, 0]
    np.testing.assert_array_equal(_filled(init.Uniform(0.5), "stn_loc_weight", (6, 8)), np.zeros((6, 8)))
    np.testing.assert_array_equal(_filled(init.Xavier(), "stn_loc_bias", (6,)), [1, 0, 0, 0, 1, 0])


def test_an_init_desc_of_a_localisation_layer_follows_the_suffix_as_in_mxnet() -> None:
    # MXNet 1.9.1's InitDesc path (Module, FeedForward) has no stn_loc rule: a random weight, zero bias
    weight = _filled(init.Uniform(0.5), init.InitDesc("stn_loc_weight"), (6, 8))
    assert np.abs(weight).max() <= 0.5 and np.unique(weight).size > 1
    np.testing.assert_array_equal(_filled(init.Uniform(0.5), init.InitDesc("stn_loc_bias"), (6,)), np.zeros(6))


def test_a_localisation_bias_of_another_size_is_a_shape_error_naming_it() -> None:
    with pytest.raises(ShapeError, match="stn_loc_bias.*6"):
        _filled(init.Uniform(), "stn_loc_bias", (4,))
