"""The checks the image functions and augmenters apply to their size and range arguments.

Sizes take MXNet's text forms too (``imresize(src, "10", 4)``: MXNet's image operators parse their
parameters from text); anything else that is not what the function needs is an ``OperatorError``
(an ``ArgumentTypeError`` where it is not even a number) naming the function, the argument and the
value, before any pixel is touched.
"""

from __future__ import annotations

import numbers
from typing import Any

from ..errors import ArgumentTypeError, OperatorError
from ..ops.params import Param, parse_finite_float, parse_float_tuple, parse_int, parse_shape

__all__ = [
    "int_argument",
    "number_argument",
    "border_fill_argument",
    "size_argument",
    "ratio_argument",
    "area_argument",
    "nonempty_image",
]


def int_argument(name: str, argument: str, value: Any, low: int | None = None) -> int:
    """``value`` as an int (of at least ``low`` when given), or an ``OperatorError`` naming ``name``.

    Examples
    --------
    >>> int_argument("resize_short", "size", "10")
    10
    """
    number = int(Param(parse_int).parse(name, argument, value))
    if low is not None and number < low:
        raise OperatorError(f"{name}: {argument} must be >= {low}, got {value!r}")
    return number


def number_argument(name: str, argument: str, value: Any) -> Any:
    """``value`` checked to be a finite number (a probability, a jitter amount, a noise scale), or an
    ``OperatorError`` naming ``name`` (before a comparison or an arithmetic step fails on it).  A
    number comes back as given (``dumps()`` shows it as MXNet's does), a text form as a float.

    Examples
    --------
    >>> number_argument("HorizontalFlipAug", "p", 1), number_argument("HorizontalFlipAug", "p", "0.5")
    (1, 0.5)
    """
    number = float(Param(parse_finite_float).parse(name, argument, value))
    return value if isinstance(value, numbers.Real) and not isinstance(value, bool) else number


def size_argument(name: str, argument: str, value: Any) -> tuple[int, int]:
    """``value`` as a (width, height) pair of positive ints, or an ``OperatorError`` naming ``name``.

    Examples
    --------
    >>> size_argument("center_crop", "size", [8, 6])
    (8, 6)
    """
    shape = Param(parse_shape).parse(name, argument, value)
    if len(shape) != 2 or min(shape) < 1:
        raise OperatorError(f"{name}: {argument} must be (width, height), two positive ints; got {value!r}")
    return int(shape[0]), int(shape[1])


def ratio_argument(name: str, argument: str, value: Any) -> tuple[float, float]:
    """``value`` as a (low, high) pair of positive finite numbers (an aspect-ratio range; MXNet draws
    from a reversed one too).

    Examples
    --------
    >>> ratio_argument("random_size_crop", "ratio", (0.75, 1.33))
    (0.75, 1.33)
    """
    pair = Param(parse_float_tuple).parse(name, argument, value)
    if len(pair) != 2 or not all(0 < bound < float("inf") for bound in pair):
        raise OperatorError(f"{name}: {argument} must be (low, high), two positive numbers; got {value!r}")
    return pair[0], pair[1]


def area_argument(name: str, argument: str, value: Any) -> tuple[float, float]:
    """``value`` (a minimum fraction of the image, or a (low, high) range of fractions) as a (low, high)
    pair of finite numbers >= 0.

    Examples
    --------
    >>> area_argument("random_size_crop", "area", 0.08)
    (0.08, 1.0)
    """
    bounds = Param(parse_float_tuple).parse(name, argument, value)
    pair = (bounds[0], 1.0) if len(bounds) == 1 else bounds
    if len(pair) != 2 or not all(0 <= bound < float("inf") for bound in pair):
        raise OperatorError(f"{name}: {argument} must be a fraction or a (low, high) range of them, got {value!r}")
    return pair[0], pair[1]


def nonempty_image(name: str, height: int, width: int) -> None:
    """An ``OperatorError`` naming ``name`` when the image has no pixels (nothing to resize from)."""
    if height == 0 or width == 0:
        raise OperatorError(f"{name}: the image is empty ({height}x{width} pixels)")


def border_fill_argument(value: Any, values: Any) -> list[float]:
    """The constant border's fill per channel: ``values`` when given (a single number is a one-channel
    tuple, so the other channels get 0, as MXNet parses it), else ``value`` in every channel.

    Examples
    --------
    >>> border_fill_argument(0, 7)
    [7.0]
    >>> border_fill_argument(5, ())
    [5.0, 5.0, 5.0, 5.0]
    """
    if values is None:
        values = ()
    elif isinstance(values, numbers.Real):
        values = (values,)
    if isinstance(value, numbers.Real) and len(values) == 0:
        return [float(value)] * 4
    given = ("values", values) if len(values) > 0 else ("value", value)
    try:
        return [float(v) for v in given[1]]
    except (TypeError, ValueError):
        raise ArgumentTypeError(
            f"copyMakeBorder: {given[0]} must be a number or a sequence of numbers (one per channel), got {given[1]!r}"
        ) from None
