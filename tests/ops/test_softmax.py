"""softmax, log_softmax and SoftmaxActivation: forward vs NumPy, numerical gradients, stability."""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx
from lazynd.errors import OperatorError
from lazynd.testing import assert_almost_equal, check_forward, check_gradient


def np_softmax(x: np.ndarray, axis: int = -1, temperature: float = 1.0) -> np.ndarray:
    z = x / temperature
    e = np.exp(z - z.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(7)


@pytest.mark.parametrize("axis", [-1, 0, 1])
def test_softmax_matches_numpy_on_each_axis(ctx, rng, axis):
    x = rng.standard_normal((3, 4, 5)).astype(np.float32)
    check_forward("softmax", [x], {"axis": axis}, lambda a: np_softmax(a, axis), ctx=ctx, rtol=1e-5, atol=1e-6)


def test_softmax_temperature_divides_the_input(ctx, rng):
    x = rng.standard_normal((4, 6)).astype(np.float32)
    check_forward("softmax", [x], {"temperature": 2.5}, lambda a: np_softmax(a, -1, 2.5), ctx=ctx, rtol=1e-5, atol=1e-6)


def test_log_softmax_matches_numpy(ctx, rng):
    x = rng.standard_normal((3, 7)).astype(np.float64)
    check_forward("log_softmax", [x], {"axis": 1}, lambda a: np.log(np_softmax(a, 1)), ctx=ctx, rtol=1e-10, atol=1e-12)


def test_softmax_is_stable_for_huge_inputs(ctx):
    x = mx.nd.array([[1000.0, 1000.0, -1000.0], [-1e30, 0.0, 1e30]], ctx=ctx)
    y = mx.nd.softmax(x).asnumpy()
    assert np.isfinite(y).all()
    assert_almost_equal(y, [[0.5, 0.5, 0.0], [0.0, 0.0, 1.0]], atol=1e-7)
    assert np.isfinite(mx.nd.log_softmax(x).asnumpy()).all()


@pytest.mark.parametrize("axis", [-1, 0])
def test_softmax_numerical_gradient(ctx, rng, axis):
    check_gradient("softmax", [rng.standard_normal((3, 4))], {"axis": axis}, ctx=ctx)


def test_softmax_numerical_gradient_with_temperature(ctx, rng):
    check_gradient("softmax", [rng.standard_normal((2, 5))], {"temperature": 0.7}, ctx=ctx)


@pytest.mark.parametrize("axis", [-1, 1])
def test_log_softmax_numerical_gradient(ctx, rng, axis):
    check_gradient("log_softmax", [rng.standard_normal((2, 3, 4))], {"axis": axis}, ctx=ctx)


def test_softmax_activation_instance_mode_normalises_all_but_batch(ctx, rng):
    x = rng.standard_normal((2, 3, 4)).astype(np.float32)
    ref = lambda a: np_softmax(a.reshape(2, -1), 1).reshape(a.shape)  # noqa: E731
    check_forward("SoftmaxActivation", [x], {"mode": "instance"}, ref, ctx=ctx, rtol=1e-5, atol=1e-6)


def test_softmax_activation_channel_mode_normalises_axis_1(ctx, rng):
    x = rng.standard_normal((2, 3, 4)).astype(np.float32)
    check_forward(
        "SoftmaxActivation", [x], {"mode": "channel"}, lambda a: np_softmax(a, 1), ctx=ctx, rtol=1e-5, atol=1e-6
    )


@pytest.mark.parametrize("mode", ["instance", "channel"])
def test_softmax_activation_numerical_gradient(ctx, rng, mode):
    check_gradient("SoftmaxActivation", [rng.standard_normal((2, 3, 2))], {"mode": mode}, ctx=ctx)


def test_softmax_axis_out_of_range_is_an_error():
    with pytest.raises(OperatorError, match="axis 2 is out of range"):
        mx.nd.softmax(mx.nd.ones((2, 3)), axis=2)


def test_softmax_activation_rejects_an_unknown_mode():
    with pytest.raises(OperatorError, match="mode"):
        mx.nd.SoftmaxActivation(mx.nd.ones((2, 3)), mode="pixel")


def test_softmax_rejects_a_non_positive_temperature():
    with pytest.raises(OperatorError, match="temperature"):
        mx.nd.softmax(mx.nd.ones((2, 3)), temperature=0)


def test_softmax_activation_channel_mode_needs_two_dimensions():
    with pytest.raises(OperatorError, match="at least 2 dimensions"):
        mx.nd.SoftmaxActivation(mx.nd.ones((3,)), mode="channel")
