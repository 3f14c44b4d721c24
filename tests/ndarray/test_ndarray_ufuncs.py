"""MXNet's function forms of the binary operators (nd.add, nd.greater...) and nd._internal."""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx
from lazynd.errors import OperatorError

_CASES = [
    ("add", np.add),
    ("subtract", np.subtract),
    ("multiply", np.multiply),
    ("divide", np.divide),
    ("true_divide", np.divide),
    ("power", np.power),
    ("maximum", np.maximum),
    ("minimum", np.minimum),
    ("equal", np.equal),
    ("not_equal", np.not_equal),
    ("greater", np.greater),
    ("greater_equal", np.greater_equal),
    ("lesser", np.less),
    ("lesser_equal", np.less_equal),
    ("logical_and", np.logical_and),
    ("logical_or", np.logical_or),
    ("logical_xor", np.logical_xor),
]


@pytest.mark.parametrize(("name", "reference"), _CASES)
def test_arrays_broadcast_and_numbers_on_either_side(ctx, name, reference):
    function = getattr(mx.nd, name)
    a = np.array([[1.0, 2.0, 3.0], [4.0, 2.0, 0.5]], dtype=np.float32)
    b = np.array([[2.0], [0.5]], dtype=np.float32)
    x, y = mx.nd.array(a, ctx=ctx), mx.nd.array(b, ctx=ctx)
    expected = reference(a, b).astype(np.float32)
    np.testing.assert_allclose(function(x, y).asnumpy(), expected, rtol=1e-6)
    np.testing.assert_allclose(function(x, x).asnumpy(), reference(a, a).astype(np.float32), rtol=1e-6)
    np.testing.assert_allclose(function(x, 2.0).asnumpy(), reference(a, 2.0).astype(np.float32), rtol=1e-6)
    np.testing.assert_allclose(function(2.0, x).asnumpy(), reference(2.0, a).astype(np.float32), rtol=1e-6)


def test_two_numbers_give_the_python_result():
    assert mx.nd.add(2, 3) == 5
    assert mx.nd.greater(3, 2) == 1 and mx.nd.equal(1, 2) == 0


def test_a_bool_number_counts_as_0_or_1_on_either_side():
    # MXNet 1.9.1: nd.add(x, True) is x + 1 (refused before: the scalar parameter takes no bool)
    x = mx.nd.array([1, 2, 3], dtype="int32")
    assert mx.nd.add(x, True).asnumpy().tolist() == [2, 3, 4]
    assert mx.nd.subtract(True, x).asnumpy().tolist() == [0, -1, -2]
    assert mx.nd.maximum(x, np.bool_(False)).dtype == np.int32


def test_maximum_and_minimum_of_two_equal_numbers_give_the_right_operand():
    # MXNet 1.9.1's rule (x if x > y else y), where Python's max keeps the first of a tie
    assert type(mx.nd.maximum(0, 0.0)) is float and type(mx.nd.minimum(0.0, 0)) is int


@pytest.mark.parametrize(
    ("name", "expected"), [("logical_and", [0, 0, 1]), ("logical_or", [0, 1, 1]), ("logical_xor", [0, 1, 0])]
)
def test_logical_functions_read_any_nonzero_as_true(name, expected):
    # MXNet 1.x's mx.nd.logical_and/or/xor (an AttributeError here before)
    function = getattr(mx.nd, name)
    x = mx.nd.array([0, 0, -2])
    np.testing.assert_array_equal(function(x, mx.nd.array([0, 3, 0.5])).asnumpy(), expected)
    np.testing.assert_array_equal(function(mx.nd.array([0, 3, 0.5]), x).asnumpy(), expected)
    assert function(0, 2.5) == expected[1]


def test_other_types_are_a_clear_error():
    with pytest.raises(OperatorError, match="add: rhs must be an NDArray or a number, got list"):
        mx.nd.add(mx.nd.ones((2,)), [1, 2])


def test_internal_names_resolve_to_registered_operators():
    np.testing.assert_allclose(mx.nd._internal._plus_scalar(mx.nd.ones((2,)), scalar=1).asnumpy(), [2, 2])
    np.testing.assert_allclose(mx.nd._internal._arange(start=3).asnumpy(), [0, 1, 2])
    with pytest.raises(AttributeError, match="no such operator"):
        mx.nd._internal._no_such_operator  # noqa: B018


def test_context_default_ctx_reads_and_sets_the_default():
    assert mx.Context.default_ctx == mx.cpu(0)
    try:
        mx.Context.default_ctx = mx.cpu(1)
        assert mx.nd.zeros((1,)).context == mx.cpu(1)
        with mx.cpu(2):
            assert mx.Context.default_ctx == mx.cpu(2)
    finally:
        mx.Context.default_ctx = mx.cpu(0)
    with pytest.raises(mx.ContextError, match="Context.default_ctx"):
        mx.Context.default_ctx = "tpu"
