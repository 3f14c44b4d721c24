"""linalg_extractdiag / makediag / extracttrian / maketrian: MXNet 1.9.1's layouts (literals from it),
upper triangles and offsets included, and the shapes it refuses."""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx
from lazynd.errors import ShapeError

A = np.arange(1, 10, dtype=np.float64).reshape(3, 3)


def _a() -> mx.nd.NDArray:
    return mx.nd.array(A, dtype="float64")


def _v(values) -> mx.nd.NDArray:
    return mx.nd.array(values, dtype="float64")


def test_diagonals_above_and_below():
    assert mx.nd.linalg_extractdiag(_a(), offset=1).asnumpy().tolist() == [2.0, 6.0]
    assert mx.nd.linalg_extractdiag(_a(), offset=-2).asnumpy().tolist() == [7.0]
    assert mx.nd.linalg_makediag(_v([1, 2]), offset=1).asnumpy().tolist() == [[0, 1, 0], [0, 0, 2], [0, 0, 0]]


@pytest.mark.parametrize(
    "params,expected",
    [
        ({}, [1, 4, 5, 7, 8, 9]),
        ({"offset": 1}, [2, 3, 6]),
        ({"offset": -1, "lower": False}, [4, 7, 8]),
        ({"lower": False}, [1, 2, 5, 3, 6, 9]),  # an upper triangle column by column
    ],
)
def test_extracttrian_order_is_mxnets(params, expected):
    assert mx.nd.linalg_extracttrian(_a(), **params).asnumpy().tolist() == expected


@pytest.mark.parametrize(
    "values,params,expected",
    [
        ([1, 2, 3, 4, 5, 6], {}, [[1, 0, 0], [2, 3, 0], [4, 5, 6]]),
        ([1, 2, 3], {"offset": 1}, [[0, 1, 2], [0, 0, 3], [0, 0, 0]]),
        ([1, 2, 3], {"lower": False}, [[1, 2], [0, 3]]),
        ([1, 2, 3], {"offset": -1, "lower": False}, [[0, 0, 0], [1, 0, 0], [2, 3, 0]]),
    ],
)
def test_maketrian_inverts_extracttrian(values, params, expected):
    made = mx.nd.linalg_maketrian(_v(values), **params)
    assert made.asnumpy().tolist() == expected
    assert mx.nd.linalg_extracttrian(made, **params).asnumpy().tolist() == values


@pytest.mark.parametrize(
    "call,message",
    [
        (lambda: mx.nd.linalg_extractdiag(mx.nd.ones((2, 3))), "linalg_extractdiag: input 'A' must hold square"),
        (lambda: mx.nd.linalg_extracttrian(_a(), offset=3), "offset=3 leaves nothing of a 3 x 3 matrix"),
        (lambda: mx.nd.linalg_maketrian(mx.nd.ones((4,))), "has 4 entries, not a triangle's"),
    ],
    ids=["not-square", "offset", "not-a-triangle"],
)
def test_bad_shapes_fail_at_the_call_naming_the_operator(call, message):
    with pytest.raises(ShapeError, match=message):
        call()
