"""Typed operator parameters: parsed from Python values or from the strings symbol JSON stores."""

from __future__ import annotations

import ast
import math
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import numpy as np

from ..backend.cuda.sources import dtype_name  # NumPy computes dtype.name in Python: a cached name
from ..base import _Null
from ..errors import LazyNDError, OperatorError

REQUIRED = object()

DTYPE_NAMES = ("float32", "float64", "float16", "uint8", "int8", "int32", "int64", "bool")
INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1  # MXNet's int parameters are C ints
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1  # and its long ones (and a shape's dims) int64s
_DTYPE_EXPECTED = f"expected a dtype, one of {', '.join(DTYPE_NAMES)}"

_Parser = TypeVar("_Parser", bound=Callable[..., Any])


def describes(type_name: str, quoted: bool = False) -> Callable[[_Parser], _Parser]:
    """Mark a parser with the type MXNet writes for its parameters (``'int'``, ``'boolean'``...);
    ``quoted``: MXNet writes its defaults in quotes (``default='1'`` for a signed int).
    :func:`describe_param` reads the mark; a parser without one is described as ``'string'``."""

    def mark(parser: _Parser) -> _Parser:
        parser.type_name = type_name  # type: ignore[attr-defined]
        parser.quoted = quoted  # type: ignore[attr-defined]
        return parser

    return mark


_BUILTIN_TYPES: dict[Any, str] = {float: "float", int: "int", str: "string"}  # given as parsers


def _choices_text(choices: Sequence[Any]) -> str:
    """MXNet's spelling of a set of choices: sorted, quoted, None first (``{None, 'NCHW', 'NHWC'}``)."""
    names = sorted(repr(c) for c in choices if c is not None)
    return "{" + ", ".join((["None"] if None in choices else []) + names) + "}"


def describe_type(parser: Callable[[Any], Any]) -> str:
    """The type MXNet 1.9.1 writes for a parameter parsed by ``parser`` (``get_operator_arguments``)."""
    choices = getattr(parser, "choices", None)
    if choices is not None:
        return _choices_text(choices)
    return str(getattr(parser, "type_name", _BUILTIN_TYPES.get(parser, "string")))


def describe_default(parser: Callable[[Any], Any], default: Any) -> str:
    """A default value as MXNet 1.9.1 writes it after ``default=``."""
    if getattr(parser, "choices", None) is not None or getattr(parser, "quoted", False):
        return f"'{default}'"
    if default is None:
        return "None"
    if isinstance(default, (bool, np.bool_)):
        return str(int(default))
    if isinstance(default, tuple):
        return "[" + ",".join(describe_default(parser, v) for v in default) + "]"
    if isinstance(default, float):
        return f"{np.float32(default):.9g}"  # MXNet's float fields are float32, printed to 9 digits
    return str(default)


def describe_param(param: Param) -> str:
    """``'int, required'``, ``'boolean, optional, default=0'``, ``"{'avg', 'max'},optional, default='max'"``:
    how MXNet 1.9.1 describes a parameter's type (a set of choices is followed by no space, as in MXNet)."""
    kind = describe_type(param.parser)
    if param.required:
        return f"{kind}, required"
    comma = "," if kind.startswith("{") else ", "
    return f"{kind}{comma}optional, default={describe_default(param.parser, param.default)}"


def _literal(value: Any) -> Any:
    if isinstance(value, str):
        text = value.strip()
        if text in ("None", ""):
            return None
        try:
            return ast.literal_eval(text)
        except (ValueError, SyntaxError, RecursionError, MemoryError):
            # not a Python literal (CPython's parser raises the last two for deep nesting): the
            # parameter's own parser rejects the text with a message naming the parameter
            return text
    return value


def _whole_number(value: Any) -> int:
    value = _literal(value)
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer, float, np.floating)):
        raise ValueError("expected an integer")
    if isinstance(value, (int, np.integer)):
        return int(value)  # (float() of one past 2**53 differs from it: no test through float for these)
    if not math.isfinite(value) or float(value) != int(value):  # (int() of inf is an OverflowError)
        raise ValueError("expected an integer")
    return int(value)


def _within(number: int, low: int, high: int) -> int:
    if not low <= number <= high:
        raise ValueError(f"expected an integer in [{low}, {high}]")
    return number


@describes("int", quoted=True)
def parse_int(value: Any) -> int:
    """An integer in C ``int``'s range, as MXNet's ``int`` parameters (past it, lazynd sized a loop or
    an allocation by it: ``ROIAlign(sample_ratio=2**40)`` never ended; MXNet's parser refuses it)."""
    return _within(_whole_number(value), INT32_MIN, INT32_MAX)


@describes("long")
def parse_long(value: Any) -> int:
    """An integer in int64's range: MXNet's ``long`` parameters (``eye``'s ``k``) and a shape's dims."""
    return _within(_whole_number(value), INT64_MIN, INT64_MAX)


@describes("long (non-negative)")
def parse_workspace(value: Any) -> int:
    """A convolution's ``workspace`` (MB of scratch MXNet may use; lazynd ignores it): an int64 >= 0."""
    return _within(_whole_number(value), 0, INT64_MAX)


@describes("int")
def parse_positive_int(value: Any) -> int:
    """An integer of at least 1 (a count of units, filters, pieces, arrays: MXNet's lower bound 1) and
    at most 2**31 - 1 (MXNet's ``int``; a count of inputs past it named inputs without end)."""
    number = _whole_number(value)
    if number < 1:
        raise ValueError("expected an integer >= 1")
    if number > INT32_MAX:
        raise ValueError(f"expected an integer <= {INT32_MAX}")
    return number


@describes("int", quoted=True)  # described as parse_int is (MXNet's generated docs)
def parse_count(value: Any) -> int:
    """A number of inputs or outputs: an integer in [0, 2**31 - 1], MXNet's ``int`` (a larger one
    would have lazynd name that many inputs before anything else: a call that never ends)."""
    return _within(_whole_number(value), 0, INT32_MAX)


@describes("float")
def parse_float(value: Any) -> float:
    if isinstance(value, str):
        text = value.strip().lower()
        if text in ("inf", "+inf", "-inf", "nan"):
            return float(text)
    value = _literal(value)
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise ValueError("expected a real number")
    return float(value)


@describes("float")
def parse_finite_float(value: Any) -> float:
    """A float that is neither infinite nor NaN (a scale or a size factor)."""
    number = parse_float(value)
    if not math.isfinite(number):
        raise ValueError("expected a finite number")
    return number


def _bound_text(low: float, high: float, low_open: bool, high_open: bool) -> str:
    """``[0, 1]``, ``[0, 1)``, ``> 0``, ``>= 0``: how an error names the numbers a bound allows."""
    if math.isinf(high) and not math.isinf(low):
        return f"{'>' if low_open else '>='} {low:g}"
    return f"{'(' if low_open else '['}{low:g}, {high:g}{')' if high_open else ']'}"


def float_between(
    low: float, high: float = math.inf, *, low_open: bool = False, high_open: bool = False
) -> Callable[[Any], float]:
    """A parser of a float in ``[low, high]`` (an MXNet parameter's bound), an end left out where it
    is ``low_open`` or ``high_open``; NaN is refused too, the number it stands for being no number at
    all.  The one rule for every bounded float parameter: the error names the range.

    Examples:
        >>> float_between(0.0, 1.0, high_open=True)(0.5)
        0.5
        >>> float_between(0.0, low_open=True)(0)
        Traceback (most recent call last):
        ...
        ValueError: expected a number > 0
    """

    @describes("float")
    def parse(value: Any) -> float:
        number = parse_float(value)
        above = number > low if low_open else number >= low
        below = number < high if high_open else number <= high
        if not (above and below):
            raise ValueError(
                f"expected a number {'in ' if math.isfinite(high) else ''}{_bound_text(low, high, low_open, high_open)}"
            )
        return number

    parse.__name__ = "float_between"
    return parse


# a fraction: a dropout rate, a momentum, a smoothing weight, a sparseness target (MXNet's [0, 1])
FRACTION = float_between(0.0, 1.0)
# the scale of an image onto its feature map, of every region op (ROIPooling, ROIAlign, RROIAlign,
# PSROIPooling, DeformablePSROIPooling): MXNet 1.9.1 bounds it to [0, 1] for all of them
SPATIAL_SCALE = float_between(0.0, 1.0)


@describes("boolean")
def parse_bool(value: Any) -> bool:
    if isinstance(value, str):
        text = value.strip().lower()
        if text in ("true", "1"):
            return True
        if text in ("false", "0"):
            return False
        raise ValueError("expected a boolean (True/False/1/0)")
    if isinstance(value, (bool, np.bool_, int, np.integer)) and int(value) in (0, 1):
        return bool(value)
    raise ValueError("expected a boolean")


@describes("Shape(tuple)")
def parse_shape(value: Any) -> tuple[int, ...]:
    value = _literal(value)
    if isinstance(value, np.ndarray) and value.ndim <= 1:
        value = value.tolist()  # a NumPy shape array, e.g. np.array(x.shape)
    if value is None:
        return ()
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        return (parse_long(value),)
    if isinstance(value, (list, tuple)):
        return tuple(parse_long(v) for v in value)
    raise ValueError("expected a shape such as (3, 3)")


@describes("tuple of <float>")
def parse_float_tuple(value: Any) -> tuple[float, ...]:
    value = _literal(value)
    if isinstance(value, (int, float, np.number)):
        return (float(value),)
    if isinstance(value, (list, tuple)):
        return tuple(parse_float(v) for v in value)
    raise ValueError("expected a tuple of numbers")


@describes("Shape or None")
def parse_axis(value: Any) -> int | tuple[int, ...] | None:
    """``None`` (all axes), an int, or a tuple of ints; ``()`` means all axes as in MXNet."""
    value = _literal(value)
    if value is None:
        return None
    if isinstance(value, (list, tuple)):
        axes = tuple(parse_long(v) for v in value)
        return axes if axes else None
    return parse_long(value)


def parse_dtype(value: Any) -> str:
    if value is None:
        raise ValueError(_DTYPE_EXPECTED)
    try:
        dtype = np.dtype(value)
    except (TypeError, ValueError, SyntaxError) as err:  # NumPy reads '(1,' as a struct spec: SyntaxError
        raise ValueError(_DTYPE_EXPECTED) from err
    name = dtype_name(dtype)
    if name not in DTYPE_NAMES:
        raise ValueError(f"expected one of {', '.join(DTYPE_NAMES)}")
    return name


parse_dtype.choices = DTYPE_NAMES  # type: ignore[attr-defined]


def dtype_among(*names: str) -> Callable[[Any], str]:
    """A dtype parser for an operator that takes only ``names`` (MXNet's list for that parameter)."""

    def parse(value: Any) -> str:
        name = parse_dtype(value)
        if name not in names:
            raise ValueError(f"expected one of {', '.join(names)}")
        return name

    parse.__name__ = "dtype_among"
    parse.choices = names  # type: ignore[attr-defined]
    return parse


@describes("string", quoted=True)
def parse_str(value: Any) -> str:
    return str(value)


def optional(parser: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """Wrap a parser so that ``None``/``'None'`` stays ``None``."""

    def parse(value: Any) -> Any:
        if value is None or (isinstance(value, str) and value.strip() in ("None", "")):
            return None
        return parser(value)

    parse.__name__ = f"optional_{parser.__name__}"
    choices = getattr(parser, "choices", None)
    if choices is not None:  # MXNet lists None among the choices
        parse.choices = (None, *choices)  # type: ignore[attr-defined]
    else:
        kind = describe_type(parser)
        describes(kind if kind.endswith(" or None") else f"{kind} or None", getattr(parser, "quoted", False))(parse)
    return parse


def enum(*choices: str) -> Callable[[Any], str]:
    def parse(value: Any) -> str:
        text = str(value)
        if text not in choices:
            raise ValueError(f"expected one of {', '.join(repr(c) for c in choices)}")
        return text

    parse.__name__ = "enum"
    parse.choices = choices  # type: ignore[attr-defined]
    return parse


@describes("string", quoted=True)
def parse_context(value: Any) -> Any:
    from ..context import as_context

    if value is None:
        return value
    try:
        return as_context(value)
    except LazyNDError as err:
        raise ValueError(str(err)) from None


class Param:
    """One typed parameter of an operator."""

    __slots__ = ("parser", "default", "doc")

    def __init__(self, parser: Callable[[Any], Any], default: Any = REQUIRED, doc: str = "") -> None:
        self.parser = parser
        self.default = default
        self.doc = doc

    @property
    def required(self) -> bool:
        return self.default is REQUIRED

    def parse(self, op: str, name: str, value: Any) -> Any:
        try:
            return self.parser(value)
        except (ValueError, TypeError, OverflowError) as err:
            raise OperatorError(f"{op}: invalid value {value!r} for parameter '{name}': {err}") from None


def parse_params(op: str, spec: dict[str, Param], given: dict[str, Any], ignore: Sequence[str] = ()) -> dict[str, Any]:
    """Parse ``given`` against ``spec``; fill defaults; reject unknown and missing ones.  A value
    given as ``_Null`` counts as not given."""
    attrs: dict[str, Any] = {}
    for key, value in given.items():
        if value is _Null:
            continue
        param = spec.get(key)
        if param is None:
            if key in ignore or (key.startswith("__") and key.endswith("__")):
                continue
            allowed = ", ".join(sorted(spec)) or "none"
            raise OperatorError(f"{op}: unknown parameter '{key}' (allowed: {allowed})")
        attrs[key] = param.parse(op, key, value)
    for key, param in spec.items():
        if key not in attrs:
            if param.default is REQUIRED:
                raise OperatorError(f"{op}: required parameter '{key}' is missing")
            attrs[key] = param.default
    return attrs


def format_value(value: Any) -> str:
    """The string symbol JSON stores for a parameter value (MXNet's spelling)."""
    if isinstance(value, bool):
        return "True" if value else "False"
    if isinstance(value, tuple):
        return "(" + ", ".join(format_value(v) for v in value) + ("," if len(value) == 1 else "") + ")"
    if value is None:
        return "None"
    return str(value)


# the plain keys a user may give a symbol beside its parameters (stored as ``__key__``):
# placement, learning-rate and weight-decay multipliers, and MXNet's memory planner's marks
# (``mirror_stage``, set by memonger, is kept and otherwise ignored)
SYMBOL_ATTRIBUTE_KEYS = ("ctx_group", "lr_mult", "wd_mult", "force_mirroring", "mirror_stage")
