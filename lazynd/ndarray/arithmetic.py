"""Python's operators on NDArrays (``a + b``, ``a * 2.0``, ``a += b``, ``a < b``): registered operators.

Each operator names the registered operator it calls, by its operands: two arrays of one shape
(``_plus``), two that broadcast (``broadcast_add``), an array and a scalar (``_plus_scalar``,
or the reflected ``_rminus_scalar`` for ``2 - a``).  Every one goes through
:func:`.dispatch.invoke`: one plan cache, one push, whose shortcut for small ready work lives
in the runtime (:mod:`lazynd.runtime.push`).
"""

from __future__ import annotations

import numbers
from collections.abc import Callable
from typing import Any

import numpy as np

from ..errors import OperatorError
from ..ops import registry
from ..ops.host_arithmetic import values_as
from .dispatch import invoke

NDArray: Any = None  # bound by ndarray.py (circular import)

# kind -> (same-shape op, broadcast op, scalar op, reflected scalar op)
BINARY_OPS = {
    "add": ("_plus", "broadcast_add", "_plus_scalar", "_plus_scalar"),
    "sub": ("_minus", "broadcast_sub", "_minus_scalar", "_rminus_scalar"),
    "mul": ("_mul", "broadcast_mul", "_mul_scalar", "_mul_scalar"),
    "div": ("_div", "broadcast_div", "_div_scalar", "_rdiv_scalar"),
    "mod": ("_mod", "broadcast_mod", "_mod_scalar", "_rmod_scalar"),
    "power": ("_power", "broadcast_power", "_power_scalar", "_rpower_scalar"),
    "equal": ("_equal", "broadcast_equal", "_equal_scalar", "_equal_scalar"),
    "not_equal": ("_not_equal", "broadcast_not_equal", "_not_equal_scalar", "_not_equal_scalar"),
    "greater": ("_greater", "broadcast_greater", "_greater_scalar", "_lesser_scalar"),
    "greater_equal": ("_greater_equal", "broadcast_greater_equal", "_greater_equal_scalar", "_lesser_equal_scalar"),
    "lesser": ("_lesser", "broadcast_lesser", "_lesser_scalar", "_greater_scalar"),
    "lesser_equal": ("_lesser_equal", "broadcast_lesser_equal", "_lesser_equal_scalar", "_greater_equal_scalar"),
}

# the same table with the registered operators themselves
_OPS = {kind: tuple(registry.get(name) for name in names) for kind, names in BINARY_OPS.items()}
_SCALAR_TYPES = (float, int)
_SYMBOLS = {"add": "+", "sub": "-", "mul": "*", "div": "/", "mod": "%"}
_NO_PARAMS: dict[str, Any] = {}  # never written: invoke only reads its parameters


def scalar_operand(value: Any) -> Any:
    """A Python or NumPy number as a scalar operator's ``scalar``: a bool counts as 0 or 1, as in MXNet.

    The scalar parameter itself refuses a bool, so ``x + True`` and ``nd.add(x, True)`` pass ``1``.
    """
    return int(value) if isinstance(value, (bool, np.bool_)) else value


def binary(kind: str, lhs: Any, rhs: Any, reflected: bool = False, out: Any = None) -> Any:
    """``lhs <kind> rhs`` (``rhs <kind> lhs`` when ``reflected``), into ``out`` if given."""
    same, broadcast, scalar, reflected_scalar = _OPS[kind]
    cls = rhs.__class__
    if cls is NDArray or isinstance(rhs, NDArray):
        if reflected:  # only reached from ``other op array`` where other is an NDArray subclass
            lhs, rhs = rhs, lhs
        op = same if lhs._data.shape == rhs._data.shape else broadcast
        return invoke(op, [lhs, rhs], {}, out)
    if cls in _SCALAR_TYPES or isinstance(rhs, (numbers.Number, np.generic)):
        operand = scalar_operand(rhs)
        return invoke(reflected_scalar if reflected else scalar, [lhs], {"scalar": operand}, out)
    if isinstance(rhs, (np.ndarray, list, tuple)):
        other = _array_operand(kind, lhs, rhs)
        if reflected:
            return binary(kind, other, lhs, out=out)
        return binary(kind, lhs, other, out=out)
    return NotImplemented


def _array_operand(kind: str, lhs: Any, values: Any) -> Any:
    """A list, tuple or NumPy array beside NDArray ``lhs`` as an NDArray of its dtype and context,
    each value converted as a scalar operand is (:func:`~lazynd.ops.host_arithmetic.values_as`)."""
    from .creation import array

    try:
        host = np.asarray(values)
    except (ValueError, TypeError):
        host = None  # ragged or not numbers: array() says which
    if host is not None and host.dtype.kind in "fc":
        try:
            values = values_as(lhs._data.dtype, host)
        except ValueError as err:
            raise OperatorError(f"{BINARY_OPS[kind][1]}: the {type(values).__name__} operand: {err}") from None
    return array(values, ctx=lhs._ctx, dtype=lhs._data.dtype)


def binary_method(kind: str, reflected: bool = False) -> Callable[[Any, Any], Any]:
    """``NDArray.__add__`` and friends: :func:`binary` of ``kind``, reflected for ``__rsub__`` etc."""
    same, broadcast, scalar, reflected_scalar = _OPS[kind]
    scalar_op = reflected_scalar if reflected else scalar

    def method(lhs: Any, rhs: Any) -> Any:
        # the two commonest forms first, as :func:`binary` would choose them
        cls = rhs.__class__
        if cls is NDArray and not reflected:
            # one signature (shape, dtype, device) is one object: equal shapes without reading them
            equal = lhs.signature is rhs.signature or lhs._data.shape == rhs._data.shape
            return invoke(same if equal else broadcast, [lhs, rhs], _NO_PARAMS)
        if cls is float or cls is int:
            return invoke(scalar_op, [lhs], {"scalar": rhs})
        return binary(kind, lhs, rhs, reflected)

    method.__name__ = f"__{'r' if reflected else ''}{kind}__"
    return method


def inplace_method(kind: str) -> Callable[[Any, Any], Any]:
    """``NDArray.__iadd__`` and friends: :func:`binary` of ``kind`` written into the left operand."""

    def method(lhs: Any, rhs: Any) -> Any:
        if lhs._data.dtype.kind == "b" and not isinstance(rhs, NDArray):
            raise OperatorError(
                f"__i{kind}__: a bool array and a scalar give int64 (as in MXNet), which the bool array"
                f" cannot hold; write x = x {_SYMBOLS[kind]} scalar instead"
            )
        return binary(kind, lhs, rhs, out=lhs)

    method.__name__ = f"__i{kind}__"
    return method


def compare_method(kind: str) -> Callable[[Any, Any], Any]:
    """``NDArray.__eq__`` and the other comparisons: an array of 0 and 1 (MXNet's convention)."""

    def method(lhs: Any, rhs: Any) -> Any:
        return binary(kind, lhs, rhs)

    method.__name__ = f"__{kind}__"
    return method
