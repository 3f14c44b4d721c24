"""NumPy's protocols on NDArrays (``__array__``, ``__array_ufunc__``, ``__array_function__``):
``np.asarray(a)``, ``np.exp(a)``, ``np.sum(a)``; and Python's own number protocols
(``format(a, spec)``, ``float(a)``, ``int(a)``, ``operator.index(a)``).

A NumPy function or ufunc called with NDArrays among its arguments does one of two things:

- **it runs the matching lazynd operator** when the tables below have one and the call uses
  nothing the operator lacks: the result is a lazy NDArray on the arguments' context, and it
  follows lazynd's (MXNet's) rules, not NumPy's: a full reduction or a 1-D ``dot`` gives shape
  ``(1,)``, a comparison gives 0/1 in the input dtype, ``mean`` of integers stays integer;
- **otherwise it waits** for the NDArray arguments, copies them to NumPy and calls NumPy: the
  result is exactly NumPy's (a NumPy array or scalar).

A call that would make NumPy write into an NDArray (``out=`` an NDArray outside the operator
path, ``np.copyto(nd, ...)``, ``np.add.at(nd, ...)``) raises :class:`~lazynd.LazyNDError`: the
write would land in a copy and be lost.

To add a function, add a row: the ufunc's operator name, or a :class:`NumpyFunction` that says
how NumPy's parameters map onto the operator's.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import ArgumentTypeError, LazyNDError, OperatorError
from . import arithmetic, functions

NDArray: Any = None  # bound by ndarray.py (circular import)

# one-input ufunc -> lazynd operator.  np.rint, np.round and np.around have no row: NumPy rounds
# halves to even, MXNet's rint rounds them down and its round away from zero, so they take NumPy's path
UNARY_UFUNCS: dict[np.ufunc, str] = {
    np.absolute: "abs",
    np.negative: "negative",
    np.sign: "sign",
    np.floor: "floor",
    np.ceil: "ceil",
    np.trunc: "fix",
    np.square: "square",
    np.sqrt: "sqrt",
    np.exp: "exp",
    np.expm1: "expm1",
    np.log: "log",
    np.log2: "log2",
    np.log10: "log10",
    np.log1p: "log1p",
    np.sin: "sin",
    np.cos: "cos",
    np.tan: "tan",
    np.arcsin: "arcsin",
    np.arccos: "arccos",
    np.arctan: "arctan",
    np.sinh: "sinh",
    np.cosh: "cosh",
    np.tanh: "tanh",
    np.arcsinh: "arcsinh",
    np.arccosh: "arccosh",
    np.arctanh: "arctanh",
    np.degrees: "degrees",
    np.radians: "radians",
}

# two-input ufunc -> the kind of Python's operator it is (see arithmetic.BINARY_OPS), so that
# ``np.add(x, a)``, ``x + a`` with ``x`` a NumPy array or scalar, and ``a + x`` agree
BINARY_UFUNCS: dict[np.ufunc, str] = {
    np.add: "add",
    np.subtract: "sub",
    np.multiply: "mul",
    np.true_divide: "div",
    np.remainder: "mod",
    np.power: "power",
    np.equal: "equal",
    np.not_equal: "not_equal",
    np.greater: "greater",
    np.greater_equal: "greater_equal",
    np.less: "lesser",
    np.less_equal: "lesser_equal",
}


def _operator(name: str) -> Callable[..., Any]:
    """The ``lazynd.nd.<name>`` function of a registered operator (looked up when called)."""

    def call(*inputs: Any, **attrs: Any) -> Any:
        function = functions.method(name)
        assert function is not None, name  # the tables name registered operators (a test checks)
        return function(*inputs, **attrs)

    return call


def _reshape(a: Any, shape: Any) -> Any:
    shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
    if any(d == 0 or d < -1 for d in shape):
        return NotImplemented  # MXNet's special codes (0, -2, -3, -4) mean other things than NumPy's
    return a.reshape(shape)  # a view, as np.reshape gives where it can


@dataclass(frozen=True)
class NumpyFunction:
    """How a NumPy function's call maps onto a lazynd operator.

    Attributes
    ----------
    run : callable
        Called with the input NDArrays and the operator's parameters.
    names : tuple of str
        NumPy's parameter names in positional order (the first ``inputs`` are the arrays).
    inputs : int
        How many leading parameters are the operator's input arrays.
    sequence : bool
        The first parameter is a sequence of arrays (``np.concatenate``).
    params : dict
        NumPy parameter -> operator parameter.
    fixed : dict
        NumPy parameters the operator supports only at this value (NumPy's default).
    numpy_defaults : dict
        NumPy's defaults where the operator's differ; a ``None`` value is left out (the
        operator's default applies) and ``required`` parameters left out fall back to NumPy.
    required : tuple of str
        NumPy parameters without which the operator cannot run the call.
    accepts : callable, optional
        A test of the input arrays (``np.dot`` agrees with MXNet's ``dot`` up to 2-D only).
    """

    run: Callable[..., Any]
    names: tuple[str, ...]
    inputs: int = 1
    sequence: bool = False
    params: dict[str, str] = field(default_factory=dict)
    fixed: dict[str, Any] = field(default_factory=dict)
    numpy_defaults: dict[str, Any] = field(default_factory=dict)
    required: tuple[str, ...] = ()
    accepts: Callable[[list], bool] | None = None

    def __call__(self, args: tuple, kwargs: dict[str, Any]) -> Any:
        """The lazy result, or ``NotImplemented`` when the operator cannot run this call."""
        if len(args) > len(self.names):
            return NotImplemented
        given = dict(self.numpy_defaults)
        given.update(zip(self.names[: len(args)], args, strict=True))
        for key, value in kwargs.items():
            if key in self.names[: len(args)]:
                return NotImplemented  # given twice: NumPy says so
            given[key] = value
        arrays = [given.pop(name) for name in self.names[: self.inputs] if name in given]
        if self.sequence:
            if len(arrays) != 1 or not isinstance(arrays[0], (list, tuple)):
                return NotImplemented
            arrays = list(arrays[0])
        if not arrays or not all(isinstance(x, NDArray) for x in arrays):
            return NotImplemented
        if self.accepts is not None and not self.accepts(arrays):
            return NotImplemented
        attrs: dict[str, Any] = {}
        for name, value in given.items():
            if name in self.params:
                if isinstance(value, (np.ndarray, NDArray)):
                    return NotImplemented  # the operator's parameters are scalars or tuples
                if value is not None:
                    attrs[self.params[name]] = value
            elif name not in self.fixed or not _is_value(value, self.fixed[name]):
                return NotImplemented
        if any(self.params[name] not in attrs for name in self.required):
            return NotImplemented
        return self.run(*arrays, **attrs)


def _is_value(given: Any, expected: Any) -> bool:
    if given is expected:
        return True
    return isinstance(given, (str, int, float)) and not isinstance(given, bool) and given == expected


def _reduction(op: str, *names: str) -> NumpyFunction:
    return NumpyFunction(
        _operator(op),
        ("a", "axis", *names),
        params={"axis": "axis", "keepdims": "keepdims"},
        fixed={"dtype": None, "out": None},
    )


_SUM_NAMES = ("dtype", "out", "keepdims")
_MAX_NAMES = ("out", "keepdims")
_CONCATENATE = NumpyFunction(
    _operator("concat"),
    ("arrays", "axis", "out"),
    sequence=True,
    params={"axis": "dim"},
    fixed={"out": None, "dtype": None, "casting": "same_kind"},
    numpy_defaults={"axis": 0},
    required=("axis",),
)

# NumPy function -> how the lazynd operator runs it
FUNCTIONS: dict[Callable[..., Any], NumpyFunction] = {
    np.sum: _reduction("sum", *_SUM_NAMES),
    np.mean: _reduction("mean", *_SUM_NAMES),
    np.prod: _reduction("prod", *_SUM_NAMES),
    np.max: _reduction("max", *_MAX_NAMES),
    np.amax: _reduction("max", *_MAX_NAMES),
    np.min: _reduction("min", *_MAX_NAMES),
    np.amin: _reduction("min", *_MAX_NAMES),
    # MXNet's NDArray.argmax(axis, out=None) runs these: the indices come back as a float NDArray
    np.argmax: _reduction("argmax", *_MAX_NAMES),
    np.argmin: _reduction("argmin", *_MAX_NAMES),
    np.reshape: NumpyFunction(
        _reshape,
        ("a", "shape", "order"),
        params={"shape": "shape", "newshape": "shape"},
        fixed={"order": "C", "copy": None},
        required=("shape",),
    ),
    np.transpose: NumpyFunction(_operator("transpose"), ("a", "axes"), params={"axes": "axes"}),
    np.swapaxes: NumpyFunction(
        _operator("swapaxes"),
        ("a", "axis1", "axis2"),
        params={"axis1": "dim1", "axis2": "dim2"},
        required=("axis1", "axis2"),
    ),
    np.clip: NumpyFunction(
        _operator("clip"),
        ("a", "a_min", "a_max", "out"),
        params={"a_min": "a_min", "a_max": "a_max", "min": "a_min", "max": "a_max"},
        fixed={"out": None},
        required=("a_min", "a_max"),
    ),
    np.dot: NumpyFunction(
        _operator("dot"),
        ("a", "b", "out"),
        inputs=2,
        fixed={"out": None},
        accepts=lambda arrays: all(x.ndim <= 2 for x in arrays),
    ),
    np.concatenate: _CONCATENATE,
    np.stack: NumpyFunction(
        _operator("stack"),
        ("arrays", "axis", "out"),
        sequence=True,
        params={"axis": "axis"},
        fixed={"out": None, "dtype": None, "casting": "same_kind"},
    ),
}

# NumPy functions that write into their first argument: an NDArray there would get a copy's write
WRITES_FIRST_ARGUMENT = frozenset({np.copyto, np.put, np.place, np.putmask, np.fill_diagonal, np.put_along_axis})


def numpy_copy(arr: Any, dtype: Any = None, copy: Any = None) -> np.ndarray:
    """``NDArray.__array__``, ``np.asarray(a)``: a NumPy copy of the values, after a wait.

    ``copy=False`` (NumPy 2's ``np.asarray(a, copy=False)``: never copy) raises: the values are
    always a copy, and a write into it would be lost without a word.
    """
    if copy is False:
        raise OperatorError(
            f"np.asarray(a, copy=False) of an NDArray of shape {arr.shape}: NumPy can have its values only as a"
            " copy (the engine owns the array's memory and writes it later); use np.asarray(a) or a.asnumpy()"
        )
    if dtype is not None:
        try:
            dtype = np.dtype(dtype)
        except (TypeError, ValueError):  # NumPy: "data type 'abc' not understood", "Cannot interpret 1.5 as..."
            raise ArgumentTypeError(f"NDArray.__array__: dtype must be a NumPy dtype, got {dtype!r}") from None
    out = arr.asnumpy()
    return out.astype(dtype, copy=False) if dtype is not None else out


def array_ufunc(arr: Any, ufunc: np.ufunc, method: str, *inputs: Any, **kwargs: Any) -> Any:
    """``NDArray.__array_ufunc__`` (``arr`` is one of ``inputs``): the lazynd operator where there is
    one, else NumPy after a wait."""
    out = kwargs.get("out")
    if method == "__call__" and set(kwargs) <= {"out"}:
        target = None
        if out is not None:
            target = out[0] if len(out) == 1 else None
            if not isinstance(target, NDArray):
                target = NotImplemented
        if target is not NotImplemented:
            result = _lazy_ufunc(ufunc, inputs, target)
            if result is not NotImplemented:
                return result
    if method == "at" and isinstance(inputs[0], NDArray):
        raise LazyNDError(
            f"numpy.{ufunc.__name__}.at: cannot write into an NDArray through NumPy (it would write a copy)"
        )
    _refuse_ndarray_out(f"numpy.{ufunc.__name__}", out)
    return getattr(ufunc, method)(*_to_numpy(inputs), **_to_numpy(kwargs))


def _lazy_ufunc(ufunc: np.ufunc, inputs: tuple, out: Any) -> Any:
    if len(inputs) == 1:
        name = UNARY_UFUNCS.get(ufunc)
        if name is None:
            return NotImplemented
        return _operator(name)(inputs[0], out=out)
    kind = BINARY_UFUNCS.get(ufunc)
    if kind is None or len(inputs) != 2:
        return NotImplemented
    lhs, rhs = inputs
    if isinstance(lhs, NDArray):
        return arithmetic.binary(kind, lhs, rhs, out=out)
    return arithmetic.binary(kind, rhs, lhs, reflected=True, out=out)


def array_function(arr: Any, func: Callable[..., Any], types: Any, args: tuple, kwargs: dict[str, Any]) -> Any:
    """``NDArray.__array_function__`` (``arr`` is one of ``args``): the lazynd operator where there is
    one, else NumPy after a wait."""
    row = FUNCTIONS.get(func)
    if row is not None:
        result = row(args, kwargs)
        if result is not NotImplemented:
            return result
    name = f"numpy.{getattr(func, '__name__', func)}"
    if func in WRITES_FIRST_ARGUMENT and args and isinstance(args[0], NDArray):
        raise LazyNDError(
            f"{name}: cannot write into an NDArray through NumPy (it would write a copy); use item assignment"
        )
    _refuse_ndarray_out(name, kwargs.get("out"))
    return func(*_to_numpy(args), **_to_numpy(kwargs))


def _refuse_ndarray_out(name: str, out: Any) -> None:
    targets = out if isinstance(out, tuple) else (out,)
    if any(isinstance(t, NDArray) for t in targets):
        raise LazyNDError(
            f"{name}: out= an NDArray is supported only where a lazynd operator runs the call "
            "(see the README's 'NumPy interoperability'); NumPy would write into a copy"
        )


def _to_numpy(value: Any) -> Any:
    """``value`` with every NDArray in it (in lists, tuples, dicts) replaced by its NumPy copy."""
    if isinstance(value, NDArray):
        return value.asnumpy()
    if isinstance(value, (list, tuple)):
        converted = [_to_numpy(v) for v in value]
        return converted if isinstance(value, list) else tuple(converted)
    if isinstance(value, dict):
        return {k: _to_numpy(v) for k, v in value.items()}
    return value


def format_ndarray(arr: Any, spec: str) -> str:
    """``NDArray.__format__``, ``format(a, spec)``: the array's text for an empty spec, the element's for a one-element array."""
    if not isinstance(spec, str):  # format() passes a str; a direct call may not (Python's own types refuse it too)
        raise ArgumentTypeError(f"format: spec must be a str, got {type(spec).__name__} {spec!r}")
    if not spec:
        return str(arr)
    if arr.size != 1:
        raise LazyNDError(f"format: spec {spec!r} needs a one-element NDArray, got shape {arr.shape}")
    return format(arr.asscalar(), spec)


_NUMBER_CONVERSIONS: dict[Callable[[Any], Any], str] = {
    float: "float()",
    int: "int()",
    operator.index: "operator.index()",
}


def number_method(convert: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """``NDArray.__float__``, ``__int__`` or ``__index__``: the value of a one-element array, after a wait.

    Another size raises :class:`~lazynd.ArgumentTypeError` (a ``TypeError``, as NumPy's and MXNet's
    answers are) naming the conversion; ``operator.index`` (an NDArray as a list index, in
    ``range()``) takes integer arrays only, as NumPy does.
    """
    name = _NUMBER_CONVERSIONS[convert]

    def method(arr: Any) -> Any:
        if arr.size != 1:
            raise ArgumentTypeError(
                f"{name} of an NDArray of shape {arr.shape}: only a one-element array converts to a Python number"
            )
        if convert is operator.index and arr.data_array.dtype.kind not in "iu":
            raise ArgumentTypeError(
                f"operator.index() of an NDArray of dtype {arr.data_array.dtype.name}: only an integer array is an index,"
                " as in NumPy (cast it with .astype('int64'))"
            )
        return convert(arr.asnumpy().reshape(-1)[0])

    method.__name__ = f"__{name.split('(')[0].split('.')[-1]}__"
    return method
