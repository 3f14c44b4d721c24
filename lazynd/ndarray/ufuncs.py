"""MXNet's binary functions on NDArrays and numbers: ``nd.add``, ``nd.maximum``, ``nd.greater``...

Two arrays of one shape take the elementwise operator, of different shapes the broadcasting
one; an array and a number take the scalar operator (the reflected one, or the mirrored
comparison, when the number comes first); two numbers give the Python result (comparisons
give 1 or 0, as in MXNet).

Examples
--------
>>> import lazynd as mx
>>> mx.nd.add(mx.nd.ones((2, 1)), mx.nd.ones((1, 3))).shape
(2, 3)
>>> mx.nd.greater(2, mx.nd.array([1, 3])).asnumpy()
array([1., 0.], dtype=float32)
"""

from __future__ import annotations

import numbers
import operator
from collections.abc import Callable
from typing import Any

import numpy as np

from ..errors import OperatorError
from .arithmetic import scalar_operand


def _compare(test: Callable[[Any, Any], bool]) -> Callable[[Any, Any], int]:
    return lambda x, y: 1 if test(x, y) else 0


def _logical(test: Callable[[bool, bool], bool]) -> Callable[[Any, Any], int]:
    return lambda x, y: 1 if test(bool(x), bool(y)) else 0


def _larger(x: Any, y: Any) -> Any:
    # MXNet's rule, not ``max``: on a tie the right operand (maximum(0, 0.0) is 0.0)
    return x if x > y else y


def _smaller(x: Any, y: Any) -> Any:
    return x if x < y else y


# name -> (same-shape operator, broadcasting operator, array-number operator,
#          number-array operator, both numbers)
_TABLE: dict[str, tuple[str, str, str, str, Callable[[Any, Any], Any]]] = {
    "add": ("_plus", "broadcast_add", "_plus_scalar", "_plus_scalar", operator.add),
    "subtract": ("_minus", "broadcast_sub", "_minus_scalar", "_rminus_scalar", operator.sub),
    "multiply": ("_mul", "broadcast_mul", "_mul_scalar", "_mul_scalar", operator.mul),
    "divide": ("_div", "broadcast_div", "_div_scalar", "_rdiv_scalar", operator.truediv),
    "modulo": ("_mod", "broadcast_mod", "_mod_scalar", "_rmod_scalar", operator.mod),
    "power": ("_power", "broadcast_power", "_power_scalar", "_rpower_scalar", operator.pow),
    "maximum": ("_maximum", "broadcast_maximum", "_maximum_scalar", "_maximum_scalar", _larger),
    "minimum": ("_minimum", "broadcast_minimum", "_minimum_scalar", "_minimum_scalar", _smaller),
    "equal": ("_equal", "broadcast_equal", "_equal_scalar", "_equal_scalar", _compare(operator.eq)),
    "not_equal": ("_not_equal", "broadcast_not_equal", "_not_equal_scalar", "_not_equal_scalar", _compare(operator.ne)),
    "greater": ("_greater", "broadcast_greater", "_greater_scalar", "_lesser_scalar", _compare(operator.gt)),
    "greater_equal": (
        "_greater_equal", "broadcast_greater_equal", "_greater_equal_scalar", "_lesser_equal_scalar",
        _compare(operator.ge),
    ),
    "lesser": ("_lesser", "broadcast_lesser", "_lesser_scalar", "_greater_scalar", _compare(operator.lt)),
    "lesser_equal": (
        "_lesser_equal", "broadcast_lesser_equal", "_lesser_equal_scalar", "_greater_equal_scalar",
        _compare(operator.le),
    ),
    "logical_and": ("_logical_and", "broadcast_logical_and", "_logical_and_scalar", "_logical_and_scalar", _logical(operator.and_)),
    "logical_or": ("_logical_or", "broadcast_logical_or", "_logical_or_scalar", "_logical_or_scalar", _logical(operator.or_)),
    "logical_xor": ("_logical_xor", "broadcast_logical_xor", "_logical_xor_scalar", "_logical_xor_scalar", _logical(operator.xor)),
}  # fmt: skip


def _apply(name: str, lhs: Any, rhs: Any) -> Any:
    from .. import ndarray as nd

    same, broadcast, scalar, reflected, python = _TABLE[name]
    lhs_array, rhs_array = isinstance(lhs, nd.NDArray), isinstance(rhs, nd.NDArray)
    for side, value, is_array in (("lhs", lhs, lhs_array), ("rhs", rhs, rhs_array)):
        if not is_array and not isinstance(value, (numbers.Number, np.bool_)):
            raise OperatorError(f"{name}: {side} must be an NDArray or a number, got {type(value).__name__}")
    if lhs_array and rhs_array:
        return getattr(nd, same if lhs.shape == rhs.shape else broadcast)(lhs, rhs)
    if lhs_array:
        return getattr(nd, scalar)(lhs, scalar=scalar_operand(rhs))
    if rhs_array:
        return getattr(nd, reflected)(rhs, scalar=scalar_operand(lhs))
    return python(lhs, rhs)


def _make(name: str) -> Callable[[Any, Any], Any]:
    def function(lhs: Any, rhs: Any) -> Any:
        return _apply(name, lhs, rhs)

    function.__name__ = function.__qualname__ = name
    function.__doc__ = f"MXNet's ``{name}`` of two NDArrays (broadcasting), an NDArray and a number, or two numbers."
    return function


add = _make("add")
subtract = _make("subtract")
multiply = _make("multiply")
divide = _make("divide")
true_divide = divide
modulo = _make("modulo")


def power(base: Any, exp: Any) -> Any:
    """MXNet's ``power``: ``base ** exp`` of two NDArrays (broadcasting), an NDArray and a number, or two
    numbers; the operands keep MXNet's names, so ``power(base=x, exp=2)`` works as there."""
    return _apply("power", base, exp)


maximum = _make("maximum")
minimum = _make("minimum")
equal = _make("equal")
not_equal = _make("not_equal")
greater = _make("greater")
greater_equal = _make("greater_equal")
lesser = _make("lesser")
lesser_equal = _make("lesser_equal")
logical_and = _make("logical_and")
logical_or = _make("logical_or")
logical_xor = _make("logical_xor")

__all__ = [
    "add", "subtract", "multiply", "divide", "true_divide", "modulo", "power", "maximum", "minimum",
    "equal", "not_equal", "greater", "greater_equal", "lesser", "lesser_equal", "logical_and", "logical_or",
    "logical_xor",
]  # fmt: skip
