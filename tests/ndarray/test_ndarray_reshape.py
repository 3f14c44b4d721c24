"""``NDArray.reshape`` and the ``Reshape`` operator follow one rule for MXNet's special codes.

A plain shape (``-1`` included) is a view reshaped by NumPy; MXNet's codes and the
``reverse`` keyword go to the operator.  Both routes must give the operator's shape and values.
"""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx

SPECS = [
    (4, 6),
    (-1,),
    (2, -1),
    (-1, 4),
    (0, -1),
    (0, 0, -1),
    (-2,),
    (0, -2),
    (-3, 4),
    (0, -3),
    (-3, -1),
    (-4, 1, 2, -2),
    (-4, -1, 1, 3, 4),
    (0, -4, 3, 1, 4),
    (1, 0, -1),
]


@pytest.mark.parametrize("spec", SPECS, ids=str)
def test_method_and_operator_agree_on_every_code(spec: tuple[int, ...]) -> None:
    values = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    x = mx.nd.array(values)
    by_method, by_operator = x.reshape(spec), mx.nd.Reshape(x, shape=spec)
    assert by_method.shape == by_operator.shape
    np.testing.assert_array_equal(by_method.asnumpy(), by_operator.asnumpy())


@pytest.mark.parametrize("spec", [(-1, 0), (0, -1), (-3, 0), (-2, 0)], ids=str)
def test_method_and_operator_agree_with_reverse(spec: tuple[int, ...]) -> None:
    x = mx.nd.array(np.arange(24, dtype=np.float32).reshape(2, 3, 4))
    by_method, by_operator = x.reshape(spec, reverse=True), mx.nd.Reshape(x, shape=spec, reverse=True)
    assert by_method.shape == by_operator.shape
    np.testing.assert_array_equal(by_method.asnumpy(), by_operator.asnumpy())


def test_the_shape_keyword_is_the_positional_shape() -> None:
    x = mx.nd.ones((2, 3, 4))
    assert x.reshape(shape=(0, -1)).shape == x.reshape((0, -1)).shape == (2, 12)
    assert x.reshape(shape=(4, 6)).shape == (4, 6)


def test_a_shape_given_twice_is_refused() -> None:
    # MXNet 1.9.1 silently takes the positional one; lazynd took the keyword
    with pytest.raises(mx.OperatorError, match=r"reshape: the shape is given twice, as \(4, 6\) and as shape=\(24,\)"):
        mx.nd.ones((2, 3, 4)).reshape((4, 6), shape=(24,))


@pytest.mark.parametrize("kwargs", [{}, {"reverse": False}])
def test_a_negative_dim_other_than_the_codes_is_refused(kwargs) -> None:
    # NumPy reads any negative dim as -1: (-5, 24) gave shape (1, 24); MXNet refuses it
    with pytest.raises(mx.ShapeError, match=r"reshape: invalid dim -5 in shape \(-5, 24\)"):
        mx.nd.ones((2, 3, 4)).reshape((-5, 24), **kwargs)


@pytest.mark.parametrize(
    ("spec", "kwargs", "shape"),
    [
        ((0, -1), {}, (2, 12)),
        ((-3, 0), {}, (6, 4)),
        ((6, -1), {"reverse": True}, (6, 4)),
        ((-4, 1, 2, -2), {}, (1, 2, 3, 4)),
    ],
)
def test_a_reshape_with_mxnet_s_codes_is_a_view_sharing_memory(spec, kwargs, shape) -> None:
    # MXNet 1.9.1: writing into a.reshape((0, -1)) writes into a
    a = mx.nd.zeros((2, 3, 4))
    b = a.reshape(spec, **kwargs)
    assert b.shape == shape
    b[:] = 1
    assert a.sum().asscalar() == 24.0
