"""Random samplers: parameters MXNet refuses are refused at the call."""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx
from lazynd.errors import OperatorError


@pytest.mark.parametrize(
    "call,message",
    [
        (lambda: mx.nd.uniform(low=2, high=1, shape=(2,)), r"uniform: high \(1.0\) must be >= low \(2.0\)"),
        (lambda: mx.nd.normal(loc=0, scale=-1, shape=(2,)), "normal: scale must be >= 0, got -1.0"),
        (lambda: mx.nd.random_randint(low=3, high=3, shape=(2,)), r"randint: high \(3\) must be > low \(3\)"),
    ],
    ids=["uniform", "normal", "randint"],
)
def test_bad_sampler_parameters_fail_at_the_call(call, message):
    # MXNet refuses these too; lazynd raised them only at the next wait, as an EngineError
    with pytest.raises(OperatorError, match=message):
        call()


def test_sampler_shapes_and_dtypes_follow_their_parameters():
    assert mx.nd.uniform(shape=(2, 3), dtype="float64").dtype == np.float64
    assert mx.nd.normal(shape=5).shape == (5,)
    assert mx.nd.random_randint(low=0, high=5, shape=(2,)).dtype == np.int32
