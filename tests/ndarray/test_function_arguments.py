"""How ``mx.nd.<op>`` functions refuse arguments they cannot sort into inputs and parameters."""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: mx.nd.relu(np.ones(3)), "relu: input 'data' must be an NDArray, got numpy.ndarray"),
        # what MXNet's multi-task example's metric did with the NumPy predictions it was handed
        (lambda: mx.nd.argmax_channel(np.ones((2, 3))), "argmax_channel: input 'data' must be an NDArray"),
        (lambda: mx.nd.broadcast_add(mx.nd.ones(2), np.ones(2)), "broadcast_add: input 'rhs' must be an NDArray"),
    ],
)
def test_a_numpy_array_given_for_an_input_is_refused_by_the_inputs_name(call, message) -> None:
    with pytest.raises(mx.LazyNDError, match=message):
        call()


def test_too_many_plain_values_are_still_counted() -> None:
    with pytest.raises(mx.LazyNDError, match=r"relu: too many positional arguments \(2\)"):
        mx.nd.relu(mx.nd.ones(2), 3)


def test_an_array_past_the_inputs_and_parameters_is_out_as_in_mxnet() -> None:
    # MXNet's generated signature is ``tanh(data, out=None, name=None)``: nd.tanh(x, y) writes into y
    x, y = mx.nd.array([0.5, 1.0]), mx.nd.zeros(2)
    assert mx.nd.tanh(x, y) is y
    np.testing.assert_allclose(y.asnumpy(), np.tanh([0.5, 1.0]), rtol=1e-6)
    # after the parameters: clip(data, a_min, a_max, out, name)
    z = mx.nd.zeros(2)
    assert mx.nd.clip(x, 0.0, 0.75, z, "clipped") is z
    np.testing.assert_allclose(z.asnumpy(), [0.5, 0.75])
    assert x.exp(z) is z  # the method form reads the same positions
    np.testing.assert_allclose(z.asnumpy(), np.exp([0.5, 1.0]), rtol=1e-6)


def test_an_out_given_twice_or_of_the_wrong_shape_is_refused() -> None:
    x = mx.nd.ones(2)
    with pytest.raises(mx.LazyNDError, match=r"tanh: too many positional arguments \(2\)"):
        mx.nd.tanh(x, mx.nd.zeros(2), out=mx.nd.zeros(2))
    with pytest.raises(mx.LazyNDError, match=r"tanh: too many positional arguments \(3\)"):
        mx.nd.tanh(x, mx.nd.zeros(2), mx.nd.zeros(2))
    with pytest.raises(mx.LazyNDError, match=r"tanh: out\[0\] has shape \(3,\), expected \(2,\)"):
        mx.nd.tanh(x, mx.nd.zeros(3))
