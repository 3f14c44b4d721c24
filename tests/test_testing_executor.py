"""mx.test_utils.numeric_grad: MXNet 1.x's finite differences over a bound executor."""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx
from lazynd.errors import LazyNDError

LOCATION = {
    "x": np.array([[1.0, 2.0], [3.0, 5.0], [0.0, -1.0]]),
    "w": np.array([[1.0, -2.0], [0.5, 3.0], [2.0, 1.0]]),
    "bn_gamma": np.array([1.5, 0.5]),
    "bn_beta": np.array([0.1, 0.2]),
}
AUX = {"bn_moving_mean": np.zeros(2), "bn_moving_var": np.ones(2)}


def _batchnorm_executor():
    x, w = mx.sym.var("x"), mx.sym.var("w")
    y = mx.sym.BatchNorm(x, fix_gamma=False, name="bn") * w
    return y.simple_bind(mx.cpu(), type_dict={"x": np.float64, "w": np.float64}, x=(3, 2), w=(3, 2))


def test_numeric_grad_of_a_product_is_the_other_factor():
    a, b = mx.sym.var("a"), mx.sym.var("b")
    exe = (a * b).simple_bind(mx.cpu(), a=(2, 3), b=(2, 3))
    rng = np.random.default_rng(0)
    location = {"a": rng.normal(size=(2, 3)), "b": rng.normal(size=(2, 3))}
    kept = {k: v.copy() for k, v in location.items()}
    grads = mx.test_utils.numeric_grad(exe, location, eps=1e-2)
    assert grads["a"].dtype == np.float32 and grads["a"].shape == (2, 3)
    np.testing.assert_allclose(grads["a"], location["b"], rtol=1e-2, atol=1e-3)
    np.testing.assert_allclose(grads["b"], location["a"], rtol=1e-2, atol=1e-3)
    # the caller's arrays are untouched and the executor ends at the location
    np.testing.assert_array_equal(location["a"], kept["a"])
    np.testing.assert_allclose(exe.arg_dict["a"].asnumpy(), location["a"], rtol=1e-6)


def test_numeric_grad_of_batchnorm_in_training_matches_mxnet():
    grads = mx.test_utils.numeric_grad(_batchnorm_executor(), dict(LOCATION), AUX, eps=1e-6, dtype=np.float64)
    # MXNet 1.9.1's numeric_grad on the same executor and values, rounded to 5 digits
    expected = {
        "x": [[-0.38633, -0.54429], [0.12822, 0.27218], [0.25811, 0.27211]],
        "w": [[-0.30076, 0.2], [2.10382, 0.81232], [-1.50305, -0.41232]],
        "bn_gamma": [-1.73664, 2.44929],
        "bn_beta": [3.5, 2.0],
    }
    for name, values in expected.items():
        np.testing.assert_allclose(grads[name], values, atol=2e-5, err_msg=name)


def test_numeric_grad_use_forward_train_false_uses_the_moving_statistics():
    grads = mx.test_utils.numeric_grad(
        _batchnorm_executor(), dict(LOCATION), AUX, eps=1e-6, dtype=np.float64, use_forward_train=False
    )
    # MXNet 1.9.1: with the moving mean 0 and variance 1, d/dx = gamma * w / sqrt(1 + 1e-3)
    np.testing.assert_allclose(grads["x"], [[1.49925, -0.9995], [0.74963, 1.49925], [2.9985, 0.49975]], atol=2e-5)


def test_numeric_grad_takes_the_location_as_a_list_in_argument_order():
    a = mx.sym.var("a")
    exe = mx.sym.square(a).simple_bind(mx.cpu(), type_dict={"a": np.float64}, a=(3,))
    grads = mx.test_utils.numeric_grad(exe, [np.array([1.0, -2.0, 0.5])], dtype=np.float64)
    np.testing.assert_allclose(grads["a"], [2.0, -4.0, 1.0], rtol=1e-6)


def test_numeric_grad_refuses_bad_dtypes_and_locations():
    exe = mx.sym.square(mx.sym.var("a")).simple_bind(mx.cpu(), a=(3,))
    with pytest.raises(LazyNDError, match="dtype must be float16, float32 or float64, got <class 'numpy.int32'>"):
        mx.test_utils.numeric_grad(exe, {"a": np.ones(3)}, dtype=np.int32)
    with pytest.raises(LazyNDError, match=r"location names \['b'\], which the executor lacks"):
        mx.test_utils.numeric_grad(exe, {"b": np.ones(3)})
    with pytest.raises(LazyNDError, match="location has 2 arrays, the executor takes 1"):
        mx.test_utils.numeric_grad(exe, [np.ones(3), np.ones(3)])
