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
