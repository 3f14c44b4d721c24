"""NDArray indexing, views and reshape, and the values an assignment can store."""

from __future__ import annotations

import decimal
import math

import numpy as np
import pytest

import lazynd as mx


def test_first_axis_index_and_slice_are_views_sharing_memory() -> None:
    a = mx.nd.zeros((3, 2))
    row = a[1]
    row[:] = 5
    part = a[0:1]
    part[:] = mx.nd.array([[1, 2]])
    np.testing.assert_array_equal(a.asnumpy(), [[1, 2], [5, 5], [0, 0]])
    assert a[1].shape == (2,) and mx.nd.arange(4)[2].shape == (1,)


def test_general_getitem_and_setitem() -> None:
    x = np.arange(24, dtype=np.float32).reshape(4, 6)
    a = mx.nd.array(x)
    np.testing.assert_array_equal(a[::2, -3:].asnumpy(), x[::2, -3:])
    np.testing.assert_array_equal(a[[0, 3]].asnumpy(), x[[0, 3]])
    np.testing.assert_array_equal(a[mx.nd.array([1, 2], dtype="int32")].asnumpy(), x[[1, 2]])
    a[:, 1] = 0
    x[:, 1] = 0
    a[[0, 2], 0] = mx.nd.array([-1, -2])
    x[[0, 2], 0] = [-1, -2]
    a[3] = np.arange(6)
    x[3] = np.arange(6)
    np.testing.assert_array_equal(a.asnumpy(), x)
    with pytest.raises(mx.LazyNDError, match="out of bounds"):
        a[10]
    with pytest.raises(mx.ShapeError, match=r"\(5,\)"):
        a[0] = np.ones(5)


def test_an_empty_key_of_a_0d_array_is_that_array() -> None:
    # ``x[()]`` of a 0-d array is 0-d in MXNet 1.9.1 (it had a new axis of length 1 here);
    # an element of an n-D array keeps its (1,) shape
    scalar = mx.nd.array(np.float32(3))
    assert scalar[()].shape == () and scalar[()].asnumpy() == 3
    assert mx.nd.ones((2, 3))[0, 1].shape == (1,)


def test_reshape_is_a_view_and_checks_size() -> None:
    a = mx.nd.zeros((2, 3))
    r = a.reshape((3, -1))
    r[:] = 7
    assert r.shape == (3, 2) and a.asnumpy().sum() == 42
    with pytest.raises(mx.ShapeError, match=r"\(2, 3\)"):
        a.reshape((4, 4))


def test_reshape_forms_and_a_strided_array_that_cannot_give_a_view() -> None:
    a = mx.nd.array(np.arange(24, dtype=np.float32).reshape(4, 6))
    assert a.reshape(2, 12).shape == a.reshape([2, 12]).shape == a.reshape(shape=(2, 12)).shape == (2, 12)
    assert a.reshape((0, -1)).shape == (4, 6)  # MXNet's special codes go through the Reshape operator
    # an array over strided memory (as from DLPack): a copy, with the right values, is all there is
    strided = mx.nd.from_dlpack(np.arange(24, dtype=np.float32).reshape(4, 6)[:, ::2])
    flat = strided.reshape(-1)
    np.testing.assert_array_equal(flat.asnumpy(), np.arange(24, dtype=np.float32).reshape(4, 6)[:, ::2].reshape(-1))
    with pytest.raises(mx.ShapeError, match=r"\(4, 3\)"):
        strided.reshape(5, 5)


@pytest.mark.parametrize(
    ("assign", "expected"),
    [
        (lambda a: a.__setitem__(0, 300), [44, 0, 0, 0]),
        (lambda a: a.__setitem__(slice(None), -1), [255, 255, 255, 255]),
        (lambda a: a.__setitem__(1, -2.7), [0, 254, 0, 0]),
        (lambda a: a.__setitem__((slice(1, 3),), [300, -1]), [0, 44, 255, 0]),
        (lambda a: a.__setitem__(slice(None), [300, -1, 2.7, -2.7]), [44, 255, 2, 254]),
    ],
)
def test_integer_assignment_wraps_out_of_range_values_like_mxnet(assign, expected: list[int]) -> None:
    # MXNet casts as C does (toward zero, then wrapped); NumPy 2 refuses such Python integers
    a = mx.nd.zeros((4,), dtype="uint8")
    assign(a)
    assert a.asnumpy().tolist() == expected


@pytest.mark.parametrize(
    "value", [None, "abc", [[1, 2], [3]], object(), float("nan"), [None, 1, 2], np.array([None, 1, 2], dtype=object)]
)
def test_assigning_what_no_element_can_hold_is_refused_at_the_call(value) -> None:
    # never a silent NaN (None), nor an internal error at a later wait
    a = mx.nd.zeros((2, 3), dtype="int32")
    with pytest.raises(mx.LazyNDError, match="__setitem__"):
        a[0] = value
    assert a.asnumpy().tolist() == [[0, 0, 0], [0, 0, 0]]


@pytest.mark.parametrize(
    ("shape", "key"),
    [
        ((3,), (1, Ellipsis)),
        ((3,), (Ellipsis, 1)),
        ((2, 3), (1, Ellipsis, 2)),
        ((2, 3), (Ellipsis, 1, 2)),
        ((2, 3), (1, 2)),
    ],
)
def test_a_single_element_through_an_ellipsis_is_a_one_element_view(shape: tuple, key: tuple) -> None:
    # as MXNet: shape (1,), sharing memory; an Ellipsis anywhere in the key included
    host = np.arange(6, dtype=np.float32)[: math.prod(shape)].reshape(shape)
    a = mx.nd.array(host)
    element = a[key]
    assert element.shape == (1,)
    assert element.asnumpy()[0] == host[key]
    element[:] = 99
    host[key] = 99
    np.testing.assert_array_equal(a.asnumpy(), host)


def test_numbers_held_as_objects_are_assigned_as_numbers() -> None:
    a = mx.nd.zeros((2, 3), dtype="int32")
    a[0] = np.array([1, 2, 3], dtype=object)
    a[1] = [decimal.Decimal("4.5"), 5, 6.0]
    assert a.asnumpy().tolist() == [[1, 2, 3], [4, 5, 6]]


def test_integers_held_as_objects_are_assigned_exactly_past_float64s_53_bits() -> None:
    # the rule nd.array takes for object arrays (through int64 when all are integers); float()
    # of each made 2**60 + 1 into 2**60
    a = mx.nd.zeros((2,), dtype="int64")
    a[:] = np.array([2**60 + 1, -(2**60) - 1], dtype=object)
    assert a.asnumpy().tolist() == [2**60 + 1, -(2**60) - 1]
